// SPDX-License-Identifier: BSD-3-Clause
// SymmetricBlocks (linalg/symmetric_blocks.*): the upper triangle of a symmetric matrix of whole 3x3 blocks
// multiplies like the whole matrix (y = A x and y += A x) on 1, 2 and 3 OpenMP threads, with banded and scattered
// patterns (transposed blocks inside a thread's rows and beyond them); its diagonal is the matrix's; copy() sees an
// entry that differs from its transposed one; a pattern with a block (r, c) but no block (c, r) is refused.
// reverse_cuthill_mckee (partition/locality.*) is a permutation and narrows a scrambled path to bandwidth 1.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "core/cpu_features.hpp"
#include "partition/locality.hpp"
#include "linalg/symmetric_blocks.hpp"

namespace edgefem {
namespace {

/// A square AIJ matrix of whole 3x3 blocks, CSR with sorted columns, and its dense copy.
struct BlockMatrix {
  PetscInt n_blocks = 0;
  std::vector<PetscInt> ia, ja;
  std::vector<double> values, dense;  // dense: row-major, 3 n x 3 n
  [[nodiscard]] double& at(PetscInt r, PetscInt c) { return dense[static_cast<std::size_t>(r * 3 * n_blocks + c)]; }
};

/// Random symmetric values on the block pattern `pairs` (block (r, c) with r <= c; the transposes are added), every
/// diagonal block stored.
BlockMatrix symmetric_matrix(PetscInt n_blocks, std::set<std::pair<PetscInt, PetscInt>> pairs, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  BlockMatrix m;
  m.n_blocks = n_blocks;
  m.dense.assign(static_cast<std::size_t>(9 * n_blocks * n_blocks), 0.0);
  for (PetscInt r = 0; r < n_blocks; ++r) pairs.insert({r, r});
  std::vector<std::set<PetscInt>> columns(static_cast<std::size_t>(n_blocks));
  for (const auto& [r, c] : pairs) {
    columns[static_cast<std::size_t>(r)].insert(c);
    columns[static_cast<std::size_t>(c)].insert(r);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        if (r == c && j < i) continue;
        const double v = u(rng);
        m.at(3 * r + i, 3 * c + j) = v;
        m.at(3 * c + j, 3 * r + i) = v;
      }
  }
  m.ia.push_back(0);
  for (PetscInt r = 0; r < 3 * n_blocks; ++r) {
    for (PetscInt c : columns[static_cast<std::size_t>(r / 3)])
      for (int j = 0; j < 3; ++j) {
        m.ja.push_back(3 * c + j);
        m.values.push_back(m.at(r, 3 * c + j));
      }
    m.ia.push_back(static_cast<PetscInt>(m.ja.size()));
  }
  return m;
}

/// Block pairs: a band of half-width `band`, plus `far` random pairs anywhere (transposed blocks far beyond a
/// thread's rows).
std::set<std::pair<PetscInt, PetscInt>> pattern(PetscInt n_blocks, PetscInt band, int far, std::mt19937& rng) {
  std::set<std::pair<PetscInt, PetscInt>> pairs;
  for (PetscInt r = 0; r < n_blocks; ++r)
    for (PetscInt c = r + 1; c <= std::min(n_blocks - 1, r + band); ++c) pairs.insert({r, c});
  std::uniform_int_distribution<PetscInt> any(0, n_blocks - 1);
  for (int k = 0; k < far; ++k) {
    const PetscInt a = any(rng), b = any(rng);
    pairs.insert({std::min(a, b), std::max(a, b)});
  }
  return pairs;
}

/// max |y - A x| / max |A x| of SymmetricBlocks' product (`add`: onto a random y0) against the dense one, with the
/// AVX2 loop (`vector`, where the CPU has it) or the portable one.
double product_error(BlockMatrix& m, int threads, bool add, bool vector, std::mt19937& rng) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  SymmetricBlocks blocks(3 * m.n_blocks, m.ia.data(), m.ja.data());
  omp_set_num_threads(saved);
  blocks.use_vector_kernel(vector);
  EXPECT_EQ(blocks.vector_kernel(), vector && cpu_has_avx2_fma());
  EXPECT_TRUE(blocks.pattern_symmetric());
  const SymmetricBlocks::Asymmetry asymmetry = blocks.copy(m.ia.data(), m.values.data());
  EXPECT_EQ(asymmetry.difference, 0.0);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto n = static_cast<std::size_t>(3 * m.n_blocks);
  std::vector<double> x(n), y0(n), y(n);
  for (auto& v : x) v = u(rng);
  for (auto& v : y0) v = u(rng);
  y = y0;
  blocks.multiply(x.data(), y.data(), add);
  double worst = 0.0, scale = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    double expected = add ? y0[r] : 0.0;
    for (std::size_t c = 0; c < n; ++c) expected += m.dense[r * n + c] * x[c];
    worst = std::max(worst, std::abs(y[r] - expected));
    scale = std::max(scale, std::abs(expected));
  }
  return worst / scale;
}

