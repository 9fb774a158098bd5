// SPDX-License-Identifier: BSD-3-Clause
#include "solver/static_solver.hpp"

#include <petscksp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/setup_laps.hpp"

namespace edgefem {

std::vector<PetscInt> prescribed_rows(const Model& model) {
  std::vector<PetscInt> rows;
  rows.reserve(model.dirichlet.size());
  for (const auto& d : model.dirichlet) rows.push_back(static_cast<PetscInt>(d.dof));
  return rows;
}

LinearSystemKind linear_system_kind(MPI_Comm comm, const LocalMesh& mesh, const Model& model, bool dynamic) {
  LinearSystemKind kind;
  kind.global_dofs = 3 * static_cast<long long>(mesh.n_global_vertices);
  kind.local_preconditioner = dynamic && model.nodes_per_cell == 3;
  kind.dynamic = dynamic;
  MPI_Comm_size(comm, &kind.ranks);
  return kind;
}

StaticSolver::StaticSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
                           const std::string& cli_petsc_options, bool quiet, bool iteration_lines)
    : comm_(comm), job_(job), mesh_(mesh), model_(std::move(model)), assembler_(comm, mesh, model_), quiet_(quiet) {
  MPI_Comm_rank(comm_, &rank_);
  n_steps_ = job_.steps;
  x_ = assembler_.create_vector();
  saved_ = assembler_.create_vector();
  for (auto* v : {&lift_in_, &lift_out_, &rhs_, &dx_}) *v = assembler_.create_vector();
  EDGEFEM_PETSC(VecCopy(assembler_.reference(), x_));
  f_ext_ = assembler_.create_vector();
  attachment_diagonal_.assign(3 * static_cast<std::size_t>(mesh_.n_owned), 0.0);
  NewtonProblem problem{[this](Vec x, Vec r) { residual(x, r); }, [this](Vec x, Mat P) { jacobian(x, P); },
                        prescribed_rows(model_), [this] { return assembler_.vertex_rotations(); }, {}, {}, {}};
  if (!job_.obstacles.empty()) {
    contact_.emplace(comm_, job_, mesh_, model_, assembler_, 0.0);
    if (contact_->barrier()) problem.step_limit = [this](Vec x, Vec y) { return contact_->step_limit(x, y); };
    feasible_.emplace(FeasibleStart{[this](Vec x) { contact_->carry_along(x); },
                                    [this](Vec start, Vec x) { contact_->limit_prediction(start, x); }});
  }
  if (job_.contact.self) {  // (after the obstacles: both limits apply, the smaller wins)
    self_contact_.emplace(comm_, job_, mesh_, model_, assembler_, 0.0);
    problem.extra_multiply = [this](Vec in, Vec out) { self_contact_->multiply_couplings(in, out); };
    problem.extra_couplings = [this](Mat P) { self_contact_->add_couplings(P); };
    problem.step_limit = [this, obstacles = problem.step_limit](Vec x, Vec y) {
      return std::min(obstacles ? obstacles(x, y) : 1.0, self_contact_->step_limit(x, y));
    };
    const std::optional<FeasibleStart> obstacles = feasible_;
    feasible_.emplace(FeasibleStart{[obstacles](Vec x) { if (obstacles) obstacles->carry(x); },
                                    [this, obstacles](Vec start, Vec x) {
                                      if (obstacles) obstacles->limit(start, x);
                                      self_contact_->limit_prediction(start, x);  // a prefix of each vertex's move
                                    }});
  }
  newton_.emplace(comm_, job_, cli_petsc_options, assembler_.matrix(), x_, std::move(problem),
                  linear_system_kind(comm_, mesh_, model_, false), quiet_ || !iteration_lines);
  predictor_.emplace(x_);
  setup_laps::mark(setup_laps::Phase::solver);
}

StaticSolver::~StaticSolver() = default;

