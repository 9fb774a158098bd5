// SPDX-License-Identifier: BSD-3-Clause
// Contact with obstacles in the Newton solvers (issue 48; solver/contact.hpp), the small versions of the
// experiments of jobs/experiments/contact/: a block resting on a frictionless plane equals the block on rollers; a
// block on an incline sticks for mu > tan(theta) and slides with the closed-form acceleration for mu < tan(theta);
// an elastic ball (an unstructured Gmsh mesh) dropped on a plane with large steps (backward Euler and Newmark)
// never penetrates it; a rigid indenter (an STL surface on a schedule) pressed into a block gives a force that
// balances the support's; an obstacle that overlaps the body at the start is an error (barrier) or a warning
// (penalty). Each runs on MPI_COMM_WORLD and again on rank 0 alone: serial == distributed to round-off. CTest runs
// it on 1, 2 and 3 ranks (mpi.contact.npN). Rank 0 prints the measured values, one line each, prefixed "contact:".
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/job.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/time_loop.hpp"
#include "solver/contact.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/contact_testing.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_contact {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;
using dynamics_testing::max_difference;
using dynamics_testing::rank0_alone;
using dynamics_testing::serial_difference;

std::string scratch() { return mpitest::scratch_dir("contact"); }
Job job_from_yaml(const std::string& name, const std::string& yaml) {
  return mpitest::job_from_yaml(scratch(), name, yaml);
}

/// Tight Newton tolerances and a direct solve (PETSc options persist: every job names its own).
const char* const kSolver =
    "solver:\n"
    "  newton: {rtol: 1.0e-11, atol: 1.0e-12, max_it: 60}\n"
    "  petsc: \"-ksp_type gmres -pc_type lu -pc_factor_mat_solver_type mumps -ksp_rtol 1e-14 -ksp_atol 1e-50\"\n";

struct StaticResult {
  std::vector<double> reference, position;  ///< by original vertex, on every rank of the comm
  std::vector<StepReport> reports;
  std::vector<std::array<double, 3>> obstacle_force;  ///< the first obstacle's force after each load step
  std::vector<std::array<double, 3>> support_force;   ///< the internal force summed over the vertices with z = 0
};

StaticResult solve_static(MPI_Comm comm, const Job& job) {
  StaticResult r;
  if (comm == MPI_COMM_NULL) return r;
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  StaticSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  r.reports = solver.run([&](int step, double) {
    if (step == 0) return;
    if (ContactTerms* contact = solver.contact()) {
      const std::vector<double> f = contact->obstacle_forces(solver.state());
      r.obstacle_force.push_back({f[0], f[1], f[2]});
    }
    const std::vector<double> f = solver.local_internal_force();
    std::array<double, 3> local{}, global{};
    for (LocalIndex v = 0; v < mesh.n_owned; ++v)
      if (std::abs(mesh.mesh.coords[3 * static_cast<std::size_t>(v) + 2]) < 1e-12)
        for (int d = 0; d < 3; ++d) local[d] += f[3 * static_cast<std::size_t>(v) + d];
    MPI_Allreduce(local.data(), global.data(), 3, MPI_DOUBLE, MPI_SUM, comm);
    r.support_force.push_back(global);
  });
  const std::vector<double> x = solver.local_positions();
  auto gathered = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords, x}, true);
  r.reference = std::move(gathered[0]);
  r.position = std::move(gathered[1]);
  return r;
}



// ---------------------------------------------------------------------------------------------------------
// 1. A block resting on a frictionless plane = the block on rollers.

/// The block; with `dh` > 0 on a frictionless plane dh / 2 below it (the barrier holds it from the start), else on
/// rollers (z held on its bottom face).
std::string resting_block(double dh) {
  char contact[256];
  std::snprintf(contact, sizeof contact,
                "obstacles:\n"
                "  - {name: floor, shape: plane, point: [0, 0, %.17g], normal: [0, 0, 1]}\n"
                "contact: {distance: %.17g}\n",
                -0.5 * dh, dh);
  return std::string(
             "mesh:\n"
             "  generate: {shape: box, size: [1, 1, 1], cells: [4, 4, 4]}\n"
             "materials:\n"
             "  - {model: stvk, young: 1.0e3, poisson: 0.3, density: 1.0}\n"
             "boundary:\n"
             "  - {select: {region: 11}, fix: [x]}\n"
             "  - {select: {region: 13}, fix: [y]}\n") +
         (dh > 0.0 ? contact : "  - {select: {region: 15}, fix: [z]}\n") +
         "loads:\n  gravity: [0, 0, -10]\nanalysis: {type: static, steps: 1}\n" + kSolver;
}

