// SPDX-License-Identifier: BSD-3-Clause
/// \file dynamic_run.cpp
/// The dynamic run: output, energy.csv, reactions, checkpoints, stop signals (dynamic_run.hpp).
#include "run/dynamic_run.hpp"

#include <petscsys.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/setup_laps.hpp"
#include "io/checkpoint_series.hpp"
#include "linalg/petsc_util.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/analysis_run.hpp"
#include "run/output.hpp"
#include "run/time_loop.hpp"
#include "runtime/stop_signal.hpp"
#include "solver/dynamic_solver.hpp"

namespace edgefem {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The first summary lines of a dynamic run: steps and iterations, where the time went, the last energy and
/// its largest change from the first output. Collective (a restart at the end time evaluates the energy).
void print_dynamic_summary(MPI_Comm comm, const DynamicSpec& spec, TimeIntegrator& integrator,
                           const std::vector<TimeStepReport>& reports, const EnergyReport& first_energy,
                           const RestartPoint& start, const PhaseClock& clock, double output_seconds) {
  int newton = 0, ksp = 0, cut_steps = 0;
  double step_seconds = 0, max_drift = 0;
  for (const auto& r : reports) {
    newton += r.newton_iterations, ksp += r.ksp_iterations, step_seconds += r.seconds;
    cut_steps += r.substeps > 1;
    max_drift = std::max(max_drift, std::abs(r.energy.total() - first_energy.total()));
  }
  const double total = clock.total();
  const double n = std::max<double>(1.0, static_cast<double>(reports.size()));
  // A restart from the final checkpoint computes nothing: report the state it holds.
  const EnergyReport last_energy = reports.empty() ? integrator.energy() : reports.back().energy;
  const std::string name(to_string(spec.integrator));
  if (reports.empty() && start.time)
    PetscPrintf(comm, "nothing to compute: %s is at the end time (t = %.9g)\n", start.path.c_str(), integrator.time());
  PetscPrintf(comm,
              "summary: %zu time steps of %s (dt %.6g, t = %.6g), %d Newton iterations, %d KSP iterations, "
              "%d steps cut\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + time steps %.3f s "
              "(%.4f s per step) + output and checkpoints %.3f s\n"
              "  energy: kinetic %.9e, strain %.9e, attachment %.9e, external work %.9e; total %.9e "
              "(largest change from the first output %.3e)\n",
              reports.size(), name.c_str(), spec.dt, integrator.time(), newton, ksp, cut_steps, total, clock.read,
              clock.partition, clock.distribute, clock.setup, step_seconds, step_seconds / n, output_seconds,
              last_energy.kinetic, last_energy.strain, last_energy.attachment, last_energy.external_work,
              last_energy.total(), max_drift);
  if (spec.integrator == Integrator::position_based)
    if (const std::string warning = energy_growth_warning(first_energy, reports); !warning.empty())
      PetscPrintf(comm, "  warning: %s\n", warning.c_str());
}

/// One dynamic run of an integrator: its files, the time loop with its output, and the end (summary lines, the stop
/// message). Constructed in the order the files are opened: restart, result series, checkpoints, the CSV logs.
class DynamicRun final : public AnalysisRun {
 public:
  DynamicRun(const RunOptions& options, const Job& job, TimeIntegrator& integrator, PhaseClock& clock,
             RunSummary& summary);

 private:
  /// The time loop; a stop signal's checkpoint; on a failed step, a checkpoint of the last converged state.
  void solve() override;
  void record_analysis() override;
  int finish() override;
  /// After the initial state and every step: the energy row, the reactions, the output and checkpoint steps.
  void on_step(long long step, double time);
  void write_output(long long step, double time, const std::vector<double>& force);
  /// A checkpoint of the current state (its output step listed first). Returns its path.
  std::string write_checkpoint_now();

