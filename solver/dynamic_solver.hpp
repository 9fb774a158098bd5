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

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"
#include "linalg/petsc_util.hpp"
#include "solver/static_solver.hpp"

namespace edgefem {

/// Energies of the current state, summed over ranks.
struct EnergyReport {
  double kinetic = 0.0;        ///< v^T M v / 2
  double strain = 0.0;         ///< W(x)
  double attachment = 0.0;     ///< springs of the penalty attachments
  double external_work = 0.0;  ///< work of h (loads) since the start, trapezoidal in time
  /// kinetic + strain + attachment - external_work: constant for an undamped, conservative system.
  [[nodiscard]] double total() const { return kinetic + strain + attachment - external_work; }
};

/// Collective: the strain energy at positions x, the kinetic energy of velocities v, the external work
/// accumulated in w (its entries summed) and the model's attachment springs at time t (reference: 3 coordinates
/// per local vertex), summed over the ranks. `work`: a scratch vector of the assembler's layout. Moves the
/// assembler's positions to x.
EnergyReport state_energy(MPI_Comm comm, Assembler& assembler, const Model& model, std::span<const double> reference,
                          double t, Vec x, Vec v, Vec w, Vec work);

struct TimeStepReport {
  long long step = 0;
  double time = 0.0;
  int newton_iterations = 0;
  int ksp_iterations = 0;
  int substeps = 1;
  double newton_target = 0.0;  ///< the |R| the step's (last) Newton solve had to reach; 0 for linearized-euler
  double seconds = 0.0;
  NewtonStats stats;  ///< the step's solver counts and times (PC set-ups, assembly, ...)
  EnergyReport energy;
};

class DynamicSolver {
 public:
  /// Sets up the Newton driver (its linear solver also serves linearized-euler) with our defaults, then the
  /// job's and the command line's PETSc options. The state starts at rest in the reference configuration with
  /// job.dynamic->initial_velocity (initial_state: static solves the equilibrium at t = 0 in run()).
  /// `quiet`: nothing on the console; `iteration_lines`: one line per Newton iteration besides one per step.
  DynamicSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, const std::string& cli_petsc_options,
                bool quiet, bool iteration_lines = false);
  ~DynamicSolver();
  DynamicSolver(const DynamicSolver&) = delete;
  DynamicSolver& operator=(const DynamicSolver&) = delete;

  /// Integrate from the current state to end_time. `on_step(step, time)` is called for the initial state
  /// (unless restarted) and after every completed step. `should_stop()` (if given) is called after `on_step` of
  /// every completed step but the last; true ends the run there (the state is that step's). It must return the
  /// same on every rank (runtime/stop_signal.hpp: agree_on_stop). Throws SolverError when a step fails even after
  /// cutting; the state is then the last completed step.
  std::vector<TimeStepReport> run(const std::function<void(long long, double)>& on_step,
                                  const std::function<bool()>& should_stop = {});

  /// The state for a checkpoint: position, velocity, acceleration, force_rate, external_work and the predictor's
  /// velocity_change of the owned vertices.
  /// Also makes the next step set up a new preconditioner (as a restart from it does: both repeat the same
  /// arithmetic).
  [[nodiscard]] CheckpointState checkpoint_state();
  /// Continue from a checkpoint (fields as checkpoint_state() writes them, owned vertices in local order).
  void restore(const CheckpointState& state);

  [[nodiscard]] long long step() const { return step_; }
  [[nodiscard]] double time() const { return time_; }
  [[nodiscard]] long long n_steps() const { return n_steps_; }
  /// Positions / velocities of all local vertices (owned then ghosts), ghosts up to date.
  [[nodiscard]] std::vector<double> local_positions();
  [[nodiscard]] std::vector<double> local_velocities();
  /// Internal force f_int(x) summed over ranks, all local vertices.
  [[nodiscard]] std::vector<double> local_internal_force();
  /// Energies of the current state (collective).
  [[nodiscard]] EnergyReport energy();

  [[nodiscard]] const LocalMesh& mesh() const { return mesh_; }
  [[nodiscard]] const Model& model() const { return model_; }
  /// Counts and times of all solves so far (initial state included).
  [[nodiscard]] const NewtonStats& stats() const { return newton_->stats(); }
  /// The preconditioner of the time steps' linear solves (NewtonDriver::preconditioner_name).
  [[nodiscard]] std::string preconditioner_name() const { return newton_->preconditioner_name(); }

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
  [[nodiscard]] MatrixCoefficients coefficients();
  void set_prescribed(Vec x, double t);
  bool attempt(double h, std::string& why);  ///< one (sub)step of size h from time_ to t_new_
  bool attempt_newton(double h, std::string& why);
  bool attempt_linearized(double h, std::string& why);
  void solve_initial_static();
  void initial_acceleration();
  [[nodiscard]] std::vector<double> owned(Vec v) const;

  MPI_Comm comm_;
  const Job& job_;
  const DynamicSpec& spec_;
  const LocalMesh& mesh_;
  Model model_;
  Assembler assembler_;
  bool quiet_;
  int rank_ = 0;
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
  std::optional<NewtonDriver> newton_;
  std::vector<double> diagonal_;  ///< attachment terms on the matrix diagonal, 3 per owned vertex
  std::vector<double> velocity_;  ///< residual(): the velocity at the new time, 3 per owned vertex
  Phase phase_ = Phase::dynamic;
  double h_step_ = 0.0;  ///< the (sub)step being solved
  double newton_target_ = 0.0;  ///< the last Newton solve's target (TimeStepReport::newton_target)
  double time_ = 0.0, t_new_ = 0.0, load_factor_ = 1.0;
  long long step_ = 0, n_steps_ = 0;
  bool restarted_ = false;
  double external_work_ = 0.0;
  PetscLogStage stage_assembly_ = 0;
};

}  // namespace edgefem
