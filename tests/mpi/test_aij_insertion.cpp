// SPDX-License-Identifier: BSD-3-Clause
// AijInsertion (linalg/aij_insertion.*) against PETSc's MatSetValuesCOO on the same COO entries: 3x3 blocks and
// single entries, repeated entries, rows owned by other ranks, entries only another rank contributes; whole 3x3 blocks
// only (the maps kept by blocks) and with single entries (per entry). Run under
// mpiexec with 1, 2 and 3 ranks (CTest: mpi.aij_insertion.npN).
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "linalg/aij_insertion.hpp"
#include "linalg/petsc_util.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_aij_insertion {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

struct Entries {
  std::vector<PetscInt> i, j;
};

/// Rank r owns 3 (4 + r) rows (vertices of 3 dofs). Each rank writes random 3x3 blocks between its own
/// vertices and a few vertices of the neighbouring ranks (rows it does not own included), repeated blocks,
/// a few single entries, and the diagonal of its own dofs (the first own vertex's rows only that). `whole_blocks`: as the assembler's entries (a diagonal
/// block per own vertex first, then the blocks, no single entries but the diagonal of the own dofs last), whose
/// maps AijInsertion keeps by 3 x 3 blocks.
Entries random_entries(std::mt19937& rng, PetscInt first_vertex, PetscInt n_own, PetscInt n_global,
                       bool whole_blocks = false) {
  Entries e;
  std::uniform_int_distribution<PetscInt> own(first_vertex, first_vertex + n_own - 1);
  std::uniform_int_distribution<PetscInt> any(0, n_global - 1);
  std::uniform_int_distribution<int> coin(0, 3);
  auto block = [&](PetscInt a, PetscInt b) {
    // With single entries, the first own vertex's rows are only its diagonal (not whole blocks: maps per entry).
    if (!whole_blocks && (a == first_vertex || b == first_vertex)) return;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) e.i.push_back(3 * a + r), e.j.push_back(3 * b + c);
  };
  if (whole_blocks)
    for (PetscInt v = first_vertex; v < first_vertex + n_own; ++v) block(v, v);
  for (int k = 0; k < 40; ++k) {
    const PetscInt a = own(rng), b = coin(rng) == 0 ? any(rng) : own(rng);
    block(a, b);
    block(b, a);                        // b may be another rank's vertex: a row owned elsewhere
    if (coin(rng) == 0) block(a, b);    // the same block twice
  }
  for (int k = 0; k < (whole_blocks ? 0 : 10); ++k) {  // single entries, also in other ranks' rows
    const PetscInt a = any(rng), b = own(rng);
    e.i.push_back(3 * a + coin(rng) % 3), e.j.push_back(3 * b + 1);
  }
  for (PetscInt v = first_vertex; v < first_vertex + n_own; ++v)
    for (int c = 0; c < 3; ++c) e.i.push_back(3 * v + c), e.j.push_back(3 * v + c);
  return e;
}

/// This rank's vertices: rank r owns 4 + r, numbered after the lower ranks'.
struct Layout {
  PetscInt first = 0, n_own = 0, n_global = 0;
};
Layout layout() {
  const int rank = world_rank(), size = world_size();
  Layout l;
  l.n_own = 4 + rank;
  for (int r = 0; r < size; ++r) {
    if (r < rank) l.first += 4 + r;
    l.n_global += 4 + r;
  }
  return l;
}