  const RunOptions& options_;
  const DynamicSpec& spec_;
  TimeIntegrator& integrator_;
  std::vector<std::int64_t> owned_original_;
  std::string job_text_;
  RestartPoint start_;
  ResultWriter writer_;
  CheckpointSeries checkpoints_;      ///< this run's: other runs' ones leave the directory, rotation deletes only these
  std::optional<CsvLog> energy_log_;  ///< (opened once other runs' checkpoints are set aside)
  std::optional<ReactionLog> reactions_;  ///< (likewise)
  std::string last_checkpoint_;
  long long last_checkpoint_step_ = -1;
  std::vector<TimeStepReport> reports_;
  std::optional<EnergyReport> first_energy_;
  long long first_step_ = 0;
  bool completed_ = false;  ///< (a failed run's cut steps are not known)
  bool self_contact_ = false;  ///< contact.self: its energy is in the contact column too
};

DynamicRun::DynamicRun(const RunOptions& options, const Job& job, TimeIntegrator& integrator, PhaseClock& clock,
                       RunSummary& summary)
    : AnalysisRun(job, clock, summary),
      options_(options),
      spec_(*job.dynamic),
      integrator_(integrator),
      owned_original_(integrator.mesh().original_vertex.begin(),
                      integrator.mesh().original_vertex.begin() + integrator.mesh().n_owned),
      job_text_(read_text(job.job_file)),
      start_(restart_if_asked(comm_, options.restart, job, owned_original_, job_text_, integrator)),
      writer_(comm_, job.output_directory, integrator.mesh(), integrator.model(), job.output, start_.time),
      checkpoints_(comm_, job.output_directory, start_.run) {
  namespace fs = std::filesystem;
  for (const std::string& line : checkpoints_.set_aside_other_runs()) PetscPrintf(comm_, "warning: %s\n", line.c_str());
  // energy.csv and reactions.csv: one row per completed step (a restart drops the rows after its step).
  const std::optional<long long> keep = start_.time ? std::optional<long long>(integrator_.step_number())
                                                    : std::nullopt;
  self_contact_ = job.contact.self;
  energy_log_.emplace(comm_, (fs::path(job.output_directory) / "energy.csv").string(),
                      integrator_.contact_terms() || job.contact.self
                          ? "step,time,kinetic,strain,attachment,external_work,total,contact"
                                                  : "step,time,kinetic,strain,attachment,external_work,total",
                      keep);
  reactions_.emplace(comm_, job.output_directory, integrator_.model(), keep, obstacle_names(job));
  if (integrator_.contact_terms())
    summary_.contact = begin_contact_record(job, *integrator_.contact_terms());
  else if (!job.obstacles.empty())
    summary_.contact = begin_projection_record(job);  // position-based
  if (integrator_.self_contact_terms())
    summary_.self_contact = begin_self_contact_record(*integrator_.self_contact_terms());
  setup_laps::mark(setup_laps::Phase::output_files);  // (with the restart)
  clock_.setup += clock_.lap();  // the integrator, the restart and the output files
  record_setup_laps(summary_, clock_);
  stage_output_ = log_stage("Output");
  first_step_ = integrator_.step_number();
}

void DynamicRun::on_step(long long step, double time) {
  const auto t0 = std::chrono::steady_clock::now();
  PetscLogStagePush(stage_output_);
  const EnergyReport e = integrator_.energy();
  if (!first_energy_) first_energy_ = e;
  char line[320];
  const int n = std::snprintf(line, sizeof line, "%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", step, time, e.kinetic,
                              e.strain, e.attachment, e.external_work, e.total());
  if ((integrator_.contact_terms() || self_contact_) && n > 0 && static_cast<std::size_t>(n) < sizeof line)
    std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n), ",%.17g", e.contact);
  energy_log_->row(line);
  const std::vector<double> f = integrator_.local_internal_force();
  const std::vector<double> obstacle_force = integrator_.obstacle_forces();
  reactions_->record(step, time, f, obstacle_force);
  if (const auto contact = integrator_.last_contact(); contact && summary_.contact)
    record_contact(*summary_.contact, step, *contact, obstacle_force);
  if (summary_.self_contact && step > first_step_)
    record_self_contact(*summary_.self_contact, step, *integrator_.self_contact_terms(), integrator_.local_positions());
  if (step % job_.output_every == 0 || step == integrator_.n_steps()) write_output(step, time, f);
  if (step > 0 && ((job_.checkpoint_every > 0 && step % job_.checkpoint_every == 0) || step == integrator_.n_steps()))
    last_checkpoint_ = write_checkpoint_now(), last_checkpoint_step_ = step;
  PetscLogStagePop();
  output_seconds_ += seconds_since(t0);
}

void DynamicRun::write_output(long long step, double time, const std::vector<double>& force) {
  const std::vector<double> x = integrator_.local_positions();
  const std::vector<double> v = integrator_.local_velocities();
  if (summary_.self_contact) {  // the exact check that the surface is free of intersections
    summary_.self_contact->output_step.push_back(step);
    summary_.self_contact->intersecting_pairs.push_back(integrator_.self_contact_terms()->intersecting_pairs(x));
  }
  for (OutputCellField& field : integrator_.output_cell_fields())
    writer_.add_cell_scalar(std::move(field.name), std::move(field.values));
  for (OutputPointField& field : integrator_.output_point_fields())
    writer_.add_point_field(std::move(field.name), field.components, std::move(field.values));
  writer_.write(step, time, x, force, v);
}

std::string DynamicRun::write_checkpoint_now() {
  writer_.finish();  // a checkpointed step's output is listed in the .pvd
  CheckpointState state = integrator_.checkpoint();
  state.job_text = job_text_;
  return checkpoints_.write(integrator_.mesh().n_global_vertices, owned_original_, std::move(state));
}

