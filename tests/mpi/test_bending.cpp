// SPDX-License-Identifier: BSD-3-Clause
// Isometric bending of membranes in the Newton solver (issue 13): the hinge stencils are distributed so that each
// interior edge is assembled by exactly one rank, which has its four vertices; the hanging cloth with bending
// (jobs/examples/hanging_cloth_bending.yaml) curls far less than without; serial == distributed. CTest runs it on
// 1 and 2 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "run/time_loop.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "tests/support/dynamics_testing.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_bending {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

std::string example() { return std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/hanging_cloth_bending.yaml"; }

struct ClothRun {
  std::vector<double> reference, position;  ///< every rank of comm: 3 per original vertex
};

ClothRun simulate(MPI_Comm comm, const Job& job, const LocalMesh& mesh) {
  DynamicSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  (void)run_time_loop(solver, [](long long, double) {});
  const std::vector<double> x = solver.local_positions();
  auto g = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords, x}, true);
  return {std::move(g[0]), std::move(g[1])};
}

ClothRun simulate(MPI_Comm comm, const Job& job) {
  return simulate(comm, job, mpitest::distributed_job_mesh(comm, job));
}

/// Curl of the cloth's centre line Y = 0.5 (reference): the largest distance of its vertices from the chord
/// between its two ends (the held one, X = 0, and the free one, X = 1). Zero for a flat (unbent) flap.
double centre_line_curl(const ClothRun& r) {
  std::vector<std::array<double, 4>> line;  // (X, x, y, z)
  for (std::size_t v = 0; v < r.reference.size() / 3; ++v)
    if (std::abs(r.reference[3 * v + 1] - 0.5) < 1e-9)
      line.push_back({r.reference[3 * v], r.position[3 * v], r.position[3 * v + 1], r.position[3 * v + 2]});
  std::sort(line.begin(), line.end());
  const auto& a = line.front();
  const auto& b = line.back();
  const double d[3] = {b[1] - a[1], b[2] - a[2], b[3] - a[3]};
  const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  double curl = 0.0;
  for (const auto& p : line) {
    const double q[3] = {p[1] - a[1], p[2] - a[2], p[3] - a[3]};
    const double c[3] = {q[1] * d[2] - q[2] * d[1], q[2] * d[0] - q[0] * d[2], q[0] * d[1] - q[1] * d[0]};
    curl = std::max(curl, std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / len);
  }
  return curl;
}

TEST(Bending, EveryInteriorEdgeOnExactlyOneRankWithItsFourVertices) {
  const Job job = read_job(example());
  ASSERT_TRUE(any_bending(job));
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  ASSERT_TRUE(mesh.has_hinges);
  ASSERT_EQ(mesh.hinges.size(), 4 * mesh.hinge_cell.size());
  // Each hinge's first three vertices are its own triangle's; the fourth may be a ghost no local cell touches.
  long long local[2] = {static_cast<long long>(mesh.hinge_cell.size()), 0};
  std::vector<char> in_cell(static_cast<std::size_t>(mesh.n_local()), 0);
  for (const LocalIndex v : mesh.mesh.triangles) in_cell[static_cast<std::size_t>(v)] = 1;
  for (std::size_t h = 0; h < mesh.hinge_cell.size(); ++h) {
    const LocalIndex* t = mesh.mesh.triangles.data() + 3 * static_cast<std::size_t>(mesh.hinge_cell[h]);
    for (int k = 0; k < 3; ++k) EXPECT_NE(std::find(t, t + 3, mesh.hinges[4 * h + k]), t + 3) << "hinge " << h;
    const LocalIndex v3 = mesh.hinges[4 * h + 3];
    ASSERT_GE(v3, 0);
    ASSERT_LT(v3, mesh.n_local());
    if (!in_cell[static_cast<std::size_t>(v3)]) ++local[1];
  }
  long long total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total[0], 3 * 16 * 16 - 2 * 16) << "interior edges of the 16 x 16 sheet, each on one rank";
  if (world_size() > 1) {
    EXPECT_GT(total[1], 0) << "hinges across the partition use an extra ghost";
  }
  if (world_rank() == 0)
    std::printf("%lld hinges on %d ranks, %lld with an extra ghost vertex\n", total[0], world_size(), total[1]);
}

