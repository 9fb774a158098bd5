// SPDX-License-Identifier: BSD-3-Clause
#include "solver/newton.hpp"

#include <petscksp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/setup_laps.hpp"
#include "linalg/edgefem_gamg.hpp"

namespace edgefem {
namespace {

double wall() { return MPI_Wtime(); }

/// A reproducible +-1 per global dof (splitmix64 of the index).
double pseudo_sign(std::uint64_t i) {
  std::uint64_t z = i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (z & 1U) ? 1.0 : -1.0;
}

/// Decades of residual reduction a linear tolerance asks for (at least one): rates per decade compare solves.
double decades(double rtol) { return std::max(1.0, -std::log10(std::max(rtol, 1e-300))); }

}  // namespace

NewtonStats& NewtonStats::operator+=(const NewtonStats& o) {
  newton_iterations += o.newton_iterations;
  ksp_iterations += o.ksp_iterations;
  pc_setups += o.pc_setups;
  pc_recoveries += o.pc_recoveries;
  residual_evaluations += o.residual_evaluations;
  seconds_assembly += o.seconds_assembly;
  assembly_parts += o.assembly_parts;
  seconds_pc_setup += o.seconds_pc_setup;
  seconds += o.seconds;
  return *this;
}

NewtonStats NewtonStats::operator-(const NewtonStats& o) const {
  NewtonStats d = *this;
  d.newton_iterations -= o.newton_iterations;
  d.ksp_iterations -= o.ksp_iterations;
  d.pc_setups -= o.pc_setups;
  d.pc_recoveries -= o.pc_recoveries;
  d.residual_evaluations -= o.residual_evaluations;
  d.seconds_assembly -= o.seconds_assembly;
  d.assembly_parts = assembly_parts - o.assembly_parts;
  d.seconds_pc_setup -= o.seconds_pc_setup;
  d.seconds -= o.seconds;
  return d;
}

NewtonDriver::NewtonDriver(MPI_Comm comm, const Job& job, const std::string& cli_petsc_options, Mat matrix, Vec layout,
                           NewtonProblem problem, const LinearSystemKind& kind, bool quiet)
    : comm_(comm), job_(job), spec_(job.solver), problem_(std::move(problem)), quiet_(quiet), matrix_(matrix) {
  stage_assembly_ = log_stage("Assembly");
  stage_solve_ = log_stage("Solve");
  EDGEFEM_PETSC(VecDuplicate(layout, r_.address()));
  EDGEFEM_PETSC(VecDuplicate(layout, work_.address()));
  EDGEFEM_PETSC(SNESCreate(comm_, snes_.address()));
  EDGEFEM_PETSC(SNESSetType(snes_, SNESNEWTONLS));
  EDGEFEM_PETSC(SNESSetFunction(snes_, r_, &NewtonDriver::form_function, this));
  EDGEFEM_PETSC(SNESSetJacobian(snes_, matrix, matrix, &NewtonDriver::form_jacobian, this));
  EDGEFEM_PETSC(SNESMonitorSet(snes_, &NewtonDriver::monitor, this, nullptr));
  EDGEFEM_PETSC(SNESSetConvergenceTest(snes_, &NewtonDriver::converged, this, nullptr));
  EDGEFEM_PETSC(SNESSetTolerances(snes_, job.newton_atol, job.newton_rtol, 1e-14, job.newton_max_it, -1));
  {
    SNESLineSearch line_search = nullptr;
    EDGEFEM_PETSC(SNESGetLineSearch(snes_, &line_search));
    switch (spec_.line_search) {
      case SolverSpec::LineSearch::full:
        EDGEFEM_PETSC(SNESLineSearchSetType(line_search, SNESLINESEARCHSHELL));
        EDGEFEM_PETSC(SNESLineSearchShellSetUserFunc(line_search, &NewtonDriver::full_step, this));
        break;
      case SolverSpec::LineSearch::cp: EDGEFEM_PETSC(SNESLineSearchSetType(line_search, SNESLINESEARCHCP)); break;
      case SolverSpec::LineSearch::bt: EDGEFEM_PETSC(SNESLineSearchSetType(line_search, SNESLINESEARCHBT)); break;
      case SolverSpec::LineSearch::basic: EDGEFEM_PETSC(SNESLineSearchSetType(line_search, SNESLINESEARCHBASIC)); break;
    }
    EDGEFEM_PETSC(SNESLineSearchSetPreCheck(line_search, &NewtonDriver::pre_check, this));
  }
  KSP ksp = nullptr;
  EDGEFEM_PETSC(SNESGetKSP(snes_, &ksp));
  linear_ = set_up_linear_solver(ksp, job, cli_petsc_options, kind, matrix);
  EDGEFEM_PETSC(SNESSetFromOptions(snes_));
  default_pc_name_ = default_preconditioner_name(spec_, kind, linear_.block_preconditioner);
  EDGEFEM_PETSC(KSPGetTolerances(ksp, nullptr, nullptr, nullptr, &max_it_));
  if (linear_.block)
    EDGEFEM_PETSC(SNESSetJacobian(snes_, linear_.krylov(matrix), linear_.preconditioner(matrix),
                                  &NewtonDriver::form_jacobian, this));
  if (problem_.extra_multiply) {  // couplings outside the matrix's pattern: the Krylov operator adds them
    PetscInt m = 0, n = 0, M = 0, N = 0;
    EDGEFEM_PETSC(MatGetLocalSize(matrix, &m, &n));
    EDGEFEM_PETSC(MatGetSize(matrix, &M, &N));
    EDGEFEM_PETSC(MatCreateShell(comm, m, n, M, N, this, shell_.address()));
    EDGEFEM_PETSC(MatShellSetOperation(shell_, MATOP_MULT, reinterpret_cast<void (*)(void)>(&NewtonDriver::shell_multiply)));
    EDGEFEM_PETSC(MatSetOption(shell_, MAT_SYMMETRIC, PETSC_TRUE));
    PC pc = nullptr;
    EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
    if (problem_.extra_couplings && !has_type(pc, {kPcEdgefemGamg, PCGAMG}))  // (filled before every set-up)
      EDGEFEM_PETSC(MatDuplicate(linear_.preconditioner(matrix), MAT_DO_NOT_COPY_VALUES, coupled_.address()));
    EDGEFEM_PETSC(SNESSetJacobian(snes_, shell_, preconditioner_matrix(), &NewtonDriver::form_jacobian, this));
  }
  own_lag_ = !option_given("-snes_lag_preconditioner");
  own_norm_ = !option_given("-ksp_norm_type");
  if (option_given("-ksp_rtol")) {  // a KSP tolerance given as a PETSc option holds for every linear solve
    PetscReal rtol = spec_.linear_rtol;
    EDGEFEM_PETSC(KSPGetTolerances(ksp, &rtol, nullptr, nullptr, nullptr));
    spec_.linear_rtol = rtol;
    spec_.forcing = SolverSpec::Forcing::fixed;
  }
  PetscBool ew = PETSC_FALSE;
  EDGEFEM_PETSC(SNESKSPGetUseEW(snes_, &ew));
  petsc_forcing_ = ew == PETSC_TRUE;  // -snes_ksp_ew: PETSc's Eisenstat-Walker sets the tolerances
  // CG's Lanczos estimate of the largest eigenvalue, for the stale-hierarchy rule. PETSc's CG sizes its Lanczos
  // arrays by the iteration limit at its set-up, which is the first KSPSetUp (prepare_preconditioner, with the limit
  // at max_it_; the limits of later solves are never higher), so the estimate is switched off for good before a
  // fallback to GMRES, whose return to CG would set CG up again under a lower limit.
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  estimate_eigenvalue_ = own_lag_ && spec_.reuse_preconditioner && spec_.rebuild_eigenvalue > 0.0 &&
                         has_type(ksp, {KSPCG}) && has_type(pc, {kPcEdgefemGamg, PCGAMG});
  if (estimate_eigenvalue_) EDGEFEM_PETSC(KSPSetComputeSingularValues(ksp, PETSC_TRUE));
  // Our products need our lag: under PETSc's (-snes_lag_preconditioner) every set-up is GAMG's own, as it was
  // when the driver installed the products around the set-ups it ran itself.
  if (!own_lag_) edgefem_gamg_set_own_products(pc, false);
}

NewtonDriver::~NewtonDriver() = default;

std::string NewtonDriver::preconditioner_name() const {
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp(), &pc));
  PCType type = nullptr;
  EDGEFEM_PETSC(PCGetType(pc, &type));
  if (type == nullptr || linear_.pc_type == type) return default_pc_name_;
  return std::string(type) + " (-pc_type)";
}

