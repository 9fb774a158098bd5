// SPDX-License-Identifier: BSD-3-Clause
#include "solver/dynamic_solver.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "core/setup_laps.hpp"

namespace edgefem {
namespace {

using Owned = VecArray;  ///< the owned entries of a (ghosted) global vector

}  // namespace

DynamicSolver::DynamicSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
                             const std::string& cli_petsc_options, bool quiet, bool iteration_lines)
    : TimeIntegrator(comm, job.dynamic.value(), mesh, std::move(model), quiet),
      job_(job),
      cli_petsc_options_(cli_petsc_options) {
  stage_assembly_ = log_stage("Assembly");
  integrator_ = spec_.integrator;
  if (integrator_ == Integrator::position_based)
    throw std::invalid_argument("DynamicSolver: integrator position-based is run by PbdSolver (pbd/pbd_solver.hpp)");
  for (auto* v : {&x_, &v_, &a_, &g_, &f_n_, &x_n_, &r_, &work_, &work2_, &h_, &w_, &vel_, &fv_, &slope_})
    *v = assembler_.create_vector();
  EDGEFEM_PETSC(VecCopy(assembler_.reference(), x_));
  for (auto* v : {&v_, &a_, &g_, &f_n_, &h_, &w_, &slope_}) EDGEFEM_PETSC(VecSet(*v, 0.0));
  {
    Owned vel(v_, false);
    for (std::size_t i = 0; i < vel.span().size(); ++i) vel.span()[i] = spec_.initial_velocity[i % 3];
    for (const auto& d : model_.dirichlet) vel.span()[static_cast<std::size_t>(d.dof)] = 0.0;
  }
  diagonal_.assign(3 * static_cast<std::size_t>(mesh_.n_owned), 0.0);
  for (auto* v : {&saved_v_, &saved_a_, &saved_g_, &saved_w_, &saved_h_, &saved_slope_})
    *v = assembler_.create_vector();
  energy_cannot_grow_ = model_.attachments.empty() &&
                        std::all_of(model_.dirichlet.begin(), model_.dirichlet.end(),
                                    [](const DirichletDof& d) { return d.displacement == 0.0 && d.rotation < 0; });
  {  // each rank sees only its own prescribed dofs: agree, or one rank would call the collective energy() alone
    int local = energy_cannot_grow_ ? 1 : 0, all = 0;
    MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, comm_);
    energy_cannot_grow_ = all == 1;
  }

  NewtonProblem problem{[this](Vec x, Vec r) { residual(x, r); },
                        [this](Vec x, Mat P) {
                          assembler_.set_positions(x);
                          assembler_.stiffness(P, coefficients(x));
                        },
                        prescribed_rows(model_),
                        {},   // vertex_rotations: none (only StaticSolver gives GAMG's rebuilds the rotations)
                        {},   // step_limit: contact's, below
                        {},   // extra_multiply: self-contact's, below
                        {}};  // extra_couplings: self-contact's, below
  if (!job_.obstacles.empty()) {
    contact_.emplace(comm_, job_, mesh_, model_, assembler_, spec_.dt);
    if (contact_->barrier()) problem.step_limit = [this](Vec x, Vec y) { return contact_->step_limit(x, y); };
    contact_start_ = assembler_.create_vector();
    contact_state_ = assembler_.create_vector();
    // A moving obstacle works on the body. Newmark's average acceleration does not keep the energy of an impact on
    // the stiff barrier (its discrete energy can grow in the steps that reach it; backward Euler's only falls):
    // no check of the energy then (docs/design.md "Contact").
    energy_cannot_grow_ = energy_cannot_grow_ && !contact_->moving() && integrator_ != Integrator::newmark;
  }
  if (job_.contact.self) {  // (after the obstacles: both limits apply, the smaller wins)
    self_contact_.emplace(comm_, job_, mesh_, model_, assembler_, spec_.dt);
    problem.extra_multiply = [this](Vec in, Vec out) { self_contact_->multiply_couplings(in, out); };
    problem.extra_couplings = [this](Mat P) { self_contact_->add_couplings(P); };
    problem.step_limit = [this, obstacles = problem.step_limit](Vec x, Vec y) {
      return std::min(obstacles ? obstacles(x, y) : 1.0, self_contact_->step_limit(x, y));
    };
    if (!contact_start_) contact_start_ = assembler_.create_vector();
  }
  LinearSystemKind kind = linear_system_kind(comm_, mesh_, model_, true);
  kind.newton_solves = integrator_ != Integrator::linearized_euler;
  newton_.emplace(comm_, job_, cli_petsc_options_, assembler_.matrix(), x_, std::move(problem), kind,
                  quiet_ || !iteration_lines);
  setup_laps::mark(setup_laps::Phase::solver);
}

