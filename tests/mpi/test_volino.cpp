// SPDX-License-Identifier: BSD-3-Clause
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
#include "run/load_mesh.hpp"
#include "run/time_loop.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_volino {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;

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
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
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
    const Job job =
        mpitest::job_from_yaml(mpitest::scratch_dir("volino"), "volino_vs_" + model,
                               "mesh: {generate: {shape: sheet, size: [1, 1], cells: [6, 6]}}\n"
                               "materials: [{model: " +
                                   model +
                                   ", young: 10.0, poisson: 0.35, thickness: 0.5}]\n"
                                   "boundary:\n"
                                   "  - {select: {all: true}, fix: [z]}\n"
                                   "  - {select: {region: 11}, fix: [x, y]}\n"
                                   "  - {select: {region: 12}, displace: [0.2, 0.1, ~]}\n"
                                   "analysis: {type: static, steps: 2}\n"
                                   "solver: {newton: {rtol: 1.0e-12, atol: 1.0e-13}, petsc: \"-ksp_rtol 1e-13\"}\n");
    const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
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

/// Mechanical energy (kinetic + strain) after a membrane is pulled in its plane and let go: with Delingette's
/// damped springs or Volino's viscosity it must end lower than without.
double energy_after_release(const std::string& material) {
  const Job job = mpitest::job_from_yaml(
      mpitest::scratch_dir("volino"), "damped_" + std::to_string(std::hash<std::string>{}(material)),
      "mesh: {generate: {shape: sheet, size: [1, 1], cells: [8, 8]}}\n"
      "materials: [" +
          material +
          "]\n"
          "boundary:\n"
          "  - {select: {all: true}, fix: [z]}\n"
          "  - {select: {region: 11}, fix: [x, y]}\n"
          "loads:\n"
          "  tractions: [{select: {region: 12}, traction: [50, 0, 0], schedule: {table: [[0, 1], [0.02, 1], [0.021, "
          "0]]}}]\n"
          "analysis: {type: dynamic, dt: 0.005, end_time: 0.3, integrator: backward-euler}\n"
          "solver: {newton: {rtol: 1.0e-10, atol: 1.0e-12}, petsc: \"-ksp_type cg -pc_type jacobi -ksp_rtol "
          "1e-12\"}\n");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  DynamicSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), "", true);
  const auto reports = run_time_loop(solver, {});
  const EnergyReport e = reports.back().energy;
  return e.kinetic + e.strain;
}

TEST(Volino, DampedSpringsAndViscosityDissipate) {
  const double trbs = energy_after_release("{model: trbs, young: 1000, poisson: 0.3, density: 0.2}");
  const double damped =
      energy_after_release("{model: trbs, young: 1000, poisson: 0.3, density: 0.2, spring_damping: 0.005}");
  const double volino = energy_after_release("{model: volino, young: 1000, poisson: 0.3, density: 0.2}");
  const double viscous =
      energy_after_release("{model: volino, young: 1000, poisson: 0.3, density: 0.2, viscosity: [2, 2, 1]}");
  if (world_rank() == 0)
    std::printf("energy after release: trbs %.6e, damped %.6e; volino %.6e, viscous %.6e\n", trbs, damped, volino,
                viscous);
  EXPECT_NEAR(volino / trbs, 1.0, 1e-8);  // the same material through both kernels
  EXPECT_LT(damped, 0.5 * trbs);
  EXPECT_LT(viscous, 0.5 * volino);
  EXPECT_GT(damped, 0.0);
}

}  // namespace test_volino
}  // namespace edgefem
