// SPDX-License-Identifier: BSD-3-Clause
// Issue 48: a dynamic run with obstacles, checkpointed and restarted, finishes equal to the uninterrupted run. The
// contact's state that is not in the positions and the time (solver/contact.hpp, ContactTerms::saved_state: the
// barrier's adapted stiffness, whether the next step stiffens it, the last smallest gap) travels in the checkpoint's
// contact_state field; the lagged friction is rebuilt from the converged state at a step's start and the moving
// obstacle's place from the time. A block of 6 x 6 x 3 cubes (648 tets) under gravity on a floor with friction is
// pushed sideways by a moving box; backward Euler, 24 steps, checkpoint after 12; CG + Jacobi so that a restart
// repeats the arithmetic. Run on 2 ranks (CTest mpi.contact_restart.np2): written and restarted on 2 (round-off),
// restarted on 1 from the 2 ranks' checkpoint (solver tolerance).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "solver/dynamic_solver.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_contact_restart {  // one per file: the distributed test files share unity batches

using namespace dynamics_testing;  // tests/support/dynamics_testing.hpp

constexpr int kSteps = 24, kHalf = 12;

std::string pushed_block_yaml() {
  return "mesh: {generate: {shape: box, size: [0.6, 0.6, 0.3], cells: [6, 6, 3]}}\n"
         "materials: [{model: stvk, young: 2.0e4, poisson: 0.3, density: 100.0}]\n"
         "loads: {gravity: [0, 0, -9.81]}\n"
         "obstacles:\n"
         "  - {name: floor, shape: plane, point: [0, 0, -1.0e-5], normal: [0, 0, 1], friction: 0.5}\n"
         "  - name: pusher\n"
         "    shape: box\n"
         "    box: [[-0.4, 0.1, 0.05], [-0.02, 0.5, 0.25]]\n"
         "    motion: {translate: [0.2, 0, 0]}\n"
         "contact: {distance: 2.0e-5, friction_velocity: 0.01}\n"
         "analysis: {type: dynamic, dt: 0.02, end_time: 0.48, integrator: backward-euler}\n" +
         tight_solver("jacobi");
}

/// The contact reports' stiffness per step, from step `first` on.
std::vector<double> stiffness_history(const RunResult& r) {
  std::vector<double> out;
  for (const TimeStepReport& t : r.reports) out.push_back(t.contact ? t.contact->stiffness : -1.0);
  return out;
}

TEST(ContactRestart, RestartedRunEqualsTheUninterruptedOne) {
  const Job job = mpitest::job_from_yaml(scratch(), "pushed_block", pushed_block_yaml());
  const int P = world_size();
  RunSpec write;
  write.checkpoint_at = kHalf;
  write.checkpoint_path = scratch() + "/pushed_block_" + std::to_string(P) + ".ckpt";
  const RunResult full = simulate(MPI_COMM_WORLD, job, write);
  ASSERT_EQ(full.reports.size(), static_cast<std::size_t>(kSteps));
  // The run exercises what the checkpoint must carry: the barrier stiffened before the checkpoint, and the block is
  // in contact with both obstacles after it (friction on the floor, the pusher moving).
  const std::vector<double> kappa = stiffness_history(full);
  EXPECT_GT(kappa[kHalf - 1], kappa[0]) << "the barrier's stiffness did not adapt before the checkpoint";
  long long active_after = 0;
  for (std::size_t k = kHalf; k < full.reports.size(); ++k) active_after = std::max(active_after, full.reports[k].contact->active);
  EXPECT_GT(active_after, 49);  // the bottom face has 49 vertices: the pusher touches too
  double slid = 0;
  for (std::size_t i = 0; i < full.position.size(); i += 3) slid = std::max(slid, full.position[i] - full.reference[i]);
  EXPECT_GT(slid, 0.05);  // pushed along x

  RunSpec restart;
  restart.restart_from = write.checkpoint_path;
  const RunResult resumed = simulate(MPI_COMM_WORLD, job, restart);
  ASSERT_EQ(resumed.reports.size(), static_cast<std::size_t>(kSteps - kHalf));
  const double u = max_displacement(full), vmax = max_abs(full.velocity);
  const double dx = relative_difference(resumed.position, full.position, u);
  const double dv = relative_difference(resumed.velocity, full.velocity, vmax);
  double dkappa = 0, dgap = 0;
  long long dactive = 0;
  for (std::size_t k = 0; k < resumed.reports.size(); ++k) {
    const ContactStepReport& a = *resumed.reports[k].contact;
    const ContactStepReport& b = *full.reports[kHalf + k].contact;
    dkappa = std::max(dkappa, std::abs(a.stiffness - b.stiffness) / b.stiffness);
    dgap = std::max(dgap, std::abs(a.min_gap - b.min_gap) / job.contact.distance);
    dactive = std::max(dactive, std::abs(a.active - b.active));
  }
  if (world_rank() == 0)
    std::printf("contact_restart: %d ranks, checkpoint at step %d of %d: kappa %.4g -> %.4g (step %d) -> %.4g (end), "
                "up to %lld contacts after it, slid %.4f; restarted vs uninterrupted: max |dx| / max |u| = %.2e, "
                "max |dv| / max |v| = %.2e, stiffness %.2e, smallest gap %.2e dh, contacts %lld\n",
                P, kHalf, kSteps, kappa[0], kappa[kHalf - 1], kHalf, kappa.back(), active_after, slid, dx, dv, dkappa,
                dgap, dactive);
  EXPECT_LT(dx, 1e-12);
  EXPECT_LT(dv, 1e-10);
  EXPECT_EQ(dkappa, 0.0);
  EXPECT_LT(dgap, 1e-9);
  EXPECT_EQ(dactive, 0);

  // Restarted on rank 0 alone from the P ranks' checkpoint: equal to the solver's tolerance.
  if (P > 1) {
    double d[2] = {0, 0};
    if (world_rank() == 0) {
      const RunResult one = simulate(MPI_COMM_SELF, job, restart);
      d[0] = relative_difference(one.position, full.position, u);
      d[1] = relative_difference(one.velocity, full.velocity, vmax);
    }
    wait_for_rank0();  // the other ranks sleep through rank 0's run
    MPI_Bcast(d, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (world_rank() == 0)
      std::printf("contact_restart: written on %d, restarted on 1: max |dx| / max |u| = %.2e, max |dv| / max |v| = %.2e\n",
                  P, d[0], d[1]);
    EXPECT_LT(d[0], 1e-8);
    EXPECT_LT(d[1], 1e-6);
  }
}

}  // namespace test_contact_restart
}  // namespace edgefem
