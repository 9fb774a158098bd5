// SPDX-License-Identifier: BSD-3-Clause
// Self-collision in the position-based integrator (issue 53; pbd/pbd_self_contact.hpp), on unstructured Gmsh cloths
// (TRBS membranes with bending, both sides of every triangle in contact):
//  1. a small folding cloth (jobs/experiments/contact/cloth_fold.sh is the large one): a 0.4 x 0.4 cloth (2,402
//     triangles, bending 1e-5) standing nearly upright is thrown onto a floor with friction and folds over itself. After every
//     step the exact triangle-triangle test finds no intersecting pair of triangles that share no vertex, every pair
//     is apart, no vertex is below the floor, and the cloth has folded (pairs closer than the thickness, a pile lower
//     than a quarter of its side), and serial == distributed to round-off (the serial run on rank 0). Until the
//     triangles' block projection the buckling cloth amplified round-off (the same cloth without contact differed
//     by 1e-3 of its displacement between 1 and 2 ranks after 25 steps) and was not compared;
//  2. two cloths (two_sheets_close.msh, 3,680 triangles), the upper one (turned by 15 degrees) falling 0.005 onto
//     the lower one (held): it lands on it without any intersection, the constraints keep it at the thickness,
//     serial == distributed to round-off (the serial run on rank 0) over the landing (25 steps: contact from step
//     21). Its parameters keep the sweeps in their converging regime, dt^2 E / (rho_A h^2) = 0.55 (beyond it
//     XPBD's sweeps amplify round-off: the coloured sweep's rank-count independence then holds for a few steps).
//     Once the cloth rests on the other the contact sweeps amplify round-off too (by ~3 a step: 1.7e-6 after 40
//     steps), so the comparison stops at the landing.
// In both, every step's record (pairs closer than the thickness, the closest) is the one the integrator offers from
// its fail-safe's pairs, and the same as the terms' own measure.
// CTest runs it on 1, 2 and 3 ranks (mpi.pbd_self_contact.npN); rank 0 prints the measured values, prefixed
// "pbd self contact:".
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <random>
#include <cstdio>
#include <string>
#include <vector>

#include "contact/self_broad_phase.hpp"
#include "io/job.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/time_loop.hpp"
#include "solver/self_contact.hpp"
#include "solver/self_exchange.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_pbd_self_contact {  // one per file: the distributed test files share unity batches

using dynamics_testing::rank0_alone;
using dynamics_testing::serial_difference;
using mpitest::world_rank;
using mpitest::world_size;

constexpr double kThickness = 2.5e-3;  // contact.distance

