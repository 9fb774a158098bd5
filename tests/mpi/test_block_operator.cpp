// SPDX-License-Identifier: BSD-3-Clause
// BlockOperator (linalg/block_operator.*): the BAIJ copy of an assembled AIJ matrix holds exactly its entries,
// multiplies like it (PETSc's product, and our own over the upper triangle of a symmetric matrix, which refuses one
// that is not), follows its new values after update(), and is refused on every rank when some rank's pattern has a
// 3x3 block that is not stored whole; OwnAijProduct
// (linalg/multigrid_products.*) multiplies like its AIJ matrix. Run under mpiexec with 1, 2 and 3 ranks
// (CTest: mpi.block_operator.npN).
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>
#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "linalg/aij_insertion.hpp"
#include "linalg/block_operator.hpp"
#include "linalg/multigrid_products.hpp"
#include "linalg/petsc_util.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_block_operator {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

struct Entries {
  std::vector<PetscInt> i, j;
};

/// Rank r owns 5 + r vertices (3 dofs each), numbered after the lower ranks'. Random whole 3x3 blocks between its
/// vertices and any vertex (rows of other ranks included), repeated blocks, the diagonal blocks of its vertices;
/// with `single`, also one lone entry in a block nothing else touches (a block that is not stored whole).
/// Call it with `single` on the last rank only.
Entries random_blocks(std::mt19937& rng, bool single) {
  const int rank = world_rank(), size = world_size();
  PetscInt first = 0, n_global = 0;
  for (int r = 0; r < size; ++r) {
    if (r < rank) first += 5 + r;
    n_global += 5 + r;
  }
  const PetscInt n_own = 5 + rank;
  std::uniform_int_distribution<PetscInt> own(first, first + n_own - 1), any(0, n_global - 1);
  Entries e;
  auto block = [&](PetscInt a, PetscInt b) {
    if (std::min(a, b) == 0 && std::max(a, b) == n_global - 1) return;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) e.i.push_back(3 * a + r), e.j.push_back(3 * b + c);
  };
  for (PetscInt v = first; v < first + n_own; ++v) block(v, v);
  for (int k = 0; k < 8; ++k) {
    const PetscInt a = own(rng), b = any(rng);
    block(a, b);
    block(b, a);
    if (k % 4 == 0) block(a, b);
  }
  // The last vertex (the last rank's) and vertex 0 share no block above; `single` puts one lone entry there.
  if (single) e.i.push_back(3 * (n_global - 1) + 1), e.j.push_back(2);
  return e;
}

