// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file linear_solver.hpp
/// The linear solver's defaults: which preconditioner `solver.linear.preconditioner` means for a system (`auto`
/// resolved by the kind of system), how it is configured (our defaults, then the job's PETSc options, then the
/// command line's, which win), and the matrices the KSP works with (the assembled AIJ matrix and its BAIJ copy).
/// The Newton driver (newton.hpp) and `edgefem bench` set their KSPs up with it; GAMG's own machinery is the
/// preconditioner type edgefem_gamg's (linalg/edgefem_gamg.hpp).
#include <petscksp.h>

#include <optional>
#include <string>

#include "io/job.hpp"
#include "linalg/block_operator.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {

/// What the caller knows about its systems, for the default linear solver.
struct LinearSystemKind {
  long long global_dofs = 0;
  bool local_preconditioner = false;  ///< dynamic membranes: GAMG builds an indefinite preconditioner there
  bool dynamic = false;               ///< a time step's matrix (mass term included): positive definite
  bool newton_solves = true;          ///< inexact Newton steps; false: linearized Euler's one tight solve per step
  int ranks = 1;
};

/// Fill levels of the incomplete Cholesky factorization that block Jacobi and additive Schwarz use (ICC itself on
/// one rank). Hanging cloth, medians of 7 alternating pairs of whole runs: ICC(2) takes 0.88 of ICC(4)'s time per
/// step on 2 ranks (more CG iterations, 5,203 -> 6,329, each cheaper, and cheaper set-ups) and 0.94 on 1 rank;
/// ICC(3) sits between, ICC(1) needs 1.8 times the iterations.
inline constexpr int kIccLevels = 2;

/// The preconditioner `solver.linear.preconditioner` means for `kind` (`auto` resolved; docs/theory/solver.md's table).
SolverSpec::Preconditioner chosen_preconditioner(const SolverSpec& spec, const LinearSystemKind& kind);

/// Human-readable name of the preconditioner the defaults choose (for the run header and docs); `block_factors`:
/// the incomplete factorizations are ILU on the BAIJ copy's 3x3 blocks instead of ICC (set_up_linear_solver).
std::string default_preconditioner_name(const SolverSpec& spec, const LinearSystemKind& kind,
                                        bool block_factors = false);

/// Our defaults on `ksp` (CG with `solver.linear.rtol`, the preconditioner `solver.linear.preconditioner` chooses
/// for `kind`), then the job's PETSc options, then the command line's (which win); KSPSetFromOptions. Returns the
/// PETSc type of the preconditioner our defaults set (before those options). `factor_blocks`: block Jacobi's,
/// additive Schwarz's (and on one rank the whole matrix's) incomplete factorization is ILU(kIccLevels), for a BAIJ
/// preconditioning matrix, instead of ICC (which needs AIJ).
std::string configure_linear_solver(KSP ksp, const Job& job, const std::string& cli_petsc_options,
                                    const LinearSystemKind& kind, bool factor_blocks = false);

/// Whether the process-wide options database has `name` (the job's and the command line's options are inserted there
/// by configure_linear_solver).
[[nodiscard]] bool option_given(const char* name);

/// The matrices a KSP works with besides the assembled AIJ matrix.
struct LinearOperators {
  std::string pc_type;                 ///< the PETSc type our defaults chose (configure_linear_solver)
  std::optional<BlockOperator> block;  ///< the BAIJ copy (linalg/block_operator.hpp), if any
  bool block_preconditioner = false;   ///< the preconditioner is built from the copy too, not only multiplied with
  /// Multigrid multiplies through our own products (the copy's, and edgefem_gamg's coarse levels': MultigridProducts).
  [[nodiscard]] bool own_products() const { return block && !block_preconditioner; }
  [[nodiscard]] Mat krylov(Mat aij) const { return own_products() ? block->product() : block ? block->matrix() : aij; }
  [[nodiscard]] Mat preconditioner(Mat aij) const { return block_preconditioner ? block->matrix() : aij; }
};

/// configure_linear_solver on `ksp` and its operators for the assembled AIJ `matrix`, with `job.solver.block_operator`
/// a BAIJ copy (updated after each assembly by the caller): multigrid's Krylov method and finest smoothers multiply
/// with it (GAMG's set-up keeps the AIJ matrix); the incomplete factorizations of block Jacobi and additive Schwarz
/// factorize it (ILU on 3x3 blocks; not when the user names -pc_type or -sub_pc_type). KSPSetOperators done.
/// Collective.
LinearOperators set_up_linear_solver(KSP ksp, const Job& job, const std::string& cli_petsc_options,
                                     const LinearSystemKind& kind, Mat matrix);

}  // namespace edgefem