KSP NewtonDriver::ksp() const {
  KSP ksp = nullptr;
  EDGEFEM_PETSC(SNESGetKSP(snes_, &ksp));
  return ksp;
}

PetscErrorCode NewtonDriver::form_function(SNES, Vec x, Vec r, void* ctx) {
  auto* self = static_cast<NewtonDriver*>(ctx);
  const double t0 = wall();
  const AssemblyTimes parts0 = assembly_times();
  const PetscErrorCode code = petsc_callback(self->stage_assembly_, [&] { self->problem_.residual(x, r); });
  self->stats_.seconds_assembly += wall() - t0;
  self->stats_.assembly_parts += assembly_times() - parts0;
  ++self->stats_.residual_evaluations;
  return code;
}

PetscErrorCode NewtonDriver::shell_multiply(Mat A, Vec x, Vec y) {
  NewtonDriver* self = nullptr;
  PetscCall(MatShellGetContext(A, &self));
  PetscCall(MatMult(self->linear_.krylov(self->matrix_), x, y));
  PetscCall(petsc_callback(self->stage_solve_, [&] { self->problem_.extra_multiply(x, y); }));
  return 0;
}

PetscErrorCode NewtonDriver::form_jacobian(SNES, Vec x, Mat, Mat, void* ctx) {
  auto* self = static_cast<NewtonDriver*>(ctx);
  const double t0 = wall();
  const AssemblyTimes parts0 = assembly_times();
  PetscCall(petsc_callback(self->stage_assembly_, [&] {
    self->problem_.jacobian(x, self->matrix_);  // P is the BAIJ copy when the preconditioner factorizes it
    if (self->linear_.block) self->linear_.block->update(self->matrix_);
  }));
  self->stats_.seconds_assembly += wall() - t0;
  self->stats_.assembly_parts += assembly_times() - parts0;
  PetscCall(petsc_callback(self->stage_solve_, [&] {
    // With contact, at every iterate: the barrier's stiffness grows as the gaps close, and the floor with it.
    if (self->need_floor_ || self->problem_.step_limit) {
      self->floor_ = self->roundoff_floor(self->linear_.preconditioner(self->matrix_), x);  // (P may be coupled_)
      self->need_floor_ = false;
    }
    self->prepare_preconditioner();
    self->apply_forcing();
  }));
  return 0;
}