std::vector<double> random_values(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

/// The largest |a - b| over the stored entries of this rank's rows (MatGetRow on both); -1 when the patterns differ.
double largest_difference(Mat a, Mat b) {
  PetscInt begin = 0, end = 0;
  EDGEFEM_PETSC(MatGetOwnershipRange(a, &begin, &end));
  double worst = 0.0;
  for (PetscInt r = begin; r < end && worst >= 0.0; ++r) {
    PetscInt na = 0, nb = 0;
    const PetscInt *ca = nullptr, *cb = nullptr;
    const PetscScalar *va = nullptr, *vb = nullptr;
    EDGEFEM_PETSC(MatGetRow(a, r, &na, &ca, &va));
    const std::vector<PetscInt> cols(ca, ca + na);
    const std::vector<double> vals(va, va + na);
    EDGEFEM_PETSC(MatRestoreRow(a, r, &na, &ca, &va));
    EDGEFEM_PETSC(MatGetRow(b, r, &nb, &cb, &vb));
    if (nb != static_cast<PetscInt>(cols.size())) worst = -1.0;  // (MatRestoreRow zeroed na)
    for (PetscInt k = 0; k < nb && worst >= 0.0; ++k) {
      if (cb[k] != cols[static_cast<std::size_t>(k)]) worst = -1.0;
      else worst = std::max(worst, std::abs(vb[k] - vals[static_cast<std::size_t>(k)]));
    }
    EDGEFEM_PETSC(MatRestoreRow(b, r, &nb, &cb, &vb));
  }
  double global = 0.0;
  MPI_Allreduce(&worst, &global, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);  // -1 anywhere wins
  if (global < 0.0) return -1.0;
  MPI_Allreduce(&worst, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return global;
}

/// max |A x - B x| / max |A x| for a random x (with `transpose`, A^T x and B^T x).
double product_difference(Mat a, Mat b, bool transpose = false) {
  PetscOwner<Vec, VecDestroy> x, ya, yb;
  EDGEFEM_PETSC(MatCreateVecs(a, x.address(), ya.address()));
  EDGEFEM_PETSC(VecDuplicate(ya, yb.address()));
  PetscRandom rand = nullptr;
  EDGEFEM_PETSC(PetscRandomCreate(MPI_COMM_WORLD, &rand));
  EDGEFEM_PETSC(VecSetRandom(x, rand));
  EDGEFEM_PETSC(PetscRandomDestroy(&rand));
  EDGEFEM_PETSC(transpose ? MatMultTranspose(a, x, ya) : MatMult(a, x, ya));
  EDGEFEM_PETSC(transpose ? MatMultTranspose(b, x, yb) : MatMult(b, x, yb));
  PetscReal scale = 0.0, diff = 0.0;
  EDGEFEM_PETSC(VecNorm(ya, NORM_INFINITY, &scale));
  EDGEFEM_PETSC(VecAXPY(yb, -1.0, ya));
  EDGEFEM_PETSC(VecNorm(yb, NORM_INFINITY, &diff));
  return diff / scale;
}

PetscInt owned_rows() { return 3 * (5 + world_rank()); }

TEST(BlockOperator, HoldsTheAijEntriesAndFollowsUpdates) {
  std::mt19937 rng(31 + static_cast<unsigned>(world_rank()));
  const Entries e = random_blocks(rng, false);
  PetscOwner<Mat, MatDestroy> aij;
  AijInsertion insertion(MPI_COMM_WORLD, owned_rows(), e.i, e.j, aij);
  insertion.insert(aij, random_values(rng, e.i.size()).data());

  std::optional<BlockOperator> op = BlockOperator::create(aij);
  ASSERT_TRUE(op.has_value());
  const char* expected_type = world_size() == 1 ? MATSEQBAIJ : MATMPIBAIJ;
  PetscBool is_baij = PETSC_FALSE;
  EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(op->matrix()), expected_type, &is_baij));
  EXPECT_TRUE(is_baij);
  EXPECT_GT(op->bytes(), 0U);
  // Copies, not sums: the same doubles.
  EXPECT_EQ(largest_difference(aij, op->matrix()), 0.0);
  EXPECT_LT(product_difference(aij, op->matrix()), 1e-14);

  // New values (another Jacobian): the copy follows.
  insertion.insert(aij, random_values(rng, e.i.size()).data());
  EXPECT_GT(largest_difference(aij, op->matrix()), 0.0);
  op->update(aij);
  EXPECT_EQ(largest_difference(aij, op->matrix()), 0.0);
  EXPECT_LT(product_difference(aij, op->matrix()), 1e-14);
}

/// `e` with each entry's transposed entry added, and values for both: an AIJ matrix A + A^T (symmetric).
Entries symmetric_entries(const Entries& e) {
  Entries s = e;
  s.i.insert(s.i.end(), e.j.begin(), e.j.end());
  s.j.insert(s.j.end(), e.i.begin(), e.i.end());
  return s;
}
std::vector<double> symmetric_values(std::mt19937& rng, std::size_t n) {
  std::vector<double> v = random_values(rng, n);
  v.insert(v.end(), v.begin(), v.end());
  return v;
}

/// A symmetric AIJ matrix A + A^T on random_blocks' pattern (`entries`: A's), with its insertion for new values.
struct SymmetricSystem {
  Entries entries, both;  // A's, and A's with A^T's
  PetscOwner<Mat, MatDestroy> aij;
  AijInsertion insertion;
  explicit SymmetricSystem(std::mt19937& rng)
      : entries(random_blocks(rng, false)),
        both(symmetric_entries(entries)),
        insertion(MPI_COMM_WORLD, owned_rows(), both.i, both.j, aij) {
    insertion.insert(aij, symmetric_values(rng, entries.i.size()).data());
  }
};

