// SPDX-License-Identifier: BSD-3-Clause
/// \file test_time_integrator.cpp
/// The integrators' shared checkpoint code (solver/time_integrator.hpp: the state vectors and cell fields packed and
/// restored by name, required and optional ones, through a file too) and the one time loop (run/time_loop.hpp:
/// start, step 0 and every step reported, the stop, no start after a restore), with a test integrator; and the
/// checkpoint fields of the real integrators, in the order the files have always had them.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/time_loop.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "solver/time_integrator.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_time_integrator {  // one per file: the distributed test files share unity batches

std::string scratch() { return mpitest::scratch_dir("time_integrator"); }

/// A small clamped beam under gravity, `integrator` in its analysis (10 steps).
Job beam_job(const std::string& name, const std::string& integrator) {
  return mpitest::job_from_yaml(scratch(), name,
                                "mesh:\n"
                                "  generate: {shape: box, size: [4, 1, 1], cells: [4, 2, 2]}\n"
                                "materials:\n"
                                "  - {model: stvk, young: 200, poisson: 0.3, density: 1.0}\n"
                                "boundary:\n"
                                "  - {select: {region: 11}, fix: [x, y, z]}\n"
                                "loads:\n"
                                "  gravity: [0, 0, -2.0]\n"
                                "analysis: {type: dynamic, dt: 0.02, end_time: 0.2, integrator: " +
                                    integrator + "}\n");
}

/// The owned entries of a vector.
std::vector<double> owned(Vec v) {
  VecArray a(v, true);
  return {a.span().begin(), a.span().end()};
}

void fill(Vec v, double offset) {
  VecArray a(v, false);
  for (std::size_t i = 0; i < a.span().size(); ++i) a.span()[i] = offset + 0.001 * static_cast<double>(i);
}

/// An integrator that only counts: every step adds 1 to each entry of its vectors. Its checkpoint holds position,
/// velocity, external_work, an optional `extra` vector and (with cells) a cell field `damage`.
class CountingIntegrator final : public TimeIntegrator {
 public:
  CountingIntegrator(MPI_Comm comm, const Job& job, const LocalMesh& mesh, bool with_cells)
      : TimeIntegrator(comm, job.dynamic.value(), mesh, build_model(comm, job, mesh), true), with_cells_(with_cells) {
    for (auto* v : {&x_, &v_, &w_, &extra_, &scratch_}) *v = assembler_.create_vector();
    fill(x_, 1.0), fill(v_, 2.0), fill(w_, 3.0), fill(extra_, 4.0);
    damage_.assign(6 * mesh.cell_global.size(), 0.5);
  }

  void start() override { ++starts; }
  TimeStepReport step() override {
    for (Vec v : {x_.get(), v_.get(), w_.get(), extra_.get()}) EDGEFEM_PETSC(VecShift(v, 1.0));
    for (double& d : damage_) d += 1.0;
    ++step_;
    time_ = static_cast<double>(step_) * spec_.dt;
    TimeStepReport report;
    report.step = step_;
    report.time = time_;
    return report;
  }
  std::string progress_line(const TimeStepReport&, double) override { return "a step\n"; }
  std::string preconditioner_name() const override { return "none"; }
  const NewtonStats& stats() const override { return stats_; }

  std::vector<std::vector<double>> vectors() const { return {owned(x_), owned(v_), owned(w_), owned(extra_)}; }
  Vec extra() const { return extra_; }
  std::vector<double> damage_;
  int starts = 0, before = 0, after = 0;

 protected:
  StateVectors state_vectors() override { return {x_, v_, w_, scratch_}; }
  std::vector<CheckpointVector> checkpoint_vectors() override {
    return {{"position", x_}, {"velocity", v_}, {"external_work", w_}, {"extra", extra_, false}};
  }
  std::vector<CheckpointCellField> checkpoint_cell_fields() override {
    if (!with_cells_) return {};
    return {{"damage", [this] { return damage_; },
             [this](std::span<const double> values) { damage_.assign(values.begin(), values.end()); },
             "the job has damage"}};
  }
  void before_checkpoint() override { ++before; }
  void after_restore() override { ++after; }

 private:
  bool with_cells_;
  PetscOwner<Vec, VecDestroy> x_, v_, w_, extra_, scratch_;
  NewtonStats stats_;
};

