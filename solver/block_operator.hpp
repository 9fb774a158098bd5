#pragma once
/// \file block_operator.hpp
/// A block-size-3 BAIJ copy of the assembled AIJ matrix, for the Krylov method's and the finest multigrid level's
/// matrix-vector products.
///
/// Why: PETSc's BAIJ product reads one column index per 3x3 block instead of one per entry (or per row group, AIJ's
/// inodes); on the 136,565-tet cantilever's Jacobian `MatMult` takes 1.22 ms instead of 1.96 ms on 1 rank (0.84
/// instead of 1.31 ms per rank on 2), and a CG iteration with GAMG 11.7 instead of 17.3 ms (6.1 instead of 7.9 ms on
/// 2 ranks) with the BAIJ matrix as the operator and the AIJ one as the preconditioner's matrix (docs/solver.md).
/// GAMG itself needs AIJ (its Galerkin products), so the assembly keeps writing the AIJ matrix and update() copies
/// its values here: a structured copy on the OpenMP threads, no index map (the copy relies on every 3x3 block of
/// the pattern being stored whole, which the constructor checks).
#include <petscmat.h>

#include <cstddef>
#include <optional>

#include "solver/petsc_util.hpp"

namespace edgefem {

class BlockOperator {
 public:
  /// Collective. A BAIJ matrix (block size 3) with the pattern of `aij` (assembled, block size 3); std::nullopt
  /// when some 3x3 block of aij's pattern is not stored whole on some rank (then the AIJ matrix serves alone).
  static std::optional<BlockOperator> create(Mat aij);

  /// The BAIJ matrix's values := aij's (the matrix create() was given, same pattern). Collective.
  void update(Mat aij);

  [[nodiscard]] Mat matrix() const { return baij_; }
  /// Bytes of the copy on this rank (values and block indices).
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  BlockOperator() = default;
  PetscOwner<Mat, MatDestroy> baij_;
  std::size_t bytes_ = 0;
};

}  // namespace edgefem