// With own_product the Krylov method multiplies with our own product (a shell over the upper triangle of the
// diagonal part and the ghost columns' blocks, on the OpenMP threads; on several ranks with the ghost values
// scattered): it must multiply like the symmetric AIJ matrix, transposed too (every rank has blocks in other ranks'
// columns), give its diagonal, and follow update().
TEST(BlockOperator, OwnProductMultipliesLikeTheSymmetricAijMatrix) {
  std::mt19937 rng(43 + static_cast<unsigned>(world_rank()));
  SymmetricSystem system(rng);
  const Entries& e = system.entries;
  Mat aij = system.aij;
  AijInsertion& insertion = system.insertion;
  PetscBool symmetric = PETSC_FALSE;
  EDGEFEM_PETSC(MatIsSymmetric(aij, 1e-12, &symmetric));
  ASSERT_TRUE(symmetric);

  std::optional<BlockOperator> op = BlockOperator::create(aij, true);
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->matrix(), nullptr);  // no PETSc BAIJ matrix
  PetscBool is_shell = PETSC_FALSE;
  EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(op->product()), MATSHELL, &is_shell));
  EXPECT_TRUE(is_shell);
  EXPECT_LT(product_difference(aij, op->product()), 1e-14);
  EXPECT_LT(product_difference(aij, op->product(), true), 1e-14);
  insertion.insert(aij, symmetric_values(rng, e.i.size()).data());
  op->update(aij);
  EXPECT_LT(product_difference(aij, op->product()), 1e-14);
  EXPECT_LT(product_difference(aij, op->product(), true), 1e-14);
  PetscOwner<Vec, VecDestroy> da, db;
  EDGEFEM_PETSC(MatCreateVecs(aij, da.address(), db.address()));
  EDGEFEM_PETSC(MatGetDiagonal(aij, da));
  EDGEFEM_PETSC(MatGetDiagonal(op->product(), db));
  EDGEFEM_PETSC(VecAXPY(db, -1.0, da));
  PetscReal diagonal_difference = 1.0;
  EDGEFEM_PETSC(VecNorm(db, NORM_INFINITY, &diagonal_difference));
  EXPECT_EQ(diagonal_difference, 0.0);
  // Without own_product, product() is the BAIJ matrix.
  std::optional<BlockOperator> plain = BlockOperator::create(aij);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->product(), plain->matrix());
}

// A Jacobian that is not symmetric stops the run on every rank with a message (update() checks every 16th block row
// of the diagonal part, a different one each time: 16 updates see every row).
TEST(BlockOperator, OwnProductRefusesAMatrixThatIsNotSymmetric) {
  std::mt19937 rng(47 + static_cast<unsigned>(world_rank()));
  SymmetricSystem system(rng);
  const Entries& e = system.entries;
  Mat aij = system.aij;
  AijInsertion& insertion = system.insertion;
  std::optional<BlockOperator> op = BlockOperator::create(aij, true);
  ASSERT_TRUE(op.has_value());
  // Only the last rank's values lose their symmetry (its diagonal blocks: entry (0, 1) of each changes).
  std::vector<double> values = symmetric_values(rng, e.i.size());
  if (world_rank() == world_size() - 1)
    for (std::size_t k = 0; k < e.i.size(); ++k)
      if (e.i[k] / 3 == e.j[k] / 3 && e.i[k] % 3 == 0 && e.j[k] % 3 == 1) values[k] += 0.5;
  insertion.insert(aij, values.data());
  int thrown = 0;
  for (int update = 0; update < 16 && thrown == 0; ++update) {
    try {
      op->update(aij);
    } catch (const SolverError& error) {
      thrown = 1;
      EXPECT_NE(std::string(error.what()).find("block_operator: false"), std::string::npos) << error.what();
    }
  }
  int everywhere = 0;
  MPI_Allreduce(&thrown, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(everywhere, 1);
}

/// max |y_a - y_b| / max |y_a| of two products of `a` and `b` (matrices of one communicator) on the same random
/// vectors:
/// `which` 0: A x, 1: z + A x, 2: A x + A x in place (w = y), 3: A^T x, 4: z + A^T x.
double self_product_difference(Mat a, Mat b, int which) {
  const bool transpose = which >= 3;
  PetscOwner<Vec, VecDestroy> x, z, ya, yb;
  if (transpose) EDGEFEM_PETSC(MatCreateVecs(a, ya.address(), x.address()));
  else EDGEFEM_PETSC(MatCreateVecs(a, x.address(), ya.address()));
  EDGEFEM_PETSC(VecDuplicate(ya, yb.address()));
  EDGEFEM_PETSC(VecDuplicate(ya, z.address()));
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(a), &comm));
  PetscRandom rand = nullptr;
  EDGEFEM_PETSC(PetscRandomCreate(comm, &rand));
  EDGEFEM_PETSC(VecSetRandom(x, rand));
  EDGEFEM_PETSC(VecSetRandom(z, rand));
  EDGEFEM_PETSC(PetscRandomDestroy(&rand));
  for (auto [m, y] : {std::pair<Mat, Vec>{a, ya}, std::pair<Mat, Vec>{b, yb}}) {
    switch (which) {
      case 0: EDGEFEM_PETSC(MatMult(m, x, y)); break;
      case 1: EDGEFEM_PETSC(MatMultAdd(m, x, z, y)); break;
      case 2:
        EDGEFEM_PETSC(MatMult(m, x, y));
        EDGEFEM_PETSC(MatMultAdd(m, x, y, y));
        break;
      case 3: EDGEFEM_PETSC(MatMultTranspose(m, x, y)); break;
      default: EDGEFEM_PETSC(MatMultTransposeAdd(m, x, z, y)); break;
    }
  }
  PetscReal scale = 0.0, diff = 0.0;
  EDGEFEM_PETSC(VecNorm(ya, NORM_INFINITY, &scale));
  EDGEFEM_PETSC(VecAXPY(yb, -1.0, ya));
  EDGEFEM_PETSC(VecNorm(yb, NORM_INFINITY, &diff));
  return diff / scale;
}

