// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file newton.hpp
/// The one Newton driver: static load steps, the static initial state of dynamics and every implicit time step
/// solve R(x) = 0 through it, and linearized Euler's one linear solve per step goes through its linear solver.
/// It owns the solution strategy (docs/theory/solver.md; job keys `solver.newton` and `solver.linear`):
///  - inexact Newton: Eisenstat–Walker forcing terms (PETSc's, with our bounds) or a fixed KSP tolerance;
///  - preconditioner reuse: the preconditioner is kept across Newton iterations, load and time steps, and rebuilt
///    when the extra KSP time it costs exceeds a fraction of a set-up, when a solve fails with it (a solve with a
///    kept one stops at twice the cost of a new one), or on request (the policy; the set-ups themselves are the
///    preconditioner's: edgefem_gamg, linalg/edgefem_gamg.hpp, rebuilds its coarse operators cheaply when asked);
///  - a step rule (full step with a critical-point fallback by default);
///  - convergence: |R| <= max(atol, rtol |R_ref|, the round-off floor |J d|, d twice the rms rounding of the positions),
///    or stagnation (|R| falling by less than half) within ten times that floor, or a relative step below 1e-14
///    (PETSc's stol);
///  - CG on indefinite systems switches to GMRES for that solve (for good after the third time); a failed solve is
///    reported, the caller cuts its step.
/// The caller supplies the residual and the Jacobian (assembled every iteration: it is cheap) and the first
/// iterate (its predictor). Extrapolator and advance() are the pieces the load-stepping callers share.
#include <mpi.h>
#include <petscsnes.h>

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "linalg/petsc_util.hpp"
#include "solver/assembly_times.hpp"
#include "solver/linear_solver.hpp"