DynamicSolver::~DynamicSolver() = default;

void DynamicSolver::set_prescribed(Vec x, double t) {
  Owned xa(x, false);
  for (const auto& d : model_.dirichlet) {
    const double target = prescribed_position(model_, d, mesh_.mesh.coords, t);
    const double ref = mesh_.mesh.coords[static_cast<std::size_t>(d.dof)];
    // Static initial phase: the prescribed displacement at t = 0 ramped by the load factor.
    xa.span()[static_cast<std::size_t>(d.dof)] = phase_ == Phase::static_initial ? ref + load_factor_ * (target - ref)
                                                                                 : target;
  }
}

MatrixCoefficients DynamicSolver::coefficients(Vec x) {
  // d/dx of  M (a + alpha v) + f + beta g + h_att(v):  a = rate(rate(u)), so da/du = dv_du^2.
  MatrixCoefficients c;
  if (contact_) c.vertex_blocks = contact_->blocks(x);
  if (self_contact_) {
    const auto self = self_contact_->blocks(x);
    contact_blocks_.assign(c.vertex_blocks.begin(), c.vertex_blocks.end());
    contact_blocks_.insert(contact_blocks_.end(), self.begin(), self.end());
    c.vertex_blocks = contact_blocks_;
  }
  const double dv_dx = phase_ == Phase::static_initial ? 0.0 : dv_du();
  c.stiffness = 1.0 + spec_.damping_stiffness * dv_dx;
  c.mass = dv_dx * dv_dx + spec_.damping_mass * dv_dx;
  if (assembler_.viscous() && dv_dx != 0.0) {  // d f_v / dx through v (the dependence of D on x is left out)
    c.damping = dv_dx;
    c.velocity = vel_;
  }
  if (!model_.attachments.empty()) {
    std::fill(diagonal_.begin(), diagonal_.end(), 0.0);
    for (const auto& a : model_.attachments) {
      const double d = a.spec.stiffness + a.spec.damping * dv_dx;
      for (const LocalIndex v : a.vertices)
        for (int i = 0; i < 3; ++i) diagonal_[3 * static_cast<std::size_t>(v) + i] += d;
    }
    c.diagonal = diagonal_;
  }
  return c;
}