TEST(RestingBlock, OnAFrictionlessPlaneEqualsTheBlockOnRollers) {
  const StaticResult roller = solve_static(MPI_COMM_WORLD, job_from_yaml("roller", resting_block(0.0)));
  double u_max = 0;
  for (std::size_t i = 0; i < roller.position.size(); ++i)
    u_max = std::max(u_max, std::abs(roller.position[i] - roller.reference[i]));
  // The contact's block floats on the barrier, its bottom's vertices at gaps between 0 and dh that depend on their
  // loads: compare the displacements after the mean rigid shift in z of the bottom face (the roller holds z = 0).
  // The difference is of the order of dh: it falls with it.
  std::vector<double> agreement;
  for (const double dh : {1e-3, 1e-4}) {
    const Job job = job_from_yaml("resting_" + std::to_string(dh), resting_block(dh));
    const StaticResult rest = solve_static(MPI_COMM_WORLD, job);
    const StaticResult serial = solve_static(rank0_alone(), job);
    double shift = 0;
    int bottom = 0;
    for (std::size_t v = 0; 3 * v < rest.reference.size(); ++v)
      if (rest.reference[3 * v + 2] == 0.0) shift += rest.position[3 * v + 2], ++bottom;
    shift /= bottom;
    std::vector<double> shifted = rest.position;
    for (std::size_t v = 0; 3 * v < shifted.size(); ++v) shifted[3 * v + 2] -= shift;
    agreement.push_back(max_difference(shifted, roller.position) / u_max);
    const double distributed = serial_difference(rest.position, serial.position) / u_max;
    const ContactStepReport& c = rest.reports.back().contact;
    if (world_rank() == 0)
      std::printf("contact: resting block, dh %.0e, on %d ranks: |u_contact - shift - u_roller| / max|u| = %.3e "
                  "(shift %.4e, max|u| %.4e), floor force %.12f (weight 10), min gap %.3e, serial vs distributed "
                  "%.2e\n",
                  dh, world_size(), agreement.back(), shift, u_max, rest.obstacle_force.back()[2], c.min_gap,
                  distributed);
    EXPECT_NEAR(rest.obstacle_force.back()[2], 10.0, 1e-8);  // the floor carries the weight
    EXPECT_GT(c.min_gap, 0.0);
    EXPECT_EQ(c.penetration, 0.0);
    EXPECT_EQ(c.active, 25);  // every vertex of the bottom face
    EXPECT_LT(distributed, 1e-9);
  }
  EXPECT_LT(agreement[1], 5e-3);
  EXPECT_LT(agreement[1], 0.2 * agreement[0]);
}

// ---------------------------------------------------------------------------------------------------------
// 2. A block on an incline (gravity tilted by theta = 30 degrees against a horizontal plane): it sticks for
//    mu > tan(theta) and slides with a = g (sin(theta) - mu cos(theta)) for mu < tan(theta).

struct Slide {
  std::vector<double> mean_velocity;  ///< the body's mean x velocity after each step
  std::vector<double> min_gap;        ///< each step's smallest gap
  dynamics_testing::RunResult run;
};

Slide slide(MPI_Comm comm, double mu, double dt, double end_time) {
  char text[1024];
  std::snprintf(text, sizeof text,
                "mesh:\n"
                "  generate: {shape: box, size: [1, 1, 0.5], cells: [4, 4, 2]}\n"
                "materials:\n"
                "  - {model: stvk, young: 1.0e5, poisson: 0.3, density: 1.0}\n"
                "loads:\n"
                "  gravity: [5.0, 0, -8.660254037844386]\n"
                "obstacles:\n"
                "  - {name: slope, shape: plane, point: [0, 0, -5.0e-4], normal: [0, 0, 1], friction: %.17g}\n"
                "contact: {distance: 1.0e-3}\n"
                "analysis: {type: dynamic, integrator: backward-euler, dt: %.17g, end_time: %.17g}\n%s",
                mu, dt, end_time, kSolver);
  Slide s;
  const Job job = job_from_yaml("incline_" + std::to_string(mu), text);  // (collective on MPI_COMM_WORLD)
  if (comm == MPI_COMM_NULL) return s;
  dynamics_testing::RunSpec spec;
  spec.on_step = [&](DynamicSolver& solver, const LocalMesh& mesh, long long step, double) {
    if (step == 0) return;
    const std::vector<double> v = solver.local_velocities();
    double local[2] = {0, static_cast<double>(mesh.n_owned)}, global[2] = {0, 0};
    for (LocalIndex k = 0; k < mesh.n_owned; ++k) local[0] += v[3 * static_cast<std::size_t>(k)];
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
    s.mean_velocity.push_back(global[0] / global[1]);
    s.min_gap.push_back(solver.last_contact()->min_gap);
  };
  s.run = dynamics_testing::simulate(comm, job, spec);
  return s;
}

