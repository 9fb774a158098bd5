// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file symmetric_blocks.hpp
/// The upper triangle of a symmetric matrix of whole 3x3 blocks (a rank's diagonal part of the Jacobian: its own
/// vertices' rows and columns), in arrays of its own, and y = A x from it on the OpenMP threads.
///
/// Why: the products of multigrid's Krylov method and finest smoothers read the whole matrix each time, and on a
/// machine whose last-level cache is smaller than the matrix they run at the memory's bandwidth; the upper
/// triangle is a little more than half the bytes (each off-diagonal block once, read for A_rc x_c and for
/// A_rc^T x_r). A block row's transposed contributions go to later rows: a thread writes those of its own range of
/// rows in place and those beyond it into a buffer of its own, which the later ranges' threads add after a barrier
/// in thread order (the same sums in the same order on every run). The loop over a range of rows has an AVX2/FMA
/// version besides the portable one, picked at run time by the CPU (docs/theory/solver.md).
///
/// Numbering: block rows and columns are the local vertex numbers of the part (row r holds dofs 3r, 3r+1, 3r+2);
/// each 3x3 block is stored column by column (value (i, j) at i + 3 j), as PETSc's BAIJ.
#include <petscsys.h>

#include <cstddef>
#include <vector>

namespace edgefem {

class SymmetricBlocks {
 public:
  /// The upper triangle's structure of a square sequential AIJ part given by its CSR arrays (`n_rows` scalar rows,
  /// columns sorted in each row) whose 3x3 blocks are stored whole (the caller checks); the values are zero until
  /// copy(). `pattern_symmetric()` tells whether block (c, r) is stored wherever block (r, c) is (else the object
  /// cannot hold the matrix). The OpenMP threads get ranges of block rows with about the same number of blocks.
  SymmetricBlocks(PetscInt n_rows, const PetscInt* ia, const PetscInt* ja);

  [[nodiscard]] bool pattern_symmetric() const { return pattern_symmetric_; }

  /// The largest |A_ij - A_ji| and |A_ij| over the part's entries, as copy() saw them.
  struct Asymmetry {
    double difference = 0.0;
    double scale = 0.0;
  };
  /// Values := the upper triangle's of the AIJ part's `values`, its rows `ia` (the constructor's structure); also
  /// measures how far the part is from symmetric on every 16th block row (the first, second, ... from one call to
  /// the next; the lower triangle is read only for that).
  Asymmetry copy(const PetscInt* ia, const PetscScalar* values);

  /// y := A x, or y += A x with `add` (x and y: the part's 3 n dofs, distinct arrays).
  void multiply(const PetscScalar* x, PetscScalar* y, bool add) const;

  /// d := the diagonal of A (3 n values).
  void diagonal(PetscScalar* d) const;

  /// Whether multiply() runs its AVX2 loop (the default where the CPU has AVX2 and FMA) or the portable one;
  /// `use_vector_kernel(false)` picks the portable loop (tests compare the two), `true` is ignored without AVX2.
  [[nodiscard]] bool vector_kernel() const { return vector_kernel_; }
  void use_vector_kernel(bool on);

  /// Bytes of the values and indices held.
  [[nodiscard]] std::size_t bytes() const;
  [[nodiscard]] std::size_t n_blocks() const { return columns_.size(); }
  [[nodiscard]] std::size_t n_rows() const { return static_cast<std::size_t>(n_); }

 private:
  PetscInt n_ = 0;                    // block rows
  std::vector<PetscInt> rows_;        // n + 1: block row r's upper blocks are rows_[r] .. rows_[r + 1) - 1
  std::vector<PetscInt> columns_;     // block column of each upper block (>= its row; the diagonal block first)
  std::vector<PetscInt> skip_;        // per block row: blocks of the AIJ row left of the diagonal
  std::vector<PetscInt> mirror_;      // per upper block (r, c): the position of block (c, r) in block row c of the AIJ
  std::vector<PetscScalar> values_;   // 9 per upper block
  std::vector<PetscInt> bounds_;      // threads' ranges of block rows: [bounds_[t], bounds_[t + 1])
  std::vector<PetscInt> spill_end_;   // range t's transposed blocks reach rows below spill_end_[t]
  mutable std::vector<std::vector<PetscScalar>> spills_;  // range t: rows bounds_[t + 1] .. spill_end_[t] - 1
  PetscInt copies_ = 0;  // copy() calls so far
  bool pattern_symmetric_ = true;
  bool vector_kernel_ = false;
};

}  // namespace edgefem