// GAMG's coarse operators and interpolations multiply through OwnAijProduct (multigrid_products.hpp): on a
// rectangular matrix (an interpolation's shape: more rows than columns, up to 8 entries per row, empty rows) and a
// square one, each rank's own (SeqAIJ) and distributed over all ranks (MPIAIJ: rank r owns (r + 1) times the
// rows and columns, so one rank has more than another, and entries fall in every rank's columns), every product
// PCMG asks for must match PETSc's own to round-off.
TEST(OwnAijProduct, MultipliesLikeTheMatrix) {
  std::mt19937 rng(71 + static_cast<unsigned>(world_rank()));
  for (const bool distributed : {false, true}) {
    using Shape = std::pair<PetscInt, PetscInt>;
    for (const auto& [rows, columns] : {Shape{257, 31}, Shape{96, 96}}) {
      const MPI_Comm comm = distributed ? MPI_COMM_WORLD : PETSC_COMM_SELF;
      const PetscInt share = distributed ? world_rank() + 1 : 1;
      PetscOwner<Mat, MatDestroy> m;
      EDGEFEM_PETSC(MatCreate(comm, m.address()));
      EDGEFEM_PETSC(MatSetSizes(m, share * rows, share * columns, PETSC_DETERMINE, PETSC_DETERMINE));
      EDGEFEM_PETSC(MatSetType(m, distributed ? MATMPIAIJ : MATSEQAIJ));
      EDGEFEM_PETSC(MatSetUp(m));
      PetscInt first = 0, n_columns = 0;
      EDGEFEM_PETSC(MatGetOwnershipRange(m, &first, nullptr));
      EDGEFEM_PETSC(MatGetSize(m, nullptr, &n_columns));
      EDGEFEM_PETSC(MatSetOption(m, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      std::uniform_int_distribution<PetscInt> column(0, n_columns - 1), count(0, 7);
      std::uniform_real_distribution<double> value(-1.0, 1.0);
      for (PetscInt r = first; r < first + share * rows; ++r) {
        if (r % 11 == 5) continue;  // an empty row
        for (PetscInt k = count(rng); k >= 0; --k)
          EDGEFEM_PETSC(MatSetValue(m, r, column(rng), value(rng), ADD_VALUES));
      }
      EDGEFEM_PETSC(MatAssemblyBegin(m, MAT_FINAL_ASSEMBLY));
      EDGEFEM_PETSC(MatAssemblyEnd(m, MAT_FINAL_ASSEMBLY));
      const OwnAijProduct own(m);
      PetscBool is_shell = PETSC_FALSE;
      EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(own.shell()), MATSHELL, &is_shell));
      EXPECT_TRUE(is_shell);
      for (int which = 0; which < 5; ++which)
        EXPECT_LT(self_product_difference(m, own.shell(), which), 1e-14)
            << (distributed ? "distributed " : "") << rows << " x " << columns << ", product " << which;
    }
  }
}

