#include "solver/static_solver.hpp"

#include <petscksp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

namespace edgefem {

StaticSolver::StaticSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
                           const std::string& cli_petsc_options, bool quiet)
    : comm_(comm), job_(job), mesh_(mesh), model_(std::move(model)), assembler_(comm, mesh, model_), quiet_(quiet) {
  MPI_Comm_rank(comm_, &rank_);
  n_steps_ = job_.steps;
  stage_assembly_ = log_stage("Assembly");
  stage_solve_ = log_stage("Solve");
  x_ = assembler_.create_vector();
  r_ = assembler_.create_vector();
  EDGEFEM_PETSC(VecCopy(assembler_.reference(), x_));

  f_ext_ = assembler_.create_vector();
  attachment_diagonal_.assign(3 * static_cast<std::size_t>(mesh_.n_owned), 0.0);
  EDGEFEM_PETSC(SNESCreate(comm_, snes_.address()));
  EDGEFEM_PETSC(SNESSetFunction(snes_, r_, &StaticSolver::form_function, this));
  EDGEFEM_PETSC(SNESSetJacobian(snes_, assembler_.matrix(), assembler_.matrix(), &StaticSolver::form_jacobian, this));
  EDGEFEM_PETSC(SNESMonitorSet(snes_, &StaticSolver::monitor, this, nullptr));
  configure_newton(snes_, job_, cli_petsc_options);
}

void configure_newton(SNES snes, const Job& job, const std::string& cli_petsc_options, bool local_preconditioner) {
  EDGEFEM_PETSC(SNESSetType(snes, SNESNEWTONLS));
  {
    SNESLineSearch line_search = nullptr;
    EDGEFEM_PETSC(SNESGetLineSearch(snes, &line_search));
    // Critical-point line search: the residual is the gradient of the energy, and norm-based
    // backtracking stalls on bending-dominated problems (first Newton step from rest).
    EDGEFEM_PETSC(SNESLineSearchSetType(line_search, SNESLINESEARCHCP));
  }
  EDGEFEM_PETSC(SNESSetTolerances(snes, job.newton_atol, job.newton_rtol, 1e-14, job.newton_max_it, -1));
  KSP ksp = nullptr;
  EDGEFEM_PETSC(SNESGetKSP(snes, &ksp));
  configure_linear_solver(ksp, job, cli_petsc_options, local_preconditioner);
  EDGEFEM_PETSC(SNESSetFromOptions(snes));
}

bool switch_to_gmres_if_indefinite(MPI_Comm comm, KSP ksp) {
  KSPConvergedReason reason;
  PetscBool is_cg = PETSC_FALSE;
  EDGEFEM_PETSC(KSPGetConvergedReason(ksp, &reason));
  EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp), KSPCG, &is_cg));
  if (!is_cg || (reason != KSP_DIVERGED_INDEFINITE_PC && reason != KSP_DIVERGED_INDEFINITE_MAT)) return false;
  EDGEFEM_PETSC(PetscPrintf(comm, "  warning: CG met an indefinite matrix (%s); switching to GMRES\n",
                            KSPConvergedReasons[reason]));
  EDGEFEM_PETSC(KSPSetType(ksp, KSPGMRES));
  return true;
}

