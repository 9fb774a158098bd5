// SPDX-License-Identifier: BSD-3-Clause
#include "linalg/symmetric_blocks.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/cpu_features.hpp"

#if defined(EDGEFEM_X86_AVX2)
#include <immintrin.h>
#endif

namespace edgefem {
namespace {

constexpr PetscInt kBs = 3;
constexpr PetscInt kBlock = kBs * kBs;
/// copy() compares every kCheckStride-th block row with its transpose, a different one each time: a matrix that is
/// not symmetric (a model's tangent) shows at the first copy, and each copy reads 1/16 of the lower triangle at random.
constexpr PetscInt kCheckStride = 16;

/// Block rows [begin, end) of y += A x from the upper triangle (rows, columns, 9 values a block): row r's own
/// blocks, and each block (r, c)'s transpose into row c: in y for c < end, in spill[3 (c - end) + i] beyond.
void upper_rows(const PetscInt* rows, const PetscInt* columns, const PetscScalar* a, const PetscScalar* x,
                PetscScalar* y, PetscScalar* spill, PetscInt begin, PetscInt end) {
  for (PetscInt r = begin; r < end; ++r) {
    const PetscScalar x0 = x[kBs * r], x1 = x[kBs * r + 1], x2 = x[kBs * r + 2];
    PetscScalar y0 = 0, y1 = 0, y2 = 0;
    PetscInt k = rows[r];
    if (k < rows[r + 1] && columns[k] == r) {  // the diagonal block
      const PetscScalar* b = a + kBlock * k;
      y0 = b[0] * x0 + b[3] * x1 + b[6] * x2;
      y1 = b[1] * x0 + b[4] * x1 + b[7] * x2;
      y2 = b[2] * x0 + b[5] * x1 + b[8] * x2;
      ++k;
    }
    for (; k < rows[r + 1]; ++k) {
      const PetscInt c = columns[k];
      const PetscScalar* b = a + kBlock * k;
      const PetscScalar* xc = x + kBs * c;
      y0 += b[0] * xc[0] + b[3] * xc[1] + b[6] * xc[2];
      y1 += b[1] * xc[0] + b[4] * xc[1] + b[7] * xc[2];
      y2 += b[2] * xc[0] + b[5] * xc[1] + b[8] * xc[2];
      PetscScalar* to = c < end ? y + kBs * c : spill + kBs * (c - end);  // block (c, r) = b^T: row c += b^T x_r
      to[0] += b[0] * x0 + b[1] * x1 + b[2] * x2;
      to[1] += b[3] * x0 + b[4] * x1 + b[5] * x2;
      to[2] += b[6] * x0 + b[7] * x1 + b[8] * x2;
    }
    y[kBs * r] += y0;
    y[kBs * r + 1] += y1;
    y[kBs * r + 2] += y2;
  }
}

#if defined(EDGEFEM_X86_AVX2)
/// upper_rows() in AVX2 registers of four doubles, for CPUs that have AVX2 and FMA (chosen at run time). A block's
/// three columns are three loads of four doubles (the fourth lane is the next column's first value, or the padding
/// double after the last block, and is never used). Row r's sum A_rc x_c gathers in three accumulators, one per
/// column, added when the row ends; the transposed product A_rc^T x_r needs the block's rows, which four unpacks and
/// three lane permutes make from its columns. GCC left the portable loop scalar (about 30 instructions a block);
/// this one is 1.5 times as fast in a stand-alone loop over a part of one rank's size, less inside a run
/// (docs/theory/solver.md). The sums are the same terms in another order: results differ from the portable loop's in the
/// last bits, and are the same on every run.
__attribute__((target("avx2,fma"))) void upper_rows_avx2(const PetscInt* rows, const PetscInt* columns,
                                                         const PetscScalar* a, const PetscScalar* x, PetscScalar* y,
                                                         PetscScalar* spill, PetscInt begin, PetscInt end) {
  static_assert(sizeof(PetscScalar) == sizeof(double), "the AVX2 loop multiplies doubles");
  for (PetscInt r = begin; r < end; ++r) {
    const __m256d xr0 = _mm256_broadcast_sd(x + kBs * r), xr1 = _mm256_broadcast_sd(x + kBs * r + 1),
                  xr2 = _mm256_broadcast_sd(x + kBs * r + 2);
    __m256d sum0 = _mm256_setzero_pd(), sum1 = _mm256_setzero_pd(), sum2 = _mm256_setzero_pd();
    PetscInt k = rows[r];
    const PetscInt k_end = rows[r + 1];
    if (k < k_end && columns[k] == r) {  // the diagonal block
      const double* b = a + kBlock * k;
      sum0 = _mm256_mul_pd(_mm256_loadu_pd(b), xr0);
      sum1 = _mm256_mul_pd(_mm256_loadu_pd(b + 3), xr1);
      sum2 = _mm256_mul_pd(_mm256_loadu_pd(b + 6), xr2);
      ++k;
    }
    for (; k < k_end; ++k) {
      const PetscInt c = columns[k];
      const double* b = a + kBlock * k;
      const double* xc = x + kBs * c;
      const __m256d col0 = _mm256_loadu_pd(b), col1 = _mm256_loadu_pd(b + 3), col2 = _mm256_loadu_pd(b + 6);
      sum0 = _mm256_fmadd_pd(col0, _mm256_broadcast_sd(xc), sum0);
      sum1 = _mm256_fmadd_pd(col1, _mm256_broadcast_sd(xc + 1), sum1);
      sum2 = _mm256_fmadd_pd(col2, _mm256_broadcast_sd(xc + 2), sum2);
      // Rows of the block: row i = (b[i], b[i + 3], b[i + 6]). lo01 = b0 b3 b2 b5, hi01 = b1 b4 b3 b6,
      // lo22 = b6 b6 b8 b8, hi22 = b7 b7 b9 b9.
      const __m256d lo01 = _mm256_unpacklo_pd(col0, col1), hi01 = _mm256_unpackhi_pd(col0, col1);
      const __m256d lo22 = _mm256_unpacklo_pd(col2, col2), hi22 = _mm256_unpackhi_pd(col2, col2);
      const __m256d row0 = _mm256_permute2f128_pd(lo01, lo22, 0x20);  // b0 b3 b6 b6
      const __m256d row1 = _mm256_permute2f128_pd(hi01, hi22, 0x20);  // b1 b4 b7 b7
      const __m256d row2 = _mm256_permute2f128_pd(lo01, lo22, 0x31);  // b2 b5 b8 b8
      __m256d t = _mm256_mul_pd(row0, xr0);  // block (c, r) = b^T: row c += b^T x_r
      t = _mm256_fmadd_pd(row1, xr1, t);
      t = _mm256_fmadd_pd(row2, xr2, t);
      double* to = c < end ? y + kBs * c : spill + kBs * (c - end);
      _mm_storeu_pd(to, _mm_add_pd(_mm_loadu_pd(to), _mm256_castpd256_pd128(t)));
      _mm_store_sd(to + 2, _mm_add_sd(_mm_load_sd(to + 2), _mm256_extractf128_pd(t, 1)));
    }
    const __m256d sum = _mm256_add_pd(_mm256_add_pd(sum0, sum1), sum2);
    _mm_storeu_pd(y + kBs * r, _mm_add_pd(_mm_loadu_pd(y + kBs * r), _mm256_castpd256_pd128(sum)));
    _mm_store_sd(y + kBs * r + 2, _mm_add_sd(_mm_load_sd(y + kBs * r + 2), _mm256_extractf128_pd(sum, 1)));
  }
}
#endif

}  // namespace

SymmetricBlocks::SymmetricBlocks(PetscInt n_rows, const PetscInt* ia, const PetscInt* ja) : n_(n_rows / kBs) {
  // Block row r of the AIJ part: its blocks' columns are ja[ia[3 r] + 3 q] / 3, sorted.
  const auto block_column = [&](PetscInt r, PetscInt q) { return ja[ia[kBs * r] + kBs * q] / kBs; };
  const auto row_blocks = [&](PetscInt r) { return (ia[kBs * r + 1] - ia[kBs * r]) / kBs; };
  rows_.assign(static_cast<std::size_t>(n_) + 1, 0);
  skip_.assign(static_cast<std::size_t>(n_), 0);
  for (PetscInt r = 0; r < n_; ++r) {
    const PetscInt len = row_blocks(r);
    PetscInt q = 0;
    while (q < len && block_column(r, q) < r) ++q;
    skip_[static_cast<std::size_t>(r)] = q;
    rows_[static_cast<std::size_t>(r) + 1] = rows_[static_cast<std::size_t>(r)] + (len - q);
  }
  const auto n_upper = static_cast<std::size_t>(rows_.back());
  columns_.resize(n_upper);
  mirror_.resize(n_upper);
  for (PetscInt r = 0; r < n_; ++r) {
    const PetscInt len = row_blocks(r);
    auto k = static_cast<std::size_t>(rows_[static_cast<std::size_t>(r)]);
    for (PetscInt q = skip_[static_cast<std::size_t>(r)]; q < len; ++q, ++k) {
      const PetscInt c = block_column(r, q);
      columns_[k] = c;
      // Block (c, r): binary search of column r in block row c.
      PetscInt lo = 0, hi = row_blocks(c);
      while (lo < hi) {
        const PetscInt mid = (lo + hi) / 2;
        if (block_column(c, mid) < r) lo = mid + 1;
        else hi = mid;
      }
      if (lo == row_blocks(c) || block_column(c, lo) != r) pattern_symmetric_ = false;
      mirror_[k] = lo;
    }
  }
  // One double after the last block: the AVX2 loop loads a block's last column as four doubles.
  values_.assign(n_upper * kBlock + 1, 0.0);
#if defined(EDGEFEM_X86_AVX2)
  vector_kernel_ = cpu_has_avx2_fma();
#endif

  // Threads' ranges of rows, about the same number of blocks each, and how far their transposed blocks reach.
  const int n_ranges = std::max(1, omp_get_max_threads());
  bounds_.assign(static_cast<std::size_t>(n_ranges) + 1, n_);
  bounds_[0] = 0;
  for (int t = 1; t < n_ranges; ++t) {
    const PetscInt target = static_cast<PetscInt>(static_cast<double>(n_upper) * t / n_ranges);
    bounds_[static_cast<std::size_t>(t)] = static_cast<PetscInt>(
        std::lower_bound(rows_.begin(), rows_.end(), target) - rows_.begin());
    bounds_[static_cast<std::size_t>(t)] =
        std::clamp(bounds_[static_cast<std::size_t>(t)], bounds_[static_cast<std::size_t>(t) - 1], n_);
  }
  spill_end_.assign(static_cast<std::size_t>(n_ranges), 0);
  spills_.resize(static_cast<std::size_t>(n_ranges));
  for (int t = 0; t < n_ranges; ++t) {
    const PetscInt end = bounds_[static_cast<std::size_t>(t) + 1];
    PetscInt reach = end;
    for (PetscInt r = bounds_[static_cast<std::size_t>(t)]; r < end; ++r) {
      const PetscInt last = rows_[static_cast<std::size_t>(r) + 1];
      if (last > rows_[static_cast<std::size_t>(r)]) reach = std::max(reach, columns_[static_cast<std::size_t>(last) - 1] + 1);
    }
    spill_end_[static_cast<std::size_t>(t)] = reach;
    spills_[static_cast<std::size_t>(t)].assign(static_cast<std::size_t>(kBs * (reach - end)), 0.0);
  }
}

SymmetricBlocks::Asymmetry SymmetricBlocks::copy(const PetscInt* ia, const PetscScalar* values) {
  double difference = 0.0, scale = 0.0;
  const PetscInt* rows = rows_.data();
  const PetscInt* columns = columns_.data();
  const PetscInt* skip = skip_.data();
  const PetscInt* mirror = mirror_.data();
  PetscScalar* out = values_.data();
  const PetscInt checked = copies_++ % kCheckStride;
#pragma omp parallel for schedule(static) reduction(max : difference, scale)
  for (PetscInt r = 0; r < n_; ++r) {
    const bool check = r % kCheckStride == checked;
    for (PetscInt k = rows[r]; k < rows[r + 1]; ++k) {
      const PetscInt c = columns[k];
      const PetscInt q = skip[r] + (k - rows[r]);  // the block's position in the AIJ row
      PetscScalar* block = out + kBlock * k;
      for (PetscInt i = 0; i < kBs; ++i) {
        const PetscScalar* in = values + ia[kBs * r + i] + kBs * q;
        for (PetscInt j = 0; j < kBs; ++j) block[i + kBs * j] = in[j];
      }
      if (!check) continue;
      // A(3r + i, 3c + j) against A(3c + j, 3r + i): block (c, r) is at position mirror[k] of block row c.
      for (PetscInt j = 0; j < kBs; ++j) {
        const PetscScalar* transposed = values + ia[kBs * c + j] + kBs * mirror[k];
        for (PetscInt i = 0; i < kBs; ++i) {
          const PetscScalar a = block[i + kBs * j];
          difference = std::max(difference, std::abs(a - transposed[i]));
          scale = std::max(scale, std::abs(a));
        }
      }
    }
  }
  return {difference, scale};
}

void SymmetricBlocks::multiply(const PetscScalar* x, PetscScalar* y, bool add) const {
  const auto n_ranges = static_cast<int>(spills_.size());
#pragma omp parallel num_threads(n_ranges)
  {
    const int n_threads = omp_get_num_threads(), me = omp_get_thread_num();
    for (int t = me; t < n_ranges; t += n_threads) {
      const PetscInt begin = bounds_[static_cast<std::size_t>(t)], end = bounds_[static_cast<std::size_t>(t) + 1];
      std::vector<PetscScalar>& spill_vector = spills_[static_cast<std::size_t>(t)];
      std::fill(spill_vector.begin(), spill_vector.end(), 0.0);
      if (!add) std::fill(y + kBs * begin, y + kBs * end, 0.0);
#if defined(EDGEFEM_X86_AVX2)
      if (vector_kernel_) {
        upper_rows_avx2(rows_.data(), columns_.data(), values_.data(), x, y, spill_vector.data(), begin, end);
        continue;
      }
#endif
      upper_rows(rows_.data(), columns_.data(), values_.data(), x, y, spill_vector.data(), begin, end);
    }
#pragma omp barrier
    // Each range adds the earlier ranges' transposed blocks that reached its rows, in range order.
    for (int t = me; t < n_ranges; t += n_threads) {
      const PetscInt begin = bounds_[static_cast<std::size_t>(t)], end = bounds_[static_cast<std::size_t>(t) + 1];
      for (int s = 0; s < t; ++s) {
        const PetscInt spill_begin = bounds_[static_cast<std::size_t>(s) + 1];
        const PetscInt lo = std::max(begin, spill_begin), hi = std::min(end, spill_end_[static_cast<std::size_t>(s)]);
        const PetscScalar* spill = spills_[static_cast<std::size_t>(s)].data();
        for (PetscInt i = kBs * lo; i < kBs * hi; ++i) y[i] += spill[i - kBs * spill_begin];
      }
    }
  }
}

void SymmetricBlocks::use_vector_kernel(bool on) {
#if defined(EDGEFEM_X86_AVX2)
  vector_kernel_ = on && cpu_has_avx2_fma();
#else
  (void)on;
#endif
}

void SymmetricBlocks::diagonal(PetscScalar* d) const {
  for (PetscInt r = 0; r < n_; ++r) {
    const PetscInt k = rows_[static_cast<std::size_t>(r)];
    const bool stored = k < rows_[static_cast<std::size_t>(r) + 1] && columns_[static_cast<std::size_t>(k)] == r;
    for (PetscInt i = 0; i < kBs; ++i)
      d[kBs * r + i] = stored ? values_[static_cast<std::size_t>(kBlock * k + i + kBs * i)] : 0.0;
  }
}

std::size_t SymmetricBlocks::bytes() const {
  std::size_t spill = 0;
  for (const auto& s : spills_) spill += s.size();
  return values_.size() * sizeof(PetscScalar) + (columns_.size() + mirror_.size()) * sizeof(PetscInt) +
         (rows_.size() + skip_.size()) * sizeof(PetscInt) + spill * sizeof(PetscScalar);
}

}  // namespace edgefem