namespace edgefem {

/// Counts and times of Newton solves: counts identical on every rank, times this rank's clock (the phases are
/// collective, so they differ by the waits in them).
struct NewtonStats {
  int newton_iterations = 0;
  int ksp_iterations = 0;
  int pc_setups = 0;
  int pc_recoveries = 0;  ///< linear solves that failed with a reused preconditioner and were redone with a new one
  int residual_evaluations = 0;
  double seconds_assembly = 0.0;  ///< residuals and Jacobians (kernels + hand-over to PETSc)
  AssemblyTimes assembly_parts;   ///< this rank's split of seconds_assembly (the rest: the solver's vector work)
  double seconds_pc_setup = 0.0;  ///< preconditioner set-ups
  double seconds = 0.0;           ///< wall time of the solves in all (the rest is KSP and vector work)
  NewtonStats& operator+=(const NewtonStats& o);
  [[nodiscard]] NewtonStats operator-(const NewtonStats& o) const;
};

/// Outcome of one solve.
struct NewtonResult {
  bool converged = false;
  std::string why;        ///< the failure, for messages
  double residual = 0.0;  ///< |R| of the last iterate
  double target = 0.0;    ///< the |R| it had to reach: max(atol, rtol x the reference |R|, the round-off floor)
  NewtonStats stats;      ///< this solve's share
};

/// The nonlinear system: r := R(x) and P := dR/dx (x: a vector of the assembler's layout).
struct NewtonProblem {
  std::function<void(Vec x, Vec r)> residual;
  std::function<void(Vec x, Mat P)> jacobian;
  /// Rows of the Jacobian that are rows of the identity (prescribed dofs), as indices into this rank's owned
  /// entries. Their columns are zeroed too (a symmetric matrix for CG), so an inexact linear solve that left an
  /// error there would move the prescribed values and put K_fc times that error into the next residual: the
  /// driver sets these entries of every step exactly (to the residual's own, the identity's solution).
  std::vector<PetscInt> identity_rows;
  /// Optional: each owned vertex's rotation from the reference to the positions of the last Jacobian (9 per vertex,
  /// row-major); edgefem_gamg's rebuild of its coarse operators then rotates the finest interpolation's rows by them.
  std::function<std::vector<double>()> vertex_rotations;
  /// Optional (contact, solver/contact.hpp): the largest fraction in (0, 1] of the step x -> x - y that keeps every
  /// vertex off every obstacle, the same on every rank (collective). The line search's pre-check scales the step by
  /// it before any line search (full or PETSc's) looks at it, so no iterate ever reaches an obstacle.
  std::function<double(Vec x, Vec y)> step_limit;
  /// Optional (self-contact, solver/self_contact.hpp): out += C in, the Jacobian's couplings that are not in the
  /// matrix's pattern (collective). The Krylov method then multiplies by matrix + C (a shell operator).
  std::function<void(Vec in, Vec out)> extra_multiply;
  /// Optional, with extra_multiply: adds the entries of the same C to P (MatSetValues with ADD_VALUES, global
  /// indices, any rank's rows; no assembly). Then the preconditioner is built from matrix + C (a copy with the
  /// larger pattern, made at each preconditioner set-up), not from the matrix alone; not under (edgefem_)gamg,
  /// whose rebuilds keep the matrix's pattern.
  std::function<void(Mat P)> extra_couplings;
};

/// The linear tolerance of a Newton iteration under `forcing: eisenstat-walker` (docs/theory/solver.md "Inexact
/// Newton"): `eta_max` at the first iteration (`previous_norm` <= 0), else Eisenstat and Walker's choice 2,
/// 0.9 (|R_k| / |R_k-1|)^2, with their safeguard 0.9 eta_{k-1}^2 when that exceeds 0.1, at most `eta_max`; then
/// never tighter than the Newton target needs (0.1 target / |R_k|, up to 0.5: eta |R_k| is the linear part of the
/// next residual, so that leaves it a tenth of the target, and such a last solve may be looser than `eta_max`)
/// nor than `solver.linear.rtol`.
double forcing_term(const SolverSpec& spec, double last_norm, double previous_norm, double previous_eta, double target);

/// Whether the CG solve of a Newton iteration with linear tolerance `eta` at |R_k| = `last_norm` stops on the true
/// residual |b - A x| instead of the preconditioned one: when it is meant to end the load step, i.e. its linear
/// part eta |R_k| of the next residual lies at or below the Newton target (docs/theory/solver.md, "Inexact Newton").
[[nodiscard]] inline bool stops_on_true_residual(double eta, double last_norm, double target) {
  return last_norm > 0.0 && eta * last_norm <= target;
}

class NewtonDriver {
 public:
  /// Creates SNES/KSP on `matrix` with our defaults, then the job's PETSc options, then the command line's (which
  /// win). `layout`: any vector of the system's layout. Collective.
  NewtonDriver(MPI_Comm comm, const Job& job, const std::string& cli_petsc_options, Mat matrix, Vec layout,
               NewtonProblem problem, const LinearSystemKind& kind, bool quiet);
  ~NewtonDriver();
  NewtonDriver(const NewtonDriver&) = delete;
  NewtonDriver& operator=(const NewtonDriver&) = delete;

  /// Solve R(x) = 0 from the first iterate in x; on return x holds the solution (or the last iterate). `label`
  /// starts each monitor line; `reference_norm` (< 0: |R(x)| at entry) is what rtol is relative to. A linear solve
  /// that fails with a reused preconditioner is retried with a new one (not a failure). Collective.
  NewtonResult solve(Vec x, const std::string& label, double reference_norm = -1.0);
  /// Solve matrix * y = b for a matrix the caller has assembled (y: the initial guess), with the same
  /// preconditioner policy and the linear tolerance `rtol` (< 0: `solver.linear.rtol`). Collective.
  NewtonResult solve_linear(Vec b, Vec y, const std::string& label, double rtol = -1.0);
  /// |R(x)| (one residual evaluation). Collective.
  double residual_norm(Vec x);
  /// The next Jacobian gets a new preconditioner, and the driver forgets the runs of new ones at solve starts (a
  /// run restarted from a checkpoint starts without them: both then repeat the same arithmetic).
  void rebuild_preconditioner() {
    force_rebuild_ = true;
    fresh_starts_ = 0;
    fresh_start_run_ = 0;
  }