void DynamicSolver::residual(Vec x, Vec r) {
  const double alpha = spec_.damping_mass, beta = spec_.damping_stiffness;
  assembler_.set_positions(x);
  assembler_.internal_force(r);
  assembler_.external_force(t_new_, work2_);
  const bool is_static = phase_ == Phase::static_initial;
  EDGEFEM_PETSC(VecAXPY(r, is_static ? -load_factor_ : -1.0, work2_));
  EDGEFEM_PETSC(VecWAXPY(work_, -1.0, x_n_, x));  // u = x - x_n
  std::span<const double> velocity;               // at the new time, for the attachment dampers
  if (!is_static) {
    if (beta != 0.0) {
      // Stiffness damping beta g, g = rate(f - f_n, g_n): r = f - h_ext becomes (1 + k) f - h_ext - k f_n
      // (- beta g_n for Newmark) with k = beta dv_du.
      const double k = beta * dv_du();
      EDGEFEM_PETSC(VecScale(r, 1.0 + k));
      EDGEFEM_PETSC(VecAXPY(r, k, work2_));
      EDGEFEM_PETSC(VecAXPY(r, -k, f_n_));
      if (integrator_ == Integrator::newmark) EDGEFEM_PETSC(VecAXPY(r, -beta, g_));
    }
    // Inertia and mass damping: M (a + alpha v) with v = rate(u, v_n), a = rate(v - v_n, a_n).
    {
      Owned u(work_, false);
      Owned vn(v_, true);
      Owned an(a_, true);
      std::span<double> us = u.span();
      velocity_.resize(us.size());
      for (std::size_t i = 0; i < us.size(); ++i) {
        velocity_[i] = rate(us[i], vn.span()[i]);
        us[i] = rate(velocity_[i] - vn.span()[i], an.span()[i]) + alpha * velocity_[i];
      }
      velocity = velocity_;
    }
    if (assembler_.viscous()) {  // + f_v(x, v_new): Delingette's damped springs, Volino's viscosity
      {
        Owned vel(vel_, false);
        std::copy(velocity_.begin(), velocity_.end(), vel.span().begin());
      }
      assembler_.viscous_force(vel_, fv_);
      EDGEFEM_PETSC(VecAXPY(r, 1.0, fv_));
    }
    assembler_.mass_multiply(work_, work2_);
    EDGEFEM_PETSC(VecAXPY(r, 1.0, work2_));
  }
  if (contact_) contact_->add_residual(x, r);
  if (self_contact_) self_contact_->add_residual(x, r);
  Owned xa(x, true);
  Owned ra(r, false);
  if (!model_.attachments.empty())
    add_attachment_terms(model_, mesh_.mesh.coords, t_new_, xa.span(), velocity, 0.0, ra.span(), {});
  for (const auto& d : model_.dirichlet) {
    const auto i = static_cast<std::size_t>(d.dof);
    const double target = prescribed_position(model_, d, mesh_.mesh.coords, t_new_);
    const double ref = mesh_.mesh.coords[i];
    ra.span()[i] = xa.span()[i] - (is_static ? ref + load_factor_ * (target - ref) : target);
  }
}

std::string DynamicSolver::step_label() const {
  char label[96];
  if (phase_ == Phase::static_initial)
    std::snprintf(label, sizeof label, "initial state  load %.4g", load_factor_);
  else
    std::snprintf(label, sizeof label, "step %lld/%lld  t %.6g", step_ + 1, n_steps_, t_new_);
  return label;
}

bool DynamicSolver::attempt_newton(double h, std::string& why) {
  // The integrator's own predictor, x_n + h v_n (+ h^2/2 a_n for Newmark); backward Euler with `extrapolate` adds
  // h^2 dv/dt, the velocity change per unit time of the last step (zero before the first step). rtol stays
  // relative to |R| at the integrator's own predictor, as for static load steps (docs/theory/solver.md): a better first
  // iterate must not make the criterion stricter.
  if (contact_) {  // the start: x_n with the prescribed values at t_new, carried along the obstacles' move
    EDGEFEM_PETSC(VecCopy(x_n_, contact_start_));
    set_prescribed(contact_start_, t_new_);
    contact_->carry_along(contact_start_);
  } else if (self_contact_) {
    EDGEFEM_PETSC(VecCopy(x_n_, contact_start_));
    set_prescribed(contact_start_, t_new_);
  }
  EDGEFEM_PETSC(VecWAXPY(x_, h, v_, x_n_));
  if (integrator_ == Integrator::newmark) EDGEFEM_PETSC(VecAXPY(x_, 0.5 * h * h, a_));
  set_prescribed(x_, t_new_);
  limit_prediction();
  double reference = -1.0;
  if (integrator_ != Integrator::newmark && job_.solver.predictor == SolverSpec::Predictor::extrapolate) {
    reference = newton_->residual_norm(x_);
    if (!std::isfinite(reference)) reference = -1.0;  // no reference: rtol refers to the first iterate's |R|
    EDGEFEM_PETSC(VecAXPY(x_, h * h, slope_));
    set_prescribed(x_, t_new_);
    limit_prediction();
  }
  const NewtonResult result = newton_->solve(x_, step_label(), reference);
  newton_target_ = result.target;
  if (!result.converged) why = result.why;
  return result.converged;
}

