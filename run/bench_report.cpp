// SPDX-License-Identifier: BSD-3-Clause
/// \file bench_report.cpp
/// `edgefem bench`: the benchmark's lines and its JSON file (bench.hpp: bench_job).
#include <petscsys.h>

#include <string>

#include "io/vtk_output.hpp"
#include "partition/collective.hpp"
#include "run/bench.hpp"
#include "run/load_mesh.hpp"
#include "runtime/placement.hpp"

namespace edgefem {
namespace {

/// The benchmark's first line: "bench JOB: [what]model M, R ranks x T threads, best of N".
void print_bench_line(MPI_Comm comm, const Job& job, const BenchResult& r, const char* what) {
  PetscPrintf(comm, "bench %s: %smodel %s, %d rank%s x %d thread%s, best of %d\n", job.job_file.c_str(), what,
              r.model.c_str(), r.ranks, r.ranks == 1 ? "" : "s", r.threads, r.threads == 1 ? "" : "s", r.repeat);
}

/// The memory account after the solve (run/memory_account.hpp), all ranks: bytes per tet of each structure, the
/// transients and the libraries' pages, their total above start-up against the measured peak above start-up.
void print_account(MPI_Comm comm, const BenchResult& r) {
  const auto& a = r.account;
  const double per_tet = 1048576.0 / static_cast<double>(r.tets);
  double total = a.transients_mb + a.libraries_mb;
  PetscPrintf(comm, "  memory account after the solve (bytes/tet, all ranks):");
  int k = 0;
  for (const auto& [name, mb] : a.structures) {
    PetscPrintf(comm, "%s%s %.0f", k++ % 5 == 0 ? "\n    " : ", ", name.c_str(), mb * per_tet);
    total += mb;
  }
  PetscPrintf(comm, "\n    transients %.0f, libraries and shared memory %.0f (heap in use no structure names: %.0f)\n",
              a.transients_mb * per_tet, a.libraries_mb * per_tet, a.unaccounted_heap_mb * per_tet);
  const double peak = r.peak_mb_total - a.start_up_mb;
  PetscPrintf(comm, "    total above start-up %.0f bytes/tet (%.1f MB) vs the measured peak above start-up %.0f (%.1f MB): %.3f\n",
              total * per_tet, total, peak * per_tet, peak, peak > 0 ? total / peak : 0.0);
}

/// The benchmark's lines: one constraint sweep of a position-based job, else the assembly of f and of f + K and one
/// linear solve (a failed solve flagged).
void print_bench(MPI_Comm comm, const Job& job, const BenchResult& r) {
  if (r.position_based) {
    print_bench_line(comm, job, r, "position-based, ");
    PetscPrintf(comm, "  mesh: N_V = %lld, N_T = %lld, %d colours\n", static_cast<long long>(r.vertices),
                static_cast<long long>(r.tets), r.pbd_colors);
    PetscPrintf(comm,
                "  sweep    %10.6f s  (%s%s): %.3f Mtet projections/s, %.3f M/s per core (wall); CPU %.6f s: %.3f M "
                "projections per CPU second\n",
                r.seconds_pbd_sweep, r.pbd_sweep.c_str(), r.pbd_xpbd ? ", xpbd" : "",
                r.tets / r.seconds_pbd_sweep / 1e6, r.projections_per_core() / 1e6, r.cpu_seconds_pbd_sweep,
                r.tets / r.cpu_seconds_pbd_sweep / 1e6);
    PetscPrintf(comm, "  memory   %10.1f bytes/tet (constraint data)\n", r.pbd_bytes / r.tets);
    return;
  }
  print_bench_line(comm, job, r, "");
  PetscPrintf(comm, "  mesh: N_V = %lld, N_E = %lld, N_F = %lld, N_T = %lld, TSEPs = %lld\n",
              static_cast<long long>(r.vertices), static_cast<long long>(r.edges), static_cast<long long>(r.faces),
              static_cast<long long>(r.tets), static_cast<long long>(r.tseps));
  PetscPrintf(comm, "  f        %10.6f s  %8.3f Mtet/s  %8.1f FLOP/tet (formula)\n", r.seconds_f,
              r.tets / r.seconds_f / 1e6, r.flops_f);
  PetscPrintf(comm, "  f + K    %10.6f s  %8.3f Mtet/s  %8.1f FLOP/tet (formula)\n", r.seconds_f_and_K,
              r.tets / r.seconds_f_and_K / 1e6, r.flops_f_and_K);
  PetscPrintf(comm, "  solve    %10.6f s  (PC set-up %.6f s + KSP %.6f s: %d iterations, %s; %s)\n", r.seconds_solve,
              r.seconds_pc_setup, r.seconds_ksp, r.ksp_iterations, r.ksp_reason.c_str(), r.preconditioner.c_str());
  PetscPrintf(comm, "  memory   %10.1f bytes/tet (kernel data %.1f, COO values and maps %.1f, matrix %.1f)\n",
              r.bytes_per_tet(), r.kernel_bytes / r.tets, r.coo_bytes / r.tets, r.matrix_bytes / r.tets);
  print_account(comm, r);
  if (!r.ksp_converged)
    PetscPrintf(comm, "warning: the linear solve FAILED (%s after %d iterations): its time is not a result\n",
                r.ksp_reason.c_str(), r.ksp_iterations);
}

}  // namespace

int bench_job(const RunOptions& options) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Job job;
  run_collectively(comm, [&] { job = read_job(options.path); });
  warn_if_oversubscribed(comm);
  // Before rank 0 reads or generates the whole mesh: will it fit (run/memory_budget.hpp)?
  check_memory_before_input(comm, &job, job.job_file, InputHolding::whole_on_rank0, options);
  const BenchResult r = run_bench(comm, job, options.repeat, options.petsc_options);
  print_bench(comm, job, r);
  if (!options.json.empty())
    run_collectively(comm, [&] {
      if (rank == 0) write_file_atomically(options.json, to_json(r) + "\n");
    });
  return 0;
}

}  // namespace edgefem
