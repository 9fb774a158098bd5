// SPDX-License-Identifier: BSD-3-Clause
// Self-collision in the position-based integrator (issue 53; pbd/pbd_self_contact.hpp), on unstructured Gmsh cloths
// (TRBS membranes with bending, both sides of every triangle in contact):
//  1. the small version of jobs/experiments/self_contact/cloth_fold_position_based.sh: a 0.4 x 0.4 cloth (2,402
//     triangles) standing nearly upright is thrown onto a floor with friction and folds over itself. After every
//     step the exact triangle-triangle test finds no intersecting pair of triangles that share no vertex, every pair
//     is apart, no vertex is below the floor, and the cloth has folded (pairs closer than the thickness, a pile lower
//     than a quarter of its side). Not compared with a serial run: the buckling cloth amplifies round-off (the same
//     cloth without contact differs by 1e-3 of its displacement between 1 and 2 ranks after 25 steps);
//  2. two cloths (two_sheets_close.msh, 3,680 triangles), the upper one (turned by 15 degrees) falling 0.005 onto
//     the lower one (held): it lands on it without any intersection, the constraints keep it at the thickness,
//     serial == distributed to round-off (the serial run on rank 0) over the landing (25 steps: contact from step
//     21). Its parameters keep the sweeps in their converging regime, dt^2 E / (rho_A h^2) = 0.55 (beyond it
//     XPBD's sweeps amplify round-off: the coloured sweep's rank-count independence then holds for a few steps).
//     Once the cloth rests on the other the contact sweeps amplify round-off too (by ~3 a step: 1.7e-6 after 40
//     steps), so the comparison stops at the landing.
// CTest runs it on 1, 2 and 3 ranks (mpi.pbd_self_contact.npN); rank 0 prints the measured values, prefixed
// "pbd self contact:".
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/time_loop.hpp"
#include "solver/self_contact.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_pbd_self_contact {  // one per file: the distributed test files share unity batches

using dynamics_testing::rank0_alone;
using dynamics_testing::serial_difference;
using dynamics_testing::wait_for_rank0;
using mpitest::world_rank;
using mpitest::world_size;

constexpr double kThickness = 2.5e-3;  // contact.distance

struct Fold {
  long long most_intersections = -1, most_active = 0, most_projected = 0, stopped = 0, checks = 0;
  double closest = 1e300;        ///< the closest pair closer than the thickness, over all steps
  double lowest = 1e300;         ///< the lowest vertex (z) over all steps
  double top = 0.0;              ///< the highest vertex at the end
  std::vector<double> position;  ///< at the end, by original vertex
  double seconds = 0.0, contact_seconds = 0.0, step_seconds = 0.0;
};

std::string fold_job() {
  char text[1400];
  std::snprintf(text, sizeof text,
                "mesh:\n  file: %s/jobs/experiments/self_contact/meshes/falling_cloth.msh\n"
                "materials:\n"
                "  - {model: trbs, young: 100.0, poisson: 0.3, thickness: 1.0, density: 0.2,\n"
                "     bending: {stiffness: 0.001}}\n"
                "loads:\n  gravity: [0, 0, -9.81]\n"
                "obstacles:\n"
                "  - {name: floor, shape: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: 0.5}\n"
                "contact: {self: true, distance: %.17g, friction: 0.2}\n"
                "analysis: {type: dynamic, integrator: position-based, dt: 0.002, end_time: 0.16,\n"
                "           initial_velocity: [0, 0, -2], position_based: {iterations: 10}}\n",
                EDGEFEM_SOURCE_DIR, kThickness);
  return text;
}

std::string sheets_job() {
  char text[1400];
  std::snprintf(text, sizeof text,
                "mesh:\n  file: %s/jobs/experiments/self_contact/meshes/two_sheets_close.msh\n"
                "materials:\n"
                "  - {model: trbs, young: 100.0, poisson: 0.3, thickness: 1.0, density: 0.2,\n"
                "     bending: {stiffness: 0.05}}\n"
                "boundary:\n  - {select: {region: 1}, fix: [x, y, z]}\n"
                "loads:\n  gravity: [0, 0, -9.81]\n"
                "contact: {self: true, distance: 2.0e-3, friction: 0.2}\n"
                "analysis: {type: dynamic, integrator: position-based, dt: 0.001, end_time: %.17g,\n"
                "           position_based: {iterations: 10}}\n",
                EDGEFEM_SOURCE_DIR, 0.025);
  return text;
}

