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
/// the pattern being stored whole, which the constructor checks). Under multigrid the products are our own over
/// the copy's blocks (product(): on the OpenMP threads, faster than PETSc's on one thread too; docs/solver.md).
#include <petscmat.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "solver/petsc_util.hpp"

namespace edgefem {

class BlockOperator {
 public:
  /// Collective. A BAIJ matrix (block size 3) with the pattern of `aij` (assembled, block size 3); std::nullopt
  /// when some 3x3 block of aij's pattern is not stored whole on some rank (then the AIJ matrix serves alone).
  /// `own_product`: also our own product (product()).
  static std::optional<BlockOperator> create(Mat aij, bool own_product = false);

  /// The BAIJ matrix's values := aij's (the matrix create() was given, same pattern). Collective.
  void update(Mat aij);

  [[nodiscard]] Mat matrix() const { return baij_; }
  /// The matrix to multiply with: with `own_product` a shell whose y = A x runs over matrix()'s 3x3 blocks on the
  /// OpenMP threads (PETSc's MatMult_SeqBAIJ_3 runs on one and is slower on one too; on several ranks the ghost
  /// values' scatter overlaps the diagonal part's product, as in PETSc's MatMult_MPIBAIJ; A^T x is PETSc's);
  /// else matrix().
  [[nodiscard]] Mat product() const { return own_ ? own_->shell.get() : baij_.get(); }
  /// Bytes of the copy on this rank (values and block indices).
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  BlockOperator() = default;
  void make_own_product();  // collective
  /// One local part of the BAIJ matrix (the diagonal one, or the off-diagonal one on several ranks): its block
  /// rows and block columns (of the ghost vector for the off-diagonal part).
  struct Part {
    Mat mat = nullptr;  // SeqBAIJ, owned by baij_
    std::vector<PetscInt> bi, bj;
  };
  /// Our product's data (on the heap: the shell keeps a pointer to it, and BlockOperator moves).
  struct OwnProduct {
    Mat baij = nullptr;  // not owned
    Part diagonal, off_diagonal;
    PetscOwner<Vec, VecDestroy> ghosts;  // several ranks: the off-diagonal part's columns of x
    PetscOwner<VecScatter, VecScatterDestroy> scatter;
    PetscOwner<Mat, MatDestroy> shell;
  };
  PetscOwner<Mat, MatDestroy> baij_;
  std::unique_ptr<OwnProduct> own_;
  std::size_t bytes_ = 0;
};

}  // namespace edgefem
