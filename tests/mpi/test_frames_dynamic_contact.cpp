// SPDX-License-Identifier: BSD-3-Clause
// Contact of the frame-based model in dynamics and with moving obstacles (issue 48; frames/frames_contact.hpp,
// FrameSolver's backward-euler): on unstructured Gmsh meshes, each against the tet model's same job (DynamicSolver,
// the same barrier stiffness):
//  1. an elastic ball (jobs/experiments/contact/meshes/ball.msh, 2.2k tets) dropped 0.2 onto a plane with steps of
//     0.02: no skinned vertex ever at or below the plane, the step of the impact, the energy record and the rest
//     force against the tets';
//  2. a clamped block (jobs/examples/meshes/cuboid.msh, 1 x 1 x 3, clamped at z = 0) compressed along its axis by a
//     box that moves on a schedule onto its free end (0.02 in 10 steps of 0.1, damped: nearly quasi-static): the
//     box's force at every step against the tets'.
// The pusher runs through the program (run_job in the process): the forces from reactions.csv, the contacts from
// summary.json, the frame run's XDMF contact fields. The frame runs on all ranks against rank 0 alone (the ball: the
// frames' state, identical on every rank; the pusher: the force at every step). CTest runs it on 1,
// 2 and 3 ranks (mpi.frames_dynamic_contact.npN). Rank 0 prints the measured values, prefixed "frames dynamics:".
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "frames/frames_solver.hpp"
#include "io/job.hpp"
#include "solver/dynamic_solver.hpp"
#include "tests/support/contact_output_testing.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_frames_dynamic_contact {  // one per file: the distributed test files share unity batches

using dynamics_testing::rank0_alone;
using mpitest::world_rank;
using mpitest::world_size;

/// Per step (0 = the start) of a run.
struct Record {
  std::vector<double> lowest;   ///< the lowest vertex coordinate along the obstacle's normal (ball: z)
  std::vector<double> energy;   ///< kinetic + strain + contact - the loads' work (from the start)
  std::vector<double> force;    ///< the obstacle's force on the body along the normal (ball: z; pusher: x)
  std::vector<long long> active;
  std::vector<double> state;    ///< frames: the last state (every rank)
  double penetration = 0.0, seconds = 0.0;
  int newton = 0, stages = 0;
};

/// The lowest owned vertex's coordinate `axis` (times `sign`), over the ranks.
double lowest(MPI_Comm comm, const LocalMesh& mesh, const std::vector<double>& x, int axis, double sign) {
  double local = 1e300, global = 0.0;
  for (LocalIndex v = 0; v < mesh.n_owned; ++v) local = std::min(local, sign * x[3 * static_cast<std::size_t>(v) + axis]);
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MIN, comm);
  return global;
}

