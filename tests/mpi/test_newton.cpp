// SPDX-License-Identifier: BSD-3-Clause
// The Newton driver's strategy (issue 9): the extrapolating predictor, preconditioner reuse, recovery from a
// linear solve that fails with a reused preconditioner, the round-off floor of the convergence test, and the
// linear solver's defaults (GAMG's smoothing, the preconditioner the summary names). Every
// assertion holds on every rank; CTest runs it on 1 and 2 ranks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <petscmat.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/job.hpp"
#include "linalg/edgefem_gamg.hpp"
#include "linalg/petsc_util.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_newton {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

std::string scratch() { return mpitest::scratch_dir("newton"); }

Job job_from_yaml(const std::string& name, const std::string& yaml) {
  return mpitest::job_from_yaml(scratch(), name, yaml);
}

struct Solved {
  std::vector<StepReport> reports;
  std::vector<double> reference, position;  ///< owned vertices, 3 per vertex
  NewtonStats stats;
};

/// PETSc options persist in the process-wide database: every job below names the ones it relies on.
constexpr const char* kOptions = "-ksp_type cg -ksp_max_it 2000";

Solved solve(const Job& job, const std::string& cli = kOptions) {
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  StaticSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), cli, true);
  Solved r;
  r.reports = solver.run({});
  const std::vector<double> x = solver.local_positions();
  const auto n = 3 * static_cast<std::size_t>(mesh.n_owned);
  r.position.assign(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
  r.reference.assign(mesh.mesh.coords.begin(), mesh.mesh.coords.begin() + static_cast<std::ptrdiff_t>(n));
  r.stats = solver.stats();
  return r;
}

double global_max(double local) {
  double g = 0;
  MPI_Allreduce(&local, &g, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return g;
}

/// max |a - b| / max |u_a| over all ranks (same mesh, same partition).
double relative_difference(const Solved& a, const Solved& b) {
  double d = 0, u = 0;
  for (std::size_t i = 0; i < a.position.size(); ++i) {
    d = std::max(d, std::abs(a.position[i] - b.position[i]));
    u = std::max(u, std::abs(a.position[i] - a.reference[i]));
  }
  return global_max(d) / global_max(u);
}

std::string cantilever(const std::string& model, const std::string& solver_keys, int steps = 3,
                       const std::string& cells = "[16, 4, 4]") {
  return "mesh:\n  generate: {shape: box, size: [10, 1, 1], cells: " + cells +
         "}\n"
         "materials:\n  - {model: " +
         model +
         ", young: 1.0e4, poisson: 0.3, volumetric: none}\n"
         "boundary:\n  - select: {region: 11}\n    fix: [x, y, z]\n"
         "loads:\n  gravity: [0, 0, -1.0]\n"
         "analysis: {type: static, steps: " +
         std::to_string(steps) +
         "}\n"
         "solver:\n" +
         solver_keys;
}

TEST(Newton, ExtrapolatorIsExactForQuadraticPaths) {
  // x(s) = a + b s + c s^2 per entry: the parabola through three states reproduces it, the secant through two
  // reproduces its linear part.
  PetscOwner<Vec, VecDestroy> x;
  EDGEFEM_PETSC(VecCreateMPI(MPI_COMM_WORLD, 3, PETSC_DETERMINE, x.address()));
  auto path = [&](double s, bool quadratic) {
    VecArray a(x, false);
    for (std::size_t i = 0; i < a.span().size(); ++i)
      a.span()[i] = 1.0 + static_cast<double>(i) + (2.0 - static_cast<double>(i)) * s + (quadratic ? 0.5 * s * s : 0.0);
  };
  for (const bool quadratic : {false, true}) {
    Extrapolator e(x);
    EXPECT_FALSE(e.ready());
    for (const double s : {0.0, 0.25, 0.5}) {
      path(s, quadratic);
      e.accept(x, s);
      if (s == 0.25 && !quadratic) {  // two states: the secant
        ASSERT_TRUE(e.predict(0.6, x));
        VecArray got(x, true);
        for (std::size_t i = 0; i < got.span().size(); ++i)
          EXPECT_NEAR(got.span()[i], 1.0 + static_cast<double>(i) + (2.0 - static_cast<double>(i)) * 0.6, 1e-14);
      }
    }
    ASSERT_TRUE(e.predict(0.8, x));
    std::vector<double> got;
    {
      VecArray a(x, true);
      got.assign(a.span().begin(), a.span().end());
    }
    path(0.8, quadratic);
    VecArray expected(x, true);
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected.span()[i], 1e-13) << quadratic;
  }
}

