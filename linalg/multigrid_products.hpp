// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file multigrid_products.hpp
/// Our own products for GAMG's coarse levels: each coarse operator and each interpolation, an AIJ matrix of
/// PETSc's, gets a shell whose products run on the OpenMP threads (PETSc's run on one thread, and more slowly per
/// entry on one thread too): over a copy of the matrix's values by blocks, in single precision, when its pattern is
/// whole blocks (GAMG's are, with the rigid-body modes; half the bytes per product, which on a small last-level cache
/// run at the memory's bandwidth; the preconditioner stays a fixed symmetric operator), else over the matrix's own
/// CSR arrays. On several ranks the off-diagonal part's ghost values are scattered as PETSc's MatMult_MPIAIJ does
/// (the transposed products add them back with a reverse scatter). With the finest level's own product
/// (block_operator.hpp) a V-cycle then runs on all of the rank's threads but for the vector updates and the
/// coarsest solve.
///
/// Installed after every set-up of the hierarchy by GAMG and removed before the next one (GAMG's set-up reads and
/// replaces the matrices the shells stand for), by the preconditioner edgefem_gamg (edgefem_gamg.hpp), which owns the
/// set-ups.
/// The shells only multiply: GAMG keeps the matrices, and the smoothers' Jacobi keeps its diagonal from them. A
/// rebuild with the same interpolations is ours instead (update_coarse_operators: galerkin.hpp), which writes the
/// coarse matrices in place and refreshes the shells' copies; the shells stay installed.
#include <petscksp.h>

#include <memory>
#include <utility>
#include <vector>

#include "linalg/galerkin.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {

/// A shell standing for an AIJ matrix: y = A x, w = y + A x, y = A^T x and w = y + A^T x (the transposed ones with
/// a copy of the result per thread, added in thread order), on the OpenMP threads. Collective.
class OwnAijProduct {
 public:
  /// Takes a reference to `aij` (SeqAIJ, or MPIAIJ) and keeps its parts' CSR arrays (PETSc's own, no copy) until
  /// destroyed.
  explicit OwnAijProduct(Mat aij);
  ~OwnAijProduct();
  OwnAijProduct(const OwnAijProduct&) = delete;
  OwnAijProduct& operator=(const OwnAijProduct&) = delete;

  /// Copies the matrix's values again (its pattern unchanged: GalerkinProduct::update() wrote new ones).
  void refresh();

  [[nodiscard]] Mat shell() const { return shell_; }
  [[nodiscard]] Mat matrix() const { return aij_; }
  /// Our arrays (the block copies in single precision, the transposed products' sums, the ghost vector), not the
  /// AIJ matrix's.
  [[nodiscard]] std::size_t bytes() const;
  /// Blocks of six columns (3 x 6 and 6 x 6) multiply in AVX2 registers where the CPU has AVX2 and FMA (chosen at
  /// run time); `use_vector_kernels(false)` makes every product take the portable kernels (tests compare the two).
  static void use_vector_kernels(bool on) { vector_kernels_ = on; }

  /// The blocks this rank's parts multiply by ({r, c}), {0, 0} when one of them multiplies entry by entry.
  [[nodiscard]] std::pair<int, int> block_shape() const {
    const bool same = !off_diagonal_.mat || (off_diagonal_.r == diagonal_.r && off_diagonal_.c == diagonal_.c);
    return same ? std::pair<int, int>{diagonal_.r, diagonal_.c} : std::pair<int, int>{0, 0};
  }

 private:
  friend struct OwnAijKernels;
  /// A SeqAIJ part: the diagonal one (or the whole matrix on one rank), or the off-diagonal one, whose columns
  /// are those of `ghosts`. When its pattern consists of whole r x c blocks (r rows in a row, c columns from a
  /// multiple of c: GAMG's interpolations are 3 x 6 blocks from the finest level, its coarse operators 6 x 6 blocks
  /// with the six rigid-body modes) also a copy of its values by blocks, one column index per block, which the
  /// products use instead of PETSc's arrays (on the 136,565-tet cantilever the finest interpolation's products
  /// took as long as the finest operator's with twice the entries: a column index and a scattered read per entry).
  struct Part {
    Mat mat = nullptr;
    PetscInt rows = 0, columns = 0;
    const PetscInt* ia = nullptr;
    const PetscInt* ja = nullptr;
    int r = 0, c = 0;              // the block shape, 0 x 0 without the block copy
    std::vector<PetscInt> bi, bj;  // block rows: block columns
    std::vector<float> values;     // r * c values per block, row after row, in single precision
  };
  /// The part `seqaij`, with the block copy when its pattern is whole `row_block` x `column_block` blocks of a
  /// shape the products have kernels for.
  static Part part(Mat seqaij, PetscInt row_block, PetscInt column_block);
  /// The block copy of `p`'s values from its matrix (nothing without a block copy).
  static void copy_values(Part& p);
  PetscOwner<Mat, MatDestroy> aij_;  // our reference
  Part diagonal_, off_diagonal_;
  PetscOwner<Vec, VecDestroy> ghosts_;  // several ranks: x at the off-diagonal part's columns
  PetscOwner<VecScatter, VecScatterDestroy> scatter_;
  mutable std::vector<PetscScalar> scratch_;  // the transposed products' per-thread sums
  PetscOwner<Mat, MatDestroy> shell_;
  static inline bool vector_kernels_ = true;
};