  [[nodiscard]] const NewtonStats& stats() const { return stats_; }
  [[nodiscard]] SNES snes() const { return snes_; }
  [[nodiscard]] KSP ksp() const;
  /// The preconditioner the linear solves use, for the run's summary: default_preconditioner_name()'s when the KSP
  /// has the type the defaults chose, else PETSc's name of the type a `-pc_type` in the job or on the command line
  /// gave (e.g. "ml (-pc_type)").
  [[nodiscard]] std::string preconditioner_name() const;
  /// Bytes of the BAIJ copy of the matrix the Krylov method multiplies with (0 without one).
  [[nodiscard]] std::size_t operator_bytes() const { return linear_.block ? linear_.block->bytes() : 0; }

 private:
  static PetscErrorCode form_function(SNES, Vec x, Vec r, void* ctx);
  static PetscErrorCode form_jacobian(SNES, Vec x, Mat J, Mat P, void* ctx);
  /// The shell operator's product with problem_.extra_multiply: y = krylov(matrix) x + C x.
  static PetscErrorCode shell_multiply(Mat A, Vec x, Vec y);
  /// The Krylov method's operator: the shell with extra_multiply, else linear_.krylov(matrix_).
  [[nodiscard]] Mat krylov_operator() const { return shell_ ? shell_.get() : linear_.krylov(matrix_); }
  /// The matrix the preconditioner is built from: matrix + C (coupled_) with problem_.extra_couplings, else the
  /// matrix (or its BAIJ copy).
  [[nodiscard]] Mat preconditioner_matrix() const {
    return coupled_ ? coupled_.get() : linear_.preconditioner(matrix_);
  }
  /// coupled_ := linear_.preconditioner(matrix_) + C, C from problem_.extra_couplings (its pattern found by a
  /// MATPREALLOCATOR pass). Collective.
  void build_coupled_preconditioner();
  static PetscErrorCode monitor(SNES, PetscInt it, PetscReal norm, void* ctx);
  static PetscErrorCode converged(SNES, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                  SNESConvergedReason* reason, void* ctx);
  static PetscErrorCode full_step(SNESLineSearch ls, void* ctx);
  /// full_step after a stagnation: lambda moved towards the root of the energy's slope along the step.
  template <class Evaluate>
  PetscErrorCode slope_root(double& lambda, PetscScalar s0, PetscScalar s1, PetscReal& gnorm, Evaluate& evaluate);
  static constexpr int kSlopeSearches = 6;  ///< residual evaluations of slope_root at most
  static constexpr double kShortest = 0.1;  ///< and its shortest step, a fraction of the finite step (as full_step's secant's)
  /// Line-search pre-check: the step's identity rows set exactly from the residual; then, with a step limit
  /// (contact), the step scaled to it.
  static PetscErrorCode pre_check(SNESLineSearch ls, Vec x, Vec y, PetscBool* changed, void* ctx);
  /// Decide (before a linear solve) whether the preconditioner is rebuilt; if so set it up now (timed).
  void prepare_preconditioner();
  /// A set-up's cost in iterations of the current preconditioner type (a fixed table; see newton.cpp).
  [[nodiscard]] double setup_cost_in_iterations() const;
  /// The residual norm the current solve stops at: max(atol, rtol |R_ref|, the round-off floor).
  [[nodiscard]] double target() const { return std::max({atol_, rtol_ * std::max(reference_norm_, 0.0), floor_}); }
  /// The KSP tolerance of the coming linear solve (the forcing term).
  void apply_forcing();
  /// The coming solve's KSP iteration limit: with a reused preconditioner twice what a new one would cost (its
  /// fresh rate for `rtol`'s decades plus a set-up), so a solve the old preconditioner no longer suits stops early
  /// and is redone with a new one (at most twice the cost of having rebuilt at once); else the KSP's own limit.
  [[nodiscard]] PetscInt iteration_limit(double rtol) const;
  /// After a linear solve: count its iterations, learn the fresh preconditioner's rate (and largest eigenvalue).
  void record_linear_solve();
  /// The last solve's largest eigenvalue estimate exceeds rebuild_eigenvalue times the fresh one's: the hierarchy's
  /// coarse operators no longer match the fine one (solver.md, "Preconditioner reuse"). Checked at a solve's start.
  [[nodiscard]] bool stale_hierarchy() const;
  /// |J d| with d_i = 2 eps |x_i| / sqrt(12) (signs pseudo-random): twice the rms residual of rounding the positions
  /// to doubles (the residual's evaluation adds round-off of its own).
  double roundoff_floor(Mat J, Vec x);
  /// CG met an indefinite operator or preconditioner: switch to GMRES (warning); true if it did. GMRES holds for
  /// the rest of this solve; the next solve starts with CG again (restore_cg), unless CG has met indefinite systems
  /// kGmresForGood times in the run: then GMRES stays.
  bool switch_to_gmres_if_indefinite();
  /// At the start of a solve: back to CG after a fallback to GMRES (see above).
  void restore_cg();
  static constexpr int kGmresForGood = 3;