Record run_frames(MPI_Comm comm, const Job& job, int axis, double sign) {
  Record r;
  if (comm == MPI_COMM_NULL) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  const Model model = build_model(comm, job, mesh);
  FrameSolver solver(comm, job, mesh, model, true);
  const double rest = solver.potential(0.0);  // (-f . x at rest: the frames count the loads' work from the origin)
  const auto steps = solver.run_dynamic([&](int step, double) {
    r.lowest.push_back(lowest(comm, mesh, solver.local_positions(), axis, sign));
    if (step == 0) {
      r.force.push_back(0.0), r.active.push_back(0);
      return;
    }
    r.force.push_back(sign * solver.obstacle_forces()[static_cast<std::size_t>(axis)]);
    r.active.push_back(solver.last_contact()->active);
    r.penetration = std::max(r.penetration, solver.last_contact()->penetration);
  });
  r.energy.push_back(0.0);
  for (const FrameTimeStep& s : steps) {
    r.energy.push_back(s.kinetic + s.potential - rest);
    r.newton += s.newton_iterations, r.stages += s.stages;
  }
  r.state = solver.state();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Record run_tets(MPI_Comm comm, const Job& job, int axis, double sign) {
  Record r;
  dynamics_testing::RunSpec spec;
  spec.on_step = [&](DynamicSolver& solver, const LocalMesh& mesh, long long step, double) {
    r.lowest.push_back(lowest(comm, mesh, solver.local_positions(), axis, sign));
    if (step == 0) {
      r.force.push_back(0.0), r.active.push_back(0);
      return;
    }
    const std::vector<double> f = solver.obstacle_forces();
    r.force.push_back(sign * f[static_cast<std::size_t>(axis)]);
    r.active.push_back(solver.last_contact()->active);
  };
  const auto result = dynamics_testing::simulate(comm, job, spec);
  for (const auto& e : result.energy) r.energy.push_back(e.kinetic + e.strain + e.contact - e.external_work);
  for (const auto& s : result.reports) r.penetration = std::max(r.penetration, s.contact->penetration);
  return r;
}

int first_contact(const Record& r) {
  for (std::size_t k = 0; k < r.active.size(); ++k)
    if (r.active[k] > 0) return static_cast<int>(k);
  return -1;
}

const std::string kFrames = "discretization: {type: frames, frames: 8, frame_type: affine, frame_mass: weighted}\n";

std::string ball_job(bool frames) {
  return "mesh:\n  file: " + std::string(EDGEFEM_SOURCE_DIR) + "/jobs/experiments/contact/meshes/ball.msh\n" +
         "materials:\n  - {model: stvk, young: 2.0e3, poisson: 0.3, density: 1.0}\n"
         "loads:\n  gravity: [0, 0, -10]\n"
         "obstacles:\n  - {name: floor, shape: plane, point: [0, 0, 0], normal: [0, 0, 1]}\n"
         "contact: {distance: 1.0e-3, stiffness: 100}\n"
         "analysis: {type: dynamic, integrator: backward-euler, dt: 0.02, end_time: 0.3}\n"
         "solver:\n  newton: {rtol: 1.0e-8, atol: 1.0e-10, max_it: 60}\n" +
         (frames ? kFrames : std::string());
}

TEST(FramesDynamics, BallDropNeverPenetratesAndFollowsTheTetModel) {
  const std::string dir = mpitest::scratch_dir("frames_dynamic_contact");
  const Job frame_job = mpitest::job_from_yaml(dir, "ball_frames", ball_job(true));
  const Job tet_job = mpitest::job_from_yaml(dir, "ball_tets", ball_job(false));
  const Record tets = run_tets(MPI_COMM_WORLD, tet_job, 2, 1.0);
  const Record all = run_frames(MPI_COMM_WORLD, frame_job, 2, 1.0);
  const Record serial = run_frames(rank0_alone(), frame_job, 2, 1.0);
  const double distributed = dynamics_testing::serial_difference(all.state, serial.state);
  double lowest = 1e300, energy_gap = 0.0, impulse = 0.0, tet_impulse = 0.0;  // (the floor's, over the run)
  for (std::size_t k = 0; k < all.force.size(); ++k) impulse += 0.02 * all.force[k], tet_impulse += 0.02 * tets.force[k];
  for (std::size_t k = 1; k < all.lowest.size(); ++k) lowest = std::min(lowest, all.lowest[k]);
  for (std::size_t k = 0; k < all.energy.size() && k < tets.energy.size(); ++k)
    energy_gap = std::max(energy_gap, std::abs(all.energy[k] - tets.energy[k]));
  const double fall = 10.0 * 0.5236 * 0.2;  // the potential energy the fall releases (the sphere's weight)
  if (world_rank() == 0) {
    std::printf("frames dynamics: ball on %d ranks: lowest skinned vertex over the steps %.4e (tets %.4e), first "
                "contact at step %d (tets %d), deepest penetration %.1e, the floor's impulse %.6f (tets %.6f), energy "
                "records apart by %.3e of the fall's %.4f at most; %d Newton iterations; serial vs distributed %.2e; "
                "%.2f s\n",
                world_size(), lowest, *std::min_element(tets.lowest.begin() + 1, tets.lowest.end()),
                first_contact(all), first_contact(tets), all.penetration, impulse, tet_impulse,
                energy_gap / fall, fall, all.newton, distributed, all.seconds);
    for (std::size_t k = 0; k < all.energy.size(); ++k)
      std::printf("frames dynamics:   step %2zu  frames: lowest %.4e energy %+.6f force %.4f | tets: lowest %.4e "
                  "energy %+.6f force %.4f\n",
                  k, all.lowest[k], all.energy[k], all.force[k], tets.lowest[k], tets.energy[k], tets.force[k]);
  }
  EXPECT_GT(lowest, 0.0);  // no skinned vertex ever at or below the plane
  EXPECT_EQ(all.penetration, 0.0);
  EXPECT_EQ(first_contact(all), first_contact(tets));
  EXPECT_NEAR(impulse, tet_impulse, 0.1 * tet_impulse);
  EXPECT_GT(tet_impulse, 0.5236 * 2.0);  // at least the momentum the ball brings (0.2 fallen: v = 2)
  EXPECT_LT(energy_gap, 0.25 * fall);
  EXPECT_LT(distributed, 1e-9);
}

std::string pusher_job(bool frames) {
  return "mesh:\n  file: " + std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/meshes/cuboid.msh\n" +
         "materials:\n  - {model: stvk, young: 1.0e3, poisson: 0.3, density: 1.0}\n"
         "boundary:\n  - {select: {region: 21}, fix: [x, y, z]}\n"
         "obstacles:\n  - {name: pusher, shape: box, box: [[-1, -1, 3.0025], [2, 2, 4]], "
         "motion: {translate: [0, 0, -0.02]}}\n"
         "contact: {distance: 5.0e-3, stiffness: 1000}\n"
         "analysis: {type: dynamic, integrator: backward-euler, dt: 0.1, end_time: 1.0, damping: {mass: 5}}\n"
         "solver:\n  newton: {rtol: 1.0e-8, atol: 1.0e-10, max_it: 60}\n" +
         (frames ? "discretization: {type: frames, frames: 16, frame_type: affine, frame_mass: weighted}\n"
                 : std::string());
}

/// A run through the program (run_job in this process) of the job file dir/NAME.yaml into dir/NAME: per step (0 = the
/// start) the obstacle's force along -z from reactions.csv and the active contacts from summary.json (rank 0).
Record run_program(const std::string& dir, const std::string& name) {
  namespace co = contact_output_testing;
  Record r;
  EXPECT_EQ(co::run_program(dir + "/" + name + ".yaml", dir + "/" + name), 0) << name;
  if (world_rank() != 0) return r;
  for (const auto& [step, f] : co::obstacle_rows(dir + "/" + name, "pusher")) r.force.push_back(-f[2]);
  const nlohmann::json s = co::summary(dir + "/" + name);
  r.active.push_back(0);
  for (const auto& a : s["contact"]["steps"]["active"]) r.active.push_back(a.get<long long>());
  r.penetration = s["contact"]["deepest_penetration"].get<double>();
  r.newton = s["solver"]["newton_iterations"].get<int>();
  return r;
}

TEST(FramesDynamics, MovingBoxCompressesTheBlockAsTheTetModel) {
  // Both models through the program: the box's force from each run's reactions.csv at every step, the contacts and
  // the penetration from summary.json; the frame run writes XDMF, whose last step's contact fields are checked
  // (one gap and three force components per vertex, gaps above 0, forces summing to the reactions.csv row). The
  // frames on rank 0 alone (the solver, not the program) against the distributed run's reactions.csv.
  namespace co = contact_output_testing;
  const std::string dir = mpitest::scratch_dir("frames_dynamic_contact");
  const Job frame_job =
      mpitest::job_from_yaml(dir, "pusher_frames", pusher_job(true) + "output: {format: xdmf, every: 5}\n");
  mpitest::job_from_yaml(dir, "pusher_tets", pusher_job(false));
  const auto t0 = std::chrono::steady_clock::now();
  const Record tets = run_program(dir, "pusher_tets");
  Record all = run_program(dir, "pusher_frames");
  all.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Record serial = run_frames(rank0_alone(), frame_job, 2, -1.0);
  dynamics_testing::wait_for_rank0();
  if (world_rank() != 0) return;
  ASSERT_EQ(all.force.size(), 11U);  // steps 0 to 10
  ASSERT_EQ(tets.force.size(), all.force.size());
  ASSERT_EQ(all.active.size(), all.force.size());
  if (world_size() > 1) {
    ASSERT_EQ(serial.force.size(), all.force.size());  // (1 rank: the same run, not repeated)
  }
  double distributed = 0.0;
  for (std::size_t k = 1; k < serial.force.size(); ++k)  // (run_frames records no force at the start)
    distributed = std::max(distributed, std::abs(all.force[k] - serial.force[k]) / std::max(1.0, std::abs(all.force[k])));
  const double error = std::abs(all.force.back() - tets.force.back()) / std::abs(tets.force.back());
  std::printf("frames dynamics: pusher on %d ranks: box force at the end %.6f (tets %.6f): %.2e apart (reactions.csv); "
              "deepest penetration %.1e; %d Newton iterations, %d continuation stages (rank 0 alone); serial vs "
              "distributed (the force at every step) %.2e; the two runs %.2f s\n",
              world_size(), all.force.back(), tets.force.back(), error, all.penetration, all.newton, serial.stages,
              distributed, all.seconds);
  for (std::size_t k = 0; k < all.force.size(); ++k)
    std::printf("frames dynamics:   step %2zu  frames: force %.6f contacts %lld | tets: force %.6f contacts %lld\n", k,
                all.force[k], all.active[k], tets.force[k], tets.active[k]);
  EXPECT_GT(tets.force.back(), 1.0);  // the box does push (along -z: the force times -1)
  EXPECT_LT(error, 5e-2);
  EXPECT_EQ(all.penetration, 0.0);
  EXPECT_EQ(tets.penetration, 0.0);
  EXPECT_EQ(all.active.back(), tets.active.back());
  if (world_size() > 1) {
    EXPECT_GT(serial.stages, 0);  // the box's move took the continuation (FrameContact::advance)
  }
  EXPECT_LT(distributed, 1e-9);
  const co::ContactFields c = co::xdmf_contact_fields(dir + "/pusher_frames", 10);
  const long long vertices = co::summary(dir + "/pusher_frames")["mesh"]["vertices"].get<long long>();
  EXPECT_EQ(c.file_points, vertices);
  EXPECT_EQ(c.gap_components, 1);
  EXPECT_EQ(c.force_components, 3);
  EXPECT_GT(*std::min_element(c.gap.begin(), c.gap.end()), 0.0);
  EXPECT_NEAR(-c.total[2], all.force.back(), 1e-5 * all.force.back());  // (the XDMF's floats)
}

}  // namespace test_frames_dynamic_contact
}  // namespace edgefem