TEST(Newton, ExtrapolatorsSlopeParabolaIsExactForQuadraticPaths) {
  // x(s) = a + b s + c s^2 per entry: x(0), x(0.25) and the slope b at 0 (recorded from a "tangent step" to 0.4,
  // dx = 0.4 b) give the parabola itself; the secant through the two states misses c. The slope applies only to
  // the second step: not before the second state, not after a third, not after reset, not set with two states.
  PetscOwner<Vec, VecDestroy> x, dx;
  EDGEFEM_PETSC(VecCreateMPI(MPI_COMM_WORLD, 3, PETSC_DETERMINE, x.address()));
  EDGEFEM_PETSC(VecDuplicate(x, dx.address()));
  const auto fill = [](Vec v, const std::function<double(double)>& f) {
    VecArray a(v, false);
    for (std::size_t i = 0; i < a.span().size(); ++i) a.span()[i] = f(static_cast<double>(i));
  };
  const auto path = [&](double s) {
    fill(x, [s](double i) { return 1.0 + i + (2.0 - i) * s + (0.5 + 0.25 * i) * s * s; });
  };
  const auto expect_path = [&](double s, double tol) {
    std::vector<double> got;
    {
      VecArray a(x, true);
      got.assign(a.span().begin(), a.span().end());
    }
    path(s);
    VecArray want(x, true);
    double worst = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want.span()[i]));
    return worst <= tol;
  };
  Extrapolator e(x);
  path(0.0);
  e.accept(x, 0.0);
  fill(dx, [](double i) { return 0.4 * (2.0 - i); });
  e.set_slope(dx, 0.4);
  EXPECT_FALSE(e.has_slope());  // one state
  path(0.25);
  e.accept(x, 0.25);
  ASSERT_TRUE(e.has_slope());
  ASSERT_TRUE(e.predict_with_slope(0.5, x));
  EXPECT_TRUE(expect_path(0.5, 1e-13));
  ASSERT_TRUE(e.predict(0.5, x));  // the secant: off by c s0 s1 = 0.25 c at least 0.03
  EXPECT_FALSE(expect_path(0.5, 0.03));
  e.set_slope(dx, 0.6);  // two states: ignored, and the recorded slope is dropped
  EXPECT_FALSE(e.has_slope());
  EXPECT_FALSE(e.predict_with_slope(0.5, x));

  Extrapolator f(x);
  path(0.0);
  f.accept(x, 0.0);
  f.set_slope(dx, 0.4);
  path(0.25);
  f.accept(x, 0.25);
  path(0.5);
  f.accept(x, 0.5);
  EXPECT_FALSE(f.has_slope());  // three states: the parabola through them
  f.reset();
  path(0.0);
  f.accept(x, 0.0);
  path(0.25);
  f.accept(x, 0.25);
  EXPECT_FALSE(f.has_slope());  // reset: a slope recorded before belongs to another path
}

TEST(Newton, ForcingTermIsEisenstatWalkerBoundedByTheTarget) {
  SolverSpec spec;  // eta_max 1e-3, linear rtol 1e-8
  ASSERT_DOUBLE_EQ(spec.eta_max, 1e-3);
  ASSERT_DOUBLE_EQ(spec.linear_rtol, 1e-8);
  const double target = 1e-10;
  // First iteration: eta_max.
  EXPECT_DOUBLE_EQ(forcing_term(spec, 1.0, 0.0, 0.0, target), 1e-3);
  // Choice 2: 0.9 (1e-4 / 1e-2)^2 = 9e-5; the safeguard 0.9 (1e-3)^2 is below 0.1 and does not apply.
  EXPECT_NEAR(forcing_term(spec, 1e-4, 1e-2, 1e-3, target), 9e-5, 1e-18);
  // A slow decrease: 0.9 (0.5)^2 = 0.225, capped at eta_max.
  EXPECT_DOUBLE_EQ(forcing_term(spec, 0.5, 1.0, 1e-3, target), 1e-3);
  // Fast convergence far from the target: choice 2's 0.9 (1e-6 / 1e-1)^2 = 9e-11 is raised to linear rtol.
  EXPECT_DOUBLE_EQ(forcing_term(spec, 1e-6, 1e-1, 1e-3, 1e-20), 1e-8);
  // Near the target the last solve needs 0.1 target / |R|, looser than eta_max: 0.1 * 1e-10 / 2e-10 = 0.05.
  EXPECT_NEAR(forcing_term(spec, 2e-10, 1e-6, 1e-3, target), 0.05, 1e-15);
  // ... but never looser than 0.5 (|R| already at the target).
  EXPECT_DOUBLE_EQ(forcing_term(spec, 1e-11, 1e-6, 1e-3, target), 0.5);
  // Between: 0.1 * 1e-10 / 1e-7 = 1e-4 beats choice 2's 0.9 (1e-7 / 1e-3)^2 = 9e-9.
  EXPECT_NEAR(forcing_term(spec, 1e-7, 1e-3, 1e-3, target), 1e-4, 1e-16);
}

