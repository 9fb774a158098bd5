// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file dynamic_solver.hpp
/// Implicit time integration of  M a + (alpha M + beta K) v + f(x) = h(t) + h_att(x, v, t)
/// (Kikuuwe eq. 41 with Rayleigh damping; f = dW/dx is the internal force, h the external loads, h_att the
/// penalty attachments). Integrators:
///  - backward-euler: x_{n+1} solved by Newton (SNES) from
///      M (x - x_n - T v_n)/T^2 + alpha M (x - x_n)/T + f(x) + beta (f(x) - f(x_n))/T = h(t_{n+1}) + h_att,
///    v_{n+1} = (x_{n+1} - x_n)/T. Stiffness damping uses the rate of the internal force, beta df/dt ~ beta K v:
///    exact for linear materials, and the Newton Jacobian (1 + beta/T) K + (1/T^2 + alpha/T) M is consistent.
///  - linearized-euler: Kikuuwe §5.1 (Baraff-Witkin), one linear solve per step:
///      [(T + beta) K + (1/T + alpha) M + (T k + c) I_att] v_{n+1} = h(t_{n+1}) - f(x_n) + M v_n / T
///                                                           - k (x_n - a_{n+1}) + c a'_{n+1},
///    x_{n+1} = x_n + T v_{n+1}, K = K(x_n). This is the paper's A v = b multiplied by (T + beta), except that
///    the damper's own velocity term is taken implicitly only (the printed b also keeps H(p, v_n), which
///    counts the damper -c v_n a second time).
///  - newmark: average acceleration (beta_N = 1/4, gamma_N = 1/2), second order, no numerical damping:
///      a_{n+1} = 4 (x - x_n - T v_n)/T^2 - a_n,  v_{n+1} = 2 (x - x_n)/T - v_n,
///      M a_{n+1} + alpha M v_{n+1} + beta g_{n+1} + f(x) = h(t_{n+1}) + h_att, with the internal-force
///      rate g advanced by the same trapezoidal rule, g_{n+1} = 2 (f(x) - f_n)/T - g_n (= K v exactly for
///      linear materials). Newton Jacobian (1 + 2 beta/T) K + (4/T^2 + 2 alpha/T) M.
/// Prescribed dofs follow their schedules (x = x_D(t_{n+1})); a failed step (Newton or KSP) is retried with
/// the step halved, up to `max_step_cuts` times.
#include <mpi.h>
#include <petscksp.h>
#include <petscsnes.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/job.hpp"
#include "linalg/petsc_util.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"
#include "solver/self_contact.hpp"
#include "solver/static_solver.hpp"
#include "solver/time_integrator.hpp"

namespace edgefem {

class DynamicSolver final : public TimeIntegrator {
 public:
  /// Sets up the Newton driver (its linear solver also serves linearized-euler) with our defaults, then the
  /// job's and the command line's PETSc options. The state starts at rest in the reference configuration with
  /// job.dynamic->initial_velocity (initial_state: static solves the equilibrium at t = 0 in start()).
  /// `quiet`: nothing on the console; `iteration_lines`: one line per Newton iteration besides one per step.
  DynamicSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, const std::string& cli_petsc_options,
                bool quiet, bool iteration_lines = false);
  ~DynamicSolver() override;

  /// initial_state static: the equilibrium at t = 0 (load steps); Newmark: the initial acceleration.
  void start() override;
  /// A failed step (Newton or KSP, or an implausible energy growth) is retried with the step halved, up to
  /// max_step_cuts times; then SolverError.
  TimeStepReport step() override;
  /// "step k/N  t = ...  newton its ...  ksp its ...  pc set-ups ...  wall ...  est. left ...  energy ...".
  [[nodiscard]] std::string progress_line(const TimeStepReport& report, double seconds_left) override;
  /// The preconditioner of the time steps' linear solves (NewtonDriver::preconditioner_name).
  [[nodiscard]] std::string preconditioner_name() const override { return newton_->preconditioner_name(); }
  [[nodiscard]] const NewtonStats& stats() const override { return newton_->stats(); }
  /// With obstacles: contact_gap (1 per vertex) and contact_force (3). Collective.
  [[nodiscard]] std::vector<OutputPointField> output_point_fields() override;
  [[nodiscard]] std::vector<double> obstacle_forces() override;
  [[nodiscard]] ContactTerms* contact_terms() override { return contact_ ? &*contact_ : nullptr; }
  [[nodiscard]] SelfContactTerms* self_contact_terms() override { return self_contact(); }
  /// Self-contact (`contact: {self: true}`; null without).
  [[nodiscard]] SelfContactTerms* self_contact() { return self_contact_ ? &*self_contact_ : nullptr; }
  [[nodiscard]] std::optional<ContactStepReport> last_contact() const override { return contact_step_; }

 protected:
  [[nodiscard]] StateVectors state_vectors() override { return {x_, v_, w_, work2_}; }
  /// position, velocity, acceleration, force_rate, external_work and the predictor's velocity_change (optional:
  /// older checkpoints lack it) of the owned vertices; with obstacles contact_state (optional): ContactTerms'
  /// saved_state() in every owned vertex's 3 entries (a field, so that any rank count reads it back).
  [[nodiscard]] std::vector<CheckpointVector> checkpoint_vectors() override;
  /// Makes the next step set up a new preconditioner (as a restart from the checkpoint does: both repeat the same
  /// arithmetic).
  void before_checkpoint() override { newton_->rebuild_preconditioner(); }
  /// The loads at t_n for the work integral; the contact's state.
  void after_restore() override;
  [[nodiscard]] double contact_energy() override {
    return (contact_ ? contact_->energy(x_) : 0.0) + (self_contact_ ? self_contact_->energy(x_) : 0.0);
  }

