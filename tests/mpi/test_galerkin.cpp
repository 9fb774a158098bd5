// SPDX-License-Identifier: BSD-3-Clause
// GalerkinProduct (linalg/galerkin.*): C = P^T A P by blocks into PETSc's coarse matrix, against PETSc's MatPtAP,
// and MultigridProducts::update_coarse_operators against GAMG's own rebuild of a hierarchy. Run under mpiexec with
// 1, 2 and 3 ranks (CTest: mpi.galerkin.npN). Also: the finest smoother's Jacobi diagonal from the block copy.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "linalg/block_operator.hpp"
#include "linalg/galerkin.hpp"
#include "linalg/multigrid_products.hpp"
#include "linalg/petsc_util.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_galerkin {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

/// max |a - b| / max |a| over all entries (infinity norms of rows).
double relative_difference(Mat a, Mat b) {
  PetscOwner<Mat, MatDestroy> d;
  EDGEFEM_PETSC(MatDuplicate(a, MAT_COPY_VALUES, d.address()));
  EDGEFEM_PETSC(MatAXPY(d, -1.0, b, DIFFERENT_NONZERO_PATTERN));
  PetscReal scale = 0.0, diff = 0.0;
  EDGEFEM_PETSC(MatNorm(a, NORM_INFINITY, &scale));
  EDGEFEM_PETSC(MatNorm(d, NORM_INFINITY, &diff));
  return diff / scale;
}

/// A matrix of whole r x c blocks on `comm`: `block_rows` block rows and `block_columns` block columns on this rank;
/// 1 to 5 random blocks per block row in any rank's columns, every 7th block row empty (with `empty_rows`), plus
/// the diagonal blocks when square (in blocks). Values in [-1, 1]; with `exact`, multiples of 1/1024 (exact in single
/// precision).
PetscOwner<Mat, MatDestroy> random_blocks(MPI_Comm comm, int r, int c, PetscInt block_rows, PetscInt block_columns,
                                          bool empty_rows, std::mt19937& rng, bool exact = false) {
  PetscOwner<Mat, MatDestroy> m;
  EDGEFEM_PETSC(MatCreate(comm, m.address()));
  EDGEFEM_PETSC(MatSetSizes(m, r * block_rows, c * block_columns, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetBlockSizes(m, r, c));
  EDGEFEM_PETSC(MatSetType(m, comm == PETSC_COMM_SELF ? MATSEQAIJ : MATMPIAIJ));
  EDGEFEM_PETSC(MatSetUp(m));
  EDGEFEM_PETSC(MatSetOption(m, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscInt first = 0, n_columns = 0;
  EDGEFEM_PETSC(MatGetOwnershipRange(m, &first, nullptr));
  EDGEFEM_PETSC(MatGetSize(m, nullptr, &n_columns));
  std::uniform_int_distribution<PetscInt> column_block(0, n_columns / c - 1), count(0, 4);
  std::uniform_real_distribution<double> any_value(-1.0, 1.0);
  std::uniform_int_distribution<int> steps(-1024, 1024);
  const auto value = [&] { return exact ? steps(rng) / 1024.0 : any_value(rng); };
  const auto block = [&](PetscInt g, PetscInt b) {
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < c; ++j) EDGEFEM_PETSC(MatSetValue(m, r * g + i, c * b + j, value(), INSERT_VALUES));
  };
  for (PetscInt g = first / r; g < first / r + block_rows; ++g) {
    if (empty_rows && g % 7 == 3) continue;
    if (block_rows == block_columns) block(g, g);
    for (PetscInt k = count(rng); k >= 0; --k) block(g, column_block(rng));
  }
  EDGEFEM_PETSC(MatAssemblyBegin(m, MAT_FINAL_ASSEMBLY));
  EDGEFEM_PETSC(MatAssemblyEnd(m, MAT_FINAL_ASSEMBLY));
  return m;
}

/// New random values in `m`'s pattern (the pattern kept).
void new_values(Mat m, std::mt19937& rng) {
  Mat diagonal = m, off_diagonal = nullptr;
  PetscBool mpi = PETSC_FALSE;
  EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(m), MATMPIAIJ, &mpi));
  if (mpi) EDGEFEM_PETSC(MatMPIAIJGetSeqAIJ(m, &diagonal, &off_diagonal, nullptr));
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (Mat part : {diagonal, off_diagonal}) {
    if (!part) continue;
    PetscScalar* a = nullptr;
    PetscInt n = 0;
    MatInfo info;
    EDGEFEM_PETSC(MatGetInfo(part, MAT_LOCAL, &info));
    n = static_cast<PetscInt>(info.nz_used);
    EDGEFEM_PETSC(MatSeqAIJGetArray(part, &a));
    for (PetscInt k = 0; k < n; ++k) a[k] = value(rng);
    EDGEFEM_PETSC(MatSeqAIJRestoreArray(part, &a));
  }
  EDGEFEM_PETSC(MatAssemblyBegin(m, MAT_FINAL_ASSEMBLY));
  EDGEFEM_PETSC(MatAssemblyEnd(m, MAT_FINAL_ASSEMBLY));
}

