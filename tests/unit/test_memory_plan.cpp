// SPDX-License-Identifier: BSD-3-Clause
// The memory plan (run/memory_budget.hpp) counts what the job's solver really allocates: a Newton job its
// matrix and preconditioner, a position-based or frame-based job neither. One rank, a 48,000-tet box; the node's
// memory set by EDGEFEM_NODE_MEMORY_MB between the estimates, so the plan's verdict tells them apart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "io/job.hpp"
#include "mesh/box.hpp"
#include "partition/partition.hpp"
#include "run/memory_budget.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace {

constexpr double kMB = 1024.0 * 1024.0;

const char* kMesh =
    "mesh: {generate: {shape: box, size: [2, 2, 2], cells: [20, 20, 20]}}\n"  // 48,000 tets
    "materials: [{model: stvk, young: 1000, poisson: 0.3, density: 1}]\n"
    "boundary: [{select: {region: 11}, fix: [x, y, z]}]\n";

Job job(const std::string& name, const std::string& rest) {
  return mpitest::job_from_yaml(mpitest::scratch_dir("memory_plan"), name, std::string(kMesh) + rest);
}

const LocalMesh& box_mesh() {
  static const LocalMesh mesh = distribute_mesh(MPI_COMM_SELF, generate_box({2, 2, 2}, {20, 20, 20}));
  return mesh;
}

/// The plan with the node's memory forced to `node_mb`.
MemoryPlan plan_with(const Job& j, double node_mb, const std::string& options = "") {
  ::setenv("EDGEFEM_NODE_MEMORY_MB", std::to_string(node_mb).c_str(), 1);
  MemoryPlan plan = plan_memory(MPI_COMM_SELF, j, box_mesh(), options);
  ::unsetenv("EDGEFEM_NODE_MEMORY_MB");
  return plan;
}

const std::string kNewton = "analysis: {type: dynamic, dt: 0.01, end_time: 0.02}\n";
const std::string kPbd = "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, integrator: position-based}\n";
const std::string kFrames = "discretization: {type: frames, frames: 8, weights: harmonic}\n";

TEST(MemoryPlan, SolveKindFollowsTheJob) {
  EXPECT_EQ(solve_kind(job("newton", kNewton)), SolveKind::newton);
  EXPECT_EQ(solve_kind(job("pbd", kPbd)), SolveKind::position_based);
  EXPECT_EQ(solve_kind(job("frames", kFrames)), SolveKind::frames);
}

TEST(MemoryPlan, PositionBasedAndFramesCountNoMatrixNorMultigrid) {
  const long long tets = 48000, vertices = 21 * 21 * 21;
  const RankEstimate newton = estimate_rank_bytes(tets, 0, vertices, 1, SolveKind::newton);
  const RankEstimate pbd = estimate_rank_bytes(tets, 0, vertices, 1, SolveKind::position_based);
  const RankEstimate frames = estimate_rank_bytes(tets, 0, vertices, 1, SolveKind::frames, 8);
  // Newton: 2530 bytes per tet before its preconditioner (the measured 2250, less the 120 of the K terms' single
  // precision, issue 56, and 400 for output).
  EXPECT_NEAR(newton.base() / tets, 2530.0, 1e-9);
  EXPECT_GT(newton.system, 0);
  EXPECT_GT(newton.smoothed, 0);
  for (const RankEstimate* e : {&pbd, &frames}) {
    EXPECT_EQ(e->system, 0);
    EXPECT_EQ(e->smoothed, 0);
    EXPECT_EQ(e->unsmoothed, 0);
    EXPECT_GT(e->own, 0);
  }
  // Position-based: model 1550 + vectors 180 + constraints 220 + output 400 bytes per tet; frames (8 here): the
  // same without constraints, with ~370 per sample and ~464 per vertex. Both below Newton with its leanest
  // multigrid (2930 bytes per tet since issue 56's single-precision K terms).
  EXPECT_NEAR(pbd.base() / tets, 2350.0, 1e-9);
  EXPECT_LT(pbd.base(), 0.85 * (newton.base() + newton.unsmoothed));
  EXPECT_LT(frames.base(), 0.9 * (newton.base() + newton.unsmoothed));
}

