// SPDX-License-Identifier: BSD-3-Clause
// Contact constraints inside the position-based sweep (issue 48; pbd/pbd_contact.hpp), on unstructured Gmsh meshes:
// a block (jobs/examples/meshes/cuboid.msh) on a 30-degree incline slides with the closed-form acceleration
// g (sin(theta) - mu cos(theta)) for mu < tan(theta) and sticks for mu > tan(theta), the plane's force then the
// weight; an elastic ball (jobs/experiments/contact/meshes/ball.msh) dropped onto a plane never ends a step inside
// it; a block on a moving belt is dragged with mu g until it moves with the belt. Each runs on MPI_COMM_WORLD and
// again on rank 0 alone: serial == distributed to round-off. CTest runs it on 1, 2 and 3 ranks (mpi.pbd_contact.npN).
// Rank 0 prints the measured values, one line each, prefixed "pbd contact:".
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/time_loop.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_pbd_contact {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;
using dynamics_testing::max_difference;
using dynamics_testing::rank0_alone;
using dynamics_testing::serial_difference;




/// What a run records after every step.
struct Record {
  std::vector<double> mean_velocity;  ///< the mean of the vertices' velocity component `axis`
  std::vector<std::array<double, 3>> force;  ///< the first obstacle's force on the body
  double lowest = 1e300;              ///< the smallest signed distance of any vertex to the plane, over all steps
  long long most_active = 0;
  std::vector<double> position;  ///< at the end, by original vertex
  double seconds = 0.0;
};

/// Runs `yaml` with the position-based integrator on comm; `normal`, `offset`: the plane n . x = offset, `axis`:
/// the velocity component recorded.
Record run(MPI_Comm comm, const std::string& name, const std::string& yaml, const std::array<double, 3>& normal,
           double offset, int axis) {
  Record r;
  const Job job = mpitest::job_from_yaml(mpitest::scratch_dir("pbd_contact"), name, yaml);  // (collective)
  if (comm == MPI_COMM_NULL) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  PbdSolver solver(comm, job, mesh, build_model(comm, job, mesh), true);
  run_time_loop(solver, [&](long long step, double) {
    const std::vector<double> x = solver.local_positions(), v = solver.local_velocities();
    double local[3] = {1e300, 0.0, static_cast<double>(mesh.n_owned)}, global[3];
    for (LocalIndex k = 0; k < mesh.n_owned; ++k) {
      const std::size_t i = 3 * static_cast<std::size_t>(k);
      local[0] = std::min(local[0], normal[0] * x[i] + normal[1] * x[i + 1] + normal[2] * x[i + 2] - offset);
      local[1] += v[i + static_cast<std::size_t>(axis)];
    }
    MPI_Allreduce(&local[0], &global[0], 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&local[1], &global[1], 2, MPI_DOUBLE, MPI_SUM, comm);
    r.lowest = std::min(r.lowest, global[0]);
    if (step == 0) return;
    r.mean_velocity.push_back(global[1] / global[2]);
    const std::vector<double> f = solver.obstacle_forces();
    r.force.push_back({f[0], f[1], f[2]});
    r.most_active = std::max(r.most_active, solver.last_contact()->active);
  });
  r.position = mpitest::gather_by_original_vertex(comm, mesh, {solver.local_positions()}, true)[0];
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// 1. The 1 x 1 x 3 cuboid lying on its 1 x 3 side (x = 0) on a plane tilted by theta = 30 degrees (gravity tilted
//    in the x-z plane: it slides along -z), Coulomb friction mu.

constexpr double kG = 10.0, kTheta = std::numbers::pi / 6, kDt = 0.01;
constexpr int kSteps = 30;

Record incline(MPI_Comm comm, double mu) {
  char text[1024];
  std::snprintf(text, sizeof text,
                "mesh:\n  file: %s/jobs/examples/meshes/cuboid.msh\n"
                "materials:\n  - {model: stvk, young: 1.0e4, poisson: 0.3, density: 1.0}\n"
                "loads:\n  gravity: [%.17g, 0, %.17g]\n"
                "obstacles:\n"
                "  - {name: slope, shape: plane, point: [0, 0, 0], normal: [1, 0, 0], friction: %.17g}\n"
                "analysis: {type: dynamic, integrator: position-based, dt: %.17g, end_time: %.17g,\n"
                "           position_based: {iterations: 10}}\n",
                EDGEFEM_SOURCE_DIR, -kG * std::cos(kTheta), -kG * std::sin(kTheta), mu, kDt, kSteps * kDt);
  return run(comm, "incline_" + std::to_string(mu), text, {1, 0, 0}, 0.0, 2);
}

TEST(PbdIncline, SlidesWithTheClosedFormAccelerationBelowTanTheta) {
  const double mu = 0.3;
  const Record all = incline(MPI_COMM_WORLD, mu);
  const Record serial = incline(rank0_alone(), mu);
  ASSERT_EQ(all.mean_velocity.size(), static_cast<std::size_t>(kSteps));
  // The velocity along the slope (-z) grows by a dt a step: a from the last 20 steps (the first ones settle the
  // block's elastic sag onto the plane).
  const double a = -(all.mean_velocity[kSteps - 1] - all.mean_velocity[kSteps - 21]) / (20 * kDt);
  const double expected = kG * (std::sin(kTheta) - mu * std::cos(kTheta));
  const double error = std::abs(a - expected) / expected;
  const std::array<double, 3> f = all.force.back();  // x: normal; z: the friction (up the slope)
  const double weight = 3.0 * kG;                    // the cuboid's volume 3, density 1
  const double normal_error = std::abs(f[0] - weight * std::cos(kTheta)) / (weight * std::cos(kTheta));
  const double ratio = f[2] / f[0];
  const double distributed = serial_difference(all.position, serial.position);
  if (world_rank() == 0)
    std::printf("pbd contact: incline mu %.2f on %d ranks: a = %.6f, closed form %.6f (error %.2e); plane force "
                "(%.6f, %.2e, %.6f): normal vs m g cos(theta) %.2e, friction / normal %.6f; lowest vertex %.2e, "
                "most contacts %lld, serial vs distributed %.2e, %.2f s\n",
                mu, world_size(), a, expected, error, f[0], f[1], f[2], normal_error, ratio, all.lowest,
                all.most_active, distributed, all.seconds);
  EXPECT_LT(error, 2e-2);
  EXPECT_LT(normal_error, 2e-2);
  EXPECT_NEAR(ratio, mu, 1e-9);  // every contact slides: the friction is mu times its normal force
  EXPECT_GE(all.lowest, -1e-12);
  EXPECT_GT(all.most_active, 20);
  EXPECT_LT(distributed, 1e-10);
}

TEST(PbdIncline, SticksAboveTanTheta) {
  const Record all = incline(MPI_COMM_WORLD, 0.8);
  const Record serial = incline(rank0_alone(), 0.8);
  const double v = std::abs(all.mean_velocity.back());
  const double v_free = kG * (std::sin(kTheta) - 0.3 * std::cos(kTheta)) * kSteps * kDt;  // mu 0.3's, for scale
  const std::array<double, 3> f = all.force.back();
  const double weight = 3.0 * kG;
  // Sticking: the plane carries the whole weight, (m g cos(theta), 0, m g sin(theta)).
  const double force_error = std::hypot(f[0] - weight * std::cos(kTheta), f[1], f[2] - weight * std::sin(kTheta)) / weight;
  const double distributed = serial_difference(all.position, serial.position);
  if (world_rank() == 0)
    std::printf("pbd contact: incline mu 0.80 on %d ranks: mean velocity along the slope %.3e (mu 0.3 reaches %.3f); "
                "plane force (%.6f, %.2e, %.6f) vs the weight's (%.6f, 0, %.6f): error %.2e of m g; serial vs "
                "distributed %.2e, %.2f s\n",
                world_size(), v, v_free, f[0], f[1], f[2], weight * std::cos(kTheta), weight * std::sin(kTheta),
                force_error, distributed, all.seconds);
  EXPECT_LT(v, 1e-3 * v_free);
  EXPECT_LT(force_error, 2e-2);
  EXPECT_GE(all.lowest, -1e-12);
  EXPECT_LT(distributed, 1e-10);
}

// ---------------------------------------------------------------------------------------------------------
// 2. An elastic ball (2.2k unstructured tets) dropped 0.2 onto a plane with friction: no vertex ends a step inside
//    the plane (the contacts are the sweep's last colour).

Record ball(MPI_Comm comm) {
  const std::string yaml =
      "mesh:\n  file: " + std::string(EDGEFEM_SOURCE_DIR) + "/jobs/experiments/contact/meshes/ball.msh\n" +
      "materials:\n  - {model: stvk, young: 2.0e3, poisson: 0.3, density: 1.0}\n"
      "loads:\n  gravity: [0, 0, -10]\n"
      "obstacles:\n  - {name: floor, shape: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n"
      "analysis: {type: dynamic, integrator: position-based, dt: 0.01, end_time: 0.3,\n"
      "           position_based: {iterations: 10}}\n";
  return run(comm, "ball", yaml, {0, 0, 1}, 0.0, 2);
}

TEST(PbdBallDrop, NoVertexEndsAStepInsideThePlane) {
  const Record all = ball(MPI_COMM_WORLD);
  const Record serial = ball(rank0_alone());
  const double distributed = serial_difference(all.position, serial.position);
  if (world_rank() == 0)
    std::printf("pbd contact: ball drop (dt 0.01, 10 sweeps) on %d ranks: lowest vertex z over all steps %.3e, "
                "most contacts %lld, last mean velocity %.4f, serial vs distributed %.2e, %.2f s\n",
                world_size(), all.lowest, all.most_active, all.mean_velocity.back(), distributed, all.seconds);
  EXPECT_GE(all.lowest, -1e-12);  // the sweep's last colour leaves every contact on or above the plane
  EXPECT_GT(all.most_active, 3);  // it did land
  EXPECT_LT(distributed, 1e-10);
}

// ---------------------------------------------------------------------------------------------------------
// 3. A moving obstacle: a block on a belt (a plane translated along x at speed 1) with mu = 0.5 is dragged with
//    a = mu g until it moves with the belt (t = 0.2), then sticks to it (no friction force).

Record belt(MPI_Comm comm) {
  const std::string yaml =
      "mesh:\n  generate: {shape: box, size: [1, 1, 0.5], cells: [4, 4, 2]}\n"
      "materials:\n  - {model: stvk, young: 1.0e4, poisson: 0.3, density: 1.0}\n"
      "loads:\n  gravity: [0, 0, -10]\n"
      "obstacles:\n  - {name: belt, shape: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5,\n"
      "     motion: {translate: [0.4, 0, 0]}}\n"
      "analysis: {type: dynamic, integrator: position-based, dt: 0.01, end_time: 0.4,\n"
      "           position_based: {iterations: 10}}\n";
  return run(comm, "belt", yaml, {0, 0, 1}, 0.0, 0);
}

TEST(PbdBelt, DragsTheBlockWithMuGThenCarriesIt) {
  const Record all = belt(MPI_COMM_WORLD);
  const Record serial = belt(rank0_alone());
  ASSERT_EQ(all.mean_velocity.size(), 40u);
  const double a = (all.mean_velocity[14] - all.mean_velocity[4]) / (10 * 0.01);  // steps 5..15: slipping
  const double friction = all.force[9][0], normal = all.force[9][2];          // step 10: slipping
  const double v_end = all.mean_velocity.back();                              // the belt's speed is 1
  const double stuck_force = std::abs(all.force.back()[0]);
  const double distributed = serial_difference(all.position, serial.position);
  if (world_rank() == 0)
    std::printf("pbd contact: belt on %d ranks: a = %.6f while slipping (mu g = 5), friction / normal %.6f; "
                "velocity at the end %.6f (belt 1), friction force then %.2e; serial vs distributed %.2e, %.2f s\n",
                world_size(), a, friction / normal, v_end, stuck_force, distributed, all.seconds);
  EXPECT_NEAR(a, 5.0, 5e-2);
  EXPECT_NEAR(friction / normal, 0.5, 1e-6);  // (every contact slips: 2.3e-9 measured)
  EXPECT_NEAR(v_end, 1.0, 1e-2);
  EXPECT_LT(stuck_force, 1e-2 * normal);
  EXPECT_GE(all.lowest, -1e-12);
  EXPECT_LT(distributed, 1e-10);
}

}  // namespace test_pbd_contact
}  // namespace edgefem