void DynamicSolver::limit_prediction() {
  if (!contact_ && !self_contact_) return;
  if (contact_) contact_->limit_prediction(contact_start_, x_);
  if (self_contact_) self_contact_->limit_prediction(contact_start_, x_);  // a prefix of each vertex's move
  set_prescribed(x_, t_new_);
}

MatrixCoefficients DynamicSolver::linearized_coefficients(double h) {
  const double alpha = spec_.damping_mass, beta = spec_.damping_stiffness;
  // Matrix (T + beta) K(x_n) + (1/T + alpha) M + (T k + c) I_att, forces f(x_n), and the lifting of the
  // prescribed velocities (x_D(t_new) - x_n)/T.
  MatrixCoefficients c;
  c.stiffness = h + beta;
  c.mass = 1.0 / h + alpha;
  if (assembler_.viscous()) {  // f_v(x_n, v) = D(x_n) v, taken implicitly
    c.damping = 1.0;
    c.velocity = v_;
  }
  if (!model_.attachments.empty()) {
    std::fill(diagonal_.begin(), diagonal_.end(), 0.0);
    for (const auto& a : model_.attachments)
      for (const LocalIndex v : a.vertices)
        for (int i = 0; i < 3; ++i)
          diagonal_[3 * static_cast<std::size_t>(v) + i] += h * a.spec.stiffness + a.spec.damping;
    c.diagonal = diagonal_;
  }
  return c;
}

void DynamicSolver::linearized_velocity_guess(double h) {
  // work_ = the velocity guess: v_n on free dofs, the prescribed velocity on prescribed dofs.
  EDGEFEM_PETSC(VecCopy(v_, work_));
  Owned xn(x_n_, true);
  Owned vg(work_, false);
  for (const auto& d : model_.dirichlet) {
    const auto i = static_cast<std::size_t>(d.dof);
    vg.span()[i] = (prescribed_position(model_, d, mesh_.mesh.coords, t_new_) - xn.span()[i]) / h;
  }
}

void DynamicSolver::assemble_linearized_system(double h, MatrixCoefficients c) {
  c.lift_in = work_;
  c.lift_out = work2_;
  EDGEFEM_PETSC(PetscLogStagePush(stage_assembly_));
  assembler_.set_positions(x_n_);
  assembler_.force_and_stiffness(f_n_, assembler_.matrix(), c);
  // b = h(t_new) - f(x_n) + M v_n / T - k (x_n - a) + c a' - lift, prescribed rows: the prescribed velocity.
  assembler_.external_force(t_new_, r_);
  EDGEFEM_PETSC(VecAXPY(r_, -1.0, f_n_));
  EDGEFEM_PETSC(VecAXPY(r_, -1.0, work2_));
  assembler_.mass_multiply(v_, work2_);
  EDGEFEM_PETSC(VecAXPY(r_, 1.0 / h, work2_));
  {
    Owned xn(x_n_, true);
    Owned b(r_, false);
    Owned vg(work_, true);
    if (!model_.attachments.empty()) {
      std::vector<double> terms(b.span().size(), 0.0);
      const std::vector<double> zero(terms.size(), 0.0);
      add_attachment_terms(model_, mesh_.mesh.coords, t_new_, xn.span(), zero, 0.0, terms, {});
      for (std::size_t i = 0; i < terms.size(); ++i) b.span()[i] -= terms[i];
    }
    for (const auto& d : model_.dirichlet)
      b.span()[static_cast<std::size_t>(d.dof)] = vg.span()[static_cast<std::size_t>(d.dof)];
  }
  EDGEFEM_PETSC(PetscLogStagePop());
}