// Each block shape the products have kernels for, each rank's own matrices (SeqAIJ) and matrices distributed over
// all ranks (rank r owns (r + 1) times the block rows; blocks in every rank's columns, empty rows of P): after A
// takes new values in its pattern, update() writes into PETSc's coarse matrix of the old values what PETSc's
// MatPtAP computes from the new ones: to round-off when P's values are exact in single precision (the product keeps
// P so), to single precision's rounding for any P; a second update repeats it exactly.
TEST(GalerkinProduct, MatchesPetscsPtAP) {
  std::mt19937 rng(29 + static_cast<unsigned>(world_rank()));
  using Shape = std::pair<int, int>;
  for (const bool distributed : {false, true})
    for (const bool exact : {true, false})
      for (const auto& [b, c] : {Shape{3, 6}, Shape{6, 6}, Shape{3, 3}, Shape{6, 3}}) {
        const MPI_Comm comm = distributed ? MPI_COMM_WORLD : PETSC_COMM_SELF;
        const PetscInt share = distributed ? world_rank() + 1 : 1;
        const std::string label = std::string(distributed ? "distributed " : "") + std::to_string(b) + " x " +
                                  std::to_string(c) + (exact ? "" : ", any P");
        PetscOwner<Mat, MatDestroy> a = random_blocks(comm, b, b, 40 * share, 40 * share, false, rng);
        PetscOwner<Mat, MatDestroy> p = random_blocks(comm, b, c, 40 * share, 9 * share, true, rng, exact);
        PetscOwner<Mat, MatDestroy> coarse, reference;
        EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, coarse.address()));
        EDGEFEM_PETSC(MatSetBlockSizes(coarse, c, c));
        const auto product = GalerkinProduct::create(a, p, coarse);
        ASSERT_TRUE(product) << label;
        new_values(a, rng);
        EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, reference.address()));
        EXPECT_GT(relative_difference(reference, coarse), 1e-3) << label << ": the old values differ";
        product->update();
        const double difference = relative_difference(reference, coarse);
        EXPECT_LT(difference, exact ? 1e-13 : 1e-6) << label;
        if (!exact) {
          EXPECT_GT(difference, 1e-12) << label << ": P is kept in single precision";
        }
        PetscOwner<Mat, MatDestroy> first;
        EDGEFEM_PETSC(MatDuplicate(coarse, MAT_COPY_VALUES, first.address()));
        product->update();
        EXPECT_EQ(relative_difference(first, coarse), 0.0) << label << ": the same sums at every update";
      }
}