TEST(SymmetricBlocks, MultipliesLikeTheWholeMatrixOnAnyNumberOfThreads) {
  std::mt19937 rng(7);
  for (const auto& [band, far] : {std::pair{2, 0}, std::pair{1, 40}, std::pair{5, 200}}) {
    BlockMatrix m = symmetric_matrix(61, pattern(61, band, far, rng), rng);
    for (int threads : {1, 2, 3})
      for (bool add : {false, true})
        for (bool vector : {true, false}) {
          SCOPED_TRACE("band " + std::to_string(band) + ", far pairs " + std::to_string(far) + ", " +
                       std::to_string(threads) + " threads" + (add ? ", y += A x" : ", y = A x") +
                       (vector ? ", AVX2 loop" : ", portable loop"));
          EXPECT_LT(product_error(m, threads, add, vector, rng), 1e-14);
        }
  }
}

TEST(SymmetricBlocks, DiagonalIsTheMatrixDiagonal) {
  std::mt19937 rng(8);
  BlockMatrix m = symmetric_matrix(17, pattern(17, 2, 10, rng), rng);
  SymmetricBlocks blocks(3 * m.n_blocks, m.ia.data(), m.ja.data());
  blocks.copy(m.ia.data(), m.values.data());
  std::vector<double> d(static_cast<std::size_t>(3 * m.n_blocks));
  blocks.diagonal(d.data());
  for (PetscInt r = 0; r < 3 * m.n_blocks; ++r) EXPECT_EQ(d[static_cast<std::size_t>(r)], m.at(r, r)) << "row " << r;
}

TEST(SymmetricBlocks, CopySeesAnAsymmetricEntryWithinSixteenCopies) {
  std::mt19937 rng(9);
  BlockMatrix m = symmetric_matrix(40, pattern(40, 2, 0, rng), rng);
  // Entry (3*21 + 1, 3*22 + 2) of the upper triangle changed by 1e-3: A_ij != A_ji.
  const PetscInt row = 3 * 21 + 1, column = 3 * 22 + 2;
  for (PetscInt k = m.ia[static_cast<std::size_t>(row)]; k < m.ia[static_cast<std::size_t>(row) + 1]; ++k)
    if (m.ja[static_cast<std::size_t>(k)] == column) m.values[static_cast<std::size_t>(k)] += 1e-3;
  SymmetricBlocks blocks(3 * m.n_blocks, m.ia.data(), m.ja.data());
  double seen = 0.0;
  for (int copy = 0; copy < 16; ++copy) {
    const SymmetricBlocks::Asymmetry a = blocks.copy(m.ia.data(), m.values.data());
    EXPECT_GT(a.scale, 0.0);
    seen = std::max(seen, a.difference);
  }
  EXPECT_NEAR(seen, 1e-3, 1e-12);
}

TEST(SymmetricBlocks, RefusesAPatternWithoutTheTransposedBlock) {
  // Two block rows: blocks (0, 0), (0, 1), (1, 1) but no (1, 0).
  std::vector<PetscInt> ia{0}, ja;
  for (int r = 0; r < 6; ++r) {
    const PetscInt first_block = r < 3 ? 0 : 1;
    for (PetscInt c = 3 * first_block; c < 6; ++c) ja.push_back(c);
    ia.push_back(static_cast<PetscInt>(ja.size()));
  }
  SymmetricBlocks blocks(6, ia.data(), ja.data());
  EXPECT_FALSE(blocks.pattern_symmetric());
}

TEST(ReverseCuthillMckee, NarrowsAScrambledPathToBandwidthOne) {
  // A path of 200 vertices given as segments (2 vertices a cell) in a scrambled numbering, plus a separate triangle.
  const LocalIndex n = 203;
  std::vector<LocalIndex> label(200);
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), std::mt19937(3));
  std::vector<LocalIndex> cells;
  for (int k = 0; k + 1 < 200; ++k) cells.insert(cells.end(), {label[k], label[k + 1]});
  cells.insert(cells.end(), {200, 201, 201, 202, 202, 200});
  const std::vector<LocalIndex> number = reverse_cuthill_mckee(n, cells, 2);
  std::vector<LocalIndex> sorted = number;
  std::sort(sorted.begin(), sorted.end());
  for (LocalIndex v = 0; v < n; ++v) ASSERT_EQ(sorted[static_cast<std::size_t>(v)], v);  // a permutation
  int bandwidth = 0;
  for (std::size_t k = 0; k < cells.size(); k += 2)
    bandwidth = std::max(bandwidth, std::abs(number[cells[k]] - number[cells[k + 1]]));
  EXPECT_LE(bandwidth, 2);  // the path: 1; the triangle: 2
  for (int k = 0; k + 1 < 199; ++k) EXPECT_EQ(std::abs(number[label[k]] - number[label[k + 1]]), 1);
}

}  // namespace
}  // namespace edgefem