bool DynamicSolver::attempt_linearized(double h, std::string& why) {
  const MatrixCoefficients c = linearized_coefficients(h);
  linearized_velocity_guess(h);
  assemble_linearized_system(h, c);
  // Solve into h_-free storage: the new velocity goes to work2_ (initial guess: the velocity guess).
  EDGEFEM_PETSC(VecCopy(work_, work2_));
  const NewtonResult result = newton_->solve_linear(r_, work2_, step_label());
  if (!result.converged) {
    why = result.why;
    return false;
  }
  if (!quiet_)
    EDGEFEM_PETSC(PetscPrintf(comm_, "  %s  linear solve: ksp %d  pc %s\n", step_label().c_str(),
                              result.stats.ksp_iterations, result.stats.pc_setups > 0 ? "new" : "reused"));
  // x = x_n + h v (the new velocity is in work2_; it replaces v_ in accept()).
  EDGEFEM_PETSC(VecWAXPY(x_, h, work2_, x_n_));
  set_prescribed(x_, t_new_);
  return true;
}

std::array<std::pair<Vec, Vec>, 6> DynamicSolver::kept_state() const {
  return {{{v_, saved_v_}, {a_, saved_a_}, {g_, saved_g_}, {w_, saved_w_}, {h_, saved_h_}, {slope_, saved_slope_}}};
}

void DynamicSolver::accept(double h) {
  const bool newmark = integrator_ == Integrator::newmark;
  const double beta = spec_.damping_stiffness;
  // v = rate(u, v_n) (and a = rate(v - v_n, a_n), g = rate(f - f_n, g_n) for Newmark), the external work, then
  // the time. Linearized Euler solved for v directly.
  if (integrator_ == Integrator::linearized_euler) {
    EDGEFEM_PETSC(VecCopy(work2_, v_));
  } else {
    EDGEFEM_PETSC(VecWAXPY(work_, -1.0, x_n_, x_));  // u
    Owned u(work_, true);
    Owned v(v_, false);
    Owned a(a_, false);
    Owned slope(slope_, false);
    for (std::size_t i = 0; i < u.span().size(); ++i) {
      const double v_new = rate(u.span()[i], v.span()[i]);
      if (newmark) a.span()[i] = rate(v_new - v.span()[i], a.span()[i]);
      slope.span()[i] = (v_new - v.span()[i]) / h;
      v.span()[i] = v_new;
    }
  }
  if (newmark && beta != 0.0) {
    assembler_.set_positions(x_);
    assembler_.internal_force(work2_);
    EDGEFEM_PETSC(VecAXPY(work2_, -1.0, f_n_));          // f - f_n
    EDGEFEM_PETSC(VecAXPBY(g_, dv_du(), -1.0, work2_));  // g = rate(f - f_n, g_n)
  }
  // External work, per dof: (h(t_n) + h(t_new))/2 . (x_new - x_n).
  assembler_.external_force(t_new_, work2_);
  {
    Owned hn(h_, false);
    Owned hnew(work2_, true);
    Owned xn(x_n_, true);
    Owned x(x_, true);
    Owned w(w_, false);
    for (std::size_t i = 0; i < w.span().size(); ++i) {
      w.span()[i] += 0.5 * (hn.span()[i] + hnew.span()[i]) * (x.span()[i] - xn.span()[i]);
      hn.span()[i] = hnew.span()[i];
    }
  }
  time_ = t_new_;
}

bool DynamicSolver::energy_plausible(std::string& why) {
  // A converged step can still be nonsense: with a step far beyond the motion's time scale Newton finds a
  // far-away root (the swinging beam with dt = 100: total energy 3.2e9 instead of 3).
  const EnergyReport now = energy();
  if (accepted_energy_) {
    const EnergyReport& before = *accepted_energy_;
    auto size = [](const EnergyReport& e) {
      return std::abs(e.kinetic) + std::abs(e.strain) + std::abs(e.attachment) + std::abs(e.external_work);
    };
    const double growth = now.total() - before.total();
    const double scale = std::max({size(now), size(before), 1e-300});
    if (growth > kEnergyGrowth * scale) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "the converged step is implausible: the total energy grew from %.6g to %.6g (by %.3g of the "
                    "energies involved, more than %g) in a run that can only keep or lose it",
                    before.total(), now.total(), growth / scale, kEnergyGrowth);
      why = text;
      return false;
    }
  }
  accepted_energy_ = now;
  return true;
}