  MPI_Comm comm_;
  std::string default_pc_name_;  ///< default_preconditioner_name() for this driver's spec and kind
  const Job& job_;
  SolverSpec spec_;
  NewtonProblem problem_;
  bool quiet_;
  Mat matrix_;
  /// The preconditioner's type our defaults chose, and the BAIJ copy of matrix_ if the Krylov method multiplies with
  /// it (multigrid) or the preconditioner factorizes it (block Jacobi, Schwarz).
  LinearOperators linear_;
  PetscOwner<Mat, MatDestroy> shell_;  ///< with problem_.extra_multiply
  PetscOwner<Mat, MatDestroy> coupled_;  ///< with problem_.extra_couplings: matrix + C, the preconditioner's matrix
  PetscOwner<SNES, SNESDestroy> snes_;
  PetscOwner<Vec, VecDestroy> r_, work_;
  bool own_lag_ = true;         ///< false when -snes_lag_preconditioner is given (PETSc's lag then rules)
  bool own_norm_ = true;        ///< false when -ksp_norm_type is given
  bool petsc_forcing_ = false;  ///< -snes_ksp_ew given: PETSc's Eisenstat-Walker instead of ours
  double eta_ = 0.0;            ///< the last forcing term
  PetscInt max_it_ = 10000;     ///< the KSP's own iteration limit (PETSc's default or -ksp_max_it)
  // Preconditioner reuse.
  bool pc_ready_ = false, force_rebuild_ = true, rebuilt_now_ = false, reused_in_solve_ = false;
  bool gmres_fallback_ = false;     ///< this solve switched CG to GMRES
  int indefinite_solves_ = 0;       ///< solves in which CG met an indefinite system
  double fresh_rate_ = -1.0;        ///< KSP iterations per decade of residual reduction right after a set-up
  double excess_iterations_ = 0.0;  ///< the last solve's KSP iterations beyond the fresh rate's
  // The stale-hierarchy rule (solver.linear.rebuild_eigenvalue): CG's estimates of the preconditioned operator's
  // largest eigenvalue.
  bool estimate_eigenvalue_ = false;  ///< CG computes them (GAMG under CG, our lag, the rule on)
  double fresh_emax_ = -1.0;          ///< in the first solve after the last set-up (-1: none yet)
  double last_emax_ = -1.0;           ///< in the last solve
  // A preconditioner kept from the last step that failed at the next step's first iteration (hanging cloth: the
  // tangent changes fast between time steps) is rebuilt at the start of the following solves, for a run of them
  // that doubles each time the old one fails again at a start (and is forgotten when it serves a start).
  int fresh_starts_ = 0;       ///< solves still to start with a new preconditioner
  int fresh_start_run_ = 0;    ///< the length of the last run of them
  bool at_start_ = false;      ///< the coming linear solve is the solve's first
  bool start_reused_ = false;  ///< the solve's first linear solve reused the preconditioner
  // The current solve.
  std::string label_;
  double reference_norm_ = 0.0, floor_ = 0.0, last_norm_ = 0.0, previous_norm_ = 0.0, atol_ = 0.0, rtol_ = 0.0;
  bool need_floor_ = true;
  double iteration_start_ = 0.0;
  double step_fraction_ = 1.0;  ///< the last pre-check's step limit (1: not limited)
  double step_lambda_ = 1.0;    ///< the last line search's step length (1: the full step)
  // Stagnation: no halving of the best residual norm in kStagnation iterations turns on the line search's
  // search for the slope's root (full_step, damped_) for the rest of the solve.
  static constexpr int kStagnation = 4;
  double best_norm_ = 0.0;
  PetscInt best_iteration_ = 0;
  bool damped_ = false;
  NewtonStats stats_;
  PetscLogStage stage_assembly_ = 0, stage_solve_ = 0;
};

/// The predictor of load stepping: extrapolation of the last converged states x(s_k), x(s_k-1), ... to s by the
/// polynomial through them: the secant with two states, the parabola through three (order 2). Both are exact for
/// a linear response to a linear ramp; the parabola also follows the curvature of a bending path (its second
/// step starts 10-100 times closer than the secant's on the cantilever).
///
/// With two states only, a slope dx/ds at the older one (the first step's tangent predictor, set_slope) gives a
/// second candidate for order 2: the parabola through both states with that slope (predict_with_slope). The tangent
/// solve is inexact (Newton's first forcing term), so the secant stays exact for a linear response and the caller
/// keeps whichever candidate has the smaller residual.
class Extrapolator {
 public:
  explicit Extrapolator(Vec layout, int order = 2);
  void reset() { count_ = 0, slope_set_ = false; }
  /// True once two states are known (predict() extrapolates).
  [[nodiscard]] bool ready() const { return count_ >= 2; }
  /// Record a converged state at parameter s.
  void accept(Vec x, double s);
  /// x := the extrapolation to s; false (x untouched) before two states are known.
  bool predict(double s, Vec x) const;
  /// With exactly one state known (x(s_0)): record dx/ds there as dx / (s - s_0), dx the step a tangent predictor
  /// took from x(s_0) toward s.
  void set_slope(Vec dx, double s);
  /// True when predict_with_slope applies: order 2, exactly two states, and a slope recorded at the older one.
  [[nodiscard]] bool has_slope() const;
  /// x := the parabola through x(s_0) and x(s_1) with the recorded slope at s_0, evaluated at s; false (x untouched)
  /// unless has_slope().
  bool predict_with_slope(double s, Vec x) const;

