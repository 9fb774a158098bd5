#include "solver/static_solver.hpp"

#include <petscksp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

namespace edgefem {
namespace {

std::vector<PetscInt> to_petsc(const std::vector<GlobalIndex>& v, std::size_t begin) {
  std::vector<PetscInt> out;
  out.reserve(v.size() - begin);
  for (std::size_t i = begin; i < v.size(); ++i) {
    if (v[i] > static_cast<GlobalIndex>(PETSC_MAX_INT))
      throw PetscFailure("global index " + std::to_string(v[i]) + " does not fit PetscInt: build against 64-bit PETSc");
    out.push_back(static_cast<PetscInt>(v[i]));
  }
  return out;
}

/// RAII access to the local form (owned + ghost entries) of a ghosted vector.
class LocalForm {
 public:
  explicit LocalForm(Vec v, bool read_only) : global_(v), read_only_(read_only) {
    EDGEFEM_PETSC(VecGhostGetLocalForm(global_, &local_));
    if (read_only_) {
      const PetscScalar* a = nullptr;
      EDGEFEM_PETSC(VecGetArrayRead(local_, &a));
      data_ = const_cast<PetscScalar*>(a);
    } else {
      EDGEFEM_PETSC(VecGetArray(local_, &data_));
    }
    EDGEFEM_PETSC(VecGetLocalSize(local_, &size_));
  }
  ~LocalForm() {
    if (read_only_) {
      const PetscScalar* a = data_;
      VecRestoreArrayRead(local_, &a);
    } else {
      VecRestoreArray(local_, &data_);
    }
    VecGhostRestoreLocalForm(global_, &local_);
  }
  LocalForm(const LocalForm&) = delete;
  LocalForm& operator=(const LocalForm&) = delete;
  [[nodiscard]] std::span<double> span() { return {data_, static_cast<std::size_t>(size_)}; }