bool DynamicSolver::attempt(double h, std::string& why) {
  h_step_ = h;
  EDGEFEM_PETSC(VecCopy(x_, x_n_));
  if (contact_) contact_->begin_step(x_n_, time_, t_new_, h);
  if (self_contact_) self_contact_->begin_step(x_n_, h);
  // h_ holds the external loads at t_n (for the work), f_n_ the internal force at x_n (stiffness damping).
  if (integrator_ != Integrator::linearized_euler && spec_.damping_stiffness != 0.0) {
    assembler_.set_positions(x_n_);
    assembler_.internal_force(f_n_);
  }
  bool ok = false;
  switch (integrator_) {
    case Integrator::backward_euler:
    case Integrator::newmark: ok = attempt_newton(h, why); break;
    case Integrator::linearized_euler: ok = attempt_linearized(h, why); break;
    case Integrator::position_based: break;  // PbdSolver's (refused by the constructor)
  }
  if (!ok) {
    EDGEFEM_PETSC(VecCopy(x_n_, x_));
    return false;
  }
  const double time_n = time_;
  if (energy_cannot_grow_)
    for (const auto& [state, copy] : kept_state()) EDGEFEM_PETSC(VecCopy(state, copy));
  accept(h);
  if (energy_cannot_grow_ && !energy_plausible(why)) {
    for (const auto& [state, copy] : kept_state()) EDGEFEM_PETSC(VecCopy(copy, state));
    EDGEFEM_PETSC(VecCopy(x_n_, x_));
    time_ = time_n;
    newton_->rebuild_preconditioner();
    return false;
  }
  if (contact_) record_contact_step();
  return true;
}

void DynamicSolver::record_contact_step() {
  ContactStepReport r = contact_->end_step(x_);
  if (contact_step_) r.penetration = std::max(r.penetration, contact_step_->penetration);
  contact_step_ = r;
}

void DynamicSolver::solve_initial_static() {
  phase_ = Phase::static_initial;
  t_new_ = 0.0;
  const int n = std::max(1, job_.steps);
  EDGEFEM_PETSC(VecCopy(assembler_.reference(), x_n_));
  Extrapolator predictor(x_);
  predictor.accept(x_, 0.0);
  PetscOwner<Vec, VecDestroy> saved = assembler_.create_vector();
  const bool use_predictor = job_.solver.predictor == SolverSpec::Predictor::extrapolate;
  for (int k = 1; k <= n; ++k) {
    const int taken = advance(
        static_cast<double>(k - 1) / n, static_cast<double>(k) / n, spec_.max_step_cuts,
        [&](double a, double s, std::string& why) {
          load_factor_ = s;
          if (contact_) contact_->begin_step(x_, 0.0, 0.0, s - a);
          if (self_contact_) self_contact_->begin_step(x_, s - a);
          const FeasibleStart feasible{[this](Vec x) {
                                         if (contact_) contact_->carry_along(x);
                                       },
                                       [this](Vec start, Vec x) {
                                         if (contact_) contact_->limit_prediction(start, x);
                                         if (self_contact_) self_contact_->limit_prediction(start, x);
                                       }};
          const bool ok = solve_load_step(
              *newton_, predictor, use_predictor, x_, saved, s, [this](Vec x, double) { set_prescribed(x, 0.0); },
              nullptr, step_label(), why, contact_ || self_contact_ ? &feasible : nullptr);
          if (ok && contact_) record_contact_step();
          return ok;
        },
        [&](double, double increment, const std::string& why) {
          EDGEFEM_PETSC(PetscPrintf(comm_,
                                    "  warning: initial state, load step %d: %s; cutting the load increment to %.4g\n",
                                    k, why.c_str(), increment));
        });
    if (taken == 0)
      throw SolverError("initial_state static: load step " + std::to_string(k) + " of " + std::to_string(n) +
                        " did not converge even after cutting it; try more load steps ('analysis.steps') or other "
                        "PETSc options");
  }
  phase_ = Phase::dynamic;
  load_factor_ = 1.0;
  newton_->rebuild_preconditioner();  // the dynamic matrix adds the mass
}