void NewtonDriver::build_coupled_preconditioner() {
  const Mat base = linear_.preconditioner(matrix_);
  PetscInt m = 0, n = 0, M = 0, N = 0;
  EDGEFEM_PETSC(MatGetLocalSize(base, &m, &n));
  EDGEFEM_PETSC(MatGetSize(base, &M, &N));
  MatType type = nullptr;
  EDGEFEM_PETSC(MatGetType(base, &type));
  const auto create = [&](MatType t, PetscOwner<Mat, MatDestroy>& out) {
    EDGEFEM_PETSC(MatCreate(comm_, out.address()));
    EDGEFEM_PETSC(MatSetSizes(out, m, n, M, N));
    EDGEFEM_PETSC(MatSetBlockSizesFromMats(out, base, base));
    EDGEFEM_PETSC(MatSetType(out, t));
  };
  const auto assemble = [](Mat a) {
    EDGEFEM_PETSC(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  };
  PetscOwner<Mat, MatDestroy> pattern, couplings, sum;
  create(MATPREALLOCATOR, pattern);
  EDGEFEM_PETSC(MatSetUp(pattern));
  problem_.extra_couplings(pattern);
  assemble(pattern);
  create(type, couplings);
  EDGEFEM_PETSC(MatPreallocatorPreallocate(pattern, PETSC_TRUE, couplings));
  problem_.extra_couplings(couplings);
  assemble(couplings);
  EDGEFEM_PETSC(MatDuplicate(base, MAT_COPY_VALUES, sum.address()));
  EDGEFEM_PETSC(MatAXPY(sum, 1.0, couplings, DIFFERENT_NONZERO_PATTERN));
  PetscBool set = PETSC_FALSE, flag = PETSC_FALSE;  // C is symmetric and positive semi-definite: keep base's flags
  EDGEFEM_PETSC(MatIsSymmetricKnown(base, &set, &flag));
  if (set) EDGEFEM_PETSC(MatSetOption(sum, MAT_SYMMETRIC, flag));
  EDGEFEM_PETSC(MatIsSPDKnown(base, &set, &flag));
  if (set) EDGEFEM_PETSC(MatSetOption(sum, MAT_SPD, flag));
  EDGEFEM_PETSC(MatHeaderReplace(coupled_, sum.address()));  // (coupled_ stays the object SNES and KSP hold)
}

double NewtonDriver::roundoff_floor(Mat J, Vec x) {
  // Rounding x_i to the nearest double moves it by up to eps |x_i| / 2, uniformly: by eps |x_i| / sqrt(12) rms.
  // No floating-point state has a much smaller residual than J times such a perturbation; the residual's own
  // evaluation adds round-off of a similar size, hence the factor 2.
  const double rms_rounding = 2.0 * DBL_EPSILON / std::sqrt(12.0);
  PetscInt begin = 0;
  EDGEFEM_PETSC(VecGetOwnershipRange(x, &begin, nullptr));
  {
    VecArray xa(x, true), d(work_, false);
    const auto xs = xa.span();
    const auto ds = d.span();
    for (std::size_t i = 0; i < ds.size(); ++i)
      ds[i] = rms_rounding * std::abs(xs[i]) * pseudo_sign(static_cast<std::uint64_t>(begin) + i);
  }
  PetscOwner<Vec, VecDestroy> jd;
  EDGEFEM_PETSC(VecDuplicate(work_, jd.address()));
  EDGEFEM_PETSC(MatMult(J, work_, jd));
  PetscReal norm = 0.0;
  EDGEFEM_PETSC(VecNorm(jd, NORM_2, &norm));
  return norm;
}

double NewtonDriver::setup_cost_in_iterations() const {
  // What one set-up costs in iterations of the same preconditioner, measured on this machine: a GAMG set-up
  // (Galerkin products, smoother estimates: PETSc's code, one thread) 45-80 of our V-cycles (own products on the
  // threads) on the 136,565-tet cantilever, hypre's or ML's (PETSc's products) about 30, a sparse Cholesky
  // factorization (redundant ones too) 10-20 triangular solves, an incomplete factorization or Jacobi a few. A
  // table, not a clock: the rebuild points then depend only on the arithmetic, so a run repeats exactly (and so
  // does a restart). docs/theory/solver.md, "Preconditioner reuse", has the measurements.
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp(), &pc));
  if (has_type(pc, {kPcEdgefemGamg, PCGAMG})) return 60.0;
  if (has_type(pc, {PCHYPRE, PCML, PCMG})) return 30.0;
  if (has_type(pc, {PCCHOLESKY, PCLU, PCREDUNDANT})) return 15.0;
  if (has_type(pc, {PCBJACOBI, PCASM, PCICC, PCILU})) return 3.0;
  return 1.0;
}

void NewtonDriver::prepare_preconditioner() {
  rebuilt_now_ = false;
  if (!own_lag_) {  // -snes_lag_preconditioner given: PETSc's lag decides
    reused_in_solve_ = false;
    return;
  }
  const bool rebuild = !pc_ready_ || force_rebuild_ || !spec_.reuse_preconditioner ||
                       excess_iterations_ > spec_.rebuild_ratio * setup_cost_in_iterations() ||
                       (at_start_ && stale_hierarchy());
  if (at_start_) start_reused_ = !rebuild;
  at_start_ = false;
  KSP k = ksp();
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(k, &pc));
  // SNES applies this lag right after the Jacobian callback: -2 = rebuild now, -1 = keep.
  EDGEFEM_PETSC(SNESSetLagPreconditioner(snes_, rebuild ? -2 : -1));
  EDGEFEM_PETSC(KSPSetReusePreconditioner(k, rebuild ? PETSC_FALSE : PETSC_TRUE));
  // PCREDUNDANT's own KSP factorizes again whenever its matrix changes; on one rank that matrix is ours (no gathered
  // copy), changed at every Jacobian: it must follow the outer KSP's reuse.
  if (has_type(pc, {PCREDUNDANT}) && pc_ready_) {
    KSP inner = nullptr;
    EDGEFEM_PETSC(PCRedundantGetKSP(pc, &inner));
    EDGEFEM_PETSC(KSPSetReusePreconditioner(inner, rebuild ? PETSC_FALSE : PETSC_TRUE));
  }
  reused_in_solve_ = !rebuild;
  if (!rebuild) return;
  // A multigrid hierarchy is rebuilt with the interpolations it has (so does GAMG's own rebuild): edgefem_gamg
  // recomputes its coarse operators by our Galerkin products and PETSc keeps the rest (linalg/edgefem_gamg.hpp),
  // the finest interpolation's rows turned first by each vertex's rotation from the rest state, where the set-up
  // made them (the corotational interpolation). Other preconditioners are set up anew.
  if (pc_ready_) {
    std::function<std::vector<double>()> rotations;
    if (spec_.corotational && problem_.vertex_rotations) rotations = problem_.vertex_rotations;
    edgefem_gamg_request_coarse_rebuild(pc, std::move(rotations));
  }
  const double t0 = wall();
  if (coupled_) {  // a new pattern: set up from scratch
    build_coupled_preconditioner();
    EDGEFEM_PETSC(PCReset(pc));
  }
  EDGEFEM_PETSC(KSPSetOperators(k, krylov_operator(), preconditioner_matrix()));
  EDGEFEM_PETSC(KSPSetUp(k));
  EDGEFEM_PETSC(KSPSetUpOnBlocks(k));  // block Jacobi factorizes its blocks here
  const double pc_seconds = wall() - t0;
  stats_.seconds_pc_setup += pc_seconds;
  setup_laps::note_pc_setup(pc_seconds);
  ++stats_.pc_setups;
  pc_ready_ = true;
  force_rebuild_ = false;
  rebuilt_now_ = true;
  fresh_rate_ = -1.0;
  excess_iterations_ = 0.0;
  fresh_emax_ = last_emax_ = -1.0;
}