TEST(Newton, ASolveMeantToEndTheStepStopsOnTheTrueResidual) {
  const double target = 4.1e-10;
  // The cantilever's second load step: |R| = 1.85e-5 after |R| = 1.06e-2, Eisenstat-Walker's 0.9 (1.85e-5 /
  // 1.06e-2)^2 = 2.7e-6 leaves a linear part of 5e-11, below the target: the step's last solve. Stopped on the
  // preconditioned norm it ended at 1.4e-9 and the step took one more Newton iteration.
  const double eta = forcing_term(SolverSpec{}, 1.85e-5, 1.06e-2, 1e-3, target);
  EXPECT_NEAR(eta, 0.9 * std::pow(1.85e-5 / 1.06e-2, 2), 1e-12);
  EXPECT_TRUE(stops_on_true_residual(eta, 1.85e-5, target));
  // The target's own bound (0.1 target / |R|) always qualifies; an early iteration does not.
  EXPECT_TRUE(stops_on_true_residual(forcing_term(SolverSpec{}, 1e-9, 1e-6, 1e-3, target), 1e-9, target));
  EXPECT_FALSE(stops_on_true_residual(forcing_term(SolverSpec{}, 1e-2, 0.0, 0.0, target), 1e-2, target));
  EXPECT_FALSE(stops_on_true_residual(1e-3, 1e-3, target));
  EXPECT_FALSE(stops_on_true_residual(1e-3, 0.0, target));  // no residual yet
}

TEST(Newton, PredictorIsExactForALinearMaterialUnderALinearRamp) {
  // A linear material, gravity ramped over 4 load steps: from the second step on the extrapolated state is the
  // solution (to step 1's tolerance), so Newton needs at most one iteration; from the last converged state it
  // needs several (GAMG and a first forcing term of 1e-2: the first linear solve is loose).
  const std::string keys =
      "  newton: {rtol: 1.0e-8, atol: 1.0e-14, max_it: 20, eta_max: 1.0e-2, predictor: %s}\n"
      "  linear: {preconditioner: gamg}\n";
  char with[160], without[160];
  std::snprintf(with, sizeof with, keys.c_str(), "extrapolate");
  std::snprintf(without, sizeof without, keys.c_str(), "none");
  const Solved extrapolated = solve(job_from_yaml("linear_extrapolate", cantilever("linear", with, 4)));
  const Solved plain = solve(job_from_yaml("linear_none", cantilever("linear", without, 4)));
  ASSERT_EQ(extrapolated.reports.size(), 4u);
  for (std::size_t k = 1; k < 4; ++k) {
    EXPECT_LE(extrapolated.reports[k].newton_iterations, 1) << "load step " << k + 1;
    EXPECT_GE(plain.reports[k].newton_iterations, 2) << "load step " << k + 1;
  }
  EXPECT_LT(relative_difference(extrapolated, plain), 1e-8);  // collective: on every rank
  if (world_rank() == 0)
    std::printf(
        "newton: linear ramp, Newton iterations per step with / without the predictor: %d %d %d %d / %d %d %d %d\n",
        extrapolated.reports[0].newton_iterations, extrapolated.reports[1].newton_iterations,
        extrapolated.reports[2].newton_iterations, extrapolated.reports[3].newton_iterations,
        plain.reports[0].newton_iterations, plain.reports[1].newton_iterations, plain.reports[2].newton_iterations,
        plain.reports[3].newton_iterations);
}

/// The GAMG cantilever (Newton rtol 1e-12) solved twice, with `solver.linear.<key>` true and false (and
/// `linear`, if any, as more `solver.linear` keys, `petsc` as the job's PETSc options).
std::pair<Solved, Solved> gamg_cantilever_with_and_without(const std::string& key, const std::string& petsc = "",
                                                           const std::string& linear = "") {
  auto job = [&](bool on) {
    const std::string keys =
        "  newton: {rtol: 1.0e-12, atol: 1.0e-14, max_it: 30}\n"
        "  linear: {preconditioner: gamg, " +
        key + ": " + (on ? "true" : "false") + (linear.empty() ? "" : ", " + linear) + "}\n" +
        (petsc.empty() ? "" : "  petsc: \"" + petsc + "\"\n");
    return job_from_yaml("gamg_" + key + (on ? "_on" : "_off"), cantilever("stvk", keys));
  };
  Solved on = solve(job(true));
  Solved off = solve(job(false));
  return {std::move(on), std::move(off)};
}

