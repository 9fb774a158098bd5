// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file shared_values.hpp
/// One array of doubles that structures whose values are never needed at the same time take turns in (issue 56).
///
/// Why: the assembler's COO values (solver/assembly.hpp) live from a Jacobian's evaluation to its hand-over to PETSc,
/// and the Krylov operator's upper triangle (SymmetricBlocks, linalg/symmetric_blocks.hpp) from its copy of the
/// handed-over matrix to the next evaluation: the one's values are dead while the other's live. Each in an array of
/// its own, the peak resident set held both at once (the next Jacobian's COO values allocated beside the copy's values
/// and the whole multigrid hierarchy: 202 + 107 bytes per tet on the 136,565-tet cantilever); in one array, the larger
/// of the two. The assembler that made a matrix composes its SharedValues on it (compose_shared_values), where the
/// Krylov operator's copy finds it (shared_values_of).
///
/// A holder that uses its values after another took them is a bug: held_by() tells, and SymmetricBlocks checks it
/// before every product.
#include <petscmat.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace edgefem {

class SharedValues {
 public:
  /// The first n values (their contents unspecified), now `holder`'s; whoever held them before has lost them. Grows
  /// the array when n exceeds it (never shrinks it).
  std::span<double> take(const void* holder, std::size_t n);
  /// Whether `holder` took the values last (its values are the array's).
  [[nodiscard]] bool held_by(const void* holder) const { return holder != nullptr && holder_ == holder; }
  /// The array (valid until the next take() that grows it).
  [[nodiscard]] double* data() { return values_.data(); }
  [[nodiscard]] const double* data() const { return values_.data(); }
  /// Bytes of the array.
  [[nodiscard]] std::size_t bytes() const { return values_.capacity() * sizeof(double); }

 private:
  std::vector<double> values_;
  const void* holder_ = nullptr;
};

/// Composes `values` on `matrix` (a reference the matrix keeps as long as it lives).
void compose_shared_values(Mat matrix, const std::shared_ptr<SharedValues>& values);
/// The SharedValues composed on `matrix`, or null.
[[nodiscard]] std::shared_ptr<SharedValues> shared_values_of(Mat matrix);

}  // namespace edgefem