TEST(Incline, SlidesWithTheClosedFormAccelerationBelowTanTheta) {
  const double mu = 0.3, dt = 0.02, g = 10.0, theta = std::numbers::pi / 6;
  const Slide all = slide(MPI_COMM_WORLD, mu, dt, 0.4);
  const Slide serial = slide(rank0_alone(), mu, dt, 0.4);
  // Backward Euler's velocity grows by a dt a step under a constant force: a from the last 10 steps (the first
  // ones settle the block onto the barrier's rest gap).
  const std::size_t n = all.mean_velocity.size();
  ASSERT_EQ(n, 20u);
  const double a = (all.mean_velocity[n - 1] - all.mean_velocity[n - 11]) / (10 * dt);
  const double expected = g * (std::sin(theta) - mu * std::cos(theta));
  const double error = std::abs(a - expected) / expected;
  const double distributed =
      serial_difference(all.run.position, serial.run.position) / dynamics_testing::max_displacement(all.run);
  if (world_rank() == 0)
    std::printf("contact: incline mu %.2f on %d ranks: a = %.6f, closed form %.6f (error %.2e), smallest gap %.3e, "
                "serial vs distributed %.2e\n",
                mu, world_size(), a, expected, error,
                *std::min_element(all.min_gap.begin(), all.min_gap.end()), distributed);
  EXPECT_LT(error, 1e-2);
  EXPECT_GT(*std::min_element(all.min_gap.begin(), all.min_gap.end()), 0.0);
  EXPECT_LT(distributed, 1e-8);
}

TEST(Incline, SticksAboveTanTheta) {
  const double dt = 0.02;
  const Slide sticks = slide(MPI_COMM_WORLD, 0.8, dt, 0.4);
  const Slide slides = slide(MPI_COMM_WORLD, 0.3, dt, 0.4);
  // The mean x displacement after 0.4 s: the sliding block's against the sticking one's creep (IPC's smoothed
  // friction lets a sticking contact creep by at most the slip eps per step).
  const double stuck = dynamics_testing::max_displacement(sticks.run);
  const double slid = dynamics_testing::max_displacement(slides.run);
  const double v_stuck = std::abs(sticks.mean_velocity.back()), v_slid = slides.mean_velocity.back();
  if (world_rank() == 0)
    std::printf("contact: incline mu 0.8 on %d ranks: max |u| %.3e, mean x velocity %.3e (mu 0.3: %.3e, %.3e)\n",
                world_size(), stuck, v_stuck, slid, v_slid);
  EXPECT_LT(v_stuck, 1e-2 * v_slid);
  EXPECT_LT(stuck, 1e-2 * slid);
}

// ---------------------------------------------------------------------------------------------------------
// 3. An elastic ball (unstructured Gmsh tets) dropped 0.2 onto a plane with large steps: no vertex ever reaches
//    the plane; it comes to rest on it.

dynamics_testing::RunResult drop(MPI_Comm comm, const std::string& integrator, double dt, double& lowest,
                                 long long& most_active) {
  lowest = 1e300, most_active = 0;
  const Job job = job_from_yaml(  // (collective on MPI_COMM_WORLD)
      "ball_" + integrator,
      "mesh:\n  file: " + std::string(EDGEFEM_SOURCE_DIR) + "/jobs/experiments/contact/meshes/ball.msh\n" +
          "materials:\n"
          "  - {model: neo-hookean, young: 2.0e3, poisson: 0.3, density: 1.0}\n"
          "loads:\n  gravity: [0, 0, -10]\n"
          "obstacles:\n"
          "  - {name: floor, shape: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n"
          "contact: {distance: 1.0e-3}\n"
          "analysis: {type: dynamic, integrator: " +
          integrator + ", dt: " + std::to_string(dt) + ", end_time: 0.3}\n" + kSolver);
  if (comm == MPI_COMM_NULL) return {};
  dynamics_testing::RunSpec spec;
  spec.on_step = [&](DynamicSolver& solver, const LocalMesh& mesh, long long step, double) {
    // The lowest vertex of the whole body, from the positions (not from the contact's own report).
    const std::vector<double> x = solver.local_positions();
    double local = 1e300, global = 0;
    for (LocalIndex v = 0; v < mesh.n_owned; ++v) local = std::min(local, x[3 * static_cast<std::size_t>(v) + 2]);
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MIN, comm);
    lowest = std::min(lowest, global);
    if (step > 0) most_active = std::max(most_active, solver.last_contact()->active);
  };
  return dynamics_testing::simulate(comm, job, spec);
}