/// The cantilever bent further (4 load steps, 40 x 4 x 4 cells, Newton rtol 1e-12) under GAMG, solved with
/// `solver.linear.<key>` set to `on` and to `off`; prints both runs' counts and their difference, which it returns
/// with them.
struct BentPair {
  Solved on, off;
  double difference = 0.0;  ///< max |dx| / max |u|
};
BentPair bent_gamg_cantilever(const std::string& key, const std::string& on, const std::string& off,
                              const char* what_on, const char* what_off) {
  auto solved = [&](const std::string& value) {
    const std::string keys =
        "  newton: {rtol: 1.0e-12, atol: 1.0e-14, max_it: 30}\n"
        "  linear: {preconditioner: gamg, " +
        key + ": " + value + "}\n";
    return solve(job_from_yaml("bent_" + key + "_" + value, cantilever("stvk", keys, 4, "[40, 4, 4]")));
  };
  BentPair r{solved(on), solved(off)};
  r.difference = relative_difference(r.on, r.off);
  if (world_rank() == 0)
    std::printf(
        "newton: GAMG %s (%d set-ups, %d Newton, %d KSP iterations) vs %s (%d, %d, %d): max |dx| / max |u| = "
        "%.2e\n",
        what_on, r.on.stats.pc_setups, r.on.stats.newton_iterations, r.on.stats.ksp_iterations, what_off,
        r.off.stats.pc_setups, r.off.stats.newton_iterations, r.off.stats.ksp_iterations, r.difference);
  return r;
}

TEST(Newton, ReusedPreconditionerGivesTheRebuiltSolution) {
  // GAMG kept across Newton iterations and load steps vs rebuilt at every iteration: the same converged state.
  const auto [kept, fresh] = gamg_cantilever_with_and_without("reuse");
  const double d = relative_difference(kept, fresh);
  if (world_rank() == 0)
    std::printf(
        "newton: GAMG reused (%d set-ups, %d Newton, %d KSP iterations) vs rebuilt every iteration (%d, %d, %d): "
        "max |dx| / max |u| = %.2e\n",
        kept.stats.pc_setups, kept.stats.newton_iterations, kept.stats.ksp_iterations, fresh.stats.pc_setups,
        fresh.stats.newton_iterations, fresh.stats.ksp_iterations, d);
  EXPECT_LT(d, 1e-10);
  EXPECT_EQ(fresh.stats.pc_setups, fresh.stats.newton_iterations);
  EXPECT_LT(kept.stats.pc_setups, kept.stats.newton_iterations / 2);
}

TEST(Newton, StaleMultigridHierarchyIsRebuiltAtAStepStart) {
  // The bending cantilever in 4 load steps under GAMG kept across steps: the hierarchy set up at rest stiffens less
  // than the tangent does, and CG's estimate of the preconditioned operator's largest eigenvalue grows from about 1
  // (fresh) step after step. With the rule (rebuild_eigenvalue: 1.5, the default) a step whose predecessor's last
  // solve saw more than 1.5 times the fresh estimate starts with a new hierarchy; without it (0) only the
  // iteration-count rule rebuilds. The same converged state, more set-ups and fewer CG iterations with the rule.
  const auto [on, off, d] = bent_gamg_cantilever("rebuild_eigenvalue", "1.5", "0", "with the stale-hierarchy rule",
                                                 "without");
  EXPECT_LT(d, 1e-10);
  EXPECT_GT(on.stats.pc_setups, off.stats.pc_setups);
  EXPECT_LT(on.stats.ksp_iterations, off.stats.ksp_iterations);
}

TEST(Newton, CorotationalInterpolationGivesTheSameSolutionInFewerIterations) {
  // The bending cantilever of the test above, GAMG's coarse operators rebuilt with the finest interpolation's rows
  // turned by each vertex's rotation (corotational: true, the default) or as GAMG made them at rest (false): the
  // same converged state, fewer CG iterations with the rotation (the coarse levels then see the bent beam's
  // rigid-body modes), on 1 and 2 ranks (the rows other ranks own come to the Galerkin product rotated).
  const auto [on, off, d] = bent_gamg_cantilever("corotational", "true", "false",
                                                 "rebuilt with the corotational interpolation", "the rest state's");
  EXPECT_LT(d, 1e-10);
  EXPECT_GT(on.stats.pc_setups, 1);  // rebuilds happened, so the rotation was applied
  EXPECT_LT(on.stats.ksp_iterations, off.stats.ksp_iterations);
}