/// Runs the job on comm (the job read on MPI_COMM_WORLD: collective there).
Fold run(MPI_Comm comm, const std::string& name, const std::string& text) {
  Fold f;
  const Job job = mpitest::job_from_yaml(mpitest::scratch_dir("pbd_self_contact"), name, text);  // (collective)
  if (comm == MPI_COMM_NULL) return f;
  const auto t0 = std::chrono::steady_clock::now();
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  PbdSolver solver(comm, job, mesh, build_model(comm, job, mesh), true);
  SelfContactTerms& terms = *solver.self_contact_terms();
  const std::vector<TimeStepReport> reports = run_time_loop(solver, [&](long long step, double) {
    const std::vector<double> x = solver.local_positions();
    f.most_intersections = std::max(f.most_intersections, terms.intersecting_pairs(x));
    ++f.checks;
    const SelfContactReport r = terms.measure(x);
    f.most_active = std::max(f.most_active, r.active);
    f.closest = std::min(f.closest, r.min_distance);
    double z[2] = {1e300, -1e300};
    for (LocalIndex v = 0; v < mesh.n_owned; ++v)
      z[0] = std::min(z[0], x[3 * static_cast<std::size_t>(v) + 2]),
      z[1] = std::max(z[1], x[3 * static_cast<std::size_t>(v) + 2]);
    z[1] = -z[1];
    MPI_Allreduce(MPI_IN_PLACE, z, 2, MPI_DOUBLE, MPI_MIN, comm);
    f.lowest = std::min(f.lowest, z[0]);
    f.top = -z[1];
    if (step > 0) f.most_projected = std::max(f.most_projected, solver.self_contact()->last().projected);
  });
  f.stopped = solver.self_contact()->frozen_total();
  for (const TimeStepReport& r : reports) f.step_seconds += r.seconds;
  f.contact_seconds = terms.cost().total;
  f.position = mpitest::gather_by_original_vertex(comm, mesh, {solver.local_positions()}, true)[0];
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

TEST(PbdClothFold, FoldsOntoItselfWithoutAnyIntersection) {
  const Fold all = run(MPI_COMM_WORLD, "fold", fold_job());
  if (world_rank() == 0)
    std::printf(
        "pbd self contact: cloth fold on %d ranks: %lld states checked, intersecting triangle pairs at most "
        "%lld, closest pair %.3e (thickness %.1e), most pairs closer than the thickness %lld, most projected "
        "%lld, vertices stopped by the fail-safe %lld, lowest vertex %.2e, pile height %.4f; steps %.2f s of "
        "which self-contact %.2f s (rank 0), %.2f s in all\n",
        world_size(), all.checks, all.most_intersections, all.closest, kThickness, all.most_active, all.most_projected,
        all.stopped, all.lowest, all.top, all.step_seconds, all.contact_seconds, all.seconds);
  EXPECT_EQ(all.checks, 81);             // the start and 80 steps
  EXPECT_EQ(all.most_intersections, 0);  // at every step (exact test, contact/self_intersection.hpp)
  EXPECT_GT(all.closest, 0.0);           // no pair ever touched
  EXPECT_GE(all.lowest, -1e-12);         // the floor's colour is last
  EXPECT_GT(all.most_active, 300);       // it folded onto itself ...
  EXPECT_GT(all.most_projected, 300);    // ... and the constraints held its layers apart
  EXPECT_LT(all.top, 0.1);               // from 0.4 upright to a pile
}

TEST(PbdTwoSheets, TheUpperClothLandsOnTheLowerWithoutAnyIntersection) {
  const Fold all = run(MPI_COMM_WORLD, "sheets", sheets_job());
  const Fold serial = run(rank0_alone(), "sheets", sheets_job());
  wait_for_rank0();
  const double distributed = serial_difference(all.position, serial.position);
  if (world_rank() == 0)
    std::printf(
        "pbd self contact: two cloths on %d ranks: intersecting triangle pairs at most %lld, closest pair "
        "%.6e (thickness 2e-3), most pairs closer than the thickness %lld, most projected %lld, vertices "
        "stopped by the fail-safe %lld; serial vs distributed %.2e; steps %.2f s of which self-contact "
        "%.2f s (rank 0)\n",
        world_size(), all.most_intersections, all.closest, all.most_active, all.most_projected, all.stopped,
        distributed, all.step_seconds, all.contact_seconds);
  EXPECT_EQ(all.checks, 26);
  EXPECT_EQ(all.most_intersections, 0);
  EXPECT_GT(all.closest, 0.0);
  EXPECT_GT(all.most_projected, 50);  // it landed
  EXPECT_LT(all.closest, 2e-3);       // within the thickness ...
  EXPECT_GT(all.closest, 1.99e-3);    // ... by less than 0.5 %: the constraints hold it there
  EXPECT_LT(distributed, 1e-9);       // (4.7e-12 measured on 2 ranks)
}

}  // namespace test_pbd_self_contact
}  // namespace edgefem