class BallDrop : public ::testing::TestWithParam<std::string> {};

TEST_P(BallDrop, NeverPenetratesThePlaneUnderLargeSteps) {
  const double dt = 0.05;  // the ball falls 0.1 in its last step before the impact: 100 activation distances
  double lowest = 0, serial_lowest = 0;
  long long active = 0, serial_active = 0;
  const auto all = drop(MPI_COMM_WORLD, GetParam(), dt, lowest, active);
  const auto serial = drop(rank0_alone(), GetParam(), dt, serial_lowest, serial_active);
  double penetration = 0;
  for (const auto& r : all.reports) penetration = std::max(penetration, r.contact->penetration);
  const double u = dynamics_testing::max_displacement(all);
  const double distributed = serial_difference(all.position, serial.position) / u;
  if (world_rank() == 0) {
    std::printf("contact: ball drop (%s, dt %.3g) on %d ranks: lowest vertex z over all steps %.4e, most active "
                "contacts %lld, deepest penetration %.3e, energy first %.6f last %.6f, serial vs distributed %.2e\n",
                GetParam().c_str(), dt, world_size(), lowest, active, penetration, all.energy.front().total(),
                all.energy.back().total(), distributed);
    for (std::size_t k = 0; k < all.energy.size(); ++k)
      std::printf("contact:   step %zu  kinetic %.6e  strain %.6e  contact %.6e  external work %.6e\n", k,
                  all.energy[k].kinetic, all.energy[k].strain, all.energy[k].contact, all.energy[k].external_work);
  }
  EXPECT_GT(lowest, 0.0);  // no vertex ever at or below the plane
  EXPECT_EQ(penetration, 0.0);
  EXPECT_GT(active, 3);  // it did land
  EXPECT_LT(distributed, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(Integrators, BallDrop, ::testing::Values("backward-euler", "newmark"));

// ---------------------------------------------------------------------------------------------------------
// 4. A rigid spherical indenter (an STL surface) pressed into a block on a schedule: the force on it rises with
//    the indentation and balances the support's reaction.

/// A binary STL of an icosphere (rank 0 writes it).
std::string write_indenter_stl() {
  const std::string path = scratch() + "/indenter.stl";
  if (world_rank() == 0) {
    std::vector<contact::Vec3> points;
    std::vector<std::array<int, 3>> triangles;
    contact_testing::icosphere({0.5, 0.5, 0.5 + 0.5 + 0.01}, 0.5, 4, points, triangles);
    std::ofstream out(path, std::ios::binary);
    char header[80] = "edgefem test indenter";
    out.write(header, 80);
    const auto n = static_cast<std::uint32_t>(triangles.size());
    out.write(reinterpret_cast<const char*>(&n), 4);
    for (const auto& t : triangles) {
      float record[12] = {0, 0, 0};
      for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d) record[3 + 3 * k + d] = static_cast<float>(points[t[k]][d]);
      out.write(reinterpret_cast<const char*>(record), 48);
      const std::uint16_t attribute = 0;
      out.write(reinterpret_cast<const char*>(&attribute), 2);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

TEST(Indenter, ForceRisesWithIndentationAndBalancesTheSupport) {
  const std::string stl = write_indenter_stl();
  const Job job = job_from_yaml(
      "indenter",
      "mesh:\n"
      "  generate: {shape: box, size: [1, 1, 0.5], cells: [10, 10, 3]}\n"
      "materials:\n"
      "  - {model: neo-hookean, young: 1.0e2, poisson: 0.3, density: 1.0}\n"
      "boundary:\n"
      "  - {select: {region: 15}, fix: [x, y, z]}\n"
      "obstacles:\n"
      "  - name: pusher\n"
      "    shape: mesh\n"
      "    file: " + stl + "\n"
      "    motion: {translate: [0, 0, -0.06], schedule: {table: [[0, 0], [1, 1]]}}\n"
      "contact: {distance: 2.0e-3}\n"
      "analysis: {type: static, steps: 5}\n" + std::string(kSolver));
  const StaticResult all = solve_static(MPI_COMM_WORLD, job);
  const StaticResult serial = solve_static(rank0_alone(), job);
  ASSERT_EQ(all.obstacle_force.size(), 5u);
  double worst_balance = 0, previous = 0;
  bool rising = true;
  for (std::size_t k = 0; k < all.obstacle_force.size(); ++k) {
    const double f = -all.obstacle_force[k][2];  // the body pushes the indenter up: the obstacle's force is down
    const double indentation = 0.06 * static_cast<double>(k + 1) / 5.0 - 0.01;
    double balance = 0;
    for (int d = 0; d < 3; ++d)
      balance = std::max(balance, std::abs(all.obstacle_force[k][d] + all.support_force[k][d]));
    balance /= std::max(f, 1e-12);
    worst_balance = std::max(worst_balance, balance);
    if (indentation > 0.0 && !(f > previous)) rising = false;
    previous = f;
    EXPECT_GT(all.reports[k].contact.min_gap, 0.0);
    EXPECT_EQ(all.reports[k].contact.penetration, 0.0);
    if (world_rank() == 0)
      std::printf("contact: indenter step %zu: indentation %.4f  force %.6e  active %lld  min gap %.3e\n", k + 1,
                  indentation, f, all.reports[k].contact.active, all.reports[k].contact.min_gap);
  }
  double u = 0;
  for (std::size_t i = 0; i < all.position.size(); ++i) u = std::max(u, std::abs(all.position[i] - all.reference[i]));
  const double distributed = serial_difference(all.position, serial.position) / u;
  if (world_rank() == 0)
    std::printf("contact: indenter on %d ranks: |obstacle + support| / force <= %.2e, serial vs distributed %.2e\n",
                world_size(), worst_balance, distributed);
  EXPECT_TRUE(rising);
  EXPECT_GT(previous, 0.0);
  EXPECT_LT(worst_balance, 1e-6);
  EXPECT_LT(distributed, 1e-8);
}

// ---------------------------------------------------------------------------------------------------------
// 5. An obstacle overlapping the body at the start: an error naming it, the vertex and its depth (barrier, every
//    rank); a warning, and a penetration the penalty reports (penalty).

std::string overlapping(const std::string& method) {
  return "mesh:\n"
         "  generate: {shape: box, size: [1, 1, 1], cells: [2, 2, 2]}\n"
         "materials:\n"
         "  - {model: stvk, young: 1.0e3, poisson: 0.3, density: 1.0}\n"
         "boundary:\n"
         "  - {select: {region: 16}, fix: [x, y, z]}\n"
         "obstacles:\n"
         "  - {name: table, shape: box, box: [[-1, -1, -1], [2, 2, 0.05]]}\n"
         "contact: {method: " +
         method + ", stiffness: 1.0e5}\nanalysis: {type: static, steps: 1}\n" + kSolver;
}

TEST(Overlap, IsAnErrorWithTheBarrierOnEveryRank) {
  const Job job = job_from_yaml("overlap_barrier", overlapping("barrier"));
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  std::string message;
  try {
    StaticSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), "", true);
  } catch (const InputError& e) {
    message = e.what();
  }
  if (world_rank() == 0) std::printf("contact: overlap (barrier): %s\n", message.c_str());
  EXPECT_NE(message.find("overlap_barrier.yaml:"), std::string::npos) << message;
  EXPECT_NE(message.find("obstacles[0] (table)"), std::string::npos) << message;
  EXPECT_NE(message.find("mesh vertex 0 "), std::string::npos) << message;  // the first of the bottom's
  EXPECT_NE(message.find("inside the obstacle at the start, 0.05 deep"), std::string::npos) << message;
}

TEST(Overlap, IsAWarningWithThePenaltyWhichReportsThePenetration) {
  const StaticResult r = solve_static(MPI_COMM_WORLD, job_from_yaml("overlap_penalty", overlapping("penalty")));
  const ContactStepReport& c = r.reports.back().contact;
  if (world_rank() == 0)
    std::printf("contact: overlap (penalty): deepest penetration %.4e, active %lld, table force %.6e\n",
                c.penetration, c.active, r.obstacle_force.back()[2]);
  EXPECT_GT(c.penetration, 0.0);
  EXPECT_LT(c.penetration, 0.05);  // pushed partly out
  EXPECT_GT(c.active, 0);
  EXPECT_GT(r.obstacle_force.back()[2], 0.0);
}

}  // namespace test_contact
}  // namespace edgefem