void DynamicSolver::initial_acceleration() {
  // M a_0 = h(0) - f(x_0) - alpha M v_0 - beta g_0 + h_att(x_0, v_0, 0), a_0 = 0 at prescribed dofs, and the
  // internal-force rate g_0 = K(x_0) v_0 (the prescribed columns through the lifting).
  const double alpha = spec_.damping_mass, beta = spec_.damping_stiffness;
  assembler_.set_positions(x_);
  if (beta != 0.0) {
    MatrixCoefficients c;
    EDGEFEM_PETSC(VecCopy(v_, work_));
    c.lift_in = work_;
    c.lift_out = work2_;
    assembler_.stiffness(assembler_.matrix(), c);
    {
      Owned vf(work_, false);
      for (const auto& d : model_.dirichlet) vf.span()[static_cast<std::size_t>(d.dof)] = 0.0;
    }
    EDGEFEM_PETSC(MatMult(assembler_.matrix(), work_, g_));
    EDGEFEM_PETSC(VecAXPY(g_, 1.0, work2_));
  }
  assembler_.internal_force(f_n_);
  assembler_.external_force(0.0, r_);
  EDGEFEM_PETSC(VecAXPY(r_, -1.0, f_n_));
  EDGEFEM_PETSC(VecAXPY(r_, -beta, g_));
  assembler_.mass_multiply(v_, work2_);
  EDGEFEM_PETSC(VecAXPY(r_, -alpha, work2_));
  {
    Owned x(x_, true);
    Owned v(v_, true);
    Owned b(r_, false);
    std::vector<double> terms(b.span().size(), 0.0);
    add_attachment_terms(model_, mesh_.mesh.coords, 0.0, x.span(), v.span(), 0.0, terms, {});
    for (std::size_t i = 0; i < terms.size(); ++i) b.span()[i] -= terms[i];
    for (const auto& d : model_.dirichlet) b.span()[static_cast<std::size_t>(d.dof)] = 0.0;
  }
  if (Mat mass = assembler_.mass_matrix()) {
    PetscOwner<Mat, MatDestroy> m;
    EDGEFEM_PETSC(MatDuplicate(mass, MAT_COPY_VALUES, m.address()));
    EDGEFEM_PETSC(MatZeroRowsColumns(m, static_cast<PetscInt>(assembler_.dirichlet_rows().size()),
                                     assembler_.dirichlet_rows().data(), 1.0, nullptr, nullptr));
    PetscOwner<KSP, KSPDestroy> ksp;
    PC pc = nullptr;
    EDGEFEM_PETSC(KSPCreate(comm_, ksp.address()));
    EDGEFEM_PETSC(KSPSetOperators(ksp, m, m));
    EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
    EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
    EDGEFEM_PETSC(PCSetType(pc, PCJACOBI));
    EDGEFEM_PETSC(KSPSetTolerances(ksp, 1e-14, 1e-300, PETSC_DEFAULT, 1000));
    EDGEFEM_PETSC(KSPSolve(ksp, r_, a_));
  } else {
    Owned b(r_, true);
    Owned a(a_, false);
    const auto& m = assembler_.lumped_mass();
    for (std::size_t i = 0; i < m.size(); ++i) a.span()[i] = m[i] > 0.0 ? b.span()[i] / m[i] : 0.0;
  }
}

void DynamicSolver::start() {
  if (spec_.initial_state == InitialState::static_equilibrium) solve_initial_static();
  if (integrator_ == Integrator::newmark) initial_acceleration();
  assembler_.external_force(0.0, h_);
}

