// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file analysis_run.hpp
/// What the static and the dynamic run of a mesh share (run/static_run.cpp, run/dynamic_run.cpp): the steps, then
/// the summary lines, with summary.json's records made when the run ends, also when an error ends it; the output
/// phase's seconds; and the stop signal the ranks agree on after a step.
#include <mpi.h>
#include <petscsys.h>

#include "io/job.hpp"
#include "io/summary.hpp"
#include "run/report.hpp"
#include "runtime/stop_signal.hpp"

namespace edgefem {

class AnalysisRun {
 public:
  virtual ~AnalysisRun() = default;
  AnalysisRun(const AnalysisRun&) = delete;
  AnalysisRun& operator=(const AnalysisRun&) = delete;

  /// solve(), then finish(); record_analysis() when it ends, also by an exception. Collective. Returns the exit code.
  int run() {
    const AtScopeExit record{[this] { record_analysis(); }};  // summary.json: also what a failed run did
    solve();
    return finish();
  }

 protected:
  AnalysisRun(const Job& job, PhaseClock& clock, RunSummary& summary) : job_(job), clock_(clock), summary_(summary) {}

  /// The steps with their output.
  virtual void solve() = 0;
  /// summary.json's solver and analysis records (also of a failed run).
  virtual void record_analysis() = 0;
  /// The summary lines, and the stop message. Returns the exit code.
  virtual int finish() = 0;

  /// After a step: whether SIGTERM/SIGUSR1 reached some rank (the same answer on every rank: agree_on_stop). The
  /// signal is kept in stop_signal_.
  bool should_stop() { return (stop_signal_ = agree_on_stop(comm_)) != 0; }

  MPI_Comm comm_ = PETSC_COMM_WORLD;
  const Job& job_;
  PhaseClock& clock_;
  RunSummary& summary_;
  PetscLogStage stage_output_ = 0;  ///< the output's PETSc log stage (registered by the run, after its set-up)
  double output_seconds_ = 0;       ///< output (and checkpoints) so far
  int stop_signal_ = 0;             ///< the stop signal some rank received, or 0
};

}  // namespace edgefem