bool NewtonDriver::stale_hierarchy() const {
  return estimate_eigenvalue_ && pc_ready_ && fresh_emax_ > 0.0 && last_emax_ > spec_.rebuild_eigenvalue * fresh_emax_;
}

double forcing_term(const SolverSpec& spec, double last_norm, double previous_norm, double previous_eta,
                    double target) {
  double eta = spec.eta_max;
  if (previous_norm > 0.0) {
    constexpr double gamma = 0.9, alpha = 2.0;
    eta = gamma * std::pow(last_norm / previous_norm, alpha);
    const double safeguard = gamma * std::pow(previous_eta, alpha);
    if (safeguard > 0.1) eta = std::max(eta, safeguard);
    eta = std::min(eta, spec.eta_max);
  }
  // The last solve of a step, |R_k| within a few times the target, needs one or two digits, not eta_max's three:
  // on the cantilever 285 -> 260 KSP iterations, the same solution.
  constexpr double loosest = 0.5;
  if (last_norm > 0.0) eta = std::max(eta, std::min(loosest, 0.1 * target / last_norm));
  return std::max(eta, spec.linear_rtol);
}

void NewtonDriver::apply_forcing() {
  if (petsc_forcing_) return;
  double eta = spec_.linear_rtol;
  if (spec_.forcing == SolverSpec::Forcing::eisenstat_walker) {
    PetscInt it = 0;
    EDGEFEM_PETSC(SNESGetIterationNumber(snes_, &it));
    eta = forcing_term(spec_, last_norm_, it == 0 ? 0.0 : previous_norm_, eta_, target());
  }
  eta_ = eta;
  EDGEFEM_PETSC(KSPSetTolerances(ksp(), eta, PETSC_DEFAULT, PETSC_DEFAULT, iteration_limit(eta)));
  // The solve meant to bring |R| to the target stops on the true residual: CG's preconditioned norm fell 40 times
  // further than |b - A x| on the cantilever, and such a step ended above the target and took one more Newton
  // iteration.
  if (own_norm_ && has_type(ksp(), {KSPCG})) {
    const bool to_target = stops_on_true_residual(eta, last_norm_, target());
    EDGEFEM_PETSC(KSPSetNormType(ksp(), to_target ? KSP_NORM_UNPRECONDITIONED : KSP_NORM_PRECONDITIONED));
  }
}

PetscInt NewtonDriver::iteration_limit(double rtol) const {
  if (!reused_in_solve_ || fresh_rate_ <= 0.0) return max_it_;
  const double limit = 2.0 * (fresh_rate_ * decades(rtol) + setup_cost_in_iterations());
  return std::min(max_it_, static_cast<PetscInt>(std::ceil(std::max(limit, 10.0))));
}

void NewtonDriver::record_linear_solve() {
  KSP k = ksp();
  PetscInt its = 0;
  PetscReal rtol = 0.0;
  EDGEFEM_PETSC(KSPGetIterationNumber(k, &its));
  EDGEFEM_PETSC(KSPGetTolerances(k, &rtol, nullptr, nullptr, nullptr));
  stats_.ksp_iterations += static_cast<int>(its);
  if (!own_lag_) return;
  if (estimate_eigenvalue_ && its > 1 && has_type(k, {KSPCG})) {
    PetscReal emax = 0.0, emin = 0.0;
    EDGEFEM_PETSC(KSPComputeExtremeSingularValues(k, &emax, &emin));
    last_emax_ = emax;
    if (fresh_emax_ < 0.0) fresh_emax_ = emax;
  }
  // Iterations per decade of residual reduction: comparable across the forcing terms' tolerances.
  const double solve_decades = decades(rtol);
  const double rate = static_cast<double>(its) / solve_decades;
  if (fresh_rate_ < 0.0) {
    fresh_rate_ = rate;
    excess_iterations_ = 0.0;
    return;
  }
  excess_iterations_ = std::max(0.0, rate - fresh_rate_) * solve_decades;
}

