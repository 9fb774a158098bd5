#pragma once
/// \file multigrid_products.hpp
/// Our own products for GAMG's coarse levels on one rank: each coarse operator and each interpolation, a SeqAIJ
/// matrix of PETSc's, gets a shell whose products run on the OpenMP threads over that matrix's own CSR arrays
/// (PETSc's run on one thread). With the finest level's BAIJ product (block_operator.hpp) a V-cycle then runs on
/// all of the rank's threads but for the vector updates and the coarsest solve.
///
/// Installed after every set-up of the hierarchy and removed before the next one (GAMG's set-up reads and replaces
/// the matrices the shells stand for), by the Newton driver (newton.cpp), which does the set-ups itself. The shells
/// only multiply: GAMG keeps the matrices, and the smoothers' Jacobi keeps its diagonal from them.
#include <petscksp.h>

#include <memory>
#include <vector>

#include "solver/petsc_util.hpp"

namespace edgefem {

/// A shell standing for a SeqAIJ matrix: y = A x, w = y + A x and y = A^T x (the last with a private coarse vector
/// per thread, summed), on the OpenMP threads.
class OwnAijProduct {
 public:
  /// Takes a reference to `aij` (SeqAIJ) and keeps its CSR arrays (PETSc's own, no copy) until destroyed.
  explicit OwnAijProduct(Mat aij);
  ~OwnAijProduct();
  OwnAijProduct(const OwnAijProduct&) = delete;
  OwnAijProduct& operator=(const OwnAijProduct&) = delete;

  [[nodiscard]] Mat shell() const { return shell_; }
  [[nodiscard]] Mat matrix() const { return aij_; }

 private:
  friend struct OwnAijKernels;
  PetscOwner<Mat, MatDestroy> aij_;  // our reference
  PetscInt rows_ = 0, columns_ = 0;
  const PetscInt* ia_ = nullptr;
  const PetscInt* ja_ = nullptr;
  PetscOwner<Mat, MatDestroy> shell_;
};

class MultigridProducts {
 public:
  /// Wraps the coarse levels (all but the coarsest and the finest) and the interpolations of `pc`, a set-up PCMG
  /// (GAMG) on one rank whose matrices are SeqAIJ; does nothing otherwise (installed() then says false).
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
  std::vector<Level> levels_;
};

}  // namespace edgefem