void configure_linear_solver(KSP ksp, const Job& job, const std::string& cli_petsc_options, bool local_preconditioner) {
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
  EDGEFEM_PETSC(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  EDGEFEM_PETSC(PCSetType(pc, local_preconditioner ? PCBJACOBI : PCGAMG));
  if (local_preconditioner) {
    PetscBool given = PETSC_FALSE;
    EDGEFEM_PETSC(PetscOptionsHasName(nullptr, nullptr, "-sub_pc_type", &given));
    if (!given && job.petsc_options.find("-sub_pc_type") == std::string::npos &&
        cli_petsc_options.find("-sub_pc_type") == std::string::npos)
      EDGEFEM_PETSC(PetscOptionsSetValue(nullptr, "-sub_pc_type", "icc"));
  }
  // Our defaults, then the job's options, then the command line's (which win).
  if (!job.petsc_options.empty()) EDGEFEM_PETSC(PetscOptionsInsertString(nullptr, job.petsc_options.c_str()));
  if (!cli_petsc_options.empty()) EDGEFEM_PETSC(PetscOptionsInsertString(nullptr, cli_petsc_options.c_str()));
  EDGEFEM_PETSC(KSPSetFromOptions(ksp));
}

StaticSolver::~StaticSolver() = default;

void StaticSolver::set_prescribed(Vec x, double load_factor) {
  PetscScalar* xa = nullptr;
  EDGEFEM_PETSC(VecGetArray(x, &xa));
  for (const auto& d : model_.dirichlet) xa[d.dof] = prescribed_position(model_, d, mesh_.mesh.coords, load_factor);
  EDGEFEM_PETSC(VecRestoreArray(x, &xa));
}

PetscErrorCode StaticSolver::form_function(SNES, Vec x, Vec r, void* ctx) {
  auto* self = static_cast<StaticSolver*>(ctx);
  return petsc_callback(self->stage_assembly_, [&] {
    self->assembler_.set_positions(x);
    self->assembler_.internal_force(r);
    self->assembler_.external_force(self->load_factor_, self->f_ext_);
    EDGEFEM_PETSC(VecAXPY(r, -1.0, self->f_ext_));
    VecArray xa(x, true), ra(r, false);
    add_attachment_terms(self->model_, self->mesh_.mesh.coords, self->load_factor_, xa.span(), {}, 0.0, ra.span(), {});
    for (const auto& d : self->model_.dirichlet)
      ra.span()[d.dof] = xa.span()[d.dof] - prescribed_position(self->model_, d, self->mesh_.mesh.coords, self->load_factor_);
  });
}

PetscErrorCode StaticSolver::form_jacobian(SNES, Vec x, Mat, Mat P, void* ctx) {
  auto* self = static_cast<StaticSolver*>(ctx);
  return petsc_callback(self->stage_assembly_, [&] {
    self->assembler_.set_positions(x);
    MatrixCoefficients c;
    if (!self->model_.attachments.empty()) {
      std::fill(self->attachment_diagonal_.begin(), self->attachment_diagonal_.end(), 0.0);
      add_attachment_terms(self->model_, self->mesh_.mesh.coords, self->load_factor_, {}, {}, 0.0, {},
                           self->attachment_diagonal_);
      c.diagonal = self->attachment_diagonal_;
    }
    self->assembler_.stiffness(P, c);
  });
}

PetscErrorCode StaticSolver::monitor(SNES snes, PetscInt it, PetscReal norm, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<StaticSolver*>(ctx);
  KSP ksp = nullptr;
  PetscCall(SNESGetKSP(snes, &ksp));
  if (it == 0) {
    if (!self->quiet_)
      PetscCall(PetscPrintf(self->comm_, "  step %d/%d  load %.4g  newton %2d  |R| = %.6e\n", self->step_,
                            self->n_steps_, self->load_factor_, static_cast<int>(it), static_cast<double>(norm)));
  } else {
    PetscInt ksp_its = 0;
    KSPConvergedReason reason;
    PetscCall(KSPGetIterationNumber(ksp, &ksp_its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    self->ksp_iterations_in_step_ += static_cast<int>(ksp_its);
    if (!self->quiet_)
      PetscCall(PetscPrintf(self->comm_, "  step %d/%d  load %.4g  newton %2d  |R| = %.6e  ksp %4d %s\n", self->step_,
                            self->n_steps_, self->load_factor_, static_cast<int>(it), static_cast<double>(norm),
                            static_cast<int>(ksp_its), KSPConvergedReasons[reason]));
  }
  PetscFunctionReturn(0);
}

bool StaticSolver::solve_increment(double from, double to, StepReport& report) {
  constexpr int max_cuts = 6;
  PetscOwner<Vec, VecDestroy> saved;
  EDGEFEM_PETSC(VecDuplicate(x_, saved.address()));
  EDGEFEM_PETSC(VecCopy(x_, saved));
  double done = from, increment = to - from;
  int cuts = 0, substeps = 0;
  while (done < to) {
    const double target = (to - done <= increment * (1 + 1e-12)) ? to : done + increment;
    load_factor_ = target;
    set_prescribed(x_, target);
    EDGEFEM_PETSC(PetscLogStagePush(stage_solve_));
    EDGEFEM_PETSC(SNESSolve(snes_, nullptr, x_));
    EDGEFEM_PETSC(PetscLogStagePop());
    SNESConvergedReason reason;
    PetscInt its = 0;
    EDGEFEM_PETSC(SNESGetConvergedReason(snes_, &reason));
    EDGEFEM_PETSC(SNESGetIterationNumber(snes_, &its));
    report.newton_iterations += static_cast<int>(its);
    if (reason > 0) {
      set_prescribed(x_, target);  // exact values (the linear solver may leave round-off there)
      done = target;
      ++substeps;
      EDGEFEM_PETSC(VecCopy(x_, saved));
      continue;
    }
    KSP ksp = nullptr;
    KSPConvergedReason kreason;
    EDGEFEM_PETSC(SNESGetKSP(snes_, &ksp));
    EDGEFEM_PETSC(KSPGetConvergedReason(ksp, &kreason));
    EDGEFEM_PETSC(VecCopy(saved, x_));
    if (switch_to_gmres_if_indefinite(comm_, ksp)) continue;
    if (++cuts > max_cuts) return false;
    increment = (target - done) / 2;
    EDGEFEM_PETSC(PetscPrintf(comm_, "  warning: step %d: Newton failed (%s, last linear solve %s); cutting the load increment to %.4g\n",
                              step_, SNESConvergedReasons[reason], KSPConvergedReasons[kreason], increment));
  }
  report.substeps = substeps;
  return true;
}

std::vector<StepReport> StaticSolver::run(const std::function<void(int, double)>& on_step) {
  std::vector<StepReport> reports;
  step_ = 0;
  load_factor_ = 0.0;
  if (on_step) on_step(0, 0.0);
  for (int k = 1; k <= n_steps_; ++k) {
    step_ = k;
    ksp_iterations_in_step_ = 0;
    StepReport report;
    report.step = k;
    report.load_factor = static_cast<double>(k) / n_steps_;
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = solve_increment(static_cast<double>(k - 1) / n_steps_, report.load_factor, report);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report.ksp_iterations = ksp_iterations_in_step_;
    if (!ok)
      throw SolverError("load step " + std::to_string(k) + " of " + std::to_string(n_steps_) +
                        " did not converge even after cutting the load increment 6 times; try more load steps "
                        "('analysis.steps'), a looser 'solver.newton' tolerance, or other PETSc options (-snes_monitor -ksp_monitor)");
    reports.push_back(report);
    if (!quiet_) {
      double elapsed = 0;
      for (const auto& r : reports) elapsed += r.seconds;
      const double left = elapsed / k * (n_steps_ - k);
      EDGEFEM_PETSC(PetscPrintf(comm_, "step %d/%d  load factor %.4g  newton its %d  ksp its %d  wall %.3f s  est. left %.1f s\n",
                                k, n_steps_, report.load_factor, report.newton_iterations, report.ksp_iterations,
                                report.seconds, left));
    }
    if (on_step) on_step(k, report.load_factor);
  }
  return reports;
}

std::vector<double> StaticSolver::local_positions() {
  assembler_.set_positions(x_);
  return assembler_.local_positions();
}

std::vector<double> StaticSolver::local_internal_force() {
  assembler_.set_positions(x_);
  return assembler_.local_internal_force();
}

}  // namespace edgefem