std::size_t StaticSolver::vector_bytes() const {
  PetscInt n = 0;
  if (x_) VecGetLocalSize(x_, &n);
  // x, f_ext, saved, the tangent predictor's four and the extrapolation's states and slope (3 + 1)
  int count = 0;
  for (Vec v : {x_.get(), f_ext_.get(), saved_.get(), lift_in_.get(), lift_out_.get(), rhs_.get(), dx_.get()})
    count += v ? 1 : 0;
  if (predictor_) count += 4;
  return static_cast<std::size_t>(count) * static_cast<std::size_t>(n) * sizeof(PetscScalar) +
         attachment_diagonal_.capacity() * sizeof(double);
}

void StaticSolver::set_prescribed(Vec x, double load_factor) {
  VecArray xa(x, false);
  for (const auto& d : model_.dirichlet)
    xa.span()[static_cast<std::size_t>(d.dof)] = prescribed_position(model_, d, mesh_.mesh.coords, load_factor);
}

void StaticSolver::residual(Vec x, Vec r) {
  assembler_.set_positions(x);
  assembler_.internal_force(r);
  assembler_.external_force(load_factor_, f_ext_);
  EDGEFEM_PETSC(VecAXPY(r, -1.0, f_ext_));
  VecArray xa(x, true), ra(r, false);
  add_attachment_terms(model_, mesh_.mesh.coords, load_factor_, xa.span(), {}, 0.0, ra.span(), {});
  if (contact_) contact_->add_residual(x, r);
  if (self_contact_) self_contact_->add_residual(x, r);
  for (const auto& d : model_.dirichlet)
    ra.span()[d.dof] = xa.span()[d.dof] - prescribed_position(model_, d, mesh_.mesh.coords, load_factor_);
}

MatrixCoefficients StaticSolver::coefficients(Vec x) {
  MatrixCoefficients c;
  if (contact_) c.vertex_blocks = contact_->blocks(x);
  if (self_contact_) {
    const auto self = self_contact_->blocks(x);
    contact_blocks_.assign(c.vertex_blocks.begin(), c.vertex_blocks.end());
    contact_blocks_.insert(contact_blocks_.end(), self.begin(), self.end());
    c.vertex_blocks = contact_blocks_;
  }
  if (!model_.attachments.empty()) {
    std::fill(attachment_diagonal_.begin(), attachment_diagonal_.end(), 0.0);
    add_attachment_terms(model_, mesh_.mesh.coords, load_factor_, {}, {}, 0.0, {}, attachment_diagonal_);
    c.diagonal = attachment_diagonal_;
  }
  return c;
}

void StaticSolver::jacobian(Vec x, Mat P) {
  assembler_.set_positions(x);
  assembler_.stiffness(P, coefficients(x));
}

bool StaticSolver::load_step(double from, double to, std::string& why) {
  load_factor_ = to;
  char label[96];
  std::snprintf(label, sizeof label, "step %d/%d  load %.4g", step_, n_steps_, to);
  if (contact_) contact_->begin_step(x_, from, to, to - from);
  if (self_contact_) self_contact_->begin_step(x_, to - from);
  const bool ok = solve_load_step(
      *newton_, *predictor_, job_.solver.predictor == SolverSpec::Predictor::extrapolate, x_, saved_, to,
      [this](Vec x, double s) { set_prescribed(x, s); }, [this](Vec x, double s) { tangent_predict(x, s); }, label,
      why, feasible_ ? &*feasible_ : nullptr);
  if (ok && contact_) {
    const double deepest = std::max(contact_step_.penetration, 0.0);
    contact_step_ = contact_->end_step(x_);
    contact_step_.penetration = std::max(contact_step_.penetration, deepest);
  }
  return ok;
}