PetscErrorCode NewtonDriver::monitor(SNES snes, PetscInt it, PetscReal norm, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<NewtonDriver*>(ctx);
  const double now = wall();
  if (it == 0) {
    if (!self->quiet_)
      PetscCall(PetscPrintf(self->comm_, "  %s  newton %2d  |R| = %.6e\n", self->label_.c_str(), static_cast<int>(it),
                            static_cast<double>(norm)));
  } else {
    KSP ksp = nullptr;
    PetscInt ksp_its = 0;
    KSPConvergedReason reason;
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetIterationNumber(ksp, &ksp_its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    try {
      self->record_linear_solve();
    } catch (const std::exception& e) {
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
    }
    SNESLineSearch ls = nullptr;
    PetscReal lambda = 1.0;
    PetscCall(SNESGetLineSearch(snes, &ls));
    PetscCall(SNESLineSearchGetLambda(ls, &lambda));
    if (!self->quiet_)
      PetscCall(PetscPrintf(self->comm_,
                            "  %s  newton %2d  |R| = %.6e  ksp %4d %-16s pc %s  step %.3g%s  %.3f s  (target %.1e)\n",
                            self->label_.c_str(), static_cast<int>(it), static_cast<double>(norm),
                            static_cast<int>(ksp_its), KSPConvergedReasons[reason],
                            self->rebuilt_now_ ? "new   " : "reused", static_cast<double>(lambda) * self->step_fraction_,
                            self->step_fraction_ < 1.0 ? " (ccd)" : "", now - self->iteration_start_,
                            self->target()));
  }
  self->iteration_start_ = now;
  PetscFunctionReturn(0);
}

PetscErrorCode NewtonDriver::converged(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                       SNESConvergedReason* reason, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<NewtonDriver*>(ctx);
  PetscReal atol = 0, rtol = 0, stol = 0;
  PetscInt max_it = 0, max_f = 0;
  PetscCall(SNESGetTolerances(snes, &atol, &rtol, &stol, &max_it, &max_f));
  *reason = SNES_CONVERGED_ITERATING;
  if (it == 0 && self->reference_norm_ < 0.0) self->reference_norm_ = fnorm;
  self->previous_norm_ = it == 0 ? 0.0 : self->last_norm_;
  if (it == 0 || fnorm < 0.5 * self->best_norm_) {
    self->best_norm_ = fnorm;
    self->best_iteration_ = it;
  } else if (it - self->best_iteration_ >= kStagnation && !self->damped_) {
    self->damped_ = true;  // for the rest of this solve (NewtonDriver::solve resets it)
  }
  self->last_norm_ = fnorm;
  self->atol_ = atol;
  self->rtol_ = rtol;
  if (std::isnan(fnorm) || std::isinf(fnorm)) {
    *reason = SNES_DIVERGED_FNORM_NAN;
  } else if (fnorm <= atol || (self->floor_ > 0.0 && fnorm <= self->floor_)) {
    *reason = SNES_CONVERGED_FNORM_ABS;
  } else if (it > 0 && self->floor_ > 0.0 && fnorm <= 10.0 * self->floor_ && fnorm > 0.5 * self->previous_norm_) {
    // Stagnation within ten times the floor estimate: the residual is round-off (the estimate was low).
    *reason = SNES_CONVERGED_FNORM_ABS;
  } else if (fnorm <= rtol * self->reference_norm_) {
    *reason = SNES_CONVERGED_FNORM_RELATIVE;
  } else if (it > 0 && snorm < stol * xnorm && self->step_fraction_ >= 1.0 && self->step_lambda_ >= 1.0) {
    // (a full step: not one cut by contact's step limit or by the line search)
    *reason = SNES_CONVERGED_SNORM_RELATIVE;
  } else if (it >= max_it) {
    *reason = SNES_DIVERGED_MAX_IT;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NewtonDriver::full_step(SNESLineSearch ls, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<NewtonDriver*>(ctx);
  SNES snes = nullptr;
  Vec X = nullptr, F = nullptr, Y = nullptr, W = nullptr, G = nullptr;
  PetscReal xnorm = 0, fnorm = 0, ynorm = 0;
  PetscCall(SNESLineSearchGetSNES(ls, &snes));
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(SNESLineSearchGetNorms(ls, &xnorm, &fnorm, &ynorm));
  PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_SUCCEEDED));
  PetscBool changed = PETSC_FALSE;
  PetscCall(SNESLineSearchPreCheck(ls, X, Y, &changed));
  // The step's own norm (the norms held by the line search are the last iteration's: a run of steps cut by contact
  // had multiplied their lambdas into it, and a full step after them passed the step-size convergence test of a
  // tiny step with the residual far above its target).
  PetscCall(VecNorm(Y, NORM_2, &ynorm));
  // The step is X - lambda Y. Along it the energy's slope is -R(X - lambda Y).Y: s0 at 0, s1 at the full step.
  auto evaluate = [&](double lambda, PetscReal* gnorm, PetscScalar* slope) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(VecWAXPY(W, -lambda, Y, X));
    PetscCall(SNESComputeFunction(snes, W, G));
    PetscCall(VecNorm(G, NORM_2, gnorm));
    PetscCall(VecDot(G, Y, slope));
    PetscFunctionReturn(0);
  };
  PetscScalar s0 = 0, s1 = 0;
  PetscCall(VecDot(F, Y, &s0));
  PetscReal gnorm = 0;
  double lambda = 1.0;
  PetscCall(evaluate(lambda, &gnorm, &s1));
  // Non-finite residual (e.g. inverted elements): halve until finite.
  for (int k = 0; k < 10 && !std::isfinite(static_cast<double>(gnorm)); ++k) {
    lambda *= 0.5;
    PetscCall(evaluate(lambda, &gnorm, &s1));
  }
  if (!std::isfinite(static_cast<double>(gnorm))) {
    PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_NANORINF));
    PetscFunctionReturn(0);
  }
  if (self->damped_) {
    PetscCall(self->slope_root(lambda, s0, s1, gnorm, evaluate));
  } else if (lambda == 1.0 && s0 > 0.0 && s1 < -10.0 * s0) {
    // Along the step the energy's slope is -s(lambda), from -s0 < 0 at the start to -s1 at the full step; its root
    // (the critical point, by the secant) is at s0 / (s0 - s1). Only a gross overshoot, the full step more than ten
    // times past it (s1 < -10 s0), takes the secant step length instead. A milder one is kept: on bending problems
    // the full step overshoots in stretch, which the next iteration removes, and cutting it back loses the bending
    // (the 3840-tet cantilever: 4 Newton iterations in its first load step with full steps, 7 with the secant's).
    lambda = std::max(0.1, s0 / (s0 - s1));
    PetscCall(evaluate(lambda, &gnorm, &s1));
  }
  if (!std::isfinite(static_cast<double>(gnorm))) {
    PetscCall(SNESLineSearchSetReason(ls, SNES_LINESEARCH_FAILED_NANORINF));
    PetscFunctionReturn(0);
  }
  self->step_lambda_ = lambda;
  PetscCall(VecCopy(W, X));
  PetscCall(VecCopy(G, F));
  PetscCall(VecNorm(X, NORM_2, &xnorm));
  PetscCall(SNESLineSearchSetLambda(ls, lambda));
  PetscCall(SNESLineSearchSetNorms(ls, xnorm, gnorm, lambda * ynorm));
  PetscFunctionReturn(0);
}