// GAMG's matrices come in whole blocks (interpolations 3 x 6 from the finest level, coarse operators 6 x 6): on
// such a pattern OwnAijProduct multiplies by a block copy in single precision (multigrid_products.hpp). Each block
// shape it has kernels for, each rank's own matrix and one distributed over all ranks (rank r owns (r + 1) times
// the block rows and columns; blocks in every rank's columns; empty block rows): the copy is used and every product
// matches PETSc's to round-off when the values are exact in single precision (multiples of 1/1024 up to 1, and
// sums of a few), and to single precision's rounding (1e-5 relative) for any doubles. With one lone entry on the
// last rank (a block not stored whole) that rank multiplies entry by entry, the others by blocks, and the products
// still match. All of it with the AVX2 kernels of the six-column blocks (where the CPU has them) and with the
// portable ones, on 1 and on 3 OpenMP threads (the transposed products sum per-thread shares).
TEST(OwnAijProduct, MultipliesByBlocksLikeTheMatrix) {
  std::mt19937 rng(83 + static_cast<unsigned>(world_rank()));
  using Shape = std::pair<int, int>;
  const int saved_threads = omp_get_max_threads();
  for (const int threads : {1, 3})
  for (const bool vector : {true, false})
  for (const bool distributed : {false, true}) {
    omp_set_num_threads(threads);
    OwnAijProduct::use_vector_kernels(vector);
    for (const auto& [r, c] : {Shape{3, 6}, Shape{6, 6}, Shape{3, 3}, Shape{6, 3}}) {
      for (const auto& [broken, exact] : {std::pair{false, true}, std::pair{true, true}, std::pair{false, false}}) {
        const MPI_Comm comm = distributed ? MPI_COMM_WORLD : PETSC_COMM_SELF;
        const PetscInt share = distributed ? world_rank() + 1 : 1;
        const PetscInt block_rows = 23 * share, block_columns = 7 * share;
        PetscOwner<Mat, MatDestroy> m;
        EDGEFEM_PETSC(MatCreate(comm, m.address()));
        EDGEFEM_PETSC(MatSetSizes(m, r * block_rows, c * block_columns, PETSC_DETERMINE, PETSC_DETERMINE));
        EDGEFEM_PETSC(MatSetBlockSizes(m, r, c));
        EDGEFEM_PETSC(MatSetType(m, distributed ? MATMPIAIJ : MATSEQAIJ));
        EDGEFEM_PETSC(MatSetUp(m));
        EDGEFEM_PETSC(MatSetOption(m, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        PetscInt first = 0, n_columns = 0;
        EDGEFEM_PETSC(MatGetOwnershipRange(m, &first, nullptr));
        EDGEFEM_PETSC(MatGetSize(m, nullptr, &n_columns));
        std::uniform_int_distribution<PetscInt> column_block(0, n_columns / c - 1), count(0, 4);
        std::uniform_real_distribution<double> any_value(-1.0, 1.0);
        std::uniform_int_distribution<int> steps(-1024, 1024);
        const auto value = [&](std::mt19937& g) { return exact ? steps(g) / 1024.0 : any_value(g); };
        const bool lone = broken && (!distributed || world_rank() == world_size() - 1);
        for (PetscInt g = first / r; g < first / r + block_rows; ++g) {
          if (g % 7 == 3) continue;  // an empty block row
          for (PetscInt k = count(rng); k >= 0; --k) {
            const PetscInt b = column_block(rng);
            for (int i = 0; i < r; ++i)
              for (int j = 0; j < c; ++j) EDGEFEM_PETSC(MatSetValue(m, r * g + i, c * b + j, value(rng), ADD_VALUES));
          }
        }
        if (lone) {  // one entry of a block that nothing else touches: row first + 1, in the empty block row 3
          const PetscInt g = first / r + ((7 - (first / r) % 7) + 3) % 7;
          EDGEFEM_PETSC(MatSetValue(m, r * g + 1, 2, value(rng), ADD_VALUES));
        }
        EDGEFEM_PETSC(MatAssemblyBegin(m, MAT_FINAL_ASSEMBLY));
        EDGEFEM_PETSC(MatAssemblyEnd(m, MAT_FINAL_ASSEMBLY));
        const OwnAijProduct own(m);
        EXPECT_EQ(own.block_shape(), lone ? Shape(0, 0) : Shape(r, c))
            << (distributed ? "distributed " : "") << r << " x " << c << (broken ? ", broken" : "");
        for (int which = 0; which < 5; ++which) {
          const double difference = self_product_difference(m, own.shell(), which);
          EXPECT_LT(difference, exact ? 1e-14 : 1e-5)
              << (distributed ? "distributed " : "") << r << " x " << c << (broken ? ", broken" : "")
              << (exact ? "" : ", any doubles") << ", product " << which << (vector ? ", AVX2 kernels" : "") << ", "
              << threads << " threads";
          if (!exact) {
            EXPECT_GT(difference, 1e-12) << "the block copy is in single precision";
          }
        }
      }
    }
  }
  OwnAijProduct::use_vector_kernels(true);
  omp_set_num_threads(saved_threads);
}

TEST(BlockOperator, RefusedOnEveryRankWhenOneRankHasABrokenBlock) {
  std::mt19937 rng(57 + static_cast<unsigned>(world_rank()));
  const Entries e = random_blocks(rng, world_rank() == world_size() - 1);  // only the last rank's pattern
  PetscOwner<Mat, MatDestroy> aij;
  AijInsertion insertion(MPI_COMM_WORLD, owned_rows(), e.i, e.j, aij);
  EXPECT_FALSE(BlockOperator::create(aij).has_value());
}

}  // namespace test_block_operator
}  // namespace edgefem