struct Fold {
  long long most_intersections = -1, most_active = 0, most_projected = 0, stopped = 0, checks = 0;
  /// The records answered from the integrator's own pairs (SelfContactTerms::offer_measure), and those of them that
  /// differ from the terms' own measure (active pairs or closest pair)
  long long offered = 0, offered_differ = 0;
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
                "     bending: {stiffness: 1.0e-5}}\n"
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
    // The same from the terms' own broad phase: the offer withdrawn (a measure offered at positions nobody has).
    terms.offer_measure({}, std::vector<double>(3 * static_cast<std::size_t>(terms.n_surface_vertices()), NAN));
    const SelfContactReport own = terms.measure(x);
    if (own.active != r.active || own.min_distance != r.min_distance) ++f.offered_differ;
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
  f.offered = terms.offered_measures();
  for (const TimeStepReport& r : reports) f.step_seconds += r.seconds;
  f.contact_seconds = terms.cost().total;
  f.position = mpitest::gather_by_original_vertex(comm, mesh, {solver.local_positions()}, true)[0];
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

TEST(PbdClothFold, FoldsOntoItselfWithoutAnyIntersection) {
  const Fold all = run(MPI_COMM_WORLD, "fold", fold_job());
  const Fold serial = run(rank0_alone(), "fold", fold_job());
  const double distributed = serial_difference(all.position, serial.position);
  if (world_rank() == 0) std::printf("pbd self contact: cloth fold, serial vs distributed %.2e\n", distributed);
  if (world_rank() == 0)
    std::printf(
        "pbd self contact: cloth fold on %d ranks: %lld states checked, intersecting triangle pairs at most "
        "%lld, closest pair %.3e (thickness %.1e), most pairs closer than the thickness %lld, most projected "
        "%lld, vertices stopped by the fail-safe %lld, lowest vertex %.2e, pile height %.4f; steps %.2f s of "
        "which self-contact %.2f s (rank 0), %.2f s in all\n",
        world_size(), all.checks, all.most_intersections, all.closest, kThickness, all.most_active, all.most_projected,
        all.stopped, all.lowest, all.top, all.step_seconds, all.contact_seconds, all.seconds);
  EXPECT_EQ(all.checks, 81);             // the start and 80 steps
  EXPECT_EQ(all.offered, 80);            // every step's record from the fail-safe's pairs ...
  EXPECT_EQ(all.offered_differ, 0);      // ... the same as the terms' own measure
  EXPECT_EQ(all.most_intersections, 0);  // at every step (exact test, contact/self_intersection.hpp)
  EXPECT_GT(all.closest, 0.0);           // no pair ever touched
  EXPECT_GE(all.lowest, -1e-12);         // the floor's colour is last
  EXPECT_GT(all.most_active, 300);       // it folded onto itself ...
  EXPECT_GT(all.most_projected, 300);    // ... and the constraints held its layers apart
  EXPECT_LT(all.top, 0.1);               // from 0.4 upright to a pile
  EXPECT_LT(distributed, 1e-9);          // (2.6e-14 on 2 ranks, 2.1e-14 on 3)
}

TEST(PbdTwoSheets, TheUpperClothLandsOnTheLowerWithoutAnyIntersection) {
  const Fold all = run(MPI_COMM_WORLD, "sheets", sheets_job());
  const Fold serial = run(rank0_alone(), "sheets", sheets_job());
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
  EXPECT_EQ(all.offered, 25);
  EXPECT_EQ(all.offered_differ, 0);
  EXPECT_EQ(all.most_intersections, 0);
  EXPECT_GT(all.closest, 0.0);
  EXPECT_GT(all.most_projected, 50);  // it landed
  EXPECT_LT(all.closest, 2e-3);       // within the thickness ...
  EXPECT_GT(all.closest, 1.99e-3);    // ... by less than 0.5 %: the constraints hold it there
  EXPECT_LT(distributed, 1e-9);       // (4.7e-12 measured on 2 ranks)
}

// The position-based integrator's ghost layer (SelfExchange::translate): whenever it says it still serves positions
// moved from its centre by a large common translation T (up to 0.3 per axis) and a deformation e, every triangle and
// edge whose box grown by g meets the box grown by g of a point or an edge this rank owns has all its vertices at hand;
// else a new layer there does. Two 16 x 16 grids of spacing 0.01, 0.004 apart, split among the ranks by x; the layer's
// reach 0.002, g 0.0015; deformations of up to 0.001 (served, less T) and up to 0.04 (not served: pairs from beyond
// the layer come near). Fails if serves() ignores the deformation's range.
TEST(PbdSelfLayer, ServesTranslatedMovesWithEveryNeededVertexAtHand) {
  const int n = 16, size = world_size(), rank = world_rank();
  std::vector<double> rest;
  std::vector<std::array<int, 3>> triangles;
  std::vector<int> owner;
  for (int sheet = 0; sheet < 2; ++sheet)
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) {
        rest.insert(rest.end(), {0.01 * i, 0.01 * j, 0.004 * sheet});
        owner.push_back(std::min(size - 1, i * size / (n + 1)));
        const int v = static_cast<int>(owner.size()) - 1, w = n + 1;
        if (i < n && j < n) triangles.push_back({v, v + 1, v + w + 1}), triangles.push_back({v, v + w + 1, v + w});
      }
  const contact::SelfSurface s = contact::make_self_surface(triangles, rest);
  const double delta = 0.002, g = 0.0015;
  SelfExchange layer(MPI_COMM_WORLD, owner, s.edges, g);
  layer.translate(true);
  std::vector<double> c = rest;
  layer.build(c, delta);
  std::mt19937 rng(3);  // (the same positions on every rank)
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int served = 0, checked = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::array<double, 3> T{0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)};
    const double e = trial % 2 == 0 ? 0.5 * delta : 0.04;
    std::vector<double> x(c.size());
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = c[k] + T[k % 3] + e * u(rng);
    double move = 0.0;
    const bool serves = layer.serves(x, {}, move);
    served += serves ? 1 : 0;
    if (!serves) layer.build(x, delta), c = x;
    const std::vector<char>& known = layer.layer()->known;
    const auto box = [&](std::initializer_list<int> vertices) {
      contact::Aabb b;
      for (const int v : vertices) b.grow(contact::load3(&x[3 * static_cast<std::size_t>(v)]));
      for (int k = 0; k < 3; ++k) b.lo[k] -= g, b.hi[k] += g;
      return b;
    };
    const auto at_hand = [&](std::initializer_list<int> vertices) {
      return std::all_of(vertices.begin(), vertices.end(), [&](int v) { return known[static_cast<std::size_t>(v)] != 0; });
    };
    for (int p = 0; p < s.n_vertices(); ++p) {
      if (owner[static_cast<std::size_t>(p)] != rank) continue;
      for (const auto& t : s.triangles) {
        if (contact::overlap(box({p}), box({t[0], t[1], t[2]}))) {
          EXPECT_TRUE(at_hand({t[0], t[1], t[2]})) << trial;
        }
      }
    }
    for (const auto& a : s.edges) {
      if (owner[static_cast<std::size_t>(a[0])] != rank) continue;
      for (const auto& b : s.edges)
        if (contact::overlap(box({a[0], a[1]}), box({b[0], b[1]}))) {
          EXPECT_TRUE(at_hand({b[0], b[1]})) << trial;
          ++checked;
        }
    }
  }
  EXPECT_EQ(served, 12);  // (every small deformation, less its translation; no large one)
  EXPECT_GT(checked, 1000);
}

}  // namespace test_pbd_self_contact
}  // namespace edgefem
