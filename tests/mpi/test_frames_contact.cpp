// SPDX-License-Identifier: BSD-3-Clause
// Contact of the frame-based model (issue 48; frames/frames_contact.hpp) on an unstructured Gmsh mesh
// (jobs/examples/meshes/cuboid.msh, 1 x 1 x 3): the block clamped at its end z = 0 lies on its side x = 0 on a
// frictionless plane under gravity along -x; the plane's force, which depends on how the block bends (the clamp
// carries the rest: statically indeterminate), against the tet model's (StaticSolver with the same barrier); no
// contact point reaches the plane; the frame solve on all ranks against rank 0 alone. The same jobs run through the
// program (run_job): the frame run's reactions.csv, summary.json and point fields contact_gap / contact_force (VTU
// and XDMF) against the tet run's. CTest runs it on 1, 2 and 3 ranks (mpi.frames_contact.npN). Rank 0 prints the
// measured values, prefixed "frames contact:".
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "frames/frames_solver.hpp"
#include "io/job.hpp"
#include "solver/contact.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/contact_output_testing.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_frames_contact {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

/// The block on the plane; `discretization`: empty (tets) or a frames mapping; `friction`: with gravity also
/// along the block's axis (-z, toward the clamp) and Coulomb friction 0.5 (slip velocity 0.05), in 4 load steps.
std::string block_job(const std::string& discretization, bool friction = false) {
  return "mesh:\n  file: " + std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/meshes/cuboid.msh\n" +
         "materials:\n  - {model: stvk, young: 1.0e3, poisson: 0.3, density: 1.0}\n"
         "boundary:\n  - {select: {region: 21}, fix: [x, y, z]}\n" +
         (friction ? "loads:\n  gravity: [-10, 0, -5]\n"
                     "obstacles:\n  - {name: floor, shape: plane, point: [-5.0e-4, 0, 0], normal: [1, 0, 0], "
                     "friction: 0.5}\n"
                     "contact: {distance: 1.0e-3, friction_velocity: 0.05}\n"
                     "analysis: {type: static, steps: 4}\n"
                   : "loads:\n  gravity: [-10, 0, 0]\n"
                     "obstacles:\n  - {name: floor, shape: plane, point: [-5.0e-4, 0, 0], normal: [1, 0, 0]}\n"
                     "contact: {distance: 1.0e-3}\n"
                     "analysis: {type: static, steps: 1}\n") +
         "solver:\n  newton: {rtol: 1.0e-10, atol: 1.0e-11, max_it: 40}\n" +
         (discretization.empty() ? std::string() : "discretization: " + discretization + "\n");
}

struct Result {
  double force = 0.0;  ///< the plane's force on the body, x
  double friction = 0.0;  ///< z
  double min_gap = 0.0;
  long long active = 0;
  double seconds = 0.0;
};

Result tets(MPI_Comm comm, const Job& job) {
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  StaticSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  solver.run([](int, double) {});
  Result r;
  const std::vector<double> f = solver.contact()->obstacle_forces(solver.state());
  r.force = f[0], r.friction = f[2];
  r.min_gap = solver.last_contact().min_gap;
  return r;
}