 private:
  std::array<PetscOwner<Vec, VecDestroy>, 3> states_;  ///< newest first
  std::array<double, 3> s_{};
  int order_ = 1;
  int count_ = 0;
  PetscOwner<Vec, VecDestroy> slope_;  ///< dx/ds at slope_s_ (set_slope; made by its first call)
  double slope_s_ = 0.0;
  bool slope_set_ = false;
};

/// A first iterate free of penetration (contact, solver/contact.hpp): `carry` moves the step's start (the converged
/// state with the prescribed values at s) out of the obstacles' way, `limit` pulls a prediction back toward that start
/// where it would cross an obstacle.
struct FeasibleStart {
  std::function<void(Vec x)> carry;
  std::function<void(Vec start, Vec x)> limit;
};

/// One load (sub)step to parameter s from the converged state in x. With `use_predictor`: the extrapolation when
/// `predictor` is ready, else `tangent` (when given: x moved by one linear solve with the load and prescribed
/// increments, the latter lifted into the free rows); rtol then refers to |R| at the unpredicted start (the last
/// state with the prescribed values at s). Then the Newton solve and on success the exact prescribed values and
/// the state recorded in the predictor. On failure x is restored (from `saved`) and `why` set. With `feasible`
/// (contact): the start carried, and every prediction limited, before it is used.
bool solve_load_step(NewtonDriver& newton, Extrapolator& predictor, bool use_predictor, Vec x, Vec saved, double s,
                     const std::function<void(Vec x, double s)>& set_prescribed,
                     const std::function<void(Vec x, double s)>& tangent, const std::string& label, std::string& why,
                     const FeasibleStart* feasible = nullptr);

/// How many times in a row a load step's increment may be halved before the step fails (static tets, frames).
inline constexpr int kMaxLoadStepCuts = 6;

/// Advance a parameter (load factor, time) from `from` to `to`: attempt(a, b, why) solves from the converged state
/// at a to b and returns false (its state restored to a, `why` set) when it fails; a failure halves the increment,
/// at most `max_cuts` times in a row before advance() returns false. on_cut(a, new increment, why) reports a cut.
/// Returns the number of increments taken (0 on failure).
int advance(double from, double to, int max_cuts,
            const std::function<bool(double a, double b, std::string& why)>& attempt,
            const std::function<void(double a, double increment, const std::string& why)>& on_cut);

}  // namespace edgefem
