#pragma once
/// \file multigrid_products.hpp
/// Our own products for GAMG's coarse levels: each coarse operator and each interpolation, an AIJ matrix of
/// PETSc's, gets a shell whose products run on the OpenMP threads over that matrix's own CSR arrays (PETSc's run
/// on one thread, and more slowly per entry on one thread too). On several ranks the off-diagonal part's ghost
/// values are scattered as PETSc's MatMult_MPIAIJ does (the transposed products add them back with a reverse
/// scatter). With the finest level's BAIJ product (block_operator.hpp) a V-cycle then runs on all of the rank's
/// threads but for the vector updates and the coarsest solve.
///
/// Installed after every set-up of the hierarchy and removed before the next one (GAMG's set-up reads and replaces
/// the matrices the shells stand for), by the Newton driver (newton.cpp), which does the set-ups itself. The shells
/// only multiply: GAMG keeps the matrices, and the smoothers' Jacobi keeps its diagonal from them.
#include <petscksp.h>

#include <memory>
#include <vector>

#include "solver/petsc_util.hpp"

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

  [[nodiscard]] Mat shell() const { return shell_; }
  [[nodiscard]] Mat matrix() const { return aij_; }

 private:
  friend struct OwnAijKernels;
  /// A SeqAIJ part: the diagonal one (or the whole matrix on one rank), or the off-diagonal one, whose columns
  /// are those of `ghosts`.
  struct Part {
    Mat mat = nullptr;
    PetscInt rows = 0, columns = 0;
    const PetscInt* ia = nullptr;
    const PetscInt* ja = nullptr;
  };
  static Part part(Mat seqaij);
  PetscOwner<Mat, MatDestroy> aij_;  // our reference
  Part diagonal_, off_diagonal_;
  PetscOwner<Vec, VecDestroy> ghosts_;  // several ranks: x at the off-diagonal part's columns
  PetscOwner<VecScatter, VecScatterDestroy> scatter_;
  mutable std::vector<PetscScalar> scratch_;  // the transposed products' per-thread sums
  PetscOwner<Mat, MatDestroy> shell_;
};

class MultigridProducts {
 public:
  /// Wraps the coarse levels (all but the coarsest and the finest) and the interpolations of `pc`, a set-up PCGAMG
  /// whose matrices are AIJ; does nothing otherwise (installed() then says false). Collective.
  void install(PC pc);
  /// Gives PETSc's matrices back to `pc` (the one install() wrapped). No-op when nothing is installed.
  void remove(PC pc);
  [[nodiscard]] bool installed() const { return !levels_.empty(); }

 private:
  struct Level {
    PetscInt index = 0;
    std::unique_ptr<OwnAijProduct> op;      // the level's operator (coarse levels), or null
    std::unique_ptr<OwnAijProduct> interp;  // the interpolation from the level below
  };
  /// Sets `level`'s interpolation, restriction, smoother operator and residual matrix in `pc`: our shells (`own`)
  /// or PETSc's matrices they stand for (the smoother's preconditioning matrix is always PETSc's).
  static void give_level(PC pc, const Level& level, bool own);
  std::vector<Level> levels_;
};

}  // namespace edgefem
