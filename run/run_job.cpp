// SPDX-License-Identifier: BSD-3-Clause
/// \file run_job.cpp
/// `edgefem run` from the job file to the analysis (run_job.hpp).
#include "run/run_job.hpp"

#include <petscsys.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/setup_laps.hpp"
#include "frames/frame_placement.hpp"
#include "io/job.hpp"
#include "partition/collective.hpp"
#include "run/dynamic_run.hpp"
#include "run/frames_run.hpp"
#include "run/load_mesh.hpp"
#include "run/memory_account.hpp"
#include "run/memory_budget.hpp"
#include "run/report.hpp"
#include "run/static_run.hpp"
#include "runtime/huge_pages.hpp"
#include "runtime/placement.hpp"
#include "runtime/stop_signal.hpp"
#include "solver/free_body.hpp"
#include "solver/model.hpp"

namespace edgefem {
namespace {

/// The job, with the command line's output directory. Sets summary.json's job fields and its directory (removing a
/// summary.json an earlier run left there: it would describe this run until it ends).
Job read_run_job(MPI_Comm comm, const RunOptions& options, SummaryRecord& record) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Job job;
  run_collectively(comm, [&] { job = read_job(options.path); });
  if (!options.output.empty()) job.output_directory = options.output;
  // One run per folder: its lock before anything is written there (refused: nothing written, not even summary.json).
  record.output_lock.reset();
  record.output_lock = std::make_unique<OutputLock>(comm, job.output_directory, job.job_file);
  record.summary.job = job.job_file;
  record.summary.analysis_type = job.analysis_type == AnalysisType::dynamics ? "dynamic" : "static";
  record.directory = job.output_directory;
  if (rank == 0) {
    std::error_code ignored;
    std::filesystem::remove(std::filesystem::path(record.directory) / "summary.json", ignored);
  }
  if (!options.restart.empty() && job.analysis_type != AnalysisType::dynamics)
    throw InputError("--restart: " + job.job_file + " is a static analysis; only dynamic analyses write checkpoints");
  return job;
}

/// A peak memory over the ranks, in MB: the largest rank's and the sum.
struct InputPeak {
  double max = 0, sum = 0;
};

/// The peak memory of read, partition and distribution (rank 0 held the whole mesh on the rank-0 path). Collective.
InputPeak input_peak_memory(MPI_Comm comm) {
  const double input_peak = peak_memory_mb();
  InputPeak peak;
  MPI_Allreduce(&input_peak, &peak.max, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&input_peak, &peak.sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  return peak;
}

/// summary.json's input phases, mesh and partition. Collective (the spreads over the ranks).
void record_input(MPI_Comm comm, const Job& job, const DistributedJobMesh& loaded, const LocalMesh& mesh,
                  const PhaseClock& clock, RunSummary& summary) {
  summary.phases_s.job = clock.job;
  summary.phases_s.read = clock.read;
  const std::string cell_kind = mesh.mesh.n_tets() > 0 ? "tet" : "triangle";
  summary.phases_s.partition = clock.partition;
  summary.phases_s.distribute = clock.distribute;
  summary.mesh = RunSummary::Mesh{job.mesh_file ? *job.mesh_file
                                                : "generated " + std::string(to_string(job.generate->shape)),
                                  static_cast<long long>(mesh.n_global_vertices),
                                  static_cast<long long>(mesh.n_global_cells), cell_kind,
                                  3 * static_cast<long long>(mesh.n_global_vertices)};
  summary.partition = RunSummary::Partition{to_string(loaded.partitioner), spread_over_ranks(comm, mesh.n_owned),
                                            spread_over_ranks(comm, mesh.n_ghost()),
                                            spread_over_ranks(comm, static_cast<double>(mesh.cell_global.size()))};
}

/// The run header: the job, the mesh on how many ranks and threads, how it was read and partitioned, and the
/// memory plan (unless quiet, or when it does not fit).
void print_run_header(MPI_Comm comm, const RunOptions& options, const Job& job, const DistributedJobMesh& loaded,
                      const LocalMesh& mesh, const Model& model, const PhaseClock& clock, const InputPeak& peak,
                      const MemoryPlan& memory) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const QuietScope quiet(options.quiet);
  PetscPrintf(comm, "edgefem: %s\n  mesh: %lld vertices, %lld %s on %d rank%s x %d thread%s\n", job.job_file.c_str(),
              static_cast<long long>(mesh.n_global_vertices), static_cast<long long>(mesh.n_global_cells),
              model.nodes_per_cell == 4 ? "tetrahedra" : "triangles", size, size == 1 ? "" : "s", threads(),
              threads() == 1 ? "" : "s");
  PetscPrintf(comm,
              "  mesh input: %s reader, %s partition; read %.3f s, partition %.3f s, distribute %.3f s; peak memory "
              "so far %.1f MB on the largest rank, %.1f MB mean\n",
              to_string(loaded.reader), to_string(loaded.partitioner), clock.read, clock.partition, clock.distribute,
              peak.max, peak.sum / size);
  if (!loaded.partition_notice.empty()) PetscPrintf(comm, "  %s\n", loaded.partition_notice.c_str());
  for (const std::string& note : model.notes) PetscPrintf(comm, "  %s\n", note.c_str());
  if (!memory.report.empty() && (!options.quiet || !memory.fits)) PetscPrintf(comm, "%s\n", memory.report.c_str());
}

/// The analysis the job asks for: frames, dynamic or static.
int run_analysis(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
                 RunSummary& summary) {
  if (job.discretization.type == DiscretizationType::frames)
    return run_frames(options, job, mesh, model, clock, summary);
  if (job.analysis_type == AnalysisType::dynamics) {
    clock.setup = clock.lap();  // the model; run_dynamic adds the integrator's set-up, the restart and the output files
    return run_dynamic(options, job, mesh, std::move(model), clock, summary);
  }
  return run_static(options, job, mesh, std::move(model), clock, summary);
}

}  // namespace

