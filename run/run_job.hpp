// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file run_job.hpp
/// `edgefem run JOB.yaml`: the whole run of a job on PETSC_COMM_WORLD. Reads the job, reads (or generates),
/// partitions and distributes its mesh (run/load_mesh.hpp), checks the memory estimate (run/memory_budget.hpp),
/// builds the model, prints the run header, then hands over to the analysis: the frame-based run
/// (run/frames_run.hpp), the dynamic run (run/dynamic_run.hpp) or the static run (run/static_run.hpp). From the
/// start, SIGTERM/SIGUSR1 stop the run after a step (runtime/stop_signal.hpp).
#include <functional>

#include "io/job.hpp"
#include "run/run_options.hpp"
#include "run/summary_record.hpp"

namespace edgefem {

/// Collective. `record`: filled as the run goes; its directory is set once the output directory is known (from then
/// on the caller writes summary.json there, also when the run fails: run_reporting_errors). Returns the exit code
/// (0, or a stop signal's: runtime/stop_signal.hpp); throws edgefem's errors (core/error.hpp).
/// `adjust` (may be empty): called on every rank with the job as read, before the mesh is loaded; it may change the
/// job or throw (fuzz/fuzz_run.cpp cuts a job down to its first step and skips jobs over its budget).
int run_job(const RunOptions& options, SummaryRecord& record, const std::function<void(Job&)>& adjust = {});

}  // namespace edgefem
