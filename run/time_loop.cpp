// SPDX-License-Identifier: BSD-3-Clause
/// \file time_loop.cpp
/// The time loop and the restart (time_loop.hpp).
#include "run/time_loop.hpp"

#include <petscsys.h>

#include <chrono>
#include <cmath>

#include "core/stopwatch.hpp"
#include "linalg/petsc_util.hpp"
#include "run/report.hpp"

namespace edgefem {

std::vector<TimeStepReport> run_time_loop(TimeIntegrator& integrator,
                                          const std::function<void(long long, double)>& on_step,
                                          const std::function<bool()>& should_stop) {
  std::vector<TimeStepReport> reports;
  if (!integrator.restored()) {
    integrator.start();
    if (on_step) on_step(integrator.step_number(), integrator.time());
  }
  const auto run_start = std::chrono::steady_clock::now();
  const long long first_step = integrator.step_number(), n_steps = integrator.n_steps();
  while (integrator.step_number() < n_steps) {
    const double cpu = process_cpu_seconds();
    reports.push_back(integrator.step());
    reports.back().cpu_seconds = process_cpu_seconds() - cpu;
    const long long step = integrator.step_number();
    if (!integrator.quiet()) {
      const double left = seconds_since(run_start) / static_cast<double>(step - first_step) *
                          static_cast<double>(n_steps - step);
      const std::string line = integrator.progress_line(reports.back(), left);
      EDGEFEM_PETSC(PetscPrintf(integrator.comm(), "%s", line.c_str()));
    }
    if (on_step) on_step(step, integrator.time());
    if (step < n_steps && should_stop && should_stop()) break;
  }
  return reports;
}

RestartPoint restart_if_asked(MPI_Comm comm, const std::string& restart_path, const Job& job,
                              const std::vector<std::int64_t>& owned_original, const std::string& job_text,
                              TimeIntegrator& integrator) {
  const DynamicSpec& spec = *job.dynamic;
  RestartPoint start;
  if (restart_path.empty()) return start;
  // The checkpoint named, or the newest intact one of the directory's newest run (damaged ones skipped, saying
  // why); nothing on disk changes before the restart has succeeded.
  const LocalMesh& mesh = integrator.mesh();
  const std::vector<std::int64_t> cells(mesh.cell_global.begin(), mesh.cell_global.end());  // (cell fields)
  const Restart restart = read_restart_checkpoint(comm, restart_path, mesh.n_global_vertices, owned_original,
                                                  CellOwnership{mesh.n_global_cells, cells});
  for (const std::string& note : restart.notes) PetscPrintf(comm, "warning: %s\n", note.c_str());
  const std::string& path = restart.path;
  const CheckpointState& state = restart.state;
  if (std::abs(state.dt - spec.dt) > 1e-12 * spec.dt)
    throw InputError(job.job_file + ": analysis.dt = " + std::to_string(spec.dt) + " but " + path +
                     " was written with dt = " + std::to_string(state.dt) + " (a restart keeps the time step)");
  if (state.step > integrator.n_steps())
    throw InputError(path + ": the checkpoint is at step " + std::to_string(state.step) +
                     " (t = " + std::to_string(state.time) + "), past the job's end_time (" +
                     std::to_string(integrator.n_steps()) + " steps)");
  if (state.integrator != to_string(spec.integrator))
    PetscPrintf(comm, "warning: %s was written by integrator %s; continuing with %s\n", path.c_str(),
                state.integrator.c_str(), std::string(to_string(spec.integrator)).c_str());
  if (state.job_text != job_text)
    PetscPrintf(comm, "warning: %s differs from the job file that wrote %s\n", job.job_file.c_str(), path.c_str());
  integrator.restore(state);
  start.time = state.time;
  start.path = path;
  start.run = CheckpointRun{state.run_id, state.run_started};
  PetscPrintf(comm, "restart from %s: step %lld, t = %.9g (%s%s)\n", path.c_str(), static_cast<long long>(state.step),
              state.time, describe_run(*start.run).c_str(), state.run_id == 0 ? "; continued under a new run id" : "");
  return start;
}

}  // namespace edgefem
