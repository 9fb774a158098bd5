// SPDX-License-Identifier: BSD-3-Clause
// Implicit dynamics (solver/dynamic_solver), part 2: serial == distributed, and restart from checkpoints (same and
// other rank counts) for every integrator. Same executable as test_dynamics.cpp (CTest: mpi.dynamics.npN); every
// assertion holds on every rank; measured values printed by rank 0 ("dynamics:").
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "solver/dynamic_solver.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_dynamics_restart {  // one per file: the distributed test files share unity batches

namespace fs = std::filesystem;

using namespace dynamics_testing;  // tests/support/dynamics_testing.hpp

// ---------------------------------------------------------------------------------------------------------
// 4 and 5. Serial == distributed, and restarts.

/// Gravity, Rayleigh damping, a clamped end, a prescribed displacement of the middle section that follows a
/// ramp schedule, and a damped attachment at the tip whose anchor follows a path.
std::string loaded_yaml(const std::string& integrator, int steps, const std::string& pc = "edgefem_gamg") {
  char buffer[2048];
  std::snprintf(buffer, sizeof buffer,
                "mesh:\n"
                "  generate: {shape: box, size: [6, 1, 1], cells: [12, 2, 2]}\n"
                "materials:\n"
                "  - {model: stvk, young: 1.0e4, poisson: 0.3, density: 1.0}\n"
                "boundary:\n"
                "  - select: {region: 11}\n"
                "    fix: [x, y, z]\n"
                "  - select: {box: [[2.99, -0.01, -0.01], [3.01, 1.01, 1.01]]}\n"
                "    displace: [~, 0.05, 0.02]\n"
                "    schedule: {ramp: [0, 0.4]}\n"
                "loads:\n"
                "  gravity: [0, 0, -2.0]\n"
                "attachments:\n"
                "  - select: {box: [[5.99, -0.01, -0.01], [6.01, 1.01, 1.01]]}\n"
                "    stiffness: 40\n"
                "    damping: 0.8\n"
                "    path: [[0, 0, 0, 0], [0.5, 0, -0.05, 0.1], [1, 0, -0.05, 0.1]]\n"
                "analysis:\n"
                "  type: dynamic\n"
                "  dt: 0.05\n"
                "  end_time: %.17g\n"
                "  integrator: %s\n"
                "  damping: {mass: 0.05, stiffness: 0.002}\n",
                0.05 * steps, integrator.c_str());
  return std::string(buffer) + tight_solver(pc);
}

class Distributed : public ::testing::TestWithParam<std::string> {};

