// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file time_loop.hpp
/// The one time loop of every integrator (solver/time_integrator.hpp: DynamicSolver, PbdSolver), and where a
/// dynamic run starts: at t = 0, or at the checkpoint `--restart` names.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/checkpoint_series.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/time_integrator.hpp"

namespace edgefem {

/// Integrate from the integrator's state to its end time. A fresh integrator (not restored) first computes its
/// initial state (TimeIntegrator::start) and reports it to `on_step(step, time)`; after every completed step the
/// loop prints the integrator's progress line with the estimated time left (rank 0, unless quiet), then calls
/// `on_step`, then (but after the last step) `should_stop()` if given: true ends the run there, the state being that
/// step's. should_stop must return the same on every rank (runtime/stop_signal.hpp: agree_on_stop). Collective.
/// A failed step throws (SolverError); the state is then that of the last completed step.
std::vector<TimeStepReport> run_time_loop(TimeIntegrator& integrator,
                                          const std::function<void(long long, double)>& on_step,
                                          const std::function<bool()>& should_stop = {});

/// Where a dynamic run starts: at t = 0, or at the checkpoint --restart names.
struct RestartPoint {
  std::optional<double> time;        ///< the checkpoint's time; nothing for a run from t = 0
  std::string path;                  ///< the checkpoint restarted from
  std::optional<CheckpointRun> run;  ///< the run that wrote it
};

/// With `restart` (a checkpoint file or an output directory; empty: none): reads the chosen checkpoint, checks it
/// against the job (time step, end time; warns about another integrator or job text) and restores the integrator's
/// state from it. `owned_original`: the input-mesh index of each owned vertex; `job_text`: the job file's text.
/// Collective.
RestartPoint restart_if_asked(MPI_Comm comm, const std::string& restart, const Job& job,
                              const std::vector<std::int64_t>& owned_original, const std::string& job_text,
                              TimeIntegrator& integrator);

}  // namespace edgefem