/// A distributed 3 x 3 block matrix (random_blocks) with one lone entry on the last rank: one entry in an empty
/// block row, whose block then holds nothing else (not whole blocks there).
PetscOwner<Mat, MatDestroy> with_a_broken_block(std::mt19937& rng) {
  PetscOwner<Mat, MatDestroy> a = random_blocks(MPI_COMM_WORLD, 3, 3, 20, 20, true, rng);
  if (world_rank() == world_size() - 1) {
    PetscInt first = 0;
    EDGEFEM_PETSC(MatGetOwnershipRange(a, &first, nullptr));
    const PetscInt g = first / 3 + ((7 - (first / 3) % 7) + 3) % 7;
    EDGEFEM_PETSC(MatSetValue(a, 3 * g + 1, 2, 1.0, ADD_VALUES));
  }
  EDGEFEM_PETSC(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  EDGEFEM_PETSC(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  return a;
}

// A fine matrix with one lone entry (a block not stored whole) on the last rank only: create() says no on every
// rank (its update would be a collective call some ranks skip).
TEST(GalerkinProduct, RefusedOnEveryRankWhenOneRankHasABrokenBlock) {
  std::mt19937 rng(31 + static_cast<unsigned>(world_rank()));
  PetscOwner<Mat, MatDestroy> a = with_a_broken_block(rng);
  PetscOwner<Mat, MatDestroy> p = random_blocks(MPI_COMM_WORLD, 3, 6, 20, 4, true, rng);
  PetscOwner<Mat, MatDestroy> coarse;
  EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, coarse.address()));
  EDGEFEM_PETSC(MatSetBlockSizes(coarse, 6, 6));
  EXPECT_FALSE(GalerkinProduct::create(a, p, coarse));
}

// PETSc's MatPtAP on a matrix marked by use_own_galerkin_products() is ours (the coarse matrix keeps its
// GalerkinProduct, block size c): the values PETSc's product of the unmarked matrix has, to round-off with P exact in
// single precision; a MAT_REUSE_MATRIX product after new values is ours too; other products of the marked matrix
// (A P) stay PETSc's, and so does P^T A P after MatDuplicate (which does not copy the mark).
TEST(GalerkinProduct, MatPtAPOfAMarkedMatrixIsOurs) {
  std::mt19937 rng(41 + static_cast<unsigned>(world_rank()));
  using Shape = std::pair<int, int>;
  // 0: each rank's own matrices; 1: distributed; 2: distributed, the last rank without coarse rows (several ranks).
  for (const int layout : {0, 1, 2})
    for (const auto& [b, c] : {Shape{3, 6}, Shape{6, 6}, Shape{3, 3}, Shape{6, 3}}) {
      const bool distributed = layout > 0;
      if (layout == 2 && world_size() == 1) continue;
      const MPI_Comm comm = distributed ? MPI_COMM_WORLD : PETSC_COMM_SELF;
      const PetscInt share = distributed ? world_rank() + 1 : 1;
      const PetscInt coarse_share = layout == 2 && world_rank() == world_size() - 1 ? 0 : 9 * share;
      const std::string label = std::string(layout == 2 ? "distributed, a rank without coarse rows, "
                                            : distributed ? "distributed "
                                                          : "") +
                                std::to_string(b) + " x " + std::to_string(c);
      PetscOwner<Mat, MatDestroy> a = random_blocks(comm, b, b, 40 * share, 40 * share, false, rng);
      PetscOwner<Mat, MatDestroy> p = random_blocks(comm, b, c, 40 * share, coarse_share, true, rng, true);
      PetscOwner<Mat, MatDestroy> reference, ours, plain;
      EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, reference.address()));
      use_own_galerkin_products(a);
      use_own_galerkin_products(a);  // idempotent
      EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, ours.address()));
      ASSERT_NE(galerkin_product_of(ours), nullptr) << label;
      EXPECT_EQ(galerkin_product_of(reference), nullptr) << label;
      PetscInt bs = 0;
      EDGEFEM_PETSC(MatGetBlockSize(ours, &bs));
      EXPECT_EQ(bs, c) << label;
      EXPECT_LT(relative_difference(reference, ours), 1e-13) << label;

      new_values(a, rng);
      EDGEFEM_PETSC(MatDuplicate(a, MAT_COPY_VALUES, plain.address()));
      PetscOwner<Mat, MatDestroy> new_reference;
      EDGEFEM_PETSC(MatPtAP(plain, p, MAT_INITIAL_MATRIX, 2.0, new_reference.address()));
      EXPECT_EQ(galerkin_product_of(new_reference), nullptr) << label << ": a duplicate is not marked";
      EXPECT_GT(relative_difference(new_reference, ours), 1e-3) << label << ": the old values differ";
      EDGEFEM_PETSC(MatPtAP(a, p, MAT_REUSE_MATRIX, 2.0, ours.address()));
      EXPECT_LT(relative_difference(new_reference, ours), 1e-13) << label << ": MAT_REUSE_MATRIX";

      PetscOwner<Mat, MatDestroy> ap, ap_reference;
      EDGEFEM_PETSC(MatMatMult(a, p, MAT_INITIAL_MATRIX, 2.0, ap.address()));
      EDGEFEM_PETSC(MatMatMult(plain, p, MAT_INITIAL_MATRIX, 2.0, ap_reference.address()));
      EXPECT_EQ(relative_difference(ap_reference, ap), 0.0) << label << ": A P is PETSc's";
    }
}