TEST_P(Distributed, SerialEqualsDistributed) {
  const std::string integrator = GetParam();
  const Job job = job_from_yaml("distributed_" + integrator, loaded_yaml(integrator, 20));
  const RunResult all = simulate(MPI_COMM_WORLD, job);
  double dx = 0, dv = 0, u = 0, vmax = 0, seconds_serial = 0;
  if (world_rank() == 0) {
    const RunResult serial = simulate(MPI_COMM_SELF, job);
    u = max_displacement(serial);
    vmax = max_abs(serial.velocity);
    dx = relative_difference(all.position, serial.position, u);
    dv = relative_difference(all.velocity, serial.velocity, vmax);
    seconds_serial = serial.seconds;
    std::printf(
        "dynamics: %-16s 20 steps on %d ranks vs 1: max |dx| / max |u| = %.2e, max |dv| / max |v| = %.2e "
        "(max |u| = %.4f, max |v| = %.4f; %.2f s on %d ranks, %.2f s serial)\n",
        integrator.c_str(), world_size(), dx, dv, u, vmax, all.seconds, world_size(), seconds_serial);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  EXPECT_LT(from_rank0(dx), 1e-8);
  EXPECT_LT(from_rank0(dv), 1e-8);
  EXPECT_GT(from_rank0(u), 0.05);  // the loads act (the anchor path and the prescribed section move by 0.1)
  EXPECT_EQ(all.reports.size(), 20u);
}

TEST_P(Distributed, RestartFromCheckpointEqualsUninterruptedRun) {
  const std::string integrator = GetParam();
  const int steps = 20, half = 10;
  // CG + Jacobi: the restarted run must repeat the uninterrupted one's arithmetic exactly. (With GAMG it
  // cannot: GAMG's set-up depends on the preconditioner's history in the process (its random state), so a
  // fresh solver differs at the KSP tolerance; that case is (d) below.)
  const Job job = job_from_yaml("restart_" + integrator, loaded_yaml(integrator, steps, "jacobi"));
  const int P = world_size();
  auto checkpoint = [&](int ranks) {
    return scratch() + "/restart_" + integrator + "_" + std::to_string(ranks) + ".ckpt";
  };
  struct Comparison {
    std::string what;
    double dx, dv, tolerance;
  };
  std::vector<Comparison> results;

  // (a) Written and restarted on all ranks of WORLD: the same arithmetic, equal to round-off.
  RunSpec write;
  write.checkpoint_at = half;
  write.checkpoint_path = checkpoint(P);
  const RunResult full = simulate(MPI_COMM_WORLD, job, write);
  RunSpec restart;
  restart.restart_from = checkpoint(P);
  const RunResult resumed = simulate(MPI_COMM_WORLD, job, restart);
  EXPECT_EQ(resumed.reports.size(), static_cast<std::size_t>(steps - half));
  EXPECT_EQ(resumed.steps.front(), half + 1);
  const double u = max_displacement(full), vmax = max_abs(full.velocity);
  results.push_back({"written on " + std::to_string(P) + ", restarted on " + std::to_string(P),
                     relative_difference(resumed.position, full.position, u),
                     relative_difference(resumed.velocity, full.velocity, vmax), 1e-12});
  // The energies after the restart continue the uninterrupted run's (kinetic, strain, attachment, work).
  double energy = 0;
  for (std::size_t k = 0; k < resumed.energy.size(); ++k) {
    const EnergyReport& a = resumed.energy[k];
    const EnergyReport& b = full.energy[static_cast<std::size_t>(resumed.steps[k])];
    const double scale = std::abs(b.kinetic) + std::abs(b.strain) + std::abs(b.attachment) + std::abs(b.external_work);
    energy = std::max(energy, (std::abs(a.kinetic - b.kinetic) + std::abs(a.strain - b.strain) +
                               std::abs(a.attachment - b.attachment) + std::abs(a.external_work - b.external_work)) /
                                  scale);
  }
  EXPECT_LT(energy, 1e-12);

  // (b) Restarted on one rank (rank 0 alone) from the checkpoint written on P ranks.
  if (P > 1) {
    double dx = 0, dv = 0;
    if (world_rank() == 0) {
      const RunResult one = simulate(MPI_COMM_SELF, job, restart);
      dx = relative_difference(one.position, full.position, u);
      dv = relative_difference(one.velocity, full.velocity, vmax);
    }
    dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
    results.push_back({"written on " + std::to_string(P) + ", restarted on 1", from_rank0(dx), from_rank0(dv), 1e-8});
  }
  // (c) With 3 ranks: written on 2 (ranks 0 and 1), restarted on 2, on 3 and on 1.
  if (P == 3) {
    MPI_Comm two = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < 2 ? 0 : MPI_UNDEFINED, world_rank(), &two);
    RunSpec write2 = write;
    write2.checkpoint_path = checkpoint(2);
    const RunResult full2 = simulate(two, job, write2);
    RunSpec restart2;
    restart2.restart_from = checkpoint(2);
    const RunResult resumed2 = simulate(two, job, restart2);
    const RunResult three = simulate(MPI_COMM_WORLD, job, restart2);
    double d[6] = {0, 0, 0, 0, 0, 0};
    if (world_rank() == 0) {
      const RunResult one = simulate(MPI_COMM_SELF, job, restart2);
      const double u2 = max_displacement(full2), v2 = max_abs(full2.velocity);
      d[0] = relative_difference(resumed2.position, full2.position, u2);
      d[1] = relative_difference(resumed2.velocity, full2.velocity, v2);
      d[2] = relative_difference(three.position, full2.position, u2);
      d[3] = relative_difference(three.velocity, full2.velocity, v2);
      d[4] = relative_difference(one.position, full2.position, u2);
      d[5] = relative_difference(one.velocity, full2.velocity, v2);
    }
    dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
    MPI_Bcast(d, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    results.push_back({"written on 2, restarted on 2", d[0], d[1], 1e-12});
    results.push_back({"written on 2, restarted on 3", d[2], d[3], 1e-8});
    results.push_back({"written on 2, restarted on 1", d[4], d[5], 1e-8});
    if (two != MPI_COMM_NULL) MPI_Comm_free(&two);
  }
  // (d) The default preconditioner (GAMG), written and restarted on P ranks: equal to the solver tolerance.
  {
    const Job gamg = job_from_yaml("restart_gamg_" + integrator, loaded_yaml(integrator, steps));
    RunSpec w = write;
    w.checkpoint_path = scratch() + "/restart_gamg_" + integrator + ".ckpt";
    const RunResult a = simulate(MPI_COMM_WORLD, gamg, w);
    RunSpec r;
    r.restart_from = w.checkpoint_path;
    const RunResult b = simulate(MPI_COMM_WORLD, gamg, r);
    const double dx = relative_difference(b.position, a.position, max_displacement(a));
    const double dv = relative_difference(b.velocity, a.velocity, max_abs(a.velocity));
    if (world_rank() == 0)
      std::printf(
          "dynamics: restart %-16s with GAMG, written and restarted on %d: max |dx| / max |u| = %.2e, "
          "max |dv| / max |v| = %.2e (tolerances 1e-12, 1e-9)\n",
          integrator.c_str(), P, dx, dv);
    EXPECT_LT(dx, 1e-12);
    EXPECT_LT(dv, 1e-9);
  }
  for (const auto& c : results) {
    if (world_rank() == 0)
      std::printf(
          "dynamics: restart %-16s at step %d of %d, %-30s: max |dx| / max |u| = %.2e, max |dv| / max |v| "
          "= %.2e (tolerance %.0e)\n",
          integrator.c_str(), half, steps, c.what.c_str(), c.dx, c.dv, c.tolerance);
    EXPECT_LT(c.dx, c.tolerance) << c.what;
    EXPECT_LT(c.dv, c.tolerance) << c.what;
  }
  if (world_rank() == 0)
    std::printf("dynamics: restart %-16s energies after the restart vs uninterrupted: %.2e relative\n",
                integrator.c_str(), energy);
}

INSTANTIATE_TEST_SUITE_P(Integrators, Distributed, ::testing::Values("backward-euler", "linearized-euler", "newmark"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace test_dynamics_restart
}  // namespace edgefem