void StaticSolver::tangent_predict(Vec x, double to) {
  // x is converged at the previous load factor. Move it by y: K(x) y = -R(x; to) - K_fc d_c, y_c = d_c, where d_c is
  // the increment of the prescribed values (lifted into the free rows instead of jumped).
  {
    VecArray d(lift_in_, false), xa(x, true);
    std::fill(d.span().begin(), d.span().end(), 0.0);
    for (const auto& p : model_.dirichlet) {
      const auto i = static_cast<std::size_t>(p.dof);
      d.span()[i] = prescribed_position(model_, p, mesh_.mesh.coords, to) - xa.span()[i];
    }
  }
  load_factor_ = to;
  assembler_.set_positions(x);
  MatrixCoefficients c = coefficients(x);
  c.lift_in = lift_in_;
  c.lift_out = lift_out_;
  assembler_.stiffness(assembler_.matrix(), c);
  residual(x, rhs_);  // its prescribed rows: x_c - x_D(to) = -d_c
  EDGEFEM_PETSC(VecAXPY(rhs_, 1.0, lift_out_));
  EDGEFEM_PETSC(VecScale(rhs_, -1.0));
  EDGEFEM_PETSC(VecSet(dx_, 0.0));
  char label[96];
  std::snprintf(label, sizeof label, "step %d/%d  load %.4g  predictor", step_, n_steps_, to);
  const NewtonResult r = newton_->solve_linear(rhs_, dx_, label, job_.solver.eta_max);
  if (r.converged) EDGEFEM_PETSC(VecAXPY(x, 1.0, dx_));
}

std::vector<StepReport> StaticSolver::run(const std::function<void(int, double)>& on_step,
                                          const std::function<bool()>& should_stop) {
  std::vector<StepReport> reports;
  step_ = 0;
  load_factor_ = 0.0;
  predictor_->reset();
  predictor_->accept(x_, 0.0);
  if (on_step) on_step(0, 0.0);
  constexpr int max_cuts = kMaxLoadStepCuts;
  for (int k = 1; k <= n_steps_; ++k) {
    step_ = k;
    StepReport report;
    report.step = k;
    report.load_factor = static_cast<double>(k) / n_steps_;
    const NewtonStats before = newton_->stats();
    const auto t0 = std::chrono::steady_clock::now();
    contact_step_ = ContactStepReport{};
    const int taken = advance(
        static_cast<double>(k - 1) / n_steps_, report.load_factor, max_cuts,
        [&](double a, double b, std::string& why) { return load_step(a, b, why); },
        [&](double, double increment, const std::string& why) {
          EDGEFEM_PETSC(PetscPrintf(comm_, "  warning: step %d: %s; cutting the load increment to %.4g\n", k,
                                    why.c_str(), increment));
        });
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report.stats = newton_->stats() - before;
    report.newton_iterations = report.stats.newton_iterations;
    report.ksp_iterations = report.stats.ksp_iterations;
    report.substeps = taken;
    report.contact = contact_step_;
    if (taken == 0)
      throw SolverError("load step " + std::to_string(k) + " of " + std::to_string(n_steps_) +
                        " did not converge even after cutting the load increment " + std::to_string(max_cuts) +
                        " times; try more load steps ('analysis.steps'), a looser 'solver.newton' tolerance, or "
                        "other PETSc options (-snes_monitor -ksp_monitor)");
    reports.push_back(report);
    if (!quiet_) {
      double elapsed = 0;
      for (const auto& r : reports) elapsed += r.seconds;
      const double left = elapsed / k * (n_steps_ - k);
      const std::string contact = contact_ ? contact_progress(report.contact) : std::string();
      EDGEFEM_PETSC(PetscPrintf(comm_,
                                "step %d/%d  load factor %.4g  newton its %d  ksp its %d  pc set-ups %d  wall %.3f s  "
                                "est. left %.1f s%s\n",
                                k, n_steps_, report.load_factor, report.newton_iterations, report.ksp_iterations,
                                report.stats.pc_setups, report.seconds, left, contact.c_str()));
    }
    if (on_step) on_step(k, report.load_factor);
    if (k < n_steps_ && should_stop && should_stop()) break;
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