TEST(Newton, BlockOperatorGivesTheAijSolution) {
  // CG and GAMG's finest smoothers multiplying with the BAIJ copy vs the AIJ matrix itself: the same converged
  // state, and the same Newton iterations (the products differ only in the order of the sums). GAMG is set up at
  // every Newton iteration in both (reuse: false), so that the rebuild rule, which counts Krylov iterations, does
  // not make the two runs differ by more than the products. The corotational interpolation, which only our own
  // rebuilds (block operator on) apply, is off in both.
  const auto [block, aij] = gamg_cantilever_with_and_without("block_operator", "", "reuse: false, corotational: false");
  const double d = relative_difference(block, aij);
  if (world_rank() == 0)
    std::printf("newton: BAIJ operator (%d Newton, %d KSP iterations) vs AIJ (%d, %d): max |dx| / max |u| = %.2e\n",
                block.stats.newton_iterations, block.stats.ksp_iterations, aij.stats.newton_iterations,
                aij.stats.ksp_iterations, d);
  EXPECT_LT(d, 1e-10);
  EXPECT_EQ(block.stats.newton_iterations, aij.stats.newton_iterations);
  EXPECT_NEAR(block.stats.ksp_iterations, aij.stats.ksp_iterations, 0.1 * aij.stats.ksp_iterations);
}

TEST(Newton, OwnMultigridProductsGiveTheAijSolution) {
  // Four GAMG levels (1275, 282, 36 and 6 unknowns on one rank: -pc_gamg_coarse_eq_limit 12). With the block
  // operator CG and the finest smoothers multiply with our BAIJ product, and the two middle levels'
  // operators and all three interpolations with our CSR products (multigrid_products.hpp), installed after each
  // GAMG set-up and removed before the next (here at every Newton iteration: reuse: false); without it every
  // product is PETSc's AIJ one. The same converged state and Newton iterations (the sums differ only in their order;
  // the corotational interpolation, which only our rebuilds apply, off in both).
  const auto [own, aij] = gamg_cantilever_with_and_without("block_operator", "-pc_gamg_coarse_eq_limit 12",
                                                           "reuse: false, corotational: false");
  const double d = relative_difference(own, aij);
  if (world_rank() == 0)
    std::printf(
        "newton: own products, 4 GAMG levels (%d Newton, %d KSP iterations, %d set-ups) vs AIJ (%d, %d, %d): "
        "max |dx| / max |u| = %.2e\n",
        own.stats.newton_iterations, own.stats.ksp_iterations, own.stats.pc_setups, aij.stats.newton_iterations,
        aij.stats.ksp_iterations, aij.stats.pc_setups, d);
  EXPECT_LT(d, 1e-10);
  EXPECT_EQ(own.stats.newton_iterations, aij.stats.newton_iterations);
  EXPECT_NEAR(own.stats.ksp_iterations, aij.stats.ksp_iterations, 0.1 * aij.stats.ksp_iterations);
  EXPECT_EQ(own.stats.pc_setups, own.stats.newton_iterations);  // installed and removed at every iteration
}

TEST(Newton, FailedSolveWithReusedPreconditionerRebuildsInsteadOfCutting) {
  // Twist the cuboid by 90 degrees in 3 steps with at most 3 CG iterations per linear solve: a fresh sparse
  // Cholesky factor solves in one or two, the factor kept from a state 30 degrees back does not. The failed solve
  // is redone with a new factor inside the same Newton iteration: no load step is cut.
  const std::string yaml =
      "mesh: {file: " + std::string(EDGEFEM_SOURCE_DIR) +
      "/jobs/examples/meshes/cuboid.msh}\n"
      "materials:\n  - {region: 1, model: stvk, young: 5.0e4, poisson: 0.4}\n"
      "boundary:\n"
      "  - select: {region: 21}\n    fix: [x, y, z]\n"
      "  - select: {region: 22}\n"
      "    rotate: {axis: [0, 0, 1], center: [0.5, 0.5, 3], angle: 90, components: [x, y]}\n"
      "analysis: {type: static, steps: 3}\n"
      "solver:\n  newton: {rtol: 1.0e-10, atol: 1.0e-12, max_it: 30}\n  linear: {preconditioner: direct}\n";
  const Job job = job_from_yaml("twist_recover", yaml);
  const Solved limited = solve(job, "-ksp_type cg -ksp_max_it 3");
  const Solved reference = solve(job, kOptions);
  int cut = 0;
  for (const auto& r : limited.reports) cut += r.substeps > 1;
  const double d = relative_difference(limited, reference);  // collective
  if (world_rank() == 0)
    std::printf(
        "newton: twist with <= 3 CG iterations per solve: %d failed solves with a reused factor redone, %d "
        "set-ups, %d steps cut; max |dx| / max |u| vs unlimited = %.2e\n",
        limited.stats.pc_recoveries, limited.stats.pc_setups, cut, d);
  ASSERT_EQ(limited.reports.size(), 3u);
  EXPECT_GE(limited.stats.pc_recoveries, 1);
  EXPECT_EQ(cut, 0);
  EXPECT_LT(d, 1e-7);
}

