// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file block_operator.hpp
/// A block-size-3 BAIJ copy of the assembled AIJ matrix, for the Krylov method's and the finest multigrid level's
/// matrix-vector products.
///
/// Why: PETSc's BAIJ product reads one column index per 3x3 block instead of one per entry (or per row group, AIJ's
/// inodes); on the 136,565-tet cantilever's Jacobian `MatMult` takes 1.22 ms instead of 1.96 ms on 1 rank (0.84
/// instead of 1.31 ms per rank on 2), and a CG iteration with GAMG 11.7 instead of 17.3 ms (6.1 instead of 7.9 ms on
/// 2 ranks) with the BAIJ matrix as the operator and the AIJ one as the preconditioner's matrix (docs/theory/solver.md).
/// GAMG itself needs AIJ (its Galerkin products), so the assembly keeps writing the AIJ matrix and update() copies
/// its values here: a structured copy on the OpenMP threads, no index map (the copy relies on every 3x3 block of
/// the pattern being stored whole, which the constructor checks). Under multigrid the products are our own
/// (product(): on the OpenMP threads, faster than PETSc's on one thread too; docs/theory/solver.md) over arrays of our
/// own, without a PETSc BAIJ matrix: the rank's diagonal part as its upper triangle (SymmetricBlocks: the
/// Jacobians multigrid solves are symmetric, and update() checks it), the ghost columns' part whole.
#include <petscmat.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "linalg/petsc_util.hpp"
#include "linalg/symmetric_blocks.hpp"

namespace edgefem {

class BlockOperator {
 public:
  /// Collective. A BAIJ matrix (block size 3) with the pattern of `aij` (assembled, block size 3); std::nullopt
  /// when some 3x3 block of aij's pattern is not stored whole on some rank (then the AIJ matrix serves alone).
  /// `own_product`: instead of the BAIJ matrix, our own product (product()) of the symmetric `aij` (also
  /// std::nullopt when some rank's diagonal part has a block (r, c) without a block (c, r)).
  static std::optional<BlockOperator> create(Mat aij, bool own_product = false);

  /// The copy's values := aij's (the matrix create() was given, same pattern). Collective. With `own_product`,
  /// throws SolverError on every rank when aij is not symmetric (an entry differs from its transposed one by
  /// more than 1e-10 times the largest entry's magnitude).
  void update(Mat aij);

  /// The BAIJ matrix (nullptr with `own_product`).
  [[nodiscard]] Mat matrix() const { return baij_; }
  /// The matrix to multiply with: with `own_product` a shell whose y = A x runs over our copy's 3x3 blocks on the
  /// OpenMP threads (PETSc's MatMult_SeqBAIJ_3 runs on one and is slower on one too; on several ranks the ghost
  /// values' scatter overlaps the diagonal part's product, as in PETSc's MatMult_MPIBAIJ; A^T x = A x, the
  /// diagonal is the copy's); else matrix().
  [[nodiscard]] Mat product() const { return own_ ? own_->shell.get() : baij_.get(); }
  /// Bytes of the copy on this rank (values and block indices).
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  BlockOperator() = default;
  /// Our own product of `aij` (collective); false when some rank's diagonal part cannot be held by its upper
  /// triangle.
  bool make_own_product(Mat aij);
  /// The off-diagonal part of the matrix on several ranks, all its blocks: block rows, block columns of the ghost
  /// vector, 9 values per block (column by column).
  struct GhostBlocks {
    std::vector<PetscInt> bi, bj;
    std::vector<PetscScalar> values;
  };
  /// Our product's data (on the heap: the shell keeps a pointer to it, and BlockOperator moves).
  struct OwnProduct {
    std::optional<SymmetricBlocks> diagonal;
    GhostBlocks off_diagonal;
    PetscOwner<Vec, VecDestroy> ghosts;  // several ranks: the off-diagonal part's columns of x
    PetscOwner<VecScatter, VecScatterDestroy> scatter;
    PetscOwner<Mat, MatDestroy> assembled;  // the AIJ matrix copied (a reference): MatGetInfo's answer
    PetscOwner<Mat, MatDestroy> shell;
  };
  PetscOwner<Mat, MatDestroy> baij_;
  std::unique_ptr<OwnProduct> own_;
  std::size_t bytes_ = 0;
};

}  // namespace edgefem