class MultigridProducts {
 public:
  /// Wraps the coarse levels (all but the coarsest and the finest) and the interpolations of `pc`, a set-up PCGAMG
  /// whose matrices are AIJ; does nothing otherwise (installed() then says false). Collective.
  void install(PC pc);
  /// Gives PETSc's matrices back to `pc` (the one install() wrapped). No-op when nothing is installed.
  void remove(PC pc);
  [[nodiscard]] bool installed() const { return !levels_.empty(); }
  /// Our copies (OwnAijProduct::bytes), the interpolations' AIJ matrices our shells stand for (PETSc's levels then
  /// hold the shells), our own Galerkin products and the finest interpolation's rest values.
  [[nodiscard]] std::size_t bytes() const;
  struct Bytes {
    std::size_t copies = 0;          ///< our single-precision block copies (OwnAijProduct::bytes)
    std::size_t interpolations = 0;  ///< the interpolations' AIJ matrices our shells stand for
    std::size_t galerkin = 0;        ///< our own Galerkin products (not those GAMG's set-up attached)
    std::size_t rest = 0;            ///< the finest interpolation's rest values (the corotational rebuild)
  };
  [[nodiscard]] Bytes bytes_by_part() const;
  /// A rebuild of the installed hierarchy that keeps its interpolations, as GAMG's own rebuild does: every coarse
  /// operator recomputed as P^T A P from the finest level's preconditioning matrix as it is now, level after level,
  /// by our Galerkin products (galerkin.hpp), and our copies of them refreshed; the smoothers' and the coarsest
  /// solve's set-ups follow from their matrices' new state when PETSc next applies them. False, with nothing
  /// changed, when the products cannot (a matrix not of whole blocks): GAMG's set-up must then. Collective.
  /// `rotations` (9 per fine vertex of this rank, row-major; empty: none): first the finest interpolation's rows are
  /// set to R_v times its rows as GAMG's set-up made them (the corotational interpolation: for a rigidly rotated
  /// body, whose tangent is R K R^T, the coarse operators are then the rest state's exactly), in PETSc's matrix, our
  /// copy of it and the Galerkin product's (the rows other ranks own fetched again).
  bool update_coarse_operators(PC pc, const std::vector<double>& rotations = {});

 private:
  struct Level {
    PetscInt index = 0;
    std::unique_ptr<OwnAijProduct> op;      // the level's operator (coarse levels), or null
    std::unique_ptr<OwnAijProduct> interp;  // the interpolation from the level below
  };
  /// Sets `level`'s interpolation, restriction, smoother operator and residual matrix in `pc`: our shells (`own`)
  /// or PETSc's matrices they stand for (the smoother's preconditioning matrix is always PETSc's).
  static void give_level(PC pc, const Level& level, bool own);
  /// `own`: the finest level's smoother preconditions with the Krylov operator (our block copy, whose diagonal is
  /// a copy of 3n values) instead of the assembled AIJ matrix: its Jacobi set-up at every Newton iteration then
  /// reads the copy's diagonal blocks, where PETSc's MatGetDiagonal_SeqAIJ searches every row of the AIJ matrix
  /// for its diagonal entry (the same values: the copy is the AIJ matrix's). Not `own`: PETSc's arrangement again
  /// (GAMG's set-up). Nothing unless the Krylov operator is a shell with a diagonal and the smoother still has
  /// the arrangement being replaced.
  static void finest_diagonal_from_operator(PC pc, bool own);
  std::vector<Level> levels_;
  // Each level's product, the finest level's first, found at the first update: the one GAMG's set-up made with our
  // products (galerkin_product_of: its coarse matrix owns it), else one of ours (owned_galerkin_).
  std::vector<GalerkinProduct*> galerkin_;
  std::vector<std::unique_ptr<GalerkinProduct>> owned_galerkin_;
  bool galerkin_refused_ = false;  // create() said no: GAMG's set-up rebuilds
  /// The finest interpolation's rows rotated by `rotations` (9 per block row) from its values as GAMG made them.
  void rotate_finest_interpolation(const std::vector<double>& rotations);
  // Those values (diagonal, off-diagonal part), in single precision: the products that use the rotated rows (our
  // copy, the Galerkin product's) hold them in single precision anyway (issue 56: 99 -> 50 bytes per tet).
  std::array<std::vector<float>, 2> finest_rest_;
};

}  // namespace edgefem
