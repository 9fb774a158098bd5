// Volino's membrane in the distributed solver (issue 5): the virtual tensile test of §4.1 and the isotropic
// law against trbs. Run under mpiexec with 1, 2 and 3 ranks (CTest: mpi.volino.npN).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "materials/curve.hpp"
#include "partition/partition.hpp"
#include "solver/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"

namespace edgefem {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Total internal force on boundary entry b's vertices (summed over ranks).
std::array<double, 3> boundary_force(const StaticSolver& solver, StaticSolver& mutable_solver, std::size_t b) {
  const std::vector<double> f = mutable_solver.local_internal_force();
  double local[3] = {0, 0, 0}, global[3];
  for (const LocalIndex v : solver.model().boundary_vertices[b])
    for (int d = 0; d < 3; ++d) local[d] += f[3 * static_cast<std::size_t>(v) + d];
  MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return {global[0], global[1], global[2]};
}

TEST(Volino, VirtualTensileTestReproducesTheInputCurve) {
  const Job job = read_job(std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/volino_tensile.yaml");
  Mesh whole;
  if (world_rank() == 0) whole = load_job_mesh(job);
  const LocalMesh mesh = distribute_mesh(MPI_COMM_WORLD, whole);
  StaticSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), "", true);
  // The sample: 0.2 m along the warp, 0.05 m wide, h = 1; the moving clamp is boundary[2].
  const double length = 0.2, width = 0.05, pull = *job.boundary[2].displace[0];
  std::vector<CurvePoint> points;
  for (const auto& p : job.materials[0].volino->curves.value()[1].points) points.push_back({p[0], p[1]});
  const StressCurve warp(points, "warp curve");
  double worst = 0.0;
  int worst_newton = 0;
  const auto reports = solver.run([&](int step, double load) {
    if (step == 0) return;
    const double stretch = 1.0 + load * pull / length;
    const double strain = 0.5 * (stretch * stretch - 1.0);
    const double expected = width * stretch * warp.evaluate(strain).stress;  // nominal force = width * P
    const double got = boundary_force(solver, solver, 2)[0];
    worst = std::max(worst, std::abs(got / expected - 1.0));
    if (world_rank() == 0)
      std::printf("volino tensile: step %d strain %.5f reaction %.10g expected %.10g (rel. %.2e)\n", step, strain, got,
                  expected, got / expected - 1.0);
  });
  for (const auto& r : reports) worst_newton = std::max(worst_newton, r.newton_iterations);
  EXPECT_LT(worst, 1e-4);
  EXPECT_LT(worst_newton, 10);
  ASSERT_EQ(reports.size(), 5u);
}

TEST(Volino, IsotropicLawEqualsTrbsInTheSolver) {
  // A stretched, sheared square with the same material as trbs and as Volino's isotropic law.
  auto run = [](const std::string& model) {
    const std::string dir = ::testing::TempDir();
    const std::string path = dir + "/volino_vs_" + model + ".yaml";
    if (world_rank() == 0) {
      std::FILE* f = std::fopen(path.c_str(), "w");
      std::fprintf(f,
                   "mesh: {generate: {shape: sheet, size: [1, 1], cells: [6, 6]}}\n"
                   "materials: [{model: %s, young: 10.0, poisson: 0.35, thickness: 0.5}]\n"
                   "boundary:\n"
                   "  - {select: {all: true}, fix: [z]}\n"
                   "  - {select: {region: 11}, fix: [x, y]}\n"
                   "  - {select: {region: 12}, displace: [0.2, 0.1, ~]}\n"
                   "analysis: {type: static, steps: 2}\n"
                   "solver: {newton: {rtol: 1.0e-12, atol: 1.0e-13}, petsc: \"-ksp_rtol 1e-13\"}\n",
                   model.c_str());
      std::fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const Job job = read_job(path);
    Mesh whole;
    if (world_rank() == 0) whole = load_job_mesh(job);
    const LocalMesh mesh = distribute_mesh(MPI_COMM_WORLD, whole);
    StaticSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), "", true);
    solver.run({});
    std::vector<double> x = solver.local_positions();
    x.resize(3 * static_cast<std::size_t>(mesh.n_owned));
    return x;  // the same partition for both models: compare rank by rank
  };
  const std::vector<double> trbs = run("trbs"), volino = run("volino");
  ASSERT_EQ(trbs.size(), volino.size());
  double local = 0.0, global = 0.0;
  for (std::size_t i = 0; i < trbs.size(); ++i) local = std::max(local, std::abs(trbs[i] - volino[i]));
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank() == 0) std::printf("volino isotropic vs trbs: max |x difference| = %.2e\n", global);
  EXPECT_LT(global, 1e-10);
}

}  // namespace
}  // namespace edgefem
