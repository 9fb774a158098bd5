// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file bench.hpp
/// `edgefem bench JOB.yaml`: for a position-based job, times one constraint sweep (tet projections per second
/// per core); otherwise times the assembly of f and of f + K (kernels, the hand-over to PETSc and the
/// finished VecGhost/Mat assembly) and one linear solve, for the job's own mesh and materials, on any number
/// of ranks. Assembly times are the best of N repetitions of the slowest rank; the linear solve (the run's
/// default linear solver on the tangent at rest, the job's loads as right-hand side) is timed once, the
/// preconditioner set-up and the Krylov iterations apart. A failed solve is flagged (ksp_converged false).
#include <mpi.h>

#include <cstdint>
#include <string>

#include "io/job.hpp"
#include "io/summary.hpp"
#include "run/run_options.hpp"

namespace edgefem {

struct BenchResult {
  std::string model;  ///< the job's models, e.g. "stvk" or "stvk+stvk-tl"
  int ranks = 1, threads = 1, repeat = 1;
  std::int64_t vertices = 0, edges = 0, faces = 0, tets = 0, tseps = 0;
  double seconds_f = 0, seconds_f_and_K = 0, seconds_solve = 0;  ///< solve = pc_setup + ksp
  double seconds_pc_setup = 0, seconds_ksp = 0;
  int ksp_iterations = 0;
  std::string ksp_reason;
  bool ksp_converged = false;
  std::string preconditioner;  ///< PETSc's pc_type of the solve (and the package of a factorization)
  double kernel_bytes = 0, coo_bytes = 0, matrix_bytes = 0;  ///< summed over ranks
  /// The memory account after the linear solve (run/memory_account.hpp), summed over ranks, and the measured peak
  /// (all ranks), for the account's lines and JSON.
  RunSummary::MemoryAccount account;
  double peak_mb_total = 0;
  /// Per tet, the largest of the job's models' FLOP formulas (ModelInfo::flops, materials/registry.hpp).
  double flops_f = 0, flops_f_and_K = 0;
  double deformation_jacobian = 1;  ///< det of the homogeneous deformation benchmarked

  /// Position-based jobs (analysis.integrator position-based): one constraint sweep over every tet (the job's
  /// sweep and xpbd) at the homogeneous deformation, instead of the assembly and the linear solve.
  bool position_based = false;
  std::string pbd_sweep;  ///< colored | jacobi
  bool pbd_xpbd = false;
  int pbd_colors = 0;
  double seconds_pbd_sweep = 0;  ///< best of N, slowest rank (wall)
  /// Best of N of the CPU time of a sweep summed over ranks (std::clock: all threads of a process). On a loaded
  /// machine tets / this is the per-core rate the wall time cannot show.
  double cpu_seconds_pbd_sweep = 0;
  double pbd_bytes = 0;  ///< per-constraint data, summed over ranks
  /// Tet projections per second per core (ranks x threads).
  [[nodiscard]] double projections_per_core() const { return tets / seconds_pbd_sweep / (ranks * threads); }

  [[nodiscard]] double bytes_per_tet() const { return (kernel_bytes + coo_bytes + matrix_bytes) / tets; }
};

/// Collective. Runs the benchmark; every rank returns the same result.
BenchResult run_bench(MPI_Comm comm, const Job& job, int repeat, const std::string& cli_petsc_options);

/// The result as one JSON object (keys of issue 3 plus a few extras).
std::string to_json(const BenchResult& r);

/// `edgefem bench JOB.yaml [--repeat N] [--json FILE]`: runs the benchmark on PETSC_COMM_WORLD (options.repeat
/// repetitions, the command line's PETSc options) and prints it on rank 0; with options.json rank 0 also writes it
/// there (to_json). Collective. Returns 0 (a failed linear solve is a warning).
int bench_job(const RunOptions& options);

}  // namespace edgefem