TEST(Newton, StopsAtTheRoundOffFloorWhenTheToleranceIsUnreachable) {
  // rtol = atol = 0: no residual reaches them. Newton stops once |R| is at the residual of the positions'
  // rounding (|J d|, d_i = eps |x_i|) instead of running into max_it and cutting the step.
  const Solved r = solve(job_from_yaml("floor", cantilever("stvk", "  newton: {rtol: 0.0, atol: 0.0, max_it: 25}\n", 2,
                                                           "[20, 3, 3]")));
  ASSERT_EQ(r.reports.size(), 2u);
  for (const auto& step : r.reports) {
    EXPECT_EQ(step.substeps, 1);
    EXPECT_LE(step.newton_iterations, 10);
  }
}

std::string ksp_type(KSP ksp) {
  KSPType type = nullptr;
  EDGEFEM_PETSC(KSPGetType(ksp, &type));
  return type;
}

TEST(Newton, CgComesBackAfterAnIndefiniteSolveAndGivesUpOnTheThird) {
  // R(x) = D x - b with D diagonal: d_0 = -1 when `indefinite`, else all d_i = 1 + i/10 (global i), b = (3, 0.5, ...).
  // Unpreconditioned CG meets the indefinite system at once (b^T D b < 0) and the solve is redone with GMRES; the
  // next solve starts with CG again. After CG has met indefinite systems in three solves GMRES stays.
  constexpr PetscInt n = 6;  // unknowns per rank
  bool indefinite = false;
  auto diagonal = [&](PetscInt i) { return (indefinite && i == 0) ? -1.0 : 1.0 + 0.1 * static_cast<double>(i); };
  PetscOwner<Mat, MatDestroy> matrix;
  EDGEFEM_PETSC(MatCreateAIJ(MPI_COMM_WORLD, n, n, PETSC_DETERMINE, PETSC_DETERMINE, 1, nullptr, 0, nullptr,
                             matrix.address()));
  PetscOwner<Vec, VecDestroy> x, b;
  EDGEFEM_PETSC(MatCreateVecs(matrix, x.address(), b.address()));
  PetscInt first = 0;
  EDGEFEM_PETSC(VecGetOwnershipRange(b, &first, nullptr));
  for (PetscInt i = first; i < first + n; ++i) EDGEFEM_PETSC(VecSetValue(b, i, i == 0 ? 3.0 : 0.5, INSERT_VALUES));
  EDGEFEM_PETSC(VecAssemblyBegin(b));
  EDGEFEM_PETSC(VecAssemblyEnd(b));
  NewtonProblem problem;
  problem.residual = [&](Vec xv, Vec r) {  // r = D x - b
    const PetscScalar* xa = nullptr;
    PetscScalar* ra = nullptr;
    EDGEFEM_PETSC(VecCopy(b, r));
    EDGEFEM_PETSC(VecScale(r, -1.0));
    EDGEFEM_PETSC(VecGetArrayRead(xv, &xa));
    EDGEFEM_PETSC(VecGetArray(r, &ra));
    for (PetscInt i = 0; i < n; ++i) ra[i] += diagonal(first + i) * xa[i];
    EDGEFEM_PETSC(VecRestoreArray(r, &ra));
    EDGEFEM_PETSC(VecRestoreArrayRead(xv, &xa));
  };
  problem.jacobian = [&](Vec, Mat P) {
    for (PetscInt i = first; i < first + n; ++i) EDGEFEM_PETSC(MatSetValue(P, i, i, diagonal(i), INSERT_VALUES));
    EDGEFEM_PETSC(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  };
  Job job;
  job.petsc_options = "-pc_type none";  // an exact preconditioner would solve in one iteration, unchecked
  LinearSystemKind kind;
  kind.global_dofs = static_cast<long long>(n) * world_size();
  NewtonDriver driver(MPI_COMM_WORLD, job, kOptions, matrix, x, problem, kind, true);
  // Solves: indefinite, definite, indefinite, definite, indefinite (the third), definite.
  std::vector<std::string> types;
  for (int k = 0; k < 6; ++k) {
    indefinite = k % 2 == 0;
    EDGEFEM_PETSC(VecZeroEntries(x));
    const NewtonResult result = driver.solve(x, "solve " + std::to_string(k));
    ASSERT_TRUE(result.converged) << "solve " << k << ": " << result.why;
    // x = D^-1 b exactly (to the solver's tolerance).
    const PetscScalar* xa = nullptr;
    const PetscScalar* ba = nullptr;
    EDGEFEM_PETSC(VecGetArrayRead(x, &xa));
    EDGEFEM_PETSC(VecGetArrayRead(b, &ba));
    for (PetscInt i = 0; i < n; ++i) EXPECT_NEAR(xa[i], ba[i] / diagonal(first + i), 1e-9) << "solve " << k;
    EDGEFEM_PETSC(VecRestoreArrayRead(b, &ba));
    EDGEFEM_PETSC(VecRestoreArrayRead(x, &xa));
    types.push_back(ksp_type(driver.ksp()));
  }
  const std::vector<std::string> expected = {"gmres", "cg", "gmres", "cg", "gmres", "gmres"};
  EXPECT_EQ(types, expected);
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-pc_type"));  // the options database outlives this test
}

/// A matrix of kRows unknowns per rank (diagonal pattern, never assembled) and a vector for it: enough for a
/// NewtonDriver whose configuration a test checks; no solve happens.
struct UnsolvedSystem {
  static constexpr PetscInt kRows = 6;
  PetscOwner<Mat, MatDestroy> matrix;
  PetscOwner<Vec, VecDestroy> x;
  UnsolvedSystem() {
    EDGEFEM_PETSC(MatCreateAIJ(MPI_COMM_WORLD, kRows, kRows, PETSC_DETERMINE, PETSC_DETERMINE, 1, nullptr, 0, nullptr,
                               matrix.address()));
    EDGEFEM_PETSC(MatCreateVecs(matrix, x.address(), nullptr));
  }
};

TEST(Newton, SummaryNamesThePreconditionerInUseAndGamgGetsOneSmoothingStep) {
  // The defaults' GAMG (a system above direct_max_dofs) gets one Chebyshev step on its finest level unless the user
  // names a -pc_type: a setting of the preconditioner itself (edgefem_gamg), not an option in the process-wide
  // database; the run's summary names the preconditioner the KSP has, a user's -pc_type included.
  const UnsolvedSystem system;
  Mat matrix = system.matrix;
  Vec x = system.x;
  auto smoothing_steps = [] {
    char value[32] = "";
    PetscBool set = PETSC_FALSE;
    EDGEFEM_PETSC(PetscOptionsGetString(nullptr, nullptr, "-mg_levels_ksp_max_it", value, sizeof value, &set));
    return set == PETSC_TRUE ? std::string(value) : std::string("unset");
  };
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-mg_levels_ksp_max_it"));
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-pc_type"));
  Job job;
  job.solver.block_operator = false;
  LinearSystemKind kind;
  kind.global_dofs = 10LL * job.solver.direct_max_dofs;  // a large solid: GAMG
  kind.ranks = world_size();
  {
    const NewtonDriver driver(MPI_COMM_WORLD, job, kOptions, matrix, x, NewtonProblem{}, kind, true);
    EXPECT_EQ(driver.preconditioner_name(), default_preconditioner_name(job.solver, kind));
    EXPECT_EQ(driver.preconditioner_name(), "GAMG");
    PC pc = nullptr;
    EDGEFEM_PETSC(KSPGetPC(driver.ksp(), &pc));
    EXPECT_EQ(edgefem_gamg_finest_smoothing_steps(pc), 1);
    EXPECT_EQ(smoothing_steps(), "unset");
  }
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-mg_levels_ksp_max_it"));
  job.petsc_options = "-pc_type jacobi";
  {
    const NewtonDriver driver(MPI_COMM_WORLD, job, kOptions, matrix, x, NewtonProblem{}, kind, true);
    EXPECT_EQ(driver.preconditioner_name(), "jacobi (-pc_type)");
    EXPECT_EQ(smoothing_steps(), "unset");
  }
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-pc_type"));  // the options database outlives this test
}

TEST(Newton, DynamicMembranesOnSeveralRanksUseRestrictedSchwarzUnderGmresExceptForLinearizedEuler) {
  // Dynamic membranes: ICC under CG on one rank; on several, restricted additive Schwarz under right-preconditioned
  // GMRES for Newton's inexact solves, the symmetric basic Schwarz under CG for linearized Euler's one tight solve
  // per step, for a solid whose job asks for schwarz and whenever the user names a -ksp_type.
  const UnsolvedSystem system;
  const PetscInt n = UnsolvedSystem::kRows;
  Mat matrix = system.matrix;
  Vec x = system.x;
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-ksp_type"));  // the other tests' kOptions left it in the database
  Job job;
  LinearSystemKind kind;
  kind.global_dofs = static_cast<long long>(n) * world_size();
  kind.local_preconditioner = true;
  kind.dynamic = true;
  kind.ranks = world_size();
  struct Config {
    std::string ksp, pc;
    PCSide side = PC_LEFT;
    PCASMType asm_type = PC_ASM_BASIC;
  };
  auto config = [&] {
    const NewtonDriver driver(MPI_COMM_WORLD, job, "", matrix, x, NewtonProblem{}, kind, true);  // no CLI -ksp_type
    Config c;
    c.ksp = ksp_type(driver.ksp());
    PC pc = nullptr;
    PCType type = nullptr;
    EDGEFEM_PETSC(KSPGetPC(driver.ksp(), &pc));
    EDGEFEM_PETSC(PCGetType(pc, &type));
    c.pc = type;
    EDGEFEM_PETSC(KSPGetPCSide(driver.ksp(), &c.side));
    if (c.pc == PCASM) EDGEFEM_PETSC(PCASMGetType(pc, &c.asm_type));
    return c;
  };
  const Config newton = config();
  if (world_size() == 1) {
    EXPECT_EQ(newton.ksp, "cg");
    EXPECT_EQ(newton.pc, "icc");
  } else {
    EXPECT_EQ(newton.ksp, "gmres");
    EXPECT_EQ(newton.pc, "asm");
    EXPECT_EQ(newton.side, PC_RIGHT);
    EXPECT_EQ(newton.asm_type, PC_ASM_RESTRICT);
  }
  kind.newton_solves = false;
  const Config linearized = config();
  EXPECT_EQ(linearized.ksp, "cg");
  EXPECT_EQ(linearized.side, PC_LEFT);
  if (world_size() > 1) {
    EXPECT_EQ(linearized.asm_type, PC_ASM_BASIC);
  }
  kind.newton_solves = true;
  kind.local_preconditioner = false;  // a solid whose job asks for schwarz
  job.solver.preconditioner = SolverSpec::Preconditioner::schwarz;
  const Config solid = config();
  EXPECT_EQ(solid.ksp, "cg");
  if (world_size() > 1) {
    EXPECT_EQ(solid.asm_type, PC_ASM_BASIC);
  }
  kind.local_preconditioner = true;
  job.solver.preconditioner = SolverSpec::Preconditioner::automatic;
  job.petsc_options = "-ksp_type cg";
  const Config users = config();
  EXPECT_EQ(users.ksp, "cg");
  if (world_size() > 1) {
    EXPECT_EQ(users.asm_type, PC_ASM_BASIC);
  }
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-ksp_type"));  // the options database outlives this test
}

TEST(Newton, SmallTimeStepSystemsAreFactorizedWholeOnEveryRank) {
  // A time step's matrix up to direct_max_dofs: PETSc's Cholesky in RCM order, on one rank the matrix itself, on
  // several the whole matrix gathered on every rank (PCREDUNDANT); a static one: MUMPS (LDL^T with pivoting).
  const UnsolvedSystem system;
  const PetscInt n = UnsolvedSystem::kRows;
  Mat matrix = system.matrix;
  Vec x = system.x;
  EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, "-pc_type"));
  Job job;
  LinearSystemKind kind;
  kind.global_dofs = static_cast<long long>(n) * world_size();
  kind.dynamic = true;
  kind.ranks = world_size();
  auto pc_type = [&] {
    const NewtonDriver driver(MPI_COMM_WORLD, job, "", matrix, x, NewtonProblem{}, kind, true);
    EXPECT_EQ(driver.preconditioner_name(), default_preconditioner_name(job.solver, kind));
    PC pc = nullptr;
    PCType type = nullptr;
    EDGEFEM_PETSC(KSPGetPC(driver.ksp(), &pc));
    EDGEFEM_PETSC(PCGetType(pc, &type));
    return std::string(type);
  };
  EXPECT_EQ(pc_type(), world_size() == 1 ? "cholesky" : "redundant");
  EXPECT_EQ(default_preconditioner_name(job.solver, kind),
            world_size() == 1 ? "Cholesky (PETSc, RCM)" : "Cholesky (PETSc, RCM, redundant on every rank)");
  kind.dynamic = false;
  EXPECT_EQ(pc_type(), "cholesky");
  EXPECT_EQ(default_preconditioner_name(job.solver, kind), "Cholesky (MUMPS)");
}

}  // namespace test_newton
}  // namespace edgefem
