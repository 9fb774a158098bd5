// SPDX-License-Identifier: BSD-3-Clause
/// \file frames_run.cpp
/// The frame-based run (frames_run.hpp).
#include "run/frames_run.hpp"

#include <petscsys.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/setup_laps.hpp"
#include "frames/frames_solver.hpp"
#include "io/vtk_output.hpp"
#include "run/output.hpp"
#include "run/report.hpp"

namespace edgefem {
namespace {

/// The files of a frame run: the skinned mesh's series and the frames' (rank 0 writes the .vtp files).
struct FramesOutput {
  FramesOutput(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, const FrameSolver& solver)
      : job(job),
        solver(solver),
        writer(comm, job.output_directory, mesh, model, job.output),
        frames_pvd((std::filesystem::path(job.output_directory) / "frames.pvd").string()),
        zero(3 * static_cast<std::size_t>(mesh.n_local()), 0.0),
        reactions(solver.contact() ? std::optional<ReactionLog>(std::in_place, comm, job.output_directory, model,
                                                                std::nullopt, obstacle_names(job), false)
                                   : std::nullopt),
        last_step(job.analysis_type == AnalysisType::dynamics
                      ? static_cast<int>(std::lround(job.dynamic->end_time / job.dynamic->dt))
                      : job.steps) {
    MPI_Comm_rank(comm, &rank);
  }

  /// After step 0 and every step (time or load factor): reactions.csv's obstacle rows, the output steps (with
  /// obstacles, the point fields contact_gap and contact_force, as the tet runs').
  void on_step(int step, double load_factor) {
    const auto t0 = std::chrono::steady_clock::now();
    if (reactions) reactions->record(step, load_factor, {}, solver.obstacle_forces());
    if (step % job.output_every == 0 || step == last_step || step == 0) {
      if (solver.contact()) {
        std::vector<double> gap, force;
        solver.contact_fields(gap, force);
        add_contact_fields(writer, std::move(gap), std::move(force));
      }
      writer.write(step, load_factor, solver.local_positions(), zero);
      if (rank == 0) {
        char name[32];
        std::snprintf(name, sizeof name, "frames_%04d.vtp", step);
        write_frames_vtp((std::filesystem::path(job.output_directory) / name).string(), solver.placement(),
                         solver.poses(), solver.linear_maps(), solver.held());
        frames_pvd.add(load_factor, name);
        frames_pvd.write();
      }
    }
    output_seconds += seconds_since(t0);
  }