// A marked matrix that is not whole blocks on one rank: every rank leaves P^T A P to PETSc (the same values).
TEST(GalerkinProduct, MarkedMatrixWithABrokenBlockKeepsPetscsProduct) {
  std::mt19937 rng(43 + static_cast<unsigned>(world_rank()));
  PetscOwner<Mat, MatDestroy> a = with_a_broken_block(rng);
  PetscOwner<Mat, MatDestroy> p = random_blocks(MPI_COMM_WORLD, 3, 6, 20, 4, true, rng);
  PetscOwner<Mat, MatDestroy> reference, ours;
  EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, reference.address()));
  use_own_galerkin_products(a);
  EDGEFEM_PETSC(MatPtAP(a, p, MAT_INITIAL_MATRIX, 2.0, ours.address()));
  EXPECT_EQ(galerkin_product_of(ours), nullptr);
  // PETSc's MPIAIJ product adds other ranks' rows in the order their messages arrive: round-off on 3 ranks.
  EXPECT_LT(relative_difference(reference, ours), 1e-14);
}

/// A symmetric positive definite system of 3-D elasticity's shape on an n x n x (n + rank) grid of points per rank
/// stacked along z: for each grid edge a 3 x 3 block k (I + e e^T) with a random k, the edge's direction e (a spring
/// network), and the bottom layer tied to the ground; the rigid-body modes of the points' coordinates as
/// near-null space.
struct SpringGrid {
  PetscOwner<Mat, MatDestroy> matrix;
  PetscOwner<Vec, VecDestroy> coordinates;
  PetscOwner<MatNullSpace, MatNullSpaceDestroy> rigid;

