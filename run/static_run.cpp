// SPDX-License-Identifier: BSD-3-Clause
/// \file static_run.cpp
/// The static run (static_run.hpp).
#include "run/static_run.hpp"

#include <petscsys.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "linalg/petsc_util.hpp"
#include "core/setup_laps.hpp"
#include "run/analysis_run.hpp"
#include "run/memory_account.hpp"
#include "run/output.hpp"
#include "runtime/stop_signal.hpp"
#include "solver/static_solver.hpp"

namespace edgefem {
namespace {

/// One static run: the solver, its files, the load steps with their output and the end. A stop signal stops it
/// after the load step (outputs written, no checkpoint).
class StaticRun final : public AnalysisRun {
 public:
  StaticRun(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
            RunSummary& summary);

 private:
  void solve() override;
  void record_analysis() override;
  int finish() override;
  /// After step 0 and every converged load step: the reactions, and the output steps.
  void on_step(int step, double load_factor);
  /// The state the run stopped in is its result: written even between `output.every` steps.
  void write_stopped_state();

  const LocalMesh& mesh_;
  bool quiet_;  ///< --quiet: no summary lines
  StaticSolver solver_;
  ResultWriter writer_;
  ReactionLog reactions_;
  int steps_done_ = 0;
  double load_factor_done_ = 0.0;
  int last_written_ = -1;
  std::vector<StepReport> reports_;
};

StaticRun::StaticRun(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
                     RunSummary& summary)
    : AnalysisRun(job, clock, summary),
      mesh_(mesh),
      quiet_(options.quiet),
      solver_(comm_, job, mesh, std::move(model), options.petsc_options, options.quiet, options.verbose),
      writer_(comm_, job.output_directory, mesh, solver_.model(), job.output),
      reactions_(comm_, job.output_directory, solver_.model(), std::nullopt, obstacle_names(job)) {
  if (solver_.contact()) summary_.contact = begin_contact_record(job, *solver_.contact());
  if (solver_.self_contact()) summary_.self_contact = begin_self_contact_record(*solver_.self_contact());
  setup_laps::mark(setup_laps::Phase::output_files);
  clock_.setup = clock_.lap();
  record_setup_laps(summary_, clock_);
  stage_output_ = log_stage("Output");
  memory_account().phase("set-up");
}

void StaticRun::solve() {
  reports_ = solver_.run([this](int step, double load_factor) { on_step(step, load_factor); },
                         [this] { return should_stop(); });
  account_newton_run(mesh_, solver_.assembler(), solver_.newton(), static_cast<double>(solver_.vector_bytes()),
                     static_cast<double>(writer_.pending_bytes()));
  memory_account().phase("solve");
  const auto t0 = std::chrono::steady_clock::now();
  if (stop_signal_ != 0 && !reports_.empty() && last_written_ != reports_.back().step) write_stopped_state();
  writer_.finish();
  output_seconds_ += seconds_since(t0);
}

void StaticRun::on_step(int step, double load_factor) {
  steps_done_ = step, load_factor_done_ = load_factor;
  const auto t0 = std::chrono::steady_clock::now();
  PetscLogStagePush(stage_output_);
  const std::vector<double> f = solver_.local_internal_force();
  ContactTerms* contact = solver_.contact();
  const std::vector<double> obstacle_force = contact ? contact->obstacle_forces(solver_.state()) : std::vector<double>{};
  reactions_.record(step, load_factor, f, obstacle_force);
  if (contact && step > 0) record_contact(*summary_.contact, step, solver_.last_contact(), obstacle_force);
  if (solver_.self_contact() && step > 0)
    record_self_contact(*summary_.self_contact, step, *solver_.self_contact(), solver_.local_positions());
  if (step % job_.output_every == 0 || step == job_.steps || step == 0) {
    const std::vector<double> x = solver_.local_positions();
    if (contact) add_contact_fields(writer_, *contact, solver_.state(), x);
    if (summary_.self_contact) {  // the exact check that the surface is free of intersections
      summary_.self_contact->output_step.push_back(step);
      summary_.self_contact->intersecting_pairs.push_back(solver_.self_contact()->intersecting_pairs(x));
    }
    writer_.write(step, load_factor, x, f);
    last_written_ = step;
  }
  PetscLogStagePop();
  output_seconds_ += seconds_since(t0);
}

void StaticRun::write_stopped_state() {
  const std::vector<double> f = solver_.local_internal_force();
  const std::vector<double> x = solver_.local_positions();
  if (solver_.contact()) add_contact_fields(writer_, *solver_.contact(), solver_.state(), x);
  writer_.write(reports_.back().step, reports_.back().load_factor, x, f);
}

void StaticRun::record_analysis() {
  record_solve(summary_, solver_.stats(), solver_.preconditioner_name(), output_seconds_);
  summary_.analysis = {{"load_steps", std::to_string(job_.steps)},
                       {"steps", std::to_string(steps_done_)},
                       {"load_factor", json_number(load_factor_done_)}};
}

int StaticRun::finish() {
  int newton = 0, ksp = 0;
  double solve_seconds = 0;
  for (const auto& r : reports_) newton += r.newton_iterations, ksp += r.ksp_iterations, solve_seconds += r.seconds;
  const double total = clock_.total();
  std::optional<QuietScope> quiet(std::in_place, quiet_);
  PetscPrintf(comm_,
              "summary: %zu load steps, %d Newton iterations, %d KSP iterations\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + load steps %.3f + "
              "output %.3f s\n",
              reports_.size(), newton, ksp, total, clock_.read, clock_.partition, clock_.distribute, clock_.setup,
              solve_seconds, output_seconds_);
  print_setup_split(comm_, summary_);
  print_solver_summary(comm_, solver_.stats(), solver_.preconditioner_name());
  summary_.largest_displacement = print_state_summary(comm_, mesh_, solver_.local_positions());
  summary_.output = writer_.series_path();
  record_output_split(summary_, writer_);
  print_reactions(comm_, job_, reactions_);
  if (summary_.contact) print_contact_summary(comm_, *summary_.contact, solver_.contact() ? &solver_.contact()->seconds() : nullptr,
                                              solve_seconds);
  if (summary_.self_contact)
    print_self_contact_summary(comm_, *summary_.self_contact, *solver_.self_contact(), newton, solve_seconds);
  PetscPrintf(comm_, "  output: %s\n", writer_.series_path().c_str());
  quiet.reset();
  if (stop_signal_ == 0) return 0;
  summary_.stopped = true;
  // No restart for load stepping: its state is the positions alone, but a continued run would also have to
  // rebuild the predictor's history and splice the .pvd; a static run is short next to a wall time.
  PetscPrintf(comm_,
              "edgefem: stopped by %s after load step %zu of %d (load factor %.9g), results up to it written; a "
              "static run has no checkpoints and cannot be continued: run the job again from the start (exit "
              "status %d)\n",
              stop_signal_name(stop_signal_), reports_.size(), job_.steps,
              reports_.empty() ? 0.0 : reports_.back().load_factor, kExitStoppedNotRestartable);
  return kExitStoppedNotRestartable;
}

}  // namespace

int run_static(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
               RunSummary& summary) {
  return StaticRun(options, job, mesh, std::move(model), clock, summary).run();
}

}  // namespace edgefem