  const Job& job;
  const FrameSolver& solver;
  ResultWriter writer;
  PvdCollection frames_pvd;
  const std::vector<double> zero;  ///< the force output (the frame model has no vertex forces)
  std::optional<ReactionLog> reactions;  ///< with obstacles: their rows of reactions.csv
  const int last_step;
  int rank = 0;
  double output_seconds = 0;
};

/// summary.json's solver and analysis of a frame run: `first`, the analysis's first entry, then its steps.
void record_frames(RunSummary& summary, RunSummary::Solver solver, std::pair<std::string, std::string> first,
                   std::size_t steps, int n_frames) {
  summary.solver = std::move(solver);
  summary.analysis = {std::move(first),
                      {"steps", std::to_string(steps)},
                      {"discretization", json_string("frames")},
                      {"frames", std::to_string(n_frames)}};
}

void print_frames_setup(MPI_Comm comm, const Job& job, const FrameSolver& solver, double setup_seconds) {
  int held = 0;
  for (const int h : solver.held()) held += h;
  const DiscretizationSpec& d = job.discretization;
  PetscPrintf(comm,
              "  frames: %d %s (%d held), %s weights, %lld samples (%s), %d unknowns; set-up %.3f s (weights %.3f s)\n",
              solver.n_frames(), std::string(to_string(d.frame_type)).c_str(), held,
              std::string(to_string(d.weights)).c_str(), solver.n_samples_global(),
              d.sample_grid ? "one per voxel" : "one per tet", solver.dofs_per_frame() * (solver.n_frames() - held),
              setup_seconds, solver.setup_seconds_weights());
}

/// summary.json's contact of a frame run with obstacles (frames_contact.hpp).
void start_contact_summary(const Job& job, const FrameSolver& solver, RunSummary& summary) {
  const FrameContact* contact = solver.contact();
  if (!contact) return;
  summary.contact = RunSummary::Contact{};
  summary.contact->method = contact->barrier() ? "barrier" : "penalty";
  summary.contact->activation_distance = contact->activation_distance();
  summary.contact->stiffness = contact->stiffness();
  for (const ObstacleSpec& o : job.obstacles) summary.contact->obstacles.push_back(o.name);
  summary.contact->forces.assign(3 * job.obstacles.size(), 0.0);
}

/// The implicit Euler steps of the frames (linearized-euler: one linear solve each; backward-euler: Newton, with
/// the obstacles), and their summary lines.
void run_frames_dynamic(MPI_Comm comm, const Job& job, FrameSolver& solver, FramesOutput& output,
                        const PhaseClock& clock, RunSummary& summary) {
  start_contact_summary(job, solver, summary);
  const auto steps = solver.run_dynamic([&](int step, double time) {
    if (step > 0 && summary.contact && solver.last_contact())
      record_contact(*summary.contact, step, *solver.last_contact(), solver.obstacle_forces());
    output.on_step(step, time);
  });
  output.writer.finish();
  double solve_seconds = 0;
  int newton = 0;
  for (const auto& r : steps) solve_seconds += r.seconds, newton += r.newton_iterations;
  const std::string integrator(to_string(job.dynamic->integrator));
  record_frames(summary, {newton, 0, 0, "dense LU (frames)"}, {"integrator", json_string(integrator)}, steps.size(),
                solver.n_frames());
  PetscPrintf(comm,
              "summary: %zu time steps of %s (frames, dt %.6g), %d Newton iterations, kinetic energy %.6e, "
              "potential %.6e\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + time steps %.3f + "
              "output %.3f s\n",
              steps.size(), integrator.c_str(), job.dynamic->dt, newton, steps.empty() ? 0.0 : steps.back().kinetic,
              steps.empty() ? 0.0 : steps.back().potential, clock.total(), clock.read, clock.partition,
              clock.distribute, clock.setup, solve_seconds, output.output_seconds);
  if (summary.contact) print_contact_summary(comm, *summary.contact, &solver.contact()->seconds(), solve_seconds);
}

/// The load steps of the frames, and their summary lines.
void run_frames_static(MPI_Comm comm, const Job& job, FrameSolver& solver, FramesOutput& output,
                       const PhaseClock& clock, RunSummary& summary) {
  start_contact_summary(job, solver, summary);
  const auto reports = solver.run([&](int step, double load_factor) {
    if (step > 0 && summary.contact && solver.last_contact())
      record_contact(*summary.contact, step, *solver.last_contact(), solver.obstacle_forces());
    output.on_step(step, load_factor);
  });
  output.writer.finish();
  int newton = 0;
  double solve_seconds = 0, evaluate_seconds = 0;
  for (const auto& r : reports)
    newton += r.newton_iterations, solve_seconds += r.seconds, evaluate_seconds += r.seconds_evaluate;
  record_frames(summary, {newton, 0, 0, "dense LDLT (frames)"}, {"load_steps", std::to_string(job.steps)},
                reports.size(), solver.n_frames());
  PetscPrintf(comm,
              "summary: %zu load steps, %d Newton iterations (frames)\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + load steps %.3f "
              "(sample sums %.3f) + output %.3f s\n",
              reports.size(), newton, clock.total(), clock.read, clock.partition, clock.distribute, clock.setup,
              solve_seconds, evaluate_seconds, output.output_seconds);
  if (summary.contact) print_contact_summary(comm, *summary.contact, &solver.contact()->seconds(), solve_seconds);
}

}  // namespace

int run_frames(const RunOptions& options, const Job& job, const LocalMesh& mesh, const Model& model, PhaseClock& clock,
               RunSummary& summary) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  FrameSolver solver(comm, job, mesh, model, options.quiet);
  FramesOutput output(comm, job, mesh, model, solver);
  setup_laps::mark(setup_laps::Phase::solver);  // (the frame solver and its output files)
  clock.setup = clock.lap();
  record_setup_laps(summary, clock);
  const QuietScope quiet(options.quiet);  // the frames' own lines; their step lines already follow --quiet
  print_frames_setup(comm, job, solver, clock.setup);
  if (job.analysis_type == AnalysisType::dynamics)
    run_frames_dynamic(comm, job, solver, output, clock, summary);
  else
    run_frames_static(comm, job, solver, output, clock, summary);
  summary.largest_displacement = print_state_summary(comm, mesh, solver.local_positions());
  summary.output = output.writer.series_path();
  record_output_split(summary, output.writer);
  PetscPrintf(comm, "  output: %s, frames: %s\n", output.writer.series_path().c_str(), output.frames_pvd.path().c_str());
  return 0;
}

}  // namespace edgefem