  SpringGrid(int n, std::mt19937& rng) {
    const int rank = world_rank(), size = world_size();
    int z_first = 0, nz_all = 0;
    for (int r = 0; r < size; ++r) {
      if (r < rank) z_first += n + r;
      nz_all += n + r;
    }
    const int nz = n + rank;
    const PetscInt n_points = static_cast<PetscInt>(n) * n * nz;
    const auto id = [&](int i, int j, int k) { return (static_cast<PetscInt>(k) * n + j) * n + i; };
    EDGEFEM_PETSC(MatCreate(MPI_COMM_WORLD, matrix.address()));
    EDGEFEM_PETSC(MatSetSizes(matrix, 3 * n_points, 3 * n_points, PETSC_DETERMINE, PETSC_DETERMINE));
    EDGEFEM_PETSC(MatSetBlockSize(matrix, 3));
    EDGEFEM_PETSC(MatSetType(matrix, MATAIJ));
    EDGEFEM_PETSC(MatSeqAIJSetPreallocation(matrix, 81, nullptr));
    EDGEFEM_PETSC(MatMPIAIJSetPreallocation(matrix, 81, nullptr, 27, nullptr));
    EDGEFEM_PETSC(VecCreateMPI(MPI_COMM_WORLD, 3 * n_points, PETSC_DETERMINE, coordinates.address()));
    EDGEFEM_PETSC(VecSetBlockSize(coordinates, 3));
    PetscInt first = 0;
    EDGEFEM_PETSC(MatGetOwnershipRange(matrix, &first, nullptr));
    const PetscInt base = first / 3 - static_cast<PetscInt>(z_first) * n * n;  // global id of local (0, 0, z_first)
    std::uniform_real_distribution<double> stiffness(0.5, 2.0);
    const auto spring = [&](PetscInt u, PetscInt v, const double e[3], double k) {
      double block[9];
      for (int a = 0; a < 3; ++a)
        for (int b2 = 0; b2 < 3; ++b2) block[3 * a + b2] = k * ((a == b2 ? 1.0 : 0.0) + e[a] * e[b2]);
      double negative[9];
      for (int q = 0; q < 9; ++q) negative[q] = -block[q];
      EDGEFEM_PETSC(MatSetValuesBlocked(matrix, 1, &u, 1, &u, block, ADD_VALUES));
      if (v < 0) return;  // tied to the ground
      EDGEFEM_PETSC(MatSetValuesBlocked(matrix, 1, &v, 1, &v, block, ADD_VALUES));
      EDGEFEM_PETSC(MatSetValuesBlocked(matrix, 1, &u, 1, &v, negative, ADD_VALUES));
      EDGEFEM_PETSC(MatSetValuesBlocked(matrix, 1, &v, 1, &u, negative, ADD_VALUES));
    };
    for (int k = z_first; k < z_first + nz; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const PetscInt u = base + id(i, j, k);
          const PetscScalar xyz[3] = {static_cast<double>(i), static_cast<double>(j), static_cast<double>(k)};
          EDGEFEM_PETSC(VecSetValuesBlocked(coordinates, 1, &u, xyz, INSERT_VALUES));
          // Edges to +x, +y, +z (+z crosses to the next rank at the top layer) and the diagonal in x-y.
          const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
          const double s = 1.0 / std::sqrt(2.0), exy[3] = {s, s, 0};
          if (i + 1 < n) spring(u, base + id(i + 1, j, k), ex, stiffness(rng));
          if (j + 1 < n) spring(u, base + id(i, j + 1, k), ey, stiffness(rng));
          if (k + 1 < nz_all) spring(u, base + id(i, j, k + 1), ez, stiffness(rng));
          if (i + 1 < n && j + 1 < n) spring(u, base + id(i + 1, j + 1, k), exy, stiffness(rng));
          if (k == 0) spring(u, -1, ez, 1.0);
        }
    EDGEFEM_PETSC(MatAssemblyBegin(matrix, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(matrix, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(VecAssemblyBegin(coordinates));
    EDGEFEM_PETSC(VecAssemblyEnd(coordinates));
    EDGEFEM_PETSC(MatNullSpaceCreateRigidBody(coordinates, rigid.address()));
    EDGEFEM_PETSC(MatSetNearNullSpace(matrix, rigid));
  }
};

/// Level l's preconditioning matrix of a set-up PCMG (l = 0 the coarsest).
Mat level_matrix(PC pc, PetscInt l) {
  KSP smoother = nullptr;
  EDGEFEM_PETSC(PCMGGetSmoother(pc, l, &smoother));
  Mat a = nullptr, p = nullptr;
  EDGEFEM_PETSC(KSPGetOperators(smoother, &a, &p));
  return p;
}

/// A CG KSP with GAMG on (krylov, preconditioning), set up; its PC. A coarse limit of 60 unknowns gives several
/// levels on the small spring grids here.
PC set_up_gamg(PetscOwner<KSP, KSPDestroy>& ksp, Mat krylov, Mat preconditioning) {
  EDGEFEM_PETSC(KSPCreate(MPI_COMM_WORLD, ksp.address()));
  EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  EDGEFEM_PETSC(PCSetType(pc, PCGAMG));
  EDGEFEM_PETSC(PCGAMGSetCoarseEqLim(pc, 60));
  EDGEFEM_PETSC(KSPSetOperators(ksp, krylov, preconditioning));
  EDGEFEM_PETSC(KSPSetUp(ksp));
  return pc;
}

// GAMG on a spring grid of 3-D elasticity's shape (3 x 6 interpolation blocks from the finest level, 6 x 6 below):
// after the matrix takes new values (the same pattern, as a new Jacobian), update_coarse_operators() gives every
// coarse level the operator GAMG's own rebuild computes (the same interpolations: checked), to single precision
// (the product keeps P in single precision, and GAMG's values are not exact in it).
TEST(MultigridProducts, RebuildsTheCoarseOperatorsAsGamgDoes) {
  std::mt19937 rng(37 + static_cast<unsigned>(world_rank()));
  SpringGrid grid(12, rng);
  PetscOwner<KSP, KSPDestroy> ksp;
  PC pc = set_up_gamg(ksp, grid.matrix, grid.matrix);
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(pc, &n_levels));
  ASSERT_GE(n_levels, 3);
  MultigridProducts products;
  products.install(pc);
  ASSERT_TRUE(products.installed());

  // New values: each stored entry scaled by a random factor near 1, symmetric kept (a scaled copy of the
  // transpose added); the rows stay diagonally dominant enough for GAMG.
  PetscOwner<Mat, MatDestroy> transposed;
  EDGEFEM_PETSC(MatTranspose(grid.matrix, MAT_INITIAL_MATRIX, transposed.address()));
  EDGEFEM_PETSC(MatScale(grid.matrix, 1.3));
  EDGEFEM_PETSC(MatAXPY(grid.matrix, 0.2, transposed, SAME_NONZERO_PATTERN));
  ASSERT_TRUE(products.update_coarse_operators(pc));
  std::vector<PetscOwner<Mat, MatDestroy>> ours(static_cast<std::size_t>(n_levels - 1));
  std::vector<PetscOwner<Mat, MatDestroy>> interpolations(static_cast<std::size_t>(n_levels - 1));
  products.remove(pc);
  for (PetscInt l = 0; l + 1 < n_levels; ++l) {
    EDGEFEM_PETSC(MatDuplicate(level_matrix(pc, l), MAT_COPY_VALUES, ours[static_cast<std::size_t>(l)].address()));
    Mat interp = nullptr;
    EDGEFEM_PETSC(PCMGGetInterpolation(pc, l + 1, &interp));
    EDGEFEM_PETSC(MatDuplicate(interp, MAT_COPY_VALUES, interpolations[static_cast<std::size_t>(l)].address()));
  }
  // GAMG's own rebuild, from the same matrix.
  EDGEFEM_PETSC(KSPSetOperators(ksp, grid.matrix, grid.matrix));
  EDGEFEM_PETSC(KSPSetUp(ksp));
  for (PetscInt l = 0; l + 1 < n_levels; ++l) {
    Mat interp = nullptr;
    EDGEFEM_PETSC(PCMGGetInterpolation(pc, l + 1, &interp));
    ASSERT_EQ(relative_difference(interpolations[static_cast<std::size_t>(l)], interp), 0.0)
        << "GAMG's rebuild kept level " << l + 1 << "'s interpolation";
    EXPECT_LT(relative_difference(level_matrix(pc, l), ours[static_cast<std::size_t>(l)]), 1e-6) << "level " << l;
  }
}

// GAMG's first set-up on a matrix marked by use_own_galerkin_products(): the hierarchy of GAMG's set-up on an
// unmarked copy (the same levels and finest interpolation, the coarse operators and the coarser interpolations, which
// GAMG computes from them, to single precision), every level above the coarsest made by our product (the coarsest
// may be GAMG's reduction to fewer ranks); a rebuild by update_coarse_operators() uses those products and gives
// PETSc's P^T A P of the new values.
TEST(MultigridProducts, GamgsFirstSetUpWithOurProductsMatchesPetscs) {
  std::mt19937 rng(47 + static_cast<unsigned>(world_rank()));
  SpringGrid grid(12, rng);
  PetscOwner<Mat, MatDestroy> marked;
  EDGEFEM_PETSC(MatDuplicate(grid.matrix, MAT_COPY_VALUES, marked.address()));
  EDGEFEM_PETSC(MatSetNearNullSpace(marked, grid.rigid));
  use_own_galerkin_products(marked);
  PetscOwner<KSP, KSPDestroy> petsc_ksp, our_ksp;
  PC petsc = set_up_gamg(petsc_ksp, grid.matrix, grid.matrix), ours = set_up_gamg(our_ksp, marked, marked);
  PetscInt n_levels = 0, our_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(petsc, &n_levels));
  EDGEFEM_PETSC(PCMGGetLevels(ours, &our_levels));
  ASSERT_GE(n_levels, 3);
  ASSERT_EQ(our_levels, n_levels);
  for (PetscInt l = 0; l + 1 < n_levels; ++l) {
    Mat petsc_interp = nullptr, our_interp = nullptr;
    EDGEFEM_PETSC(PCMGGetInterpolation(petsc, l + 1, &petsc_interp));
    EDGEFEM_PETSC(PCMGGetInterpolation(ours, l + 1, &our_interp));
    const double interp_difference = relative_difference(petsc_interp, our_interp);
    if (l + 2 == n_levels) {
      EXPECT_EQ(interp_difference, 0.0) << "the finest interpolation";
    } else {
      EXPECT_LT(interp_difference, 1e-5) << "interpolation to level " << l + 1;
    }
    EXPECT_LT(relative_difference(level_matrix(petsc, l), level_matrix(ours, l)), 1e-5) << "level " << l;
    if (l > 0) {
      EXPECT_NE(galerkin_product_of(level_matrix(ours, l)), nullptr) << "level " << l << " is ours";
    }
  }

  MultigridProducts products;
  products.install(ours);
  ASSERT_TRUE(products.installed());
  PetscOwner<Mat, MatDestroy> transposed;
  EDGEFEM_PETSC(MatTranspose(marked, MAT_INITIAL_MATRIX, transposed.address()));
  EDGEFEM_PETSC(MatScale(marked, 1.3));
  EDGEFEM_PETSC(MatAXPY(marked, 0.2, transposed, SAME_NONZERO_PATTERN));
  GalerkinProduct* second = galerkin_product_of(level_matrix(ours, n_levels - 2));
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(products.update_coarse_operators(ours));
  EXPECT_EQ(galerkin_product_of(level_matrix(ours, n_levels - 2)), second) << "the same product";
  products.remove(ours);
  PetscOwner<Mat, MatDestroy> plain, reference;
  EDGEFEM_PETSC(MatDuplicate(marked, MAT_COPY_VALUES, plain.address()));
  Mat finest_interp = nullptr;
  EDGEFEM_PETSC(PCMGGetInterpolation(ours, n_levels - 1, &finest_interp));
  EDGEFEM_PETSC(MatPtAP(plain, finest_interp, MAT_INITIAL_MATRIX, 2.0, reference.address()));
  EXPECT_LT(relative_difference(reference, level_matrix(ours, n_levels - 2)), 1e-6);
  EXPECT_GT(relative_difference(reference, level_matrix(petsc, n_levels - 2)), 1e-3) << "the new values differ";
}


/// The finest level's smoother's preconditioning matrix of a set-up PCMG.
Mat finest_smoother_pmat(PC pc) {
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(pc, &n_levels));
  return level_matrix(pc, n_levels - 1);
}