 private:
  enum class Phase { static_initial, dynamic };
  /// Both Newton schemes update every rate the same way over a step h: new = dv_du * (change) - old for
  /// Newmark (trapezoidal rule), new = dv_du * (change) for backward Euler, with dv_du = 2/h or 1/h. It gives
  /// v from u = x - x_n, a from v - v_n and the internal-force rate g from f - f_n.
  [[nodiscard]] double dv_du() const { return (integrator_ == Integrator::newmark ? 2.0 : 1.0) / h_step_; }
  [[nodiscard]] double rate(double change, double old) const {
    return dv_du() * change - (integrator_ == Integrator::newmark ? old : 0.0);
  }
  void residual(Vec x, Vec r);
  [[nodiscard]] std::string step_label() const;
  /// The matrix coefficients at positions x (the contact's blocks at x).
  [[nodiscard]] MatrixCoefficients coefficients(Vec x);
  void set_prescribed(Vec x, double t);
  bool attempt(double h, std::string& why);  ///< one (sub)step of size h from time_ to t_new_
  bool attempt_newton(double h, std::string& why);
  /// Contact: a prediction in x_ limited toward the carried start (prescribed values kept).
  void limit_prediction();
  /// Contact: the accepted (sub)step's report (end_step), the deepest penetration of the step kept.
  void record_contact_step();
  bool attempt_linearized(double h, std::string& why);
  /// Linearized Euler: the matrix (T + beta) K + (1/T + alpha) M + (T k + c) I_att of a step of size h.
  [[nodiscard]] MatrixCoefficients linearized_coefficients(double h);
  /// Linearized Euler: work_ := the velocity guess, v_n on free dofs and the prescribed velocity on prescribed ones.
  void linearized_velocity_guess(double h);
  /// Linearized Euler: the matrix at x_n, f_n_ = f(x_n), and the right-hand side in r_.
  void assemble_linearized_system(double h, MatrixCoefficients c);
  /// The rates and work a step's acceptance overwrites, each with its copy (restored if the step is rejected).
  [[nodiscard]] std::array<std::pair<Vec, Vec>, 6> kept_state() const;
  /// Accept the solved (sub)step of size h: the rates, the external work, then the time.
  void accept(double h);
  /// The total energy after an accepted (sub)step against the last accepted one when it cannot grow: false (and
  /// `why`) for an implausible growth, else it becomes the accepted energy.
  bool energy_plausible(std::string& why);
  void solve_initial_static();
  void initial_acceleration();

  const Job& job_;
  std::string cli_petsc_options_;
  Integrator integrator_ = Integrator::backward_euler;

  // State at t_n and work vectors (all ghosted, layout of the assembler).
  PetscOwner<Vec, VecDestroy> x_, v_, a_, g_, f_n_, x_n_, r_, work_, work2_, h_;
  PetscOwner<Vec, VecDestroy> w_;  ///< external work per dof since t = 0
  /// A step's starting rates and work, restored when a converged step is rejected as implausible.
  PetscOwner<Vec, VecDestroy> saved_v_, saved_a_, saved_g_, saved_w_, saved_h_, saved_slope_;
  /// No prescribed motion and no attachments: the total energy (which counts the loads' work) can only stay
  /// (Newmark) or fall (dissipation), so a step that makes it grow by more than kEnergyGrowth of the energies
  /// involved is outside what the step size resolves and is cut.
  bool energy_cannot_grow_ = false;
  static constexpr double kEnergyGrowth = 1e-2;
  std::optional<EnergyReport> accepted_energy_;  ///< after the last accepted (sub)step
  PetscOwner<Vec, VecDestroy> vel_, fv_;         ///< viscous forces: the velocity of the last residual, f_v
  /// Predictor (backward Euler): the velocity change per unit time of the last step.
  PetscOwner<Vec, VecDestroy> slope_;
  std::optional<ContactTerms> contact_;          ///< with obstacles
  std::optional<SelfContactTerms> self_contact_;  ///< with contact.self
  std::vector<contact::VertexBlock> contact_blocks_;  ///< the obstacles' and the self-contact's blocks together
  std::optional<ContactStepReport> contact_step_;  ///< the last accepted (sub)step's (deepest penetration of the step)
  PetscOwner<Vec, VecDestroy> contact_start_;    ///< contact: a step's start, carried along the obstacles' move
  PetscOwner<Vec, VecDestroy> contact_state_;    ///< contact: the checkpoint's contact_state field
  std::optional<NewtonDriver> newton_;
  std::vector<double> diagonal_;  ///< attachment terms on the matrix diagonal, 3 per owned vertex
  std::vector<double> velocity_;  ///< residual(): the velocity at the new time, 3 per owned vertex
  Phase phase_ = Phase::dynamic;
  double h_step_ = 0.0;         ///< the (sub)step being solved
  double newton_target_ = 0.0;  ///< the last Newton solve's target (TimeStepReport::newton_target)
  double t_new_ = 0.0, load_factor_ = 1.0;
  PetscLogStage stage_assembly_ = 0;
};

}  // namespace edgefem