void DynamicRun::solve() {
  // A stop signal stops the run after the step, with a checkpoint of it.
  try {
    reports_ = run_time_loop(
        integrator_, [this](long long step, double time) { on_step(step, time); }, [this] { return should_stop(); });
    completed_ = true;
    {
      const auto t0 = std::chrono::steady_clock::now();
      writer_.finish();
      output_seconds_ += seconds_since(t0);
    }
    if (stop_signal_ != 0 && last_checkpoint_step_ != integrator_.step_number()) {
      const auto t0 = std::chrono::steady_clock::now();
      PetscLogStagePush(stage_output_);
      last_checkpoint_ = write_checkpoint_now(), last_checkpoint_step_ = integrator_.step_number();
      PetscLogStagePop();
      output_seconds_ += seconds_since(t0);
    }
  } catch (const SolverError& e) {
    // Keep what was computed: a checkpoint of the last completed step (it exists once written), then report.
    std::string saved;
    try {
      const std::string path = write_checkpoint_now();
      saved = "is saved in " + path + " (edgefem run JOB --restart " + path + ")";
    } catch (const std::exception& failed) {  // thrown on every rank
      saved = std::string("could not be saved: ") + failed.what();
    }
    throw SolverError(std::string(e.what()) +
                      "\n  the last converged state (t = " + std::to_string(integrator_.time()) + ", after " +
                      std::to_string(integrator_.step_number()) + " complete steps) " + saved);
  }
}

void DynamicRun::record_analysis() {
  record_solve(summary_, integrator_.stats(), integrator_.preconditioner_name(), output_seconds_);
  const long long steps = integrator_.step_number() - first_step_;
  long long cut = 0;
  for (const auto& r : reports_) cut += r.substeps > 1;
  summary_.analysis = {{"integrator", json_string(std::string(to_string(spec_.integrator)))},
                       {"dt", json_number(spec_.dt)},
                       {"end_time", json_number(spec_.end_time)},
                       {"time_steps", std::to_string(integrator_.n_steps())},
                       {"first_step", std::to_string(first_step_)},
                       {"steps", std::to_string(steps)},
                       {"time", json_number(integrator_.time())},
                       {"steps_cut", completed_ ? std::to_string(cut) : "null"},
                       {"restart", start_.path.empty() ? "null" : json_string(start_.path)}};
}

int DynamicRun::finish() {
  std::optional<QuietScope> quiet(std::in_place, options_.quiet);
  print_dynamic_summary(comm_, spec_, integrator_, reports_, first_energy_.value_or(EnergyReport{}), start_, clock_,
                        output_seconds_);
  print_setup_split(comm_, summary_);
  print_solver_summary(comm_, integrator_.stats(), integrator_.preconditioner_name());
  summary_.largest_displacement = print_state_summary(comm_, integrator_.mesh(), integrator_.local_positions());
  summary_.output = writer_.series_path();
  record_output_split(summary_, writer_);
  if (!reports_.empty()) print_reactions(comm_, job_, *reactions_);  // (a restart state's: reactions.csv)
  if (summary_.contact) {
    double step_seconds = 0;
    for (const auto& r : reports_) step_seconds += r.seconds;
    print_contact_summary(comm_, *summary_.contact, integrator_.contact_seconds(), step_seconds);
  }
  if (summary_.self_contact) {
    double step_seconds = 0;
    long long newton = 0;
    summary_.self_contact->step_cpu.clear();
    for (const auto& r : reports_)
      step_seconds += r.seconds, newton += r.newton_iterations, summary_.self_contact->step_cpu.push_back(r.cpu_seconds);
    print_self_contact_summary(comm_, *summary_.self_contact, *integrator_.self_contact_terms(), newton, step_seconds);
  }
  PetscPrintf(comm_, "  output: %s\n  checkpoint: %s\n", writer_.series_path().c_str(),
              (last_checkpoint_.empty() ? start_.path : last_checkpoint_).c_str());
  quiet.reset();
  if (stop_signal_ == 0) return 0;
  summary_.stopped = true;
  const std::string output = options_.output.empty() ? std::string() : " --output " + options_.output;
  PetscPrintf(comm_,
              "edgefem: stopped by %s after time step %lld of %lld (t = %.9g), checkpoint %s written; continue with: "
              "edgefem run %s%s --restart %s (exit status %d)\n",
              stop_signal_name(stop_signal_), integrator_.step_number(), integrator_.n_steps(), integrator_.time(),
              last_checkpoint_.c_str(), options_.path.c_str(), output.c_str(), job_.output_directory.c_str(),
              kExitStoppedRestartable);
  return kExitStoppedRestartable;
}

}  // namespace

std::unique_ptr<TimeIntegrator> make_integrator(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
                                                const RunOptions& options) {
  if (job.dynamic->integrator == Integrator::position_based)
    return std::make_unique<PbdSolver>(comm, job, mesh, std::move(model), options.quiet);
  return std::make_unique<DynamicSolver>(comm, job, mesh, std::move(model), options.petsc_options, options.quiet,
                                         options.verbose);
}

int run_dynamic(const RunOptions& options, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
                RunSummary& summary) {
  const std::unique_ptr<TimeIntegrator> integrator = make_integrator(PETSC_COMM_WORLD, job, mesh, std::move(model),
                                                                     options);
  setup_laps::mark(setup_laps::Phase::integrator);
  return DynamicRun(options, job, *integrator, clock, summary).run();
}

}  // namespace edgefem
