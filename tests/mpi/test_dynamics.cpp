// SPDX-License-Identifier: BSD-3-Clause
// Implicit dynamics (solver/dynamic_solver), part 1: closed-form and discrete-exact answers (free fall), energy
// conservation and dissipation, Rayleigh damping rates, the Newton driver's limit on a solve with a kept
// preconditioner (hanging cloth) and the convergence target under backward Euler's predictor. Run under mpiexec
// with 1, 2 and 3 ranks (CTest: mpi.dynamics.npN); every assertion holds on every rank. The measured values are
// printed by rank 0 (one line per check, prefixed "dynamics:"). Serial == distributed and restarts:
// test_dynamics_restart.cpp.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>

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
#include "linalg/petsc_util.hpp"
#include "solver/dynamic_solver.hpp"
#include "tests/support/dynamics_testing.hpp"

namespace edgefem {
namespace test_dynamics {  // one per file: the distributed test files share unity batches

namespace fs = std::filesystem;

using namespace dynamics_testing;  // tests/support/dynamics_testing.hpp

// ---------------------------------------------------------------------------------------------------------
// 1. Free fall: exact discrete solutions.

class FreeFall : public ::testing::TestWithParam<std::string> {};

TEST_P(FreeFall, MatchesExactDiscreteSolution) {
  // "integrator" or "integrator/consistent": the P1 consistent mass matrix's rows sum to the lumped masses, so
  // a uniform acceleration solves M a = lumped gravity exactly and the same discrete solutions hold.
  const std::string param = GetParam();
  const std::string integrator = param.substr(0, param.find('/'));
  const std::string mass = param.find('/') == std::string::npos ? "lumped" : param.substr(param.find('/') + 1);
  const std::array<double, 3> g{0.3, -0.2, -1.0};
  const double dt = 0.1, density = 2.0;
  const int n_steps = 10;
  const Job job = job_from_yaml("free_fall_" + integrator + "_" + mass,
                                "mesh:\n"
                                "  generate: {shape: box, size: [1, 1, 1], cells: [2, 2, 2]}\n"
                                "materials:\n"
                                "  - {model: stvk, young: 100, poisson: 0.3, density: 2.0}\n"
                                "loads:\n"
                                "  gravity: [0.3, -0.2, -1.0]\n"
                                "analysis:\n"
                                "  type: dynamic\n"
                                "  dt: 0.1\n"
                                "  end_time: 1.0\n"
                                "  integrator: " +
                                    integrator +
                                    "\n"
                                    "  mass: " +
                                    mass + "\n" + tight_solver());
  // Backward Euler: v_n = n dt g, x_n = X + g dt^2 n (n + 1) / 2. Linearized Euler: the same (K(x_n) times a
  // uniform velocity is zero). Newmark (average acceleration): exact for constant acceleration.
  const bool newmark = integrator == "newmark";
  auto expected_displacement = [&](long long n) {
    return newmark ? 0.5 * dt * dt * static_cast<double>(n * n) : 0.5 * dt * dt * static_cast<double>(n * (n + 1));
  };
  double worst_x = 0, worst_v = 0, worst_kinetic = 0, worst_energy = 0;
  long long checked = 0;
  RunSpec spec;
  spec.on_step = [&](DynamicSolver& solver, const LocalMesh& mesh, long long step, double) {
    const std::vector<double> x = solver.local_positions();
    const std::vector<double> v = solver.local_velocities();
    const double s = expected_displacement(step);
    const double gnorm = std::hypot(g[0], g[1], g[2]);
    double ex = 0, ev = 0;
    for (LocalIndex k = 0; k < mesh.n_owned; ++k)
      for (int d = 0; d < 3; ++d) {
        const double X = mesh.mesh.coords[3 * k + d];
        ex = std::max(ex, std::abs(x[3 * k + d] - X - s * g[d]));
        ev = std::max(ev, std::abs(v[3 * k + d] - static_cast<double>(step) * dt * g[d]));
      }
    double local[2] = {ex, ev}, global[2];
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (step > 0) {
      worst_x = std::max(worst_x, global[0] / (s * gnorm));
      worst_v = std::max(worst_v, global[1] / (static_cast<double>(step) * dt * gnorm));
      // Kinetic energy of the whole body (mass = density * volume = 2): m |v|^2 / 2.
      const EnergyReport e = solver.energy();
      const double vn = static_cast<double>(step) * dt * gnorm;
      const double kinetic = 0.5 * density * vn * vn;
      worst_kinetic = std::max(worst_kinetic, std::abs(e.kinetic - kinetic) / kinetic);
      worst_energy = std::max(worst_energy, std::abs(e.total()) / kinetic);
    }
    ++checked;
  };
  const RunResult r = simulate(MPI_COMM_WORLD, job, spec);
  if (world_rank() == 0)
    std::printf(
        "dynamics: free fall %-16s (%d ranks, %lld states): max |x - x_exact| / |u| = %.2e, "
        "max |v - v_exact| / |v| = %.2e, kinetic energy rel. error %.2e, |total energy| / kinetic %.2e "
        "(%.2f s)\n",
        param.c_str(), world_size(), checked, worst_x, worst_v, worst_kinetic, worst_energy, r.seconds);
  EXPECT_EQ(checked, n_steps + 1);
  EXPECT_LT(worst_x, 1e-10) << integrator;
  EXPECT_LT(worst_v, 1e-10) << integrator;
  EXPECT_LT(worst_kinetic, 1e-10) << integrator;
  // Newmark conserves kinetic + strain - work of gravity exactly here (trapezoidal work of a constant force
  // is exact); the Euler schemes lose m |g dt|^2 / 2 per step (their numerical dissipation).
  if (newmark) {
    EXPECT_LT(worst_energy, 1e-10);
  } else {
    EXPECT_GT(worst_energy, 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Integrators, FreeFall,
                         ::testing::Values("backward-euler", "linearized-euler", "newmark", "backward-euler/consistent",
                                           "linearized-euler/consistent", "newmark/consistent"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           std::replace(s.begin(), s.end(), '/', '_');
                           return s;
                         });

// ---------------------------------------------------------------------------------------------------------
// 2 and 3. The vibrating cantilever 6 x 1 x 1, clamped at x = 0, released from a static tip deflection.

std::string cantilever_yaml(const std::string& integrator, double end_time, double alpha, double beta, double traction,
                            const std::string& model = "stvk") {
  char buffer[2048];
  std::snprintf(buffer, sizeof buffer,
                "mesh:\n"
                "  generate: {shape: box, size: [6, 1, 1], cells: [12, 2, 2]}\n"
                "materials:\n"
                "  - {model: %s, young: 1.0e4, poisson: 0.3, density: 1.0}\n"
                "boundary:\n"
                "  - select: {region: 11}\n"
                "    fix: [x, y, z]\n"
                "loads:\n"
                "  tractions:\n"
                "    - select: {region: 12}\n"
                "      traction: [0, 0, %.17g]\n"
                "      schedule: {table: [[0, 1], [1.0e-9, 0]]}\n"
                "analysis:\n"
                "  type: dynamic\n"
                "  steps: 1\n"
                "  dt: 0.05\n"
                "  end_time: %.17g\n"
                "  integrator: %s\n"
                "  damping: {mass: %.17g, stiffness: %.17g}\n"
                "  initial_state: static\n",
                model.c_str(), -traction, end_time, integrator.c_str(), alpha, beta);
  return std::string(buffer) + tight_solver();
}

const Probe tip_probe{{6.0, 0.5, 0.5}, 2};

/// Extrema of a sampled signal (interior local maxima of |u| with a sign change between them), refined by
/// the parabola through the three samples around each: (time, value).
std::vector<std::array<double, 2>> peaks(const std::vector<double>& t, const std::vector<double>& u) {
  std::vector<std::array<double, 2>> out;
  for (std::size_t i = 1; i + 1 < u.size(); ++i) {
    const bool is_max = u[i] > u[i - 1] && u[i] >= u[i + 1];
    const bool is_min = u[i] < u[i - 1] && u[i] <= u[i + 1];
    if (!is_max && !is_min) continue;
    const double c = u[i - 1] - 2 * u[i] + u[i + 1];
    const double h = t[i + 1] - t[i];
    const double s = c == 0 ? 0.0 : 0.5 * (u[i - 1] - u[i + 1]) / c;  // offset in steps, in [-1/2, 1/2]
    const double value = u[i] - 0.25 * (u[i - 1] - u[i + 1]) * s;
    // Keep only alternating extrema (a genuine half period), not wiggles of higher modes.
    if (!out.empty() && (value > 0) == (out.back()[1] > 0)) {
      if (std::abs(value) > std::abs(out.back()[1])) out.back() = {t[i] + s * h, value};
      continue;
    }
    out.push_back({t[i] + s * h, value});
  }
  return out;
}

/// Least-squares slope of log|value| against time over peaks[first..].
double log_decay_rate(const std::vector<std::array<double, 2>>& p, std::size_t first) {
  double st = 0, sy = 0, stt = 0, sty = 0, n = 0;
  for (std::size_t k = first; k < p.size(); ++k) {
    const double y = std::log(std::abs(p[k][1]));
    st += p[k][0], sy += y, stt += p[k][0] * p[k][0], sty += p[k][0] * y, n += 1;
  }
  return -(n * sty - st * sy) / (n * stt - st * st);
}

struct EnergyHistory {
  RunResult run;
  double e0 = 0;           ///< strain energy of the initial (static) state
  double drift = 0;        ///< max |total - total_0| / e0
  double max_kinetic = 0;  ///< / e0
  double tip0 = 0, tip_max = 0;
};

EnergyHistory energy_history(const std::string& name, const std::string& integrator, int n_steps, double traction,
                             const std::string& model) {
  RunSpec spec;
  spec.probe = tip_probe;
  EnergyHistory h;
  h.run = simulate(MPI_COMM_WORLD,
                   job_from_yaml(name, cantilever_yaml(integrator, 0.05 * n_steps, 0, 0, traction, model)), spec);
  const auto& e = h.run.energy;
  if (e.size() != static_cast<std::size_t>(n_steps + 1)) throw std::runtime_error(name + ": wrong number of states");
  h.e0 = e[0].strain;
  h.tip0 = h.run.probe[0];
  for (std::size_t n = 0; n < e.size(); ++n) {
    h.drift = std::max(h.drift, std::abs(e[n].total() - e[0].total()));
    h.max_kinetic = std::max(h.max_kinetic, e[n].kinetic);
    h.tip_max = std::max(h.tip_max, h.run.probe[n]);
  }
  h.drift /= h.e0;
  h.max_kinetic /= h.e0;
  return h;
}

TEST(Dynamics, NewmarkConservesEnergyBackwardEulerDissipates) {
  const int n_steps = 200;
  // Newmark (average acceleration) conserves kinetic + strain - external work exactly for a linear system (the
  // external work is the trapezoidal work of the load, which is what the scheme balances); what is left is
  // the Newton/KSP residual (rtol 1e-12, atol 1e-13) times the displacement per step, summed over 200 steps:
  // measured 6e-13 to 8e-13 of E0, asserted 1e-9. StVK is not linear, and average acceleration conserves its
  // energy only approximately, with an error that grows like the square of the amplitude: measured 7.7e-6 of
  // E0 at this amplitude (tip 0.053, asserted 2e-5) and a quarter of that (1.8e-6) at half the amplitude.
  const EnergyHistory linear = energy_history("energy_newmark_linear", "newmark", n_steps, 1.0, "linear");
  const EnergyHistory stvk = energy_history("energy_newmark", "newmark", n_steps, 1.0, "stvk");
  const EnergyHistory stvk_half = energy_history("energy_newmark_half", "newmark", n_steps, 0.5, "stvk");
  const EnergyHistory be = energy_history("energy_be", "backward-euler", n_steps, 1.0, "stvk");

  // The initial state: static equilibrium under the tip load, at rest; the load is gone for t > 1e-9.
  EXPECT_GT(stvk.e0, 0.0);
  EXPECT_EQ(stvk.run.energy[0].kinetic, 0.0);
  EXPECT_LT(stvk.tip0, -0.02);  // a visible but small (near-linear) deflection
  EXPECT_GT(stvk.tip0, -0.2);
  EXPECT_NEAR(be.e0, stvk.e0, 1e-12 * stvk.e0);
  EXPECT_NEAR(linear.tip0, stvk.tip0, 0.01 * std::abs(stvk.tip0));  // the same beam
  // Backward Euler: the mechanical energy (no load acts after t = 0) falls every step; the reported total
  // falls from step 2 on. In step 1 the trapezoidal work of the released load, (u1 - u0).T/2, equals the
  // step's dissipation (exactly for a linear system: the BE equation gives (u1 - u0).M v1 = -(u1 - u0).K u1
  // dt), so the total stays put there (measured +2.6e-7 E0, StVK).
  double min_mech_drop = 1e300, min_total_drop = 1e300;
  for (std::size_t n = 1; n < be.run.energy.size(); ++n) {
    const EnergyReport& a = be.run.energy[n - 1];
    const EnergyReport& b = be.run.energy[n];
    min_mech_drop = std::min(min_mech_drop, (a.kinetic + a.strain - b.kinetic - b.strain) / (a.kinetic + a.strain));
    if (n >= 2) min_total_drop = std::min(min_total_drop, (a.total() - b.total()) / (a.kinetic + a.strain));
  }
  const EnergyReport& last = be.run.energy.back();
  const double be_final = (last.kinetic + last.strain) / be.e0;
  const double be_step1 = (be.run.energy[1].total() - be.run.energy[0].total()) / be.e0;
  if (world_rank() == 0) {
    for (const auto* h : {&linear, &stvk, &stvk_half})
      std::printf(
          "dynamics: cantilever newmark %-6s (%d ranks): E0 = %.6e, tip %.5f, %d steps: tip max %.5f, max "
          "kinetic / E0 = %.4f, max |total - total_0| / E0 = %.3e (%.2f s)\n",
          h == &linear ? "linear" : "stvk", world_size(), h->e0, h->tip0, n_steps, h->tip_max, h->max_kinetic, h->drift,
          h->run.seconds);
    std::printf(
        "dynamics: cantilever backward-euler (%d ranks): smallest relative drop per step of kinetic+strain "
        "%.3e, of the total (steps >= 2) %.3e; total change in step 1 %+.3e E0; final (kinetic+strain)/E0 = "
        "%.4e (%.2f s)\n",
        world_size(), min_mech_drop, min_total_drop, be_step1, be_final, be.run.seconds);
  }
  for (const auto* h : {&linear, &stvk, &stvk_half}) {
    // It really oscillates: most of the energy becomes kinetic, the tip swings through to the other side.
    EXPECT_GT(h->max_kinetic, 0.9);
    EXPECT_GT(h->tip_max, -0.9 * h->tip0);
  }
  EXPECT_LT(linear.drift, 1e-9);
  EXPECT_LT(stvk.drift, 2e-5);
  EXPECT_LT(stvk_half.drift, 0.4 * stvk.drift);  // a nonlinear effect, not a numerical leak
  EXPECT_GT(min_mech_drop, 1e-3);
  EXPECT_GT(min_total_drop, 1e-3);
  EXPECT_LT(be_final, 0.02);
}

TEST(Dynamics, MassProportionalDampingDecaysAtHalfAlpha) {
  // Every mode of M a + alpha M v + K u = 0 decays like exp(-alpha t / 2): the tip amplitude envelope does.
  // Newmark adds no numerical damping of its own (NewmarkConservesEnergy...), so all of it is alpha's.
  const double alpha = 0.3, end_time = 8.0;
  RunSpec spec;
  spec.probe = tip_probe;
  const RunResult damped = simulate(MPI_COMM_WORLD,
                                    job_from_yaml("alpha", cantilever_yaml("newmark", end_time, alpha, 0, 1.0)), spec);
  const auto p = peaks(damped.times, damped.probe);
  ASSERT_GE(p.size(), 4u);
  const double rate = log_decay_rate(p, 0);
  // The energy at the displacement peaks (kinetic energy ~ 0 there) follows exp(-alpha t).
  double worst_energy = 0;
  for (const auto& peak : p) {
    const std::size_t n = static_cast<std::size_t>(std::lround(peak[0] / 0.05));
    const EnergyReport& e = damped.energy[n];
    const double ratio = (e.kinetic + e.strain) / damped.energy[0].strain;
    worst_energy = std::max(worst_energy, std::abs(ratio / std::exp(-alpha * damped.times[n]) - 1.0));
  }
  if (world_rank() == 0) {
    std::printf(
        "dynamics: mass damping alpha = %.3f (%d ranks): %zu peaks, envelope decay rate %.5f (expected "
        "alpha/2 = %.5f, error %+.2f %%); (kinetic+strain)/E0 at the peaks vs exp(-alpha t): worst ratio "
        "error %.2f %%; period %.4f\n",
        alpha, world_size(), p.size(), rate, alpha / 2, 100 * (rate / (alpha / 2) - 1), 100 * worst_energy,
        2 * (p.back()[0] - p.front()[0]) / static_cast<double>(p.size() - 1));
  }
  EXPECT_NEAR(rate / (alpha / 2), 1.0, 0.03);
  EXPECT_LT(worst_energy, 0.03);
}

TEST(Dynamics, StiffnessProportionalDampingMatchesBetaOmegaOverTwo) {
  // zeta = beta omega / 2 for the mode of frequency omega. Released from the static tip deflection the beam
  // swings mostly in its first bending mode (the higher modes die out faster, zeta grows with omega).
  const double beta = 0.01, end_time = 10.0;
  RunSpec spec;
  spec.probe = tip_probe;
  const RunResult r = simulate(MPI_COMM_WORLD,
                               job_from_yaml("beta", cantilever_yaml("newmark", end_time, 0, beta, 1.0)), spec);
  const auto p = peaks(r.times, r.probe);
  ASSERT_GE(p.size(), 6u);
  // Skip the first half period (higher-mode transient); period from the first to the last retained peak.
  const std::size_t first = 1;
  const double half_period = (p.back()[0] - p[first][0]) / static_cast<double>(p.size() - 1 - first);
  const double period = 2 * half_period;
  const double omega_d = 2 * std::numbers::pi / period;
  const double rate = log_decay_rate(p, first);  // zeta omega, measured
  // zeta omega = beta omega^2 / 2 with omega^2 = omega_d^2 + (zeta omega)^2.
  const double expected = beta * (omega_d * omega_d + rate * rate) / 2;
  // The peak ratio over one period: measured (geometric mean over the run) vs exp(-zeta omega T).
  const double measured_ratio = std::exp(-rate * period);
  const double expected_ratio = std::exp(-expected * period);
  // And peak by peak: |u| one period later over |u| now, for every pair of retained peaks.
  double worst_pair = 0;
  for (std::size_t k = first; k + 2 < p.size(); ++k)
    worst_pair = std::max(worst_pair, std::abs(std::abs(p[k + 2][1] / p[k][1]) / expected_ratio - 1));
  if (world_rank() == 0)
    std::printf(
        "dynamics: stiffness damping beta = %.4f (%d ranks): %zu peaks, period %.4f (omega %.4f), zeta "
        "%.5f; decay rate zeta*omega measured %.5f, expected beta*omega^2/2 = %.5f (error %+.2f %%); peak "
        "ratio per period %.4f vs exp(-zeta omega T) = %.4f, worst single pair of peaks off by %.2f %%\n",
        beta, world_size(), p.size(), period, omega_d, rate / omega_d, rate, expected, 100 * (rate / expected - 1),
        measured_ratio, expected_ratio, 100 * worst_pair);
  EXPECT_NEAR(rate / expected, 1.0, 0.05);
  EXPECT_NEAR(measured_ratio / expected_ratio, 1.0, 0.05);
  EXPECT_LT(worst_pair, 0.05);
}

// ---------------------------------------------------------------------------------------------------------
// 4. The Newton driver's limit on a solve with a kept preconditioner (solver/newton.hpp, iteration_limit).

/// Volino's hanging cloth on 16 x 16 squares (eigen-clamp), backward Euler with dt 0.01 until end_time; `solver` is
/// the job's whole solver section. Clears the PETSc options other tests may have left that would override the
/// defaults under test (the options database outlives a test).
Job hanging_cloth_job(const std::string& name, double end_time, const std::string& solver) {
  for (const char* option : {"-pc_type", "-sub_pc_type", "-ksp_type", "-ksp_rtol", "-ksp_atol"})
    EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, option));
  char analysis[128];
  std::snprintf(analysis, sizeof analysis,
                "analysis: {type: dynamic, dt: 0.01, end_time: %g, integrator: backward-euler}\n", end_time);
  return job_from_yaml(name,
                       "mesh:\n  generate: {shape: sheet, size: [1, 1], cells: [16, 16]}\n"
                       "materials:\n  - {model: volino, young: 1000.0, poisson: 0.0, thickness: 1.0, density: 0.2, "
                       "stabilization: eigen-clamp}\n"
                       "boundary:\n  - select: {region: 11}\n    fix: [x, y, z]\n"
                       "loads:\n  gravity: [0, 0, -9.81]\n" +
                           std::string(analysis) + "solver:\n" + solver);
}

TEST(Dynamics, KeptPreconditionerThatNoLongerSuitsIsRebuiltNotWaitedFor) {
  // A hanging cloth (Volino, eigen-clamp) swinging through its lowest point: the tangent changes so fast between
  // time steps that the Schwarz/ICC preconditioner kept from the last step needs up to 20 times the
  // iterations of a new one. The solve with the kept one stops at twice the cost of a rebuild and is redone with
  // a new one: the same trajectory as rebuilding at every iteration, no step cut.
  auto job = [](bool reuse) {
    return hanging_cloth_job(std::string("cloth_reuse_") + (reuse ? "on" : "off"), 0.5,
                             "  newton: {rtol: 1.0e-10, atol: 1.0e-12, max_it: 30}\n"
                             "  linear: {reuse: " +
                                 std::string(reuse ? "true" : "false") + "}\n");
  };
  const RunResult kept = simulate(MPI_COMM_WORLD, job(true));
  const RunResult fresh = simulate(MPI_COMM_WORLD, job(false));
  auto sum = [](const RunResult& r, auto field) {
    long long n = 0;
    for (const TimeStepReport& s : r.reports) n += field(s);
    return n;
  };
  const long long recoveries = sum(kept, [](const TimeStepReport& s) { return s.stats.pc_recoveries; });
  const long long cut = sum(kept, [](const TimeStepReport& s) { return s.substeps > 1; });
  const long long setups = sum(kept, [](const TimeStepReport& s) { return s.stats.pc_setups; });
  const long long newton = sum(kept, [](const TimeStepReport& s) { return s.newton_iterations; });
  double scale = 0;
  for (std::size_t i = 0; i < kept.position.size(); ++i)
    scale = std::max(scale, std::abs(kept.position[i] - kept.reference[i]));
  const double d = relative_difference(kept.position, fresh.position, scale);
  if (world_rank() == 0)
    std::printf(
        "dynamics: hanging cloth 16 x 16, 50 steps (%d ranks): kept preconditioner stopped and rebuilt %lld times "
        "(%lld set-ups, %lld Newton iterations), %lld steps cut; max |x_kept - x_rebuilt| / max |u| = %.2e\n",
        world_size(), recoveries, setups, newton, cut, d);
  ASSERT_EQ(kept.reports.size(), 50u);
  EXPECT_GE(recoveries, 1);
  EXPECT_EQ(cut, 0);
  EXPECT_LT(setups, newton / 2);
  EXPECT_LT(d, 1e-7);
}

// ---------------------------------------------------------------------------------------------------------
// 5. The backward-Euler predictor (solver.newton.predictor) does not make the convergence test stricter.

TEST(Dynamics, ExtrapolatedPredictorKeepsTheIntegratorsConvergenceTarget) {
  // Backward Euler with `extrapolate` starts Newton at x_n + h v_n + h^2 dv/dt, closer to the answer than the
  // integrator's own x_n + h v_n. rtol must still refer to |R| at x_n + h v_n (what `none` uses, and what rtol
  // meant before the predictor existed): every step's target is the same with both, up to the few-digit
  // difference of the two trajectories (each converged to rtol 1e-10). Referring rtol to the better first
  // iterate instead made them up to 5 times smaller here, Newton iterations spent on accuracy nobody asked for.
  auto job = [](const char* predictor) {
    return hanging_cloth_job(std::string("cloth_predictor_") + predictor, 0.2,
                             "  newton: {rtol: 1.0e-10, atol: 1.0e-14, max_it: 30, predictor: " +
                                 std::string(predictor) + "}\n");
  };
  const RunResult extrapolated = simulate(MPI_COMM_WORLD, job("extrapolate"));
  const RunResult plain = simulate(MPI_COMM_WORLD, job("none"));
  ASSERT_EQ(extrapolated.reports.size(), 20u);
  ASSERT_EQ(plain.reports.size(), 20u);
  double worst = 0.0;
  long long its_extrapolated = 0, its_plain = 0;
  for (std::size_t i = 0; i < 20; ++i) {
    const double a = extrapolated.reports[i].newton_target, b = plain.reports[i].newton_target;
    ASSERT_GT(b, 1e-14) << "step " << i + 1 << ": the target is atol's, the test needs rtol's";
    worst = std::max(worst, std::abs(a / b - 1.0));
    its_extrapolated += extrapolated.reports[i].newton_iterations;
    its_plain += plain.reports[i].newton_iterations;
  }
  if (world_rank() == 0)
    std::printf(
        "dynamics: hanging cloth 16 x 16, 20 backward-Euler steps (%d ranks): Newton target extrapolate / none "
        "differs by at most %.2e; Newton iterations %lld (extrapolate) vs %lld (none)\n",
        world_size(), worst, its_extrapolated, its_plain);
  EXPECT_LT(worst, 1e-3);
  EXPECT_LE(its_extrapolated, its_plain);
}

// ---------------------------------------------------------------------------------------------------------
// 6. Membranes' incomplete factorizations work on the BAIJ copy (solver.linear.block_operator, linear_solver.cpp).

/// Two runs of one job, with the BAIJ copy factorized and without: iteration totals and the positions' difference.
struct BlocksVersusMatrix {
  long long newton_baij = 0, newton_aij = 0, krylov_baij = 0, krylov_aij = 0;
  double scale = 0;       ///< max |u| of the AIJ run
  double difference = 0;  ///< max |x_baij - x_aij| / scale
};

BlocksVersusMatrix compare_runs(const char* what, const RunResult& baij, const RunResult& aij) {
  BlocksVersusMatrix c;
  for (const TimeStepReport& s : baij.reports)
    c.newton_baij += s.newton_iterations, c.krylov_baij += s.stats.ksp_iterations;
  for (const TimeStepReport& s : aij.reports)
    c.newton_aij += s.newton_iterations, c.krylov_aij += s.stats.ksp_iterations;
  for (std::size_t i = 0; i < aij.position.size(); ++i)
    c.scale = std::max(c.scale, std::abs(aij.position[i] - aij.reference[i]));
  c.difference = relative_difference(baij.position, aij.position, c.scale);
  if (world_rank() == 0)
    std::printf(
        "dynamics: %s (%d ranks): %s %lld Newton / %lld Krylov iterations, %s %lld / %lld; max |x_baij - "
        "x_aij| / max |u| = %.2e (max |u| %.3f)\n",
        what, world_size(), baij.preconditioner.c_str(), c.newton_baij, c.krylov_baij, aij.preconditioner.c_str(),
        c.newton_aij, c.krylov_aij, c.difference, c.scale);
  return c;
}

TEST(Dynamics, MembranesBlockIluOfTheBaijCopyRepeatsIccOfTheMatrix) {
  // Schwarz/ICC(2) (ICC(2) itself on one rank) factorizes a BAIJ copy of the matrix by default: ILU(2) on 3x3
  // blocks. For a symmetric matrix that is ICC(2)'s factorization in exact arithmetic (the same level-2 pattern, a
  // vertex's unknowns coupled whole), so the run must repeat the AIJ matrix's ICC(2) run: the same Newton and
  // Krylov iterations up to round-off and the same trajectory within the Newton tolerance's effect. A wrong block
  // copy or another fill pattern changes the iterations.
  auto run = [](bool blocks) {
    return simulate(MPI_COMM_WORLD, hanging_cloth_job(std::string("cloth_blocks_") + (blocks ? "on" : "off"), 0.3,
                                                      "  newton: {rtol: 1.0e-10, atol: 1.0e-12, max_it: 30}\n"
                                                      "  linear: {block_operator: " +
                                                          std::string(blocks ? "true" : "false") + "}\n"));
  };
  const RunResult baij = run(true);
  const RunResult aij = run(false);
  const BlocksVersusMatrix c = compare_runs("hanging cloth 16 x 16, 30 steps", baij, aij);
  const std::string schwarz = world_size() == 1 ? "" : "additive Schwarz/";
  EXPECT_EQ(baij.preconditioner, schwarz + "ILU(2) on 3x3 blocks");
  EXPECT_EQ(aij.preconditioner, schwarz + "ICC(2)");
  ASSERT_EQ(baij.reports.size(), 30u);
  ASSERT_EQ(aij.reports.size(), 30u);
  EXPECT_NEAR(static_cast<double>(c.newton_baij), static_cast<double>(c.newton_aij), 2.0);
  EXPECT_NEAR(static_cast<double>(c.krylov_baij) / static_cast<double>(c.krylov_aij), 1.0, 0.02);
  EXPECT_LT(c.difference, 1e-7);
}

TEST(Dynamics, SmallSolidsLuOfTheBaijCopyRepeatsCholeskyOfTheMatrix) {
  // A small solid's time-step matrix is factorized whole (PETSc's Cholesky in RCM order, gathered on every rank on
  // several); by default LU of the BAIJ copy's 3x3 blocks inside PCREDUNDANT (on one rank too). Both are exact
  // factorizations of the same matrix: the same CG iterations up to round-off, the same trajectory within the Newton
  // tolerance's effect. A swinging beam under gravity, clamped at x = 0, backward Euler, 20 steps.
  auto run = [](bool blocks) {
    for (const char* option : {"-pc_type", "-redundant_pc_type", "-ksp_type", "-ksp_rtol", "-ksp_atol"})
      EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, option));
    return simulate(MPI_COMM_WORLD,
                    job_from_yaml(std::string("beam_blocks_") + (blocks ? "on" : "off"),
                                  "mesh:\n  generate: {shape: box, size: [4, 1, 1], cells: [8, 2, 2]}\n"
                                  "materials:\n  - {model: stvk, young: 1.0e4, poisson: 0.3, density: 1.0}\n"
                                  "boundary:\n  - select: {region: 11}\n    fix: [x, y, z]\n"
                                  "loads:\n  gravity: [0, 0, -9.81]\n"
                                  "analysis: {type: dynamic, dt: 0.05, end_time: 1.0, integrator: backward-euler}\n"
                                  "solver:\n  newton: {rtol: 1.0e-10, atol: 1.0e-12, max_it: 30}\n"
                                  "  linear: {block_operator: " +
                                      std::string(blocks ? "true" : "false") + "}\n"));
  };
  const RunResult baij = run(true);
  const RunResult aij = run(false);
  const BlocksVersusMatrix c = compare_runs("swinging beam 8 x 2 x 2, 20 steps", baij, aij);
  const std::string several = world_size() == 1 ? "" : ", redundant on every rank";
  EXPECT_EQ(baij.preconditioner, "LU (PETSc, RCM, 3x3 blocks" + several + ")");
  EXPECT_EQ(aij.preconditioner, "Cholesky (PETSc, RCM" + several + ")");
  ASSERT_EQ(baij.reports.size(), 20u);
  ASSERT_EQ(aij.reports.size(), 20u);
  EXPECT_GT(c.scale, 0.1);  // the beam swings visibly
  EXPECT_EQ(c.newton_baij, c.newton_aij);
  EXPECT_NEAR(static_cast<double>(c.krylov_baij) / static_cast<double>(c.krylov_aij), 1.0, 0.02);
  EXPECT_LT(c.difference, 1e-8);
}

}  // namespace test_dynamics
}  // namespace edgefem