template <class Evaluate>
PetscErrorCode NewtonDriver::slope_root(double& lambda, PetscScalar s0, PetscScalar s1, PetscReal& gnorm,
                                        Evaluate& evaluate) {
  // After a stagnation (see converged): the step length where the energy's slope along the step has fallen to half
  // its start, |s| <= s0 / 2 (the strong Wolfe condition), by regula falsi (Illinois) between 0 and the full step.
  // A full step that still descends (s1 >= 0), or a direction that does not (s0 <= 0), is kept as it is.
  PetscFunctionBeginUser;
  if (!(s0 > 0.0) || s1 >= 0.0 || std::abs(s1) <= 0.5 * s0) PetscFunctionReturn(0);
  double lo = 0.0, hi = lambda;
  const double shortest = kShortest * lambda;  // of the finite step: never back past a non-finite region
  double s_lo = s0, s_hi = s1;
  int side = 0;
  for (int k = 0; k < kSlopeSearches; ++k) {
    double trial = hi - s_hi * (hi - lo) / (s_hi - s_lo);
    if (!(trial > lo && trial < hi)) trial = 0.5 * (lo + hi);
    if (trial < shortest) trial = shortest, k = kSlopeSearches;  // (the last trial)
    PetscScalar s = 0;
    PetscCall(evaluate(trial, &gnorm, &s));
    lambda = trial;
    if (!std::isfinite(static_cast<double>(gnorm))) {  // beyond a barrier: the root lies before it
      hi = trial;
      s_hi = -std::abs(s_hi);
      continue;
    }
    if (std::abs(s) <= 0.5 * s0) break;
    if (s > 0.0) {
      lo = trial;
      s_lo = s;
      if (side == 1) s_hi *= 0.5;  // Illinois: the end kept twice is halved
      side = 1;
    } else {
      hi = trial;
      s_hi = s;
      if (side == -1) s_lo *= 0.5;
      side = -1;
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NewtonDriver::pre_check(SNESLineSearch ls, Vec x, Vec y, PetscBool* changed, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<NewtonDriver*>(ctx);
  *changed = PETSC_FALSE;
  self->step_fraction_ = 1.0;
  if (!self->problem_.identity_rows.empty()) {
    Vec f = nullptr;
    PetscCall(SNESLineSearchGetVecs(ls, nullptr, &f, nullptr, nullptr, nullptr));
    PetscScalar* ya = nullptr;
    const PetscScalar* fa = nullptr;
    PetscCall(VecGetArray(y, &ya));
    PetscCall(VecGetArrayRead(f, &fa));
    for (const PetscInt i : self->problem_.identity_rows) ya[i] = fa[i];  // the step is x - y: x_i - r_i
    PetscCall(VecRestoreArrayRead(f, &fa));
    PetscCall(VecRestoreArray(y, &ya));
    *changed = PETSC_TRUE;
  }
  if (self->problem_.step_limit) {
    double limit = 1.0;
    PetscCall(petsc_callback(self->stage_solve_, [&] { limit = self->problem_.step_limit(x, y); }));
    if (limit < 1.0) {
      PetscCall(VecScale(y, limit));
      *changed = PETSC_TRUE;
    }
    self->step_fraction_ = limit;
  }
  PetscFunctionReturn(0);
}

bool NewtonDriver::switch_to_gmres_if_indefinite() {
  KSP k = ksp();
  KSPConvergedReason reason;
  PetscBool is_cg = PETSC_FALSE;
  EDGEFEM_PETSC(KSPGetConvergedReason(k, &reason));
  EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(k), KSPCG, &is_cg));
  if (!is_cg || (reason != KSP_DIVERGED_INDEFINITE_PC && reason != KSP_DIVERGED_INDEFINITE_MAT)) return false;
  ++indefinite_solves_;
  const bool for_good = indefinite_solves_ >= kGmresForGood;
  EDGEFEM_PETSC(PetscPrintf(comm_, "  warning: CG met an indefinite %s (%s); switching to GMRES %s\n",
                            reason == KSP_DIVERGED_INDEFINITE_PC ? "preconditioner" : "matrix",
                            KSPConvergedReasons[reason],
                            for_good ? "for the rest of the run (the third time)" : "for this solve"));
  if (own_norm_) EDGEFEM_PETSC(KSPSetNormType(k, KSP_NORM_PRECONDITIONED));  // the true residual's is CG's (forcing)
  EDGEFEM_PETSC(KSPSetType(k, KSPGMRES));                                    // frees CG's Lanczos arrays
  if (estimate_eigenvalue_) {                                                // see the constructor
    EDGEFEM_PETSC(KSPSetComputeSingularValues(k, PETSC_FALSE));
    estimate_eigenvalue_ = false;
  }
  gmres_fallback_ = !for_good;
  return true;
}

void NewtonDriver::restore_cg() {
  if (!gmres_fallback_) return;
  gmres_fallback_ = false;
  EDGEFEM_PETSC(KSPSetType(ksp(), KSPCG));
}

double NewtonDriver::residual_norm(Vec x) {
  EDGEFEM_PETSC(form_function(snes_, x, r_, this));
  PetscReal norm = 0;
  EDGEFEM_PETSC(VecNorm(r_, NORM_2, &norm));
  return norm;
}

NewtonResult NewtonDriver::solve(Vec x, const std::string& label, double reference_norm) {
  const NewtonStats before = stats_;
  const double t0 = wall();
  label_ = label;
  reference_norm_ = reference_norm;
  need_floor_ = true;
  floor_ = 0.0;
  damped_ = false;
  step_lambda_ = 1.0;
  iteration_start_ = t0;
  restore_cg();
  if (fresh_starts_ > 0) {
    --fresh_starts_;
    force_rebuild_ = true;
  }
  at_start_ = true;
  start_reused_ = false;
  bool start_failed = false;
  NewtonResult result;
  // A linear solve that fails with a reused preconditioner is redone from the same iterate with a new one (and
  // CG on an indefinite system once with GMRES): SNES is called again, with what is left of max_it.
  PetscReal atol = 0, rtol = 0, stol = 0;
  PetscInt max_it = 0, max_f = 0;
  EDGEFEM_PETSC(SNESGetTolerances(snes_, &atol, &rtol, &stol, &max_it, &max_f));
  int total = 0;
  EDGEFEM_PETSC(PetscLogStagePush(stage_solve_));
  for (;;) {
    EDGEFEM_PETSC(SNESSetTolerances(snes_, atol, rtol, stol, std::max<PetscInt>(1, max_it - total), max_f));
    EDGEFEM_PETSC(SNESSolve(snes_, nullptr, x));
    SNESConvergedReason reason;
    PetscInt its = 0;
    EDGEFEM_PETSC(SNESGetConvergedReason(snes_, &reason));
    EDGEFEM_PETSC(SNESGetIterationNumber(snes_, &its));
    total += static_cast<int>(its);
    stats_.newton_iterations += static_cast<int>(its);
    result.residual = last_norm_;
    result.target = target();
    if (reason > 0) {
      result.converged = true;
      break;
    }
    KSPConvergedReason kreason = KSP_CONVERGED_ITERATING;
    if (reason == SNES_DIVERGED_LINEAR_SOLVE) {
      record_linear_solve();  // the failed solve's iterations
      EDGEFEM_PETSC(KSPGetConvergedReason(ksp(), &kreason));
      if (total < max_it && reused_in_solve_) {
        if (!quiet_)
          EDGEFEM_PETSC(PetscPrintf(comm_, "  %s  linear solve %s with a reused preconditioner: rebuilding it\n",
                                    label_.c_str(), KSPConvergedReasons[kreason]));
        force_rebuild_ = true;
        ++stats_.pc_recoveries;
        if (total == 0 && start_reused_) {
          start_failed = true;
          fresh_start_run_ = std::min(64, std::max(1, 2 * fresh_start_run_));
          fresh_starts_ = fresh_start_run_;
        }
        continue;
      }
      if (total < max_it && switch_to_gmres_if_indefinite()) continue;
    }
    result.why = std::string("Newton: ") + SNESConvergedReasons[reason] +
                 (reason == SNES_DIVERGED_LINEAR_SOLVE ? std::string(", linear solve: ") + KSPConvergedReasons[kreason]
                                                       : std::string());
    force_rebuild_ = true;  // a failed step may have left a preconditioner of a state far from the next
    break;
  }
  if (start_reused_ && !start_failed) fresh_start_run_ = 0;  // the kept preconditioner served this start
  EDGEFEM_PETSC(SNESSetTolerances(snes_, atol, rtol, stol, max_it, max_f));
  EDGEFEM_PETSC(PetscLogStagePop());
  stats_.seconds += wall() - t0;
  result.stats = stats_ - before;
  return result;
}

NewtonResult NewtonDriver::solve_linear(Vec b, Vec y, const std::string& label, double rtol) {
  const NewtonStats before = stats_;
  const double t0 = wall();
  label_ = label;
  restore_cg();
  KSP k = ksp();
  EDGEFEM_PETSC(KSPSetTolerances(k, rtol > 0.0 ? std::max(rtol, spec_.linear_rtol) : spec_.linear_rtol, PETSC_DEFAULT,
                                 PETSC_DEFAULT, PETSC_DEFAULT));
  EDGEFEM_PETSC(KSPSetInitialGuessNonzero(k, PETSC_TRUE));
  PetscOwner<Vec, VecDestroy> guess;
  EDGEFEM_PETSC(VecDuplicate(y, guess.address()));
  EDGEFEM_PETSC(VecCopy(y, guess));
  NewtonResult result;
  if (linear_.block) linear_.block->update(matrix_);
  EDGEFEM_PETSC(PetscLogStagePush(stage_solve_));
  PetscReal rtol_linear = 0.0;
  EDGEFEM_PETSC(KSPGetTolerances(k, &rtol_linear, nullptr, nullptr, nullptr));
  for (int attempt = 0;; ++attempt) {
    prepare_preconditioner();
    EDGEFEM_PETSC(KSPSetTolerances(k, rtol_linear, PETSC_DEFAULT, PETSC_DEFAULT, iteration_limit(rtol_linear)));
    EDGEFEM_PETSC(KSPSolve(k, b, y));
    if (!problem_.identity_rows.empty()) {  // the identity rows' solution is b's, exactly
      VecArray ya(y, false), ba(b, true);
      for (const PetscInt i : problem_.identity_rows)
        ya.span()[static_cast<std::size_t>(i)] = ba.span()[static_cast<std::size_t>(i)];
    }
    record_linear_solve();
    KSPConvergedReason reason;
    EDGEFEM_PETSC(KSPGetConvergedReason(k, &reason));
    if (reason > 0) {
      result.converged = true;
      break;
    }
    EDGEFEM_PETSC(VecCopy(guess, y));
    if (attempt < 4 && reused_in_solve_) {
      force_rebuild_ = true;
      ++stats_.pc_recoveries;
      continue;
    }
    if (attempt < 4 && switch_to_gmres_if_indefinite()) continue;
    result.why = std::string("linear solve: ") + KSPConvergedReasons[reason];
    force_rebuild_ = true;
    break;
  }
  EDGEFEM_PETSC(PetscLogStagePop());
  EDGEFEM_PETSC(KSPSetInitialGuessNonzero(k, PETSC_FALSE));
  // The limit was this solve's (the Newton iterations set their own, unless -snes_ksp_ew leaves them PETSc's).
  EDGEFEM_PETSC(KSPSetTolerances(k, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, max_it_));
  ++stats_.newton_iterations;
  stats_.seconds += wall() - t0;
  result.stats = stats_ - before;
  return result;
}

Extrapolator::Extrapolator(Vec layout, int order) : order_(std::clamp(order, 1, 2)) {
  for (auto& v : states_) EDGEFEM_PETSC(VecDuplicate(layout, v.address()));
}

void Extrapolator::set_slope(Vec dx, double s) {
  slope_set_ = false;
  const double ds = s - s_[0];
  if (order_ != 2 || count_ != 1 || ds == 0.0 || !std::isfinite(ds)) return;  // (only order 2 uses a slope)
  if (!slope_.get()) EDGEFEM_PETSC(VecDuplicate(dx, slope_.address()));       // the first time: static load steps only
  EDGEFEM_PETSC(VecAXPBY(slope_, 1.0 / ds, 0.0, dx));
  slope_s_ = s_[0];
  slope_set_ = true;
}

bool Extrapolator::has_slope() const {
  return order_ == 2 && count_ == 2 && slope_set_ && s_[1] == slope_s_ && s_[0] != s_[1];
}

bool Extrapolator::predict_with_slope(double s, Vec x) const {
  if (!has_slope()) return false;
  // q(s) = x0 + h v0 + (h / H)^2 (x1 - x0 - H v0), h = s - s0, H = s1 - s0: q(s0) = x0, q(s1) = x1, q'(s0) = v0.
  const double h = s - s_[1], r = h / (s_[0] - s_[1]);
  EDGEFEM_PETSC(VecAXPBYPCZ(x, r * r, 1.0 - r * r, 0.0, states_[0], states_[1]));
  EDGEFEM_PETSC(VecAXPY(x, h * (1.0 - r), slope_));
  return true;
}

void Extrapolator::accept(Vec x, double s) {
  std::rotate(states_.begin(), states_.end() - 1, states_.end());
  std::rotate(s_.begin(), s_.end() - 1, s_.end());
  EDGEFEM_PETSC(VecCopy(x, states_[0]));
  s_[0] = s;
  count_ = std::min(count_ + 1, 3);
}

bool Extrapolator::predict(double s, Vec x) const {
  if (count_ < 2 || s_[0] == s_[1]) return false;
  const int n = (order_ == 2 && count_ >= 3 && s_[1] != s_[2] && s_[0] != s_[2]) ? 3 : 2;
  // Lagrange weights of the interpolating polynomial through the n newest states, evaluated at s.
  std::array<double, 3> w{1.0, 1.0, 1.0};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (j != i) w[i] *= (s - s_[j]) / (s_[i] - s_[j]);
  if (n == 2) {
    EDGEFEM_PETSC(VecAXPBYPCZ(x, w[0], w[1], 0.0, states_[0], states_[1]));
  } else {
    EDGEFEM_PETSC(VecAXPBYPCZ(x, w[0], w[1], 0.0, states_[0], states_[1]));
    EDGEFEM_PETSC(VecAXPY(x, w[2], states_[2]));
  }
  return true;
}

bool solve_load_step(NewtonDriver& newton, Extrapolator& predictor, bool use_predictor, Vec x, Vec saved, double s,
                     const std::function<void(Vec, double)>& set_prescribed,
                     const std::function<void(Vec, double)>& tangent, const std::string& label, std::string& why,
                     const FeasibleStart* feasible) {
  EDGEFEM_PETSC(VecCopy(x, saved));
  set_prescribed(x, s);
  PetscOwner<Vec, VecDestroy> start;  // contact: the carried start, which the predictions are limited toward
  auto limit = [&](Vec v) {
    if (!feasible) return;
    feasible->limit(start, v);
    set_prescribed(v, s);
  };
  if (feasible) {
    feasible->carry(x);
    EDGEFEM_PETSC(VecDuplicate(x, start.address()));
    EDGEFEM_PETSC(VecCopy(x, start));
  }
  double reference = -1.0;
  if (use_predictor && (predictor.ready() || tangent)) {
    reference = newton.residual_norm(x);
    // Not finite (e.g. the prescribed values alone invert elements of a model with J <= 0 -> infinite energy, such
    // as neo-hookean): no reference; the relative test then uses the first iterate's norm (rtol * inf would accept
    // any iterate).
    if (!std::isfinite(reference)) reference = -1.0;
    if (predictor.ready()) {
      predictor.predict(s, x);
      set_prescribed(x, s);
      limit(x);
      if (predictor.has_slope()) {  // the second step after a tangent predictor: the better of two candidates
        PetscOwner<Vec, VecDestroy> other;
        EDGEFEM_PETSC(VecDuplicate(x, other.address()));
        predictor.predict_with_slope(s, other);
        set_prescribed(other, s);
        limit(other);
        const double r_secant = newton.residual_norm(x), r_slope = newton.residual_norm(other);
        // (not finite: inverted elements of a model with infinite energy there; such a candidate loses)
        if (std::isfinite(r_slope) && !(r_secant <= r_slope)) EDGEFEM_PETSC(VecCopy(other, x));
      }
    } else {
      EDGEFEM_PETSC(VecCopy(feasible ? start.get() : saved, x));
      tangent(x, s);
      set_prescribed(x, s);
      limit(x);
      PetscOwner<Vec, VecDestroy> step;
      EDGEFEM_PETSC(VecDuplicate(x, step.address()));
      EDGEFEM_PETSC(VecWAXPY(step, -1.0, saved, x));
      predictor.set_slope(step, s);
    }
  }
  const NewtonResult result = newton.solve(x, label, reference);
  if (!result.converged) {
    EDGEFEM_PETSC(VecCopy(saved, x));
    why = result.why;
    return false;
  }
  set_prescribed(x, s);  // exact values (the linear solver may leave round-off there)
  predictor.accept(x, s);
  return true;
}

int advance(double from, double to, int max_cuts, const std::function<bool(double, double, std::string&)>& attempt,
            const std::function<void(double, double, const std::string&)>& on_cut) {
  double done = from, increment = to - from;
  int cuts = 0, taken = 0;
  while (done < to) {
    const bool last = to - done <= increment * (1 + 1e-9);
    const double target = last ? to : done + increment;
    std::string why;
    if (attempt(done, target, why)) {
      done = target;
      ++taken;
      continue;
    }
    if (++cuts > max_cuts) return 0;
    increment = (target - done) / 2;
    if (on_cut) on_cut(done, increment, why);
  }
  return taken;
}

}  // namespace edgefem