int run_job(const RunOptions& options, SummaryRecord& record, const std::function<void(Job&)>& adjust) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  PhaseClock clock;
  install_stop_handlers();  // from here SIGTERM/SIGUSR1 stop the run after a step (runtime/stop_signal.hpp)
  Job job = read_run_job(comm, options, record);
  if (adjust) adjust(job);
  // Before anything large is read, generated or allocated: will the mesh fit at all (run/memory_budget.hpp)?
  double early_estimate_mb = 0;
  try {
    check_memory_before_input(comm, &job, job.job_file, input_holding(comm, job), options, &early_estimate_mb);
  } catch (const ResourceError&) {
    record.summary.estimated_peak_mb = early_estimate_mb;  // (summary.json says what was refused)
    throw;
  }
  // Read (or generate), partition and distribute: by slices for large binary files and boxes (no rank holds the
  // whole mesh), else on rank 0 (run/load_mesh.hpp).
  clock.job = clock.lap();
  DistributedJobMesh loaded = load_distributed_job_mesh(comm, job);
  clock.lap();
  setup_laps::start();  // the set-up: from here to the first step (core/setup_laps.hpp)
  clock.read = loaded.seconds_read;
  clock.partition = loaded.seconds_partition;
  clock.distribute = loaded.seconds_distribute;
  const LocalMesh mesh = std::move(loaded.mesh);
  memory_account().phase("mesh");
  const InputPeak peak = input_peak_memory(comm);
  record_input(comm, job, loaded, mesh, clock, record.summary);
  setup_laps::mark(setup_laps::Phase::input_report);
  if (job.discretization.type == DiscretizationType::frames) check_frame_count(job, mesh.n_global_vertices);
  // Before the model is built: will the run fit in memory (and with which multigrid)?
  const MemoryPlan memory = plan_memory(comm, job, mesh, options.petsc_options);
  record.summary.estimated_peak_mb = memory.estimated_peak_mb_max_rank;
  setup_laps::mark(setup_laps::Phase::memory_plan);
  if (!memory.fits && !options.ignore_memory_estimate) throw ResourceError(memory.problem);
  if (memory.unsmoothed_aggregation) job.solver.aggregation = SolverSpec::Aggregation::unsmoothed;
  // A static problem with a part free to move has no equilibrium: refuse it before the model is built and solved,
  // from its supports and, with obstacles, the obstacles within the contact's reach at the start
  // (solver/free_body.hpp).
  if (solves_static_problem(job))
    check_static_support(comm, job, mesh, build_supports(comm, job, mesh));
  setup_laps::mark(setup_laps::Phase::supports);
  Model model = build_model(comm, job, mesh);
  return_free_heap();  // the topology's and the term lists' transients: not resident beside the matrix and solver
  memory_account().phase("model");
  print_run_header(comm, options, job, loaded, mesh, model, clock, peak, memory);
  record.summary.oversubscribed = warn_if_oversubscribed(comm);
  setup_laps::mark(setup_laps::Phase::header);
  return run_analysis(options, job, mesh, std::move(model), clock, record.summary);
}

}  // namespace edgefem
