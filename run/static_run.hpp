// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file static_run.hpp
/// A static analysis of a distributed tet or triangle mesh (load stepping, solver/static_solver.hpp): the result
/// series and reactions.csv at the output steps, a stop after a load step on SIGTERM/SIGUSR1 (results up to it
/// written; a static run has no checkpoints), and the summary lines.
#include "io/job.hpp"
#include "io/summary.hpp"
#include "partition/partition.hpp"
#include "run/report.hpp"
#include "run/run_options.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// Collective (PETSC_COMM_WORLD). `clock`: the phases so far (its set-up becomes the model's and the solver's);
/// `summary`: filled as the run goes, also when it fails. Returns the exit code: 0, or kExitStoppedNotRestartable
/// after a stop signal (runtime/stop_signal.hpp).
int run_static(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
               RunSummary& summary);

}  // namespace edgefem