TEST(MemoryPlan, NodeBetweenTheEstimatesRefusesNewtonOnly) {
  // 48,000 tets on one rank: Newton with unsmoothed GAMG needs ~140 MB more, with point Jacobi ~121 MB; the
  // position-based and frame jobs ~108 and ~118 MB. A run may plan on 90 % of the node's memory.
  const Job newton = job("newton", kNewton), pbd = job("pbd", kPbd), frames = job("frames", kFrames);
  const MemoryPlan newton_plan = plan_with(newton, 140);  // 126 MB usable
  EXPECT_FALSE(newton_plan.fits);
  EXPECT_EQ(newton_plan.preconditioner, "gamg");
  const MemoryPlan pbd_plan = plan_with(pbd, 140);
  EXPECT_TRUE(pbd_plan.fits) << pbd_plan.problem;
  EXPECT_FALSE(pbd_plan.unsmoothed_aggregation);
  EXPECT_EQ(pbd_plan.kind, SolveKind::position_based);
  EXPECT_EQ(pbd_plan.preconditioner, "none");
  EXPECT_TRUE(plan_with(frames, 140).fits);
  // A Newton job with point Jacobi (no hierarchy) fits where GAMG does not: 135 MB usable.
  EXPECT_FALSE(plan_with(newton, 150).fits);
  const MemoryPlan jacobi = plan_with(newton, 150, "-pc_type jacobi");
  EXPECT_TRUE(jacobi.fits) << jacobi.problem;
  EXPECT_EQ(jacobi.preconditioner, "jacobi");
  // The estimated peak follows: the position-based job's is the Newton job's less at least 40 MB.
  const MemoryPlan unlimited_newton = plan_with(newton, 1e6), unlimited_pbd = plan_with(pbd, 1e6);
  EXPECT_GT(unlimited_newton.estimated_peak_mb_max_rank - unlimited_pbd.estimated_peak_mb_max_rank, 40.0)
      << unlimited_newton.estimated_peak_mb_max_rank << " vs " << unlimited_pbd.estimated_peak_mb_max_rank;
}

// Issue 50: the plan made before the mesh is read or generated, from mesh.generate's cells, refuses a 600^3 box
// (1.3e9 tets) on a 24 GB node at once and says per rank, in all, the node's memory and the ranks it would fit on;
// a 20^3 box fits.
AnnouncedMesh generated_box(long long n) {
  AnnouncedMesh m;
  m.tets = 6 * n * n * n, m.vertices = (n + 1) * (n + 1) * (n + 1);
  m.source = "box.yaml: mesh.generate, a box of " + std::to_string(n) + " cells a side";
  m.verb = "generated";
  return m;
}

TEST(MemoryPlanBeforeInput, RefusesA600CubedBoxOnA24GBNode) {
  const Job j = job("static", "analysis: {type: static}\n");
  ::setenv("EDGEFEM_NODE_MEMORY_MB", "24576", 1);
  const MemoryPlan big = plan_memory_before_input(MPI_COMM_SELF, &j, generated_box(600), InputHolding::slices, "");
  const MemoryPlan small = plan_memory_before_input(MPI_COMM_SELF, &j, generated_box(20), InputHolding::slices, "");
  const MemoryPlan info =
      plan_memory_before_input(MPI_COMM_SELF, nullptr, generated_box(600), InputHolding::whole_for_info, "");
  ::unsetenv("EDGEFEM_NODE_MEMORY_MB");
  EXPECT_TRUE(small.fits);
  ASSERT_FALSE(big.fits);
  EXPECT_NE(big.problem.find("(1296000000 tetrahedra, 217081801 vertices) is too large for this machine"),
            std::string::npos)
      << big.problem;
  EXPECT_NE(big.problem.find("TB per rank and "), std::string::npos) << big.problem;
  EXPECT_NE(big.problem.find("24.0 GB available for its 1 rank"), std::string::npos) << big.problem;
  EXPECT_NE(big.problem.find("it would fit on "), std::string::npos) << big.problem;
  ASSERT_FALSE(info.fits);
  EXPECT_NE(info.problem.find("edgefem info holds the whole mesh"), std::string::npos) << info.problem;
}

TEST(MemoryPlanBeforeInput, NodesThatFit) {
  // 100 GB of mesh shared by the ranks, 1 GB per rank besides: 4 ranks a node of 30 GB usable.
  const auto need = [](long long ranks) { return 100.0e9 / static_cast<double>(ranks) + 1.0e9; };
  const long long nodes = nodes_that_fit(4, 30.0e9, need);
  EXPECT_EQ(nodes, 4);  // 16 ranks: 4 x (6.25 + 1) = 29 GB; 12 ranks: 4 x (8.33 + 1) = 37 GB
  EXPECT_EQ(nodes_that_fit(4, 3.0e9, need), 0);  // the 1 GB each rank needs anyway never fits 4 to a 3 GB node
  // Counts beyond 32 bits do not overflow the search.
  EXPECT_EQ(nodes_that_fit(1, 1.0e9, [](long long r) { return 1.0e15 / static_cast<double>(r); }), 1000000);
}

}  // namespace
}  // namespace edgefem