// With CG's operator our block copy (a shell, BlockOperator) and the AIJ matrix GAMG's, install() gives the finest
// smoother the copy as its preconditioning matrix: its Jacobi diagonal is then read from the copy. The V-cycle is
// the same to round-off as with the AIJ matrix there (a second hierarchy, installed and then given the AIJ matrix
// back by hand), before and after the matrix takes new values (both diagonals follow them); PCMG's complexity
// figures still see the AIJ matrix's nonzeros (-ksp_view asks for them); remove() restores PETSc's arrangement.
TEST(MultigridProducts, FinestSmootherTakesItsDiagonalFromTheBlockCopy) {
  std::mt19937 rng(57 + static_cast<unsigned>(world_rank()));
  SpringGrid grid(12, rng);
  std::optional<BlockOperator> block = BlockOperator::create(grid.matrix, true);
  ASSERT_TRUE(block.has_value());
  Mat shell = block->product();
  PetscOwner<KSP, KSPDestroy> ours_ksp, reference_ksp;
  PC ours = set_up_gamg(ours_ksp, shell, grid.matrix), reference = set_up_gamg(reference_ksp, shell, grid.matrix);
  // The hierarchy is kept when the matrix changes (as the Newton driver lags it): no GAMG set-up while installed.
  EDGEFEM_PETSC(PCSetReusePreconditioner(ours, PETSC_TRUE));
  EDGEFEM_PETSC(PCSetReusePreconditioner(reference, PETSC_TRUE));
  ASSERT_EQ(finest_smoother_pmat(ours), grid.matrix) << "PETSc's arrangement before install()";
  MultigridProducts our_products, reference_products;
  our_products.install(ours);
  reference_products.install(reference);
  ASSERT_TRUE(our_products.installed());
  EXPECT_EQ(finest_smoother_pmat(ours), shell);
  {
    PetscInt n_levels = 0;
    EDGEFEM_PETSC(PCMGGetLevels(reference, &n_levels));
    KSP smoother = nullptr;
    EDGEFEM_PETSC(PCMGGetSmoother(reference, n_levels - 1, &smoother));
    EDGEFEM_PETSC(KSPSetOperators(smoother, shell, grid.matrix));
  }
  PetscReal ours_grid = 0, ours_operator = 0, reference_grid = 0, reference_operator = 0;
  EDGEFEM_PETSC(PCMGGetGridComplexity(ours, &ours_grid, &ours_operator));
  EDGEFEM_PETSC(PCMGGetGridComplexity(reference, &reference_grid, &reference_operator));
  EXPECT_EQ(ours_operator, reference_operator);
  EXPECT_GT(ours_operator, 1.0);

  PetscOwner<Vec, VecDestroy> b, y, y_reference;
  EDGEFEM_PETSC(MatCreateVecs(grid.matrix, y.address(), b.address()));
  EDGEFEM_PETSC(VecDuplicate(y, y_reference.address()));
  {
    VecArray bv(b, false);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (double& v : bv.span()) v = value(rng);
  }
  const auto same_cycle = [&](const char* when) {
    EDGEFEM_PETSC(PCApply(ours, b, y));
    EDGEFEM_PETSC(PCApply(reference, b, y_reference));
    EDGEFEM_PETSC(VecAXPY(y_reference, -1.0, y));
    PetscReal difference = 1.0, size = 0.0;
    EDGEFEM_PETSC(VecNorm(y_reference, NORM_INFINITY, &difference));
    EDGEFEM_PETSC(VecNorm(y, NORM_INFINITY, &size));
    EXPECT_GT(size, 0.0) << when;
    // To round-off: the two hierarchies are set up separately (on 3 ranks they differ in the last bits). A stale
    // diagonal after the new values would differ by tens of percent.
    EXPECT_LE(difference, 1e-12 * size) << when;
  };
  same_cycle("first values");
  PetscOwner<Vec, VecDestroy> before;
  EDGEFEM_PETSC(VecDuplicate(y, before.address()));
  EDGEFEM_PETSC(VecCopy(y, before));
  // New values (a new Jacobian, the same pattern): the diagonals change, the hierarchy is kept.
  PetscOwner<Mat, MatDestroy> transposed;
  EDGEFEM_PETSC(MatTranspose(grid.matrix, MAT_INITIAL_MATRIX, transposed.address()));
  EDGEFEM_PETSC(MatScale(grid.matrix, 1.3));
  EDGEFEM_PETSC(MatAXPY(grid.matrix, 0.2, transposed, SAME_NONZERO_PATTERN));
  block->update(grid.matrix);
  same_cycle("new values");
  EDGEFEM_PETSC(VecAXPY(before, -1.0, y));
  PetscReal changed = 0.0;
  EDGEFEM_PETSC(VecNorm(before, NORM_INFINITY, &changed));
  EXPECT_GT(changed, 0.0) << "the finest smoother follows the new values";

  our_products.remove(ours);
  EXPECT_EQ(finest_smoother_pmat(ours), grid.matrix) << "PETSc's arrangement after remove()";
  reference_products.remove(reference);
}

}  // namespace test_galerkin
}  // namespace edgefem