TimeStepReport DynamicSolver::step() {
  if (energy_cannot_grow_ && !accepted_energy_) accepted_energy_ = energy();  // what the first step is checked against
  TimeStepReport report;
  report.step = step_ + 1;
  const NewtonStats before = newton_->stats();
  newton_target_ = 0.0;
  contact_step_.reset();
  const auto t0 = std::chrono::steady_clock::now();
  const double target = static_cast<double>(step_ + 1) * spec_.dt;
  const int substeps = advance(
      time_, target, spec_.max_step_cuts,
      [&](double a, double b, std::string& why) {
        t_new_ = b;
        return attempt(b - a, why);
      },
      [&](double a, double increment, const std::string& why) {
        EDGEFEM_PETSC(PetscPrintf(comm_, "  warning: step %lld at t = %.6g: %s; halving the time step to %.6g\n",
                                  step_ + 1, a, why.c_str(), increment));
      });
  if (substeps == 0)
    throw SolverError("time step " + std::to_string(step_ + 1) + " (t = " + std::to_string(time_) + " -> " +
                      std::to_string(target) + ") failed even after halving the step " +
                      std::to_string(spec_.max_step_cuts) +
                      " times; try a smaller 'analysis.dt', more damping, or other PETSc options");
  time_ = target;
  ++step_;
  report.time = time_;
  report.substeps = substeps;
  report.newton_target = newton_target_;
  report.stats = newton_->stats() - before;
  report.newton_iterations = report.stats.newton_iterations;
  report.ksp_iterations = report.stats.ksp_iterations;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.energy = energy_cannot_grow_ ? *accepted_energy_ : energy();  // the check computed it already
  report.contact = contact_step_;
  return report;
}

std::string DynamicSolver::progress_line(const TimeStepReport& r, double seconds_left) {
  const std::string substeps = r.substeps > 1 ? "  substeps " + std::to_string(r.substeps) : "";
  const std::string contact = r.contact ? contact_progress(*r.contact) : std::string();
  char line[640];
  std::snprintf(line, sizeof line,
                "step %lld/%lld  t = %.6g  newton its %d  ksp its %d  pc set-ups %d%s  wall %.3f s  est. left %.1f s  "
                "energy %.9e%s\n",
                r.step, n_steps_, r.time, r.newton_iterations, r.ksp_iterations, r.stats.pc_setups, substeps.c_str(),
                r.seconds, seconds_left, r.energy.total(), contact.c_str());
  return line;
}

std::vector<OutputPointField> DynamicSolver::output_point_fields() {
  if (!contact_) return {};
  assembler_.set_positions(x_);
  const std::vector<double> x = assembler_.local_positions();
  std::vector<double> gap, force;
  contact_->vertex_fields(x_, x, gap, force);
  return {{"contact_gap", 1, std::move(gap)}, {"contact_force", 3, std::move(force)}};
}

std::vector<double> DynamicSolver::obstacle_forces() { return contact_ ? contact_->obstacle_forces(x_) : std::vector<double>{}; }

std::vector<CheckpointVector> DynamicSolver::checkpoint_vectors() {
  std::vector<CheckpointVector> out = {{"position", x_},   {"velocity", v_},      {"acceleration", a_},
                                       {"force_rate", g_}, {"external_work", w_}, {"velocity_change", slope_, false}};
  if (contact_) {  // (restore() overwrites it with the checkpoint's)
    const std::array<double, 3> state = contact_->saved_state();
    {
      Owned values(contact_state_, false);
      for (std::size_t i = 0; i < values.span().size(); ++i) values.span()[i] = state[i % 3];
    }
    out.push_back({"contact_state", contact_state_, false});
  }
  return out;
}

void DynamicSolver::after_restore() {
  assembler_.external_force(time_, h_);
  if (!contact_) return;
  // Every owned vertex holds the same three values; a rank without owned vertices takes them from the others.
  double local[4] = {0, 0, 0, 0}, global[4] = {0, 0, 0, 0};
  {
    Owned values(contact_state_, true);
    if (values.span().size() >= 3) local[0] = values.span()[0], local[1] = values.span()[1], local[2] = values.span()[2], local[3] = 1;
  }
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  double first[2] = {local[3] > 0 ? static_cast<double>(rank) : 1e300, 0}, owner[2] = {0, 0};
  MPI_Allreduce(first, owner, 1, MPI_DOUBLE, MPI_MIN, comm_);
  global[0] = local[0], global[1] = local[1], global[2] = local[2];
  MPI_Bcast(global, 3, MPI_DOUBLE, static_cast<int>(owner[0]), comm_);
  contact_->restore_state({global[0], global[1], global[2]});
}

}  // namespace edgefem