/// The state's fields without `name`.
CheckpointState without(CheckpointState state, const std::string& name) {
  for (std::size_t i = 0; i < state.field_names.size(); ++i)
    if (state.field_names[i] == name) {
      state.field_names.erase(state.field_names.begin() + static_cast<long>(i));
      state.fields.erase(state.fields.begin() + static_cast<long>(i));
      break;
    }
  return state;
}

/// What restore() throws, or "" when it does not.
std::string restore_error(TimeIntegrator& integrator, const CheckpointState& state) {
  try {
    integrator.restore(state);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(TimeIntegrator, CheckpointPacksTheListedVectorsAndRestoresThemByName) {
  const Job job = beam_job("round_trip", "backward-euler");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  CountingIntegrator first(MPI_COMM_WORLD, job, mesh, false);
  for (int k = 0; k < 3; ++k) (void)first.step();
  const CheckpointState state = first.checkpoint();
  EXPECT_EQ(first.before, 1);
  EXPECT_EQ(state.field_names, (std::vector<std::string>{"position", "velocity", "external_work", "extra"}));
  EXPECT_EQ(state.fields, first.vectors());
  EXPECT_EQ(state.step, 3);
  EXPECT_DOUBLE_EQ(state.time, 0.06);
  EXPECT_EQ(state.dt, 0.02);
  EXPECT_EQ(state.integrator, "backward-euler");
  EXPECT_TRUE(state.cell_field_names.empty());
  EXPECT_EQ(state.n_cells, 0);

  CountingIntegrator second(MPI_COMM_WORLD, job, mesh, false);
  EXPECT_FALSE(second.restored());
  std::vector<std::vector<double>> fields = state.fields;  // the order of the file is not the order of the list
  CheckpointState reordered = state;
  std::reverse(reordered.field_names.begin(), reordered.field_names.end());
  std::reverse(reordered.fields.begin(), reordered.fields.end());
  second.restore(reordered);
  EXPECT_EQ(second.vectors(), fields);
  EXPECT_EQ(second.step_number(), 3);
  EXPECT_EQ(second.time(), state.time);
  EXPECT_TRUE(second.restored());
  EXPECT_EQ(second.after, 1);
  EXPECT_EQ(second.local_positions(), first.local_positions());
  EXPECT_EQ(second.local_velocities(), first.local_velocities());
}

TEST(TimeIntegrator, CheckpointFileRoundTripWithACellField) {
  const Job job = beam_job("file_round_trip", "position-based");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  const std::vector<std::int64_t> owned_original(mesh.original_vertex.begin(),
                                                 mesh.original_vertex.begin() + mesh.n_owned);
  const std::vector<std::int64_t> cells(mesh.cell_global.begin(), mesh.cell_global.end());
  CountingIntegrator first(MPI_COMM_WORLD, job, mesh, true);
  for (int k = 0; k < 2; ++k) (void)first.step();
  CheckpointState state = first.checkpoint();
  EXPECT_EQ(state.cell_field_names, std::vector<std::string>{"damage"});
  EXPECT_EQ(state.n_cells, mesh.n_global_cells);
  EXPECT_EQ(state.owned_cells, cells);
  state.job_text = "test";
  const std::string path = scratch() + "/counting.ckpt";
  write_checkpoint(MPI_COMM_WORLD, path, mesh.n_global_vertices, owned_original, state);

  CountingIntegrator second(MPI_COMM_WORLD, job, mesh, true);
  second.restore(read_checkpoint(MPI_COMM_WORLD, path, mesh.n_global_vertices, owned_original,
                                 CellOwnership{mesh.n_global_cells, cells}));
  EXPECT_EQ(second.vectors(), first.vectors());
  EXPECT_EQ(second.damage_, first.damage_);
  EXPECT_EQ(second.step_number(), 2);
  // Read without the cells, the file has no cell field: the integrator that needs it refuses it, on every rank.
  CountingIntegrator third(MPI_COMM_WORLD, job, mesh, true);
  const std::string error = restore_error(third, read_checkpoint(MPI_COMM_WORLD, path, mesh.n_global_vertices,
                                                                 owned_original));
  EXPECT_EQ(error, "checkpoint has no cell field 'damage' (the job has damage)");
}

TEST(TimeIntegrator, MissingRequiredFieldOrWrongSizeIsRefused) {
  const Job job = beam_job("missing", "backward-euler");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  CountingIntegrator first(MPI_COMM_WORLD, job, mesh, false);
  const CheckpointState state = first.checkpoint();
  CountingIntegrator second(MPI_COMM_WORLD, job, mesh, false);
  EXPECT_EQ(restore_error(second, without(state, "velocity")), "checkpoint has no field 'velocity'");
  CheckpointState short_field = state;
  short_field.fields[0].pop_back();
  EXPECT_EQ(restore_error(second, short_field), "checkpoint field size mismatch");
  EXPECT_FALSE(second.restored());
  EXPECT_EQ(second.after, 0);
}

TEST(TimeIntegrator, MissingOptionalFieldRestartsAtZero) {
  const Job job = beam_job("optional", "backward-euler");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  CountingIntegrator first(MPI_COMM_WORLD, job, mesh, false);
  (void)first.step();
  const CheckpointState state = without(first.checkpoint(), "extra");
  CountingIntegrator second(MPI_COMM_WORLD, job, mesh, false);
  EXPECT_EQ(restore_error(second, state), "");
  const std::vector<double> extra = owned(second.extra());
  EXPECT_TRUE(std::all_of(extra.begin(), extra.end(), [](double e) { return e == 0.0; }));
  EXPECT_EQ(second.vectors()[0], first.vectors()[0]);
}

TEST(TimeLoop, StartsAFreshRunReportsEveryStepAndStops) {
  const Job job = beam_job("loop", "backward-euler");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  CountingIntegrator fresh(MPI_COMM_WORLD, job, mesh, false);
  std::vector<long long> seen;
  const auto reports = run_time_loop(fresh, [&](long long step, double) { seen.push_back(step); });
  EXPECT_EQ(fresh.starts, 1);
  EXPECT_EQ(reports.size(), 10u);
  EXPECT_EQ(seen, (std::vector<long long>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(fresh.step_number(), fresh.n_steps());

  CountingIntegrator stopped(MPI_COMM_WORLD, job, mesh, false);
  int asked = 0;
  const auto few = run_time_loop(stopped, {}, [&] { return ++asked == 3; });
  EXPECT_EQ(few.size(), 3u);
  EXPECT_EQ(stopped.step_number(), 3);

  // After a restore: no start and no report of the restored step; the loop goes on to the end.
  CountingIntegrator resumed(MPI_COMM_WORLD, job, mesh, false);
  resumed.restore(stopped.checkpoint());
  seen.clear();
  const auto rest = run_time_loop(resumed, [&](long long step, double) { seen.push_back(step); });
  EXPECT_EQ(resumed.starts, 0);
  EXPECT_EQ(rest.size(), 7u);
  EXPECT_EQ(seen.front(), 4);
  EXPECT_EQ(resumed.vectors(), fresh.vectors());
}

TEST(TimeIntegrator, RealIntegratorsKeepTheirCheckpointFields) {
  MPI_Comm comm = MPI_COMM_WORLD;
  const Job implicit = beam_job("dynamic_fields", "newmark");
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, implicit);
  DynamicSolver dynamic(comm, implicit, mesh, build_model(comm, implicit, mesh), "", true);
  const CheckpointState d = dynamic.checkpoint();
  EXPECT_EQ(d.field_names, (std::vector<std::string>{"position", "velocity", "acceleration", "force_rate",
                                                     "external_work", "velocity_change"}));
  EXPECT_EQ(d.integrator, "newmark");
  EXPECT_TRUE(d.cell_field_names.empty());
  // velocity_change is optional: older checkpoints lack it.
  DynamicSolver restored(comm, implicit, mesh, build_model(comm, implicit, mesh), "", true);
  EXPECT_EQ(restore_error(restored, without(d, "velocity_change")), "");
  EXPECT_EQ(restore_error(restored, without(d, "force_rate")), "checkpoint has no field 'force_rate'");

  const Job position_based = beam_job("pbd_fields", "position-based");
  PbdSolver pbd(comm, position_based, mesh, build_model(comm, position_based, mesh), true);
  const CheckpointState p = pbd.checkpoint();
  EXPECT_EQ(p.field_names, (std::vector<std::string>{"position", "velocity", "external_work"}));
  EXPECT_EQ(p.integrator, "position-based");
  EXPECT_TRUE(p.cell_field_names.empty());  // (no plastic material)
  EXPECT_EQ(pbd.preconditioner_name(), "none: no linear solves");
}

}  // namespace test_time_integrator
}  // namespace edgefem