Result frames(MPI_Comm comm, const Job& job) {
  Result r;
  if (comm == MPI_COMM_NULL) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  const Model model = build_model(comm, job, mesh);
  FrameSolver solver(comm, job, mesh, model, true);
  solver.run([](int, double) {});
  r.force = solver.obstacle_forces()[0], r.friction = solver.obstacle_forces()[2];
  r.min_gap = solver.last_contact()->min_gap;
  r.active = solver.last_contact()->active;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

class FramesOnAPlane : public ::testing::TestWithParam<std::pair<std::string, double>> {};

TEST_P(FramesOnAPlane, CarriesTheTetModelsShareOfTheWeight) {
  const auto& [discretization, tolerance] = GetParam();
  const std::string dir = mpitest::scratch_dir("frames_contact");
  const Job tet_job = mpitest::job_from_yaml(dir, "tets", block_job(""));
  const Job frame_job = mpitest::job_from_yaml(dir, "frames", block_job(discretization));
  const Result reference = tets(MPI_COMM_WORLD, tet_job);
  const Result all = frames(MPI_COMM_WORLD, frame_job);
  const Result serial = frames(world_rank() == 0 && world_size() > 1 ? MPI_COMM_SELF : MPI_COMM_NULL, frame_job);
  const double error = std::abs(all.force - reference.force) / reference.force;
  const double distributed =
      world_size() == 1 ? 0.0 : dynamics_testing::from_rank0(std::abs(all.force - serial.force) / all.force);
  if (world_rank() == 0)
    std::printf("frames contact: %s on %d ranks: plane force %.9f, tets %.9f (weight 30): difference %.2e; "
                "smallest gap %.3e (tets %.3e), %lld contacts; serial vs distributed %.2e; %.2f s\n",
                discretization.c_str(), world_size(), all.force, reference.force, error, all.min_gap,
                reference.min_gap, all.active, distributed, all.seconds);
  EXPECT_GT(reference.force, 20.0);  // the plane carries most of the weight, the clamp the rest
  EXPECT_LT(reference.force, 29.0);
  EXPECT_LT(error, tolerance);
  EXPECT_GT(all.min_gap, 0.0);  // no contact point reached the plane
  EXPECT_GT(all.active, 20);
  EXPECT_LT(distributed, 1e-9);
}

TEST(FramesOnAPlane, WithFrictionCarryTheTetModelsShareOfTheAxialLoad) {
  // Gravity also along the axis: friction (lagged per load step, smoothed) carries part of it to the plane.
  const std::string dir = mpitest::scratch_dir("frames_contact");
  const std::string frames_key = "{type: frames, frames: 16, frame_type: affine}";
  const Job tet_job = mpitest::job_from_yaml(dir, "tets_friction", block_job("", true));
  const Job frame_job = mpitest::job_from_yaml(dir, "frames_friction", block_job(frames_key, true));
  const Result reference = tets(MPI_COMM_WORLD, tet_job);
  const Result all = frames(MPI_COMM_WORLD, frame_job);
  const Result serial = frames(world_rank() == 0 && world_size() > 1 ? MPI_COMM_SELF : MPI_COMM_NULL, frame_job);
  const double normal_error = std::abs(all.force - reference.force) / reference.force;
  const double friction_error = std::abs(all.friction - reference.friction) / reference.friction;
  const double distributed =
      world_size() == 1 ? 0.0 : dynamics_testing::from_rank0(std::abs(all.friction - serial.friction) / all.friction);
  if (world_rank() == 0)
    std::printf("frames contact: friction 0.5, 16 affine frames on %d ranks: plane force (%.6f, z %.6f), tets (%.6f, "
                "z %.6f): normal %.2e, friction %.2e apart; smallest gap %.3e; serial vs distributed %.2e; %.2f s\n",
                world_size(), all.force, all.friction, reference.force, reference.friction, normal_error,
                friction_error, all.min_gap, distributed, all.seconds);
  EXPECT_GT(reference.friction, 1.0);                     // friction does carry axial load
  EXPECT_LT(reference.friction, 0.5 * reference.force);  // within Coulomb's cone
  EXPECT_LT(normal_error, 3e-2);
  EXPECT_LT(friction_error, 8e-2);
  EXPECT_GT(all.min_gap, 0.0);
  EXPECT_LT(distributed, 1e-9);
}

/// The checks of a run's contact fields at its last step: one gap and three force components per vertex (`vertices`
/// of the mesh), every gap above 0 (the barrier), and the forces summing to the obstacle's row of reactions.csv
/// (`row`, to `tolerance` of it: the VTU's doubles, the XDMF's floats). Returns the smallest gap.
double check_fields(const contact_output_testing::ContactFields& c, long long vertices, const std::array<double, 3>& row,
                    double tolerance, const std::string& what) {
  EXPECT_EQ(c.gap_components, 1) << what;
  EXPECT_EQ(c.force_components, 3) << what;
  EXPECT_EQ(static_cast<long long>(c.gap.size()), vertices) << what;
  EXPECT_EQ(static_cast<long long>(c.force.size()), vertices) << what;
  const double smallest = c.gap.empty() ? -1.0 : *std::min_element(c.gap.begin(), c.gap.end());
  EXPECT_GT(smallest, 0.0) << what;
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(c.total[d], row[d], tolerance * std::abs(row[0]) + 1e-12) << what << " " << d;
  return smallest;
}

TEST(FramesOnAPlane, RunWritesTheTetRunsContactOutput) {
  // reactions.csv's obstacle rows, summary.json's contact and the point fields of the frame run (VTU and XDMF) as
  // the tet run writes them, through the program's path (run_job in this process).
  namespace co = contact_output_testing;
  const std::string dir = mpitest::scratch_dir("frames_contact");
  const std::string frames_key = "{type: frames, frames: 16, frame_type: affine}";
  mpitest::job_from_yaml(dir, "run_tets", block_job(""));
  mpitest::job_from_yaml(dir, "run_frames", block_job(frames_key));
  mpitest::job_from_yaml(dir, "run_frames_xdmf", block_job(frames_key) + "output: {format: xdmf}\n");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(co::run_program(dir + "/run_tets.yaml", dir + "/run_tets"), 0);
  ASSERT_EQ(co::run_program(dir + "/run_frames.yaml", dir + "/run_frames"), 0);
  ASSERT_EQ(co::run_program(dir + "/run_frames_xdmf.yaml", dir + "/run_frames_xdmf"), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (world_rank() != 0) return;
  int tet_rows = 0, frame_rows = 0, xdmf_rows = 0;
  const auto tets = co::obstacle_rows(dir + "/run_tets", "floor", &tet_rows);
  const auto frames = co::obstacle_rows(dir + "/run_frames", "floor", &frame_rows);
  const auto xdmf = co::obstacle_rows(dir + "/run_frames_xdmf", "floor", &xdmf_rows);
  ASSERT_EQ(tets.size(), 2U);  // steps 0 and 1
  ASSERT_EQ(frames.size(), 2U);
  EXPECT_EQ(frame_rows, 2);  // the obstacle's rows alone (no vertex forces: no boundary rows)
  EXPECT_EQ(tet_rows, 2 + 2);  // the clamp's and the obstacle's
  const std::array<double, 3> f = frames.at(1), t = tets.at(1);
  const double error = std::abs(f[0] - t[0]) / t[0];
  EXPECT_GT(t[0], 20.0);
  EXPECT_LT(error, 1e-2);  // (as CarriesTheTetModelsShareOfTheWeight: the two models)
  EXPECT_NEAR(xdmf.at(1)[0], f[0], 1e-11 * f[0]);  // the same run, another format (3 ranks: not bit-equal)
  const nlohmann::json s = co::summary(dir + "/run_frames"), st = co::summary(dir + "/run_tets");
  const nlohmann::json& c = s["contact"];
  EXPECT_EQ(c["obstacles"][0]["force"][0].get<double>(), f[0]);  // summary.json = reactions.csv
  EXPECT_EQ(c["deepest_penetration"].get<double>(), 0.0);
  EXPECT_EQ(c["steps"]["step"].size(), 1U);
  EXPECT_GT(c["steps"]["active"][0].get<long long>(), 20);
  EXPECT_GT(c["seconds"]["residual"].get<double>() + c["seconds"]["hessian"].get<double>(), 0.0);  // measured
  for (const char* key : {"method", "activation_distance", "stiffness", "deepest_penetration", "max_active", "obstacles",
                          "seconds", "steps"})
    EXPECT_TRUE(c.contains(key) && st["contact"].contains(key)) << key;
  const long long vertices = s["mesh"]["vertices"].get<long long>();
  const double gap = check_fields(co::vtu_contact_fields(dir + "/run_frames/step_000001.pvtu"), vertices, f, 1e-9,
                                  "frames, vtu");
  const double tet_gap = check_fields(co::vtu_contact_fields(dir + "/run_tets/step_000001.pvtu"), vertices, t, 1e-9,
                                      "tets, vtu");
  check_fields(co::xdmf_contact_fields(dir + "/run_frames_xdmf", 1), vertices, f, 1e-5, "frames, xdmf");
  EXPECT_NEAR(gap, c["steps"]["min_gap"][0].get<double>(), 1e-15);  // the field's smallest = the step's report
  std::printf("frames contact: the program's output on %d ranks: reactions.csv floor %.9f (tets %.9f): %.2e apart; "
              "smallest contact_gap %.3e (tets %.3e); %lld contacts; 3 runs %.2f s\n",
              world_size(), f[0], t[0], error, gap, tet_gap, c["steps"]["active"][0].get<long long>(), seconds);
}

INSTANTIATE_TEST_SUITE_P(
    Frames, FramesOnAPlane,
    ::testing::Values(std::make_pair(std::string("{type: frames, frames: 16, frame_type: affine}"), 1e-2),
                      std::make_pair(std::string("{type: frames, frames: 8}"), 4e-2)));

}  // namespace test_frames_contact
}  // namespace edgefem