 private:
  Vec global_, local_ = nullptr;
  bool read_only_;
  PetscScalar* data_ = nullptr;
  PetscInt size_ = 0;
};

}  // namespace

StaticSolver::StaticSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
                           const std::string& cli_petsc_options, bool quiet)
    : comm_(comm), job_(job), mesh_(mesh), model_(std::move(model)), quiet_(quiet) {
  MPI_Comm_rank(comm_, &rank_);
  n_steps_ = job_.steps;
  // PETSc log stages and events are process-wide: register them once.
  static const std::array<int, 4> handles = [] {
    PetscLogStage assembly = 0, solve = 0;
    PetscLogEvent force = 0, stiffness = 0;
    PetscClassId classid = 0;
    EDGEFEM_PETSC(PetscLogStageRegister("Assembly", &assembly));
    EDGEFEM_PETSC(PetscLogStageRegister("Solve", &solve));
    EDGEFEM_PETSC(PetscClassIdRegister("edgefem", &classid));
    EDGEFEM_PETSC(PetscLogEventRegister("EdgefemForce", classid, &force));
    EDGEFEM_PETSC(PetscLogEventRegister("EdgefemForceK", classid, &stiffness));
    return std::array<int, 4>{assembly, solve, force, stiffness};
  }();
  stage_assembly_ = handles[0];
  stage_solve_ = handles[1];
  event_force_ = handles[2];
  event_stiffness_ = handles[3];

  const LocalIndex n_owned = mesh_.n_owned, n_local = mesh_.n_local();
  const std::vector<PetscInt> ghosts = to_petsc(mesh_.global_vertex, static_cast<std::size_t>(n_owned));
  EDGEFEM_PETSC(VecCreateGhostBlock(comm_, 3, 3 * n_owned, PETSC_DECIDE, static_cast<PetscInt>(ghosts.size()),
                                    ghosts.data(), x_ghost_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, f_ghost_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, f_ext_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, reference_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, x_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, r_.address()));
  {
    LocalForm ref(reference_, false);
    std::copy(mesh_.mesh.coords.begin(), mesh_.mesh.coords.end(), ref.span().begin());
  }
  {
    LocalForm fe(f_ext_, false);
    std::copy(model_.external_force.begin(), model_.external_force.end(), fe.span().begin());
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ext_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ext_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecCopy(reference_, x_));

  for (const auto& d : model_.dirichlet)
    dirichlet_rows_.push_back(static_cast<PetscInt>(3 * mesh_.global_vertex[d.dof / 3] + d.dof % 3));

  // COO pattern: 9 entries per 3x3 block, in the order the formulations write their blocks.
  std::vector<PetscInt> coo_i, coo_j;
  std::size_t n_blocks = 0;
  for (const auto& f : model_.formulations) {
    block_offset_.push_back(n_blocks);
    n_blocks += f->block_pattern().size();
  }
  coo_i.reserve(9 * n_blocks);
  coo_j.reserve(9 * n_blocks);
  const std::vector<PetscInt> global = to_petsc(mesh_.global_vertex, 0);
  for (const auto& f : model_.formulations)
    for (const auto& [a, b] : f->block_pattern())
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          coo_i.push_back(3 * global[a] + i);
          coo_j.push_back(3 * global[b] + j);
        }
  coo_values_.assign(9 * n_blocks, 0.0);
  force_buffer_.assign(3 * static_cast<std::size_t>(n_local), 0.0);

  EDGEFEM_PETSC(MatCreate(comm_, jacobian_.address()));
  EDGEFEM_PETSC(MatSetSizes(jacobian_, 3 * n_owned, 3 * n_owned, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(jacobian_, MATAIJ));
  EDGEFEM_PETSC(MatSetBlockSize(jacobian_, 3));
  EDGEFEM_PETSC(MatSetPreallocationCOO(jacobian_, static_cast<PetscCount>(coo_i.size()), coo_i.data(), coo_j.data()));
  EDGEFEM_PETSC(MatSetOption(jacobian_, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  {
    MatNullSpace rigid = nullptr;
    EDGEFEM_PETSC(MatNullSpaceCreateRigidBody(reference_, &rigid));
    EDGEFEM_PETSC(MatSetNearNullSpace(jacobian_, rigid));
    EDGEFEM_PETSC(MatNullSpaceDestroy(&rigid));
  }

  EDGEFEM_PETSC(SNESCreate(comm_, snes_.address()));
  EDGEFEM_PETSC(SNESSetType(snes_, SNESNEWTONLS));
  {
    SNESLineSearch line_search = nullptr;
    EDGEFEM_PETSC(SNESGetLineSearch(snes_, &line_search));
    // Critical-point line search: the residual is the gradient of the energy, and norm-based
    // backtracking stalls on bending-dominated problems (first Newton step from rest).
    EDGEFEM_PETSC(SNESLineSearchSetType(line_search, SNESLINESEARCHCP));
  }
  EDGEFEM_PETSC(SNESSetFunction(snes_, r_, &StaticSolver::form_function, this));
  EDGEFEM_PETSC(SNESSetJacobian(snes_, jacobian_, jacobian_, &StaticSolver::form_jacobian, this));
  EDGEFEM_PETSC(SNESSetTolerances(snes_, job_.newton_atol, job_.newton_rtol, 1e-14, job_.newton_max_it, -1));
  EDGEFEM_PETSC(SNESMonitorSet(snes_, &StaticSolver::monitor, this, nullptr));
  KSP ksp = nullptr;
  PC pc = nullptr;
  EDGEFEM_PETSC(SNESGetKSP(snes_, &ksp));
  EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
  EDGEFEM_PETSC(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  EDGEFEM_PETSC(PCSetType(pc, PCGAMG));
  // Our defaults, then the job's options, then the command line's (which win).
  if (!job_.petsc_options.empty()) EDGEFEM_PETSC(PetscOptionsInsertString(nullptr, job_.petsc_options.c_str()));
  if (!cli_petsc_options.empty()) EDGEFEM_PETSC(PetscOptionsInsertString(nullptr, cli_petsc_options.c_str()));
  EDGEFEM_PETSC(SNESSetFromOptions(snes_));
}

StaticSolver::~StaticSolver() = default;

void StaticSolver::update_ghosts(Vec x) {
  if (x != x_ghost_.get()) EDGEFEM_PETSC(VecCopy(x, x_ghost_));
  EDGEFEM_PETSC(VecGhostUpdateBegin(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
}

void StaticSolver::assemble_internal_force(Vec out) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_force_, 0, 0, 0, 0));
  {
    LocalForm x(x_ghost_, true);
    LocalForm f(f_ghost_, false);
    std::span<double> fs = f.span();
    std::fill(fs.begin(), fs.end(), 0.0);
    for (const auto& form : model_.formulations) {
      form->force(x.span(), force_buffer_);
      for (std::size_t i = 0; i < fs.size(); ++i) fs[i] += force_buffer_[i];
    }
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  if (out != f_ghost_.get()) EDGEFEM_PETSC(VecCopy(f_ghost_, out));
  EDGEFEM_PETSC(PetscLogEventEnd(event_force_, 0, 0, 0, 0));
}

void StaticSolver::assemble_matrix(Mat P) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_stiffness_, 0, 0, 0, 0));
  {
    LocalForm x(x_ghost_, true);
    for (std::size_t k = 0; k < model_.formulations.size(); ++k) {
      const auto& form = model_.formulations[k];
      std::span<double> blocks(coo_values_.data() + 9 * block_offset_[k], 9 * form->block_pattern().size());
      form->force_and_stiffness(x.span(), force_buffer_, blocks);
    }
  }
  EDGEFEM_PETSC(MatSetValuesCOO(P, coo_values_.data(), INSERT_VALUES));
  PetscBool assembled = PETSC_FALSE;
  EDGEFEM_PETSC(MatAssembled(P, &assembled));
  if (!assembled) {
    EDGEFEM_PETSC(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  }
  EDGEFEM_PETSC(MatZeroRowsColumns(P, static_cast<PetscInt>(dirichlet_rows_.size()), dirichlet_rows_.data(), 1.0,
                                   nullptr, nullptr));
  EDGEFEM_PETSC(PetscLogEventEnd(event_stiffness_, 0, 0, 0, 0));
}

void StaticSolver::set_prescribed(Vec x, double load_factor) {
  PetscScalar* xa = nullptr;
  EDGEFEM_PETSC(VecGetArray(x, &xa));
  for (const auto& d : model_.dirichlet) xa[d.dof] = mesh_.mesh.coords[d.dof] + load_factor * d.displacement;
  EDGEFEM_PETSC(VecRestoreArray(x, &xa));
}

PetscErrorCode StaticSolver::form_function(SNES, Vec x, Vec r, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<StaticSolver*>(ctx);
  try {
    PetscCall(PetscLogStagePush(self->stage_assembly_));
    self->update_ghosts(x);
    self->assemble_internal_force(r);
    PetscCall(VecAXPY(r, -self->load_factor_, self->f_ext_));
    const PetscScalar* xa = nullptr;
    PetscScalar* ra = nullptr;
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArray(r, &ra));
    for (const auto& d : self->model_.dirichlet)
      ra[d.dof] = xa[d.dof] - (self->mesh_.mesh.coords[d.dof] + self->load_factor_ * d.displacement);
    PetscCall(VecRestoreArray(r, &ra));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(PetscLogStagePop());
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscFunctionReturn(0);
}

PetscErrorCode StaticSolver::form_jacobian(SNES, Vec x, Mat, Mat P, void* ctx) {
  PetscFunctionBeginUser;
  auto* self = static_cast<StaticSolver*>(ctx);
  try {
    PetscCall(PetscLogStagePush(self->stage_assembly_));
    self->update_ghosts(x);
    self->assemble_matrix(P);
    PetscCall(PetscLogStagePop());
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscFunctionReturn(0);
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
    PetscBool is_cg = PETSC_FALSE;
    EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp), KSPCG, &is_cg));
    if (is_cg && (kreason == KSP_DIVERGED_INDEFINITE_PC || kreason == KSP_DIVERGED_INDEFINITE_MAT)) {
      EDGEFEM_PETSC(PetscPrintf(comm_, "  warning: step %d: CG met an indefinite tangent (%s); switching to GMRES\n",
                                step_, KSPConvergedReasons[kreason]));
      EDGEFEM_PETSC(KSPSetType(ksp, KSPGMRES));
      continue;
    }
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
  update_ghosts(x_);
  LocalForm x(x_ghost_, true);
  return {x.span().begin(), x.span().end()};
}

std::vector<double> StaticSolver::local_internal_force() {
  update_ghosts(x_);
  assemble_internal_force(f_ghost_);
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  LocalForm f(f_ghost_, true);
  return {f.span().begin(), f.span().end()};
}

}  // namespace edgefem
