#pragma once
/// \file pbd_solver.hpp
/// `analysis.integrator: position-based`: Bender, Koschier, Charrier, Weber (2014), Algorithm 1, with the
/// tetrahedra's element energies as constraints (pbd/pbd_sweep.hpp: PBD or XPBD, coloured Gauss-Seidel or
/// averaged Jacobi). One step from (x_n, v_n) to t_{n+1}:
///   1. predict, on free dofs: v* = v_n + dt M^-1 f_ext(t_{n+1}) (gravity, tractions), x* = x_n + dt v*;
///      prescribed dofs are set to x_D(t_{n+1}) (hard position constraints: inverse mass 0);
///   2. `iterations` sweeps over all constraints (XPBD multipliers start at 0 every step);
///   3. v_{n+1} = (x_{n+1} - x_n) / dt, then v_{n+1} *= (1 - velocity_damping).
/// The start is the reference configuration, or (analysis.initial_state {flatten|mirror: axis}) the reference
/// flattened onto / mirrored about the mid-plane of the bounding box normal to the axis (Bender et al. Fig. 6); the
/// sweeps use the energies with inversion handling unless position_based.inversion is none.
/// No Newton and no linear solve. The same state, output and checkpoints as DynamicSolver (positions, velocities,
/// external work; the interface run_dynamic needs), so the PVTU series and restarts work unchanged.
#include <mpi.h>

#include <functional>
#include <optional>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "pbd/pbd_sweep.hpp"

namespace edgefem {

class PbdSolver {
 public:
  /// Collective. job.dynamic must be set (its integrator is not checked: tests run this solver on other jobs).
  PbdSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, bool quiet);

  /// As DynamicSolver::run (no step is ever cut; TimeStepReport counts sweeps as newton_iterations = 0).
  std::vector<TimeStepReport> run(const std::function<void(long long, double)>& on_step,
                                  const std::function<bool()>& should_stop = {});
  /// One time step (t_n -> t_n + dt), without output. Collective.
  void step_once();

  /// Fields position, velocity, external_work of the owned vertices.
  [[nodiscard]] CheckpointState checkpoint_state();
  void restore(const CheckpointState& state);

  [[nodiscard]] long long step() const { return step_; }
  [[nodiscard]] double time() const { return time_; }
  [[nodiscard]] long long n_steps() const { return n_steps_; }
  [[nodiscard]] std::vector<double> local_positions();
  [[nodiscard]] std::vector<double> local_velocities();
  [[nodiscard]] std::vector<double> local_internal_force();
  [[nodiscard]] EnergyReport energy();
  [[nodiscard]] const LocalMesh& mesh() const { return mesh_; }
  [[nodiscard]] const Model& model() const { return model_; }
  [[nodiscard]] const NewtonStats& stats() const { return stats_; }  ///< always zero: no Newton
  [[nodiscard]] PbdConstraints& sweep() { return *sweep_; }
  /// Tets with det F <= 0 now, on all ranks (pbd/pbd_sweep.hpp). Collective.
  [[nodiscard]] std::int64_t inverted_cells();
  /// Set the owned positions (ghosts updated); for tests.
  void set_positions(std::span<const double> owned);

 private:
  /// analysis.initial_state flatten / mirror: the start positions (rest velocity unless initial_velocity is given).
  void apply_initial_shape();

  MPI_Comm comm_;
  const DynamicSpec& spec_;
  const LocalMesh& mesh_;
  Model model_;
  Assembler assembler_;
  std::optional<PbdConstraints> sweep_;
  bool quiet_;
  PetscOwner<Vec, VecDestroy> x_, v_, x_n_, h_, h_new_, w_, work_;
  NewtonStats stats_;
  double time_ = 0.0;
  long long step_ = 0, n_steps_ = 0;
  bool restarted_ = false;
};

}  // namespace edgefem
