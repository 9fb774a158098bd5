// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file dynamic_run.hpp
/// A dynamic analysis of a distributed tet or triangle mesh (`analysis.type: dynamics`): the integrator the job
/// names, driven by the time loop (run/time_loop.hpp), with the result series, energy.csv and reactions.csv (one
/// row per completed step), this run's checkpoints, a stop after a step on SIGTERM/SIGUSR1 (with a checkpoint of
/// it), and a checkpoint of the last converged state when a step fails.
#include <mpi.h>

#include <memory>

#include "io/job.hpp"
#include "io/summary.hpp"
#include "partition/partition.hpp"
#include "run/report.hpp"
#include "run/run_options.hpp"
#include "solver/model.hpp"
#include "solver/time_integrator.hpp"

namespace edgefem {

/// Collective: the integrator job.dynamic->integrator names (PbdSolver for position-based, else DynamicSolver with
/// the command line's PETSc options), quiet and verbose as `options` say.
std::unique_ptr<TimeIntegrator> make_integrator(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
                                                const RunOptions& options);

/// Collective (PETSC_COMM_WORLD). `clock`: the phases so far (its set-up gets the integrator's, the restart's and
/// the output files'); `summary`: filled as the run goes, also when it fails. Returns the exit code: 0, or
/// kExitStoppedRestartable after a stop signal (runtime/stop_signal.hpp).
int run_dynamic(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
                RunSummary& summary);

}  // namespace edgefem
