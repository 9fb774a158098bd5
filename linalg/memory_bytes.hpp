// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file memory_bytes.hpp
/// What the linear solver's PETSc objects hold, in bytes, for the run's memory account (run/memory_account.hpp):
/// the AIJ matrices (values, column indices, row arrays), the multigrid hierarchy (coarse operators,
/// interpolations, our single-precision copies and Galerkin products) and the Krylov, smoother and multigrid vectors.
/// Counted from the objects' sizes (MatGetInfo's allocated entries, vector lengths, our arrays' sizes), not from
/// PETSc's allocation log. Not collective: this rank's share.
#include <petscksp.h>
#include <petscsnes.h>

#include <cstddef>

namespace edgefem {

/// An AIJ matrix (Seq or MPI, or BAIJ/SBAIJ by MatGetInfo): 8 bytes per allocated value, 4 per column index, the
/// row arrays (about 20 bytes per row) and, MPI, the ghost columns' map and vector. 0 for a null or shell matrix.
[[nodiscard]] std::size_t aij_bytes(Mat m);

/// A multigrid preconditioner's levels (PCMG, PCGAMG or edgefem_gamg; other types: all 0), the finest level's
/// operator (the caller's matrix) not counted.
struct MultigridBytes {
  std::size_t operators = 0;       ///< the coarse levels' AIJ operators (PETSc's, double precision)
  std::size_t interpolations = 0;  ///< the interpolations' AIJ matrices (PETSc's)
  std::size_t own_copies = 0;      ///< our single-precision block copies of both
  std::size_t galerkin = 0;        ///< the Galerkin products' data (positions, P in single precision)
  std::size_t rest_values = 0;     ///< the finest interpolation's values as GAMG made them (corotational rebuild)
  std::size_t vectors = 0;         ///< every level's vectors and its smoother's work vectors
  std::size_t coarse_solve = 0;    ///< the coarsest level's factorization (its factor's AIJ size)
  [[nodiscard]] std::size_t total() const { return operators + interpolations + own_copies + galerkin + rest_values + vectors + coarse_solve; }
};
[[nodiscard]] MultigridBytes multigrid_bytes(PC pc);

/// The work vectors of a KSP (its method's) and of the SNES above it (solution, residual, update, line search);
/// `snes` may be null.
[[nodiscard]] std::size_t krylov_vector_bytes(KSP ksp, SNES snes);

}  // namespace edgefem