TEST(Bending, PtScotchPartitionsOnRankZeroAndSaysSo) {
  // partition: {method: ptscotch} with bending: rank 0 holds the whole sheet for the hinge stencils and runs
  // PT-Scotch there (sequentially); run's header says so. Every interior edge is still on exactly one rank, and the
  // cloth moves as on one rank.
  Job job = read_job(example());
  job.partition_method = PartitionMethod::ptscotch;
  const DistributedJobMesh loaded = load_distributed_job_mesh(MPI_COMM_WORLD, job);
  EXPECT_EQ(loaded.reader, MeshReader::serial);
  EXPECT_EQ(loaded.partitioner, CellPartitioner::ptscotch);
  EXPECT_EQ(loaded.partition_notice.rfind("partition: ptscotch on rank 0 (partition.method ptscotch; membrane bending: "
                                          "sequential PT-Scotch on rank 0",
                                          0),
            0u)
      << loaded.partition_notice;
  ASSERT_TRUE(loaded.mesh.has_hinges);
  long long hinges = static_cast<long long>(loaded.mesh.hinge_cell.size()), total = 0;
  MPI_Allreduce(&hinges, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, 3 * 16 * 16 - 2 * 16);
  // Not METIS's partition under another name.
  int differs = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job).mesh.triangles != loaded.mesh.mesh.triangles ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_size() > 1) {
    EXPECT_EQ(differs, 1) << "the PT-Scotch partition equals METIS's";
  }
  job.partition_method = PartitionMethod::automatic;
  std::string why;
  EXPECT_EQ(choose_partitioner(job, 100000000, &why), CellPartitioner::metis);
  EXPECT_NE(why.find("membrane bending: METIS on rank 0"), std::string::npos) << why;
  const ClothRun distributed = simulate(MPI_COMM_WORLD, job, loaded.mesh);
  double rel = 0.0;
  if (world_rank() == 0) {
    const ClothRun serial = simulate(MPI_COMM_SELF, job);
    double d = 0.0, u = 0.0;
    for (std::size_t i = 0; i < serial.position.size(); ++i) {
      d = std::max(d, std::abs(serial.position[i] - distributed.position[i]));
      u = std::max(u, std::abs(serial.position[i] - serial.reference[i]));
    }
    rel = d / u;
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  MPI_Bcast(&rel, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_LT(rel, 1e-8);
}

TEST(Bending, HangingClothCurlsLessWithBendingAndDistributedEqualsSerial) {
  // After 0.5 s the cloth without bending trails behind its held edge in a curl, the one with bending swings down
  // as a nearly flat flap. Measured (1 and 2 ranks): curl of the centre line 0.0794 m without bending, 0.00049 m
  // with kb = 0.05. Asserted: without bending more than 0.05 m, with bending less than a tenth of that.
  Job with = read_job(example());
  Job without = with;
  for (auto& m : without.materials) m.bending_stiffness = 0.0;
  const ClothRun b = simulate(MPI_COMM_WORLD, with), n = simulate(MPI_COMM_WORLD, without);
  const double curl_b = centre_line_curl(b), curl_n = centre_line_curl(n);
  if (world_rank() == 0)
    std::printf("hanging cloth at t = 0.5 s (%d ranks): centre-line curl %.6f m with kb = %g, %.6f m without\n",
                world_size(), curl_b, with.materials[0].bending_stiffness, curl_n);
  EXPECT_GT(curl_n, 0.05);
  EXPECT_LT(curl_b, curl_n / 10.0);
  // Serial == distributed (same job on rank 0 alone).
  double rel = 0.0;
  if (world_rank() == 0) {
    const ClothRun serial = simulate(MPI_COMM_SELF, with);
    double d = 0.0, u = 0.0;
    for (std::size_t i = 0; i < serial.position.size(); ++i) {
      d = std::max(d, std::abs(serial.position[i] - b.position[i]));
      u = std::max(u, std::abs(serial.position[i] - serial.reference[i]));
    }
    rel = d / u;
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  MPI_Bcast(&rel, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (world_rank() == 0) std::printf("  max |x - x_serial| / max |u| = %.3e\n", rel);
  EXPECT_LT(rel, 1e-8);
}

}  // namespace test_bending
}  // namespace edgefem