PetscOwner<Mat, MatDestroy> coo_matrix(PetscInt n_rows, const Entries& e) {
  PetscOwner<Mat, MatDestroy> m;
  EDGEFEM_PETSC(MatCreate(MPI_COMM_WORLD, m.address()));
  EDGEFEM_PETSC(MatSetSizes(m, n_rows, n_rows, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(m, MATAIJ));
  EDGEFEM_PETSC(MatSetBlockSize(m, 3));
  std::vector<PetscInt> i = e.i, j = e.j;  // MatSetPreallocationCOO may modify its arguments
  EDGEFEM_PETSC(MatSetPreallocationCOO(m, static_cast<PetscCount>(i.size()), i.data(), j.data()));
  return m;
}

void set_coo(Mat m, const std::vector<double>& values) {
  EDGEFEM_PETSC(MatSetValuesCOO(m, values.data(), INSERT_VALUES));
  PetscBool assembled = PETSC_FALSE;
  EDGEFEM_PETSC(MatAssembled(m, &assembled));
  if (!assembled) {
    EDGEFEM_PETSC(MatAssemblyBegin(m, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(m, MAT_FINAL_ASSEMBLY));
  }
}

/// The largest |a - b| over the stored entries of this rank's rows; -1 when the patterns differ.
double largest_difference(Mat a, Mat b) {
  PetscInt begin = 0, end = 0;
  EDGEFEM_PETSC(MatGetOwnershipRange(a, &begin, &end));
  double worst = 0.0;
  for (PetscInt r = begin; r < end; ++r) {
    PetscInt na = 0, nb = 0;
    const PetscInt *ca = nullptr, *cb = nullptr;
    const PetscScalar *va = nullptr, *vb = nullptr;
    EDGEFEM_PETSC(MatGetRow(a, r, &na, &ca, &va));
    std::vector<PetscInt> cols(ca, ca + na);
    std::vector<double> vals(va, va + na);
    EDGEFEM_PETSC(MatRestoreRow(a, r, &na, &ca, &va));
    EDGEFEM_PETSC(MatGetRow(b, r, &nb, &cb, &vb));
    if (nb != static_cast<PetscInt>(cols.size())) worst = -1.0;
    for (PetscInt k = 0; k < nb && worst >= 0.0; ++k) {
      if (cb[k] != cols[static_cast<std::size_t>(k)]) worst = -1.0;
      else worst = std::max(worst, std::abs(vb[k] - vals[static_cast<std::size_t>(k)]));
    }
    EDGEFEM_PETSC(MatRestoreRow(b, r, &nb, &cb, &vb));
    if (worst < 0.0) break;
  }
  return worst;
}

class AijInsertionEntries : public ::testing::TestWithParam<bool> {};

/// Parameter: whole blocks (the maps by 3 x 3 blocks) or with single entries (the maps per entry).
TEST_P(AijInsertionEntries, EqualsMatSetValuesCooOnEveryRankCount) {
  const auto [first, n_own, n_global] = layout();
  const int rank = world_rank();
  const bool whole_blocks = GetParam();
  std::mt19937 rng(17 + static_cast<unsigned>(rank));
  const Entries e = random_entries(rng, first, n_own, n_global, whole_blocks);
  auto reference = coo_matrix(3 * n_own, e);
  PetscOwner<Mat, MatDestroy> direct;
  AijInsertion insertion(MPI_COMM_WORLD, 3 * n_own, e.i, e.j, direct);
  EXPECT_EQ(insertion.by_blocks(), whole_blocks);

  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (int round = 0; round < 3; ++round) {  // every round overwrites the last (INSERT_VALUES)
    std::vector<double> values(e.i.size());
    for (double& v : values) v = value(rng);
    set_coo(reference, values);
    insertion.insert(direct, values.data());
    const double worst = largest_difference(reference, direct);
    EXPECT_GE(worst, 0.0) << "the patterns differ, round " << round;
    // The same sums; PETSc adds repeated entries in another order: a few ulp of values of size 1.
    EXPECT_LE(worst, 1e-14) << "round " << round;
  }
  // The matrix acts as the reference does: y = A x with the off-rank columns.
  PetscOwner<Vec, VecDestroy> x, y1, y2;
  EDGEFEM_PETSC(MatCreateVecs(reference, x.address(), y1.address()));
  EDGEFEM_PETSC(VecDuplicate(y1, y2.address()));
  EDGEFEM_PETSC(VecSetRandom(x, nullptr));
  EDGEFEM_PETSC(MatMult(reference, x, y1));
  EDGEFEM_PETSC(MatMult(direct, x, y2));
  EDGEFEM_PETSC(VecAXPY(y2, -1.0, y1));
  PetscReal norm = 0.0;
  EDGEFEM_PETSC(VecNorm(y2, NORM_INFINITY, &norm));
  EXPECT_LE(norm, 1e-13);
}

INSTANTIATE_TEST_SUITE_P(Entries, AijInsertionEntries, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "WholeBlocks" : "SingleEntries"; });

TEST(AijInsertion, TheSolverSeesTheNewValues) {
  // A KSP set up on the matrix rebuilds its preconditioner when the matrix's state says the values changed: an
  // insertion must count as a change (here Jacobi, applied once: x = b / diag(A)), and the pattern must not.
  const auto [first, n_own, n_global] = layout();
  const int rank = world_rank();
  std::mt19937 rng(5 + static_cast<unsigned>(rank));
  const Entries e = random_entries(rng, first, n_own, n_global);
  PetscOwner<Mat, MatDestroy> m;
  AijInsertion insertion(MPI_COMM_WORLD, 3 * n_own, e.i, e.j, m);
  PetscOwner<KSP, KSPDestroy> ksp;
  EDGEFEM_PETSC(KSPCreate(MPI_COMM_WORLD, ksp.address()));
  EDGEFEM_PETSC(KSPSetType(ksp, KSPPREONLY));
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  EDGEFEM_PETSC(PCSetType(pc, PCJACOBI));
  EDGEFEM_PETSC(KSPSetOperators(ksp, m, m));
  PetscOwner<Vec, VecDestroy> b, x, d;
  EDGEFEM_PETSC(MatCreateVecs(m, x.address(), b.address()));
  EDGEFEM_PETSC(VecDuplicate(x, d.address()));
  EDGEFEM_PETSC(VecSet(b, 1.0));
  PetscObjectState pattern_before = 0, pattern_after = 0;
  EDGEFEM_PETSC(MatGetNonzeroState(m, &pattern_before));
  for (const double v : {1.0, 4.0}) {
    const std::vector<double> values(e.i.size(), v);
    insertion.insert(m, values.data());
    EDGEFEM_PETSC(KSPSolve(ksp, b, x));
    EDGEFEM_PETSC(MatGetDiagonal(m, d));
    EDGEFEM_PETSC(VecPointwiseMult(d, d, x));  // diag(A) * x = 1 when Jacobi used the new diagonal
    EDGEFEM_PETSC(VecShift(d, -1.0));
    PetscReal error = 0.0;
    EDGEFEM_PETSC(VecNorm(d, NORM_INFINITY, &error));
    EXPECT_LT(error, 1e-15) << "values " << v;
  }
  EDGEFEM_PETSC(MatGetNonzeroState(m, &pattern_after));
  EXPECT_EQ(pattern_before, pattern_after) << "the pattern must not change";
}

TEST(AijInsertion, RefusesAnEntryOutsideTheMatrix) {
  // Every rank gives a column past the last one: all ranks throw at the same check, after the set-up's
  // exchanges, so none is left waiting in a collective.
  const auto [first, n_own, n_global] = layout();
  Entries e;
  for (PetscInt v = first; v < first + n_own; ++v)
    for (int c = 0; c < 3; ++c) e.i.push_back(3 * v + c), e.j.push_back(3 * v + c);
  e.i.push_back(3 * first), e.j.push_back(3 * n_global);
  PetscOwner<Mat, MatDestroy> m;
  EXPECT_THROW(AijInsertion(MPI_COMM_WORLD, 3 * n_own, e.i, e.j, m), PetscFailure);
}

}  // namespace test_aij_insertion
}  // namespace edgefem
