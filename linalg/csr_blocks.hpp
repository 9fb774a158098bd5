// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file csr_blocks.hpp
/// The local parts of a (B)AIJ matrix, the CSR structure of a sequential one (PETSc's own arrays, held while the object lives) and the test
/// that a CSR pattern consists of whole r x c blocks, shared by the block copies (block_operator.cpp,
/// multigrid_products.cpp) and the Galerkin products (galerkin.cpp).
#include <petscmat.h>

#include <array>

#include "linalg/petsc_util.hpp"

namespace edgefem {

/// The local parts of a matrix: {diagonal block} for a sequential matrix, {diagonal, off-diagonal} for an MPI one,
/// and the off-diagonal part's global columns (AIJ) or block columns (BAIJ).
struct LocalParts {
  std::array<Mat, 2> mats{nullptr, nullptr};
  int count = 1;
  const PetscInt* garray = nullptr;
};

/// The parts of an AIJ (`blocks` false) or BAIJ matrix.
inline LocalParts local_parts(Mat m, bool blocks = false) {
  LocalParts p;
  if (has_type(m, {blocks ? MATSEQBAIJ : MATSEQAIJ})) {
    p.mats[0] = m;
    return p;
  }
  if (blocks)
    EDGEFEM_PETSC(MatMPIBAIJGetSeqBAIJ(m, &p.mats[0], &p.mats[1], &p.garray));
  else
    EDGEFEM_PETSC(MatMPIAIJGetSeqAIJ(m, &p.mats[0], &p.mats[1], &p.garray));
  p.count = 2;
  return p;
}

/// MatGetRowIJ of a SeqAIJ (or, with `block_compressed`, SeqBAIJ block rows) matrix: no copy for these types;
/// MatRestoreRowIJ when this goes.
struct RowStructure {
  Mat mat = nullptr;
  PetscBool blocks = PETSC_FALSE;
  PetscInt n = 0;  ///< rows (block rows with `block_compressed`)
  const PetscInt* ia = nullptr;
  const PetscInt* ja = nullptr;
  explicit RowStructure(Mat m, bool block_compressed = false)
      : mat(m), blocks(block_compressed ? PETSC_TRUE : PETSC_FALSE) {
    PetscBool done = PETSC_FALSE;
    EDGEFEM_PETSC(MatGetRowIJ(mat, 0, PETSC_FALSE, blocks, &n, &ia, &ja, &done));
    if (done != PETSC_TRUE) throw PetscFailure("MatGetRowIJ gave no CSR structure");
  }
  ~RowStructure() {
    PetscBool done = PETSC_FALSE;
    MatRestoreRowIJ(mat, 0, PETSC_FALSE, blocks, &n, &ia, &ja, &done);
  }
  RowStructure(const RowStructure&) = delete;
  RowStructure& operator=(const RowStructure&) = delete;
};

/// True when the `rows` rows of the CSR pattern (ia, ja) are whole r x c blocks: the r rows of a block row list the
/// same columns, in runs of c that start at a multiple of c, by the column numbers `global(ja entry)` (the local
/// ones with the identity).
template <class Global>
bool whole_blocks(const PetscInt* ia, const PetscInt* ja, PetscInt rows, PetscInt r, PetscInt c, Global global) {
  if (rows % r != 0) return false;
  for (PetscInt g = 0; g < rows; g += r) {
    const PetscInt length = ia[g + 1] - ia[g];
    if (length % c != 0) return false;
    for (PetscInt i = 0; i < r; ++i) {
      if (ia[g + i + 1] - ia[g + i] != length) return false;
      const PetscInt* row = ja + ia[g + i];
      for (PetscInt k = 0; k < length; k += c) {
        const PetscInt first = global(ja[ia[g] + k]);
        if (first % c != 0) return false;
        for (PetscInt j = 0; j < c; ++j)
          if (global(row[k + j]) != first + j) return false;
      }
    }
  }
  return true;
}
inline bool whole_blocks(const PetscInt* ia, const PetscInt* ja, PetscInt rows, PetscInt r, PetscInt c) {
  return whole_blocks(ia, ja, rows, r, c, [](PetscInt j) { return j; });
}
template <class Global>
bool whole_blocks(const RowStructure& s, PetscInt r, PetscInt c, Global global) {
  return whole_blocks(s.ia, s.ja, s.n, r, c, global);
}
inline bool whole_blocks(const RowStructure& s, PetscInt r, PetscInt c) { return whole_blocks(s.ia, s.ja, s.n, r, c); }

}  // namespace edgefem
