// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file time_integrator.hpp
/// What every time integrator of the mesh shows the time loop (run/time_loop.hpp): one step at a time, the state
/// (positions, velocities, internal force, energies, step and time) and checkpoints. DynamicSolver (backward Euler,
/// Newmark, linearized Euler: solver/dynamic_solver.hpp) and PbdSolver (position-based: pbd/pbd_solver.hpp)
/// implement it; the loop, the output, energy.csv, the reactions and the checkpoints are the same for both.
///
/// The checkpoint code is here, once: an integrator lists its state vectors (name, vector, required or not) and its
/// cell fields; checkpoint() stores their owned entries in that order under those names, restore() finds them by
/// name and copies them back (io/checkpoint.hpp: the file format). What else an integrator does around a checkpoint
/// (a new preconditioner, ghost updates, the loads at t_n) are the hooks before_checkpoint() and after_restore().
#include <mpi.h>
#include <petscvec.h>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/contact.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"

namespace edgefem {

class SelfContactTerms;  // (solver/self_contact.hpp)

/// Energies of the current state, summed over ranks.
struct EnergyReport {
  double kinetic = 0.0;        ///< v^T M v / 2
  double strain = 0.0;         ///< W(x)
  double attachment = 0.0;     ///< springs of the penalty attachments
  double external_work = 0.0;  ///< work of h (loads) since the start, trapezoidal in time
  double contact = 0.0;        ///< the contact barrier's (or penalty's) energy (solver/contact.hpp); 0 without obstacles
  /// kinetic + strain + attachment + contact - external_work: constant for an undamped, conservative system.
  [[nodiscard]] double total() const { return kinetic + strain + attachment + contact - external_work; }
};

/// Collective: the strain energy at positions x, the kinetic energy of velocities v, the external work
/// accumulated in w (its entries summed) and the model's attachment springs at time t (reference: 3 coordinates
/// per local vertex), summed over the ranks. `work`: a scratch vector of the assembler's layout. Moves the
/// assembler's positions to x.
EnergyReport state_energy(MPI_Comm comm, Assembler& assembler, const Model& model, std::span<const double> reference,
                          double t, Vec x, Vec v, Vec w, Vec work);

/// One completed time step.
struct TimeStepReport {
  long long step = 0;
  double time = 0.0;
  int newton_iterations = 0;
  int ksp_iterations = 0;
  int substeps = 1;
  double newton_target = 0.0;  ///< the |R| the step's (last) Newton solve had to reach; 0 for linearized-euler
  double seconds = 0.0;
  double cpu_seconds = 0.0;  ///< this process's CPU seconds in the step (all threads; set by run_time_loop)
  NewtonStats stats;  ///< the step's solver counts and times (PC set-ups, assembly, ...)
  EnergyReport energy;
  std::optional<ContactStepReport> contact;  ///< with obstacles
};

/// A state vector of a checkpoint: the owned entries of `vector` (a ghosted vector of the assembler's layout, 3 per
/// owned vertex) are stored under `name` (at most 31 characters).
struct CheckpointVector {
  const char* name;
  Vec vector;
  /// false: a checkpoint without it (an older file) is still used, and the vector restarts at zero.
  bool required = true;
};

/// A cell field of a checkpoint: 6 values per local cell (LocalMesh order), e.g. a plastic strain.
struct CheckpointCellField {
  std::string name;
  std::function<std::vector<double>()> values;           ///< what checkpoint() stores
  std::function<void(std::span<const double>)> restore;  ///< given the stored values by restore()
  std::string required_because;                          ///< added to the error when a checkpoint lacks it
};

/// A cell scalar an integrator adds to an output step (one value per local cell, LocalMesh order).
struct OutputCellField {
  std::string name;
  std::vector<double> values;
};

/// A point field an integrator adds to an output step: `components` values per local vertex (LocalMesh order, ghosts
/// up to date), e.g. contact_gap (1) and contact_force (3).
struct OutputPointField {
  std::string name;
  int components = 1;
  std::vector<double> values;
};

/// An integrator of the mesh's equations of motion from t = 0 (or a checkpoint) to `analysis.end_time` in steps of
/// `analysis.dt`. It owns the model and its assembler; the derived class owns the state vectors and says which
/// they are (state_vectors(), checkpoint_vectors()).
class TimeIntegrator {
 public:
  virtual ~TimeIntegrator();
  TimeIntegrator(const TimeIntegrator&) = delete;
  TimeIntegrator& operator=(const TimeIntegrator&) = delete;

  // The time loop's part.
  /// The initial state of a fresh run, before the loop reports step 0 (a static equilibrium, the initial
  /// acceleration, the loads at t = 0, ...). Not called after restore(). Collective.
  virtual void start() = 0;
  /// One time step t_n -> t_{n+1}, cut into substeps inside where the integrator does that. Collective. Throws
  /// SolverError when the step fails; the state is then that of the last completed step.
  virtual TimeStepReport step() = 0;
  /// The console line of a completed step, newline included, with the loop's estimate of the time left.
  /// Collective (it may count over the ranks); the loop prints it on rank 0 unless quiet().
  [[nodiscard]] virtual std::string progress_line(const TimeStepReport& report, double seconds_left) = 0;
  /// The preconditioner of the linear solves, as the summary names it.
  [[nodiscard]] virtual std::string preconditioner_name() const = 0;
  /// Counts and times of all solves so far (initial state included).
  [[nodiscard]] virtual const NewtonStats& stats() const = 0;
  /// Cell scalars written with each output step besides the standard ones (none unless the integrator has some).
  [[nodiscard]] virtual std::vector<OutputCellField> output_cell_fields() { return {}; }
  /// Point fields written with each output step besides the standard ones (contact's, with obstacles). Collective.
  [[nodiscard]] virtual std::vector<OutputPointField> output_point_fields() { return {}; }
  /// The force each of the job's obstacles exerts on the body (3 per obstacle; empty without). Collective.
  [[nodiscard]] virtual std::vector<double> obstacle_forces() { return {}; }
  /// The contact with the job's obstacles (null without obstacles or for an integrator without contact).
  [[nodiscard]] virtual ContactTerms* contact_terms() { return nullptr; }
  /// With contact.self (the Newton integrators): the self-contact terms.
  [[nodiscard]] virtual SelfContactTerms* self_contact_terms() { return nullptr; }
  /// This rank's time in the contact (null without obstacles): the Newton contact terms', or the position-based
  /// contact's (pbd/pbd_contact.hpp).
  [[nodiscard]] virtual const ContactSeconds* contact_seconds() {
    return contact_terms() ? &contact_terms()->seconds() : nullptr;
  }
  /// The last completed step's contact (nothing without contact).
  [[nodiscard]] virtual std::optional<ContactStepReport> last_contact() const { return std::nullopt; }

  // The state.
  [[nodiscard]] long long step_number() const { return step_; }  ///< completed time steps
  [[nodiscard]] double time() const { return time_; }
  [[nodiscard]] long long n_steps() const { return n_steps_; }  ///< steps to end_time
  [[nodiscard]] bool restored() const { return restored_; }     ///< restore() was called
  [[nodiscard]] bool quiet() const { return quiet_; }           ///< nothing on the console
  [[nodiscard]] MPI_Comm comm() const { return comm_; }
  [[nodiscard]] const LocalMesh& mesh() const { return mesh_; }
  [[nodiscard]] const Model& model() const { return model_; }
  /// Positions / velocities of all local vertices (owned then ghosts), ghosts up to date. Collective.
  [[nodiscard]] std::vector<double> local_positions();
  [[nodiscard]] std::vector<double> local_velocities();
  /// The lumped mass of each owned dof (3 per owned vertex), summed over the ranks.
  [[nodiscard]] const std::vector<double>& lumped_mass() const { return assembler_.lumped_mass(); }
  /// Internal force f_int(x) summed over ranks, all local vertices. Collective.
  [[nodiscard]] std::vector<double> local_internal_force();
  /// Energies of the current state. Collective.
  [[nodiscard]] EnergyReport energy();

  // Checkpoints.
  /// The state for a checkpoint: step, time, dt, the integrator's name, the owned entries of the state vectors and
  /// the cell fields (before_checkpoint() first).
  [[nodiscard]] CheckpointState checkpoint();
  /// Continue from a checkpoint (fields as checkpoint() writes them, owned vertices in local order). Throws
  /// std::runtime_error when a required field is missing or has another size; a missing cell field throws
  /// CollectiveError on every rank.
  void restore(const CheckpointState& state);

 protected:
  /// Collective: the model's assembler; n_steps from spec.end_time / spec.dt.
  TimeIntegrator(MPI_Comm comm, const DynamicSpec& spec, const LocalMesh& mesh, Model model, bool quiet);

  /// The vectors of the state (all of the assembler's layout): positions, velocities, the external work per dof
  /// since t = 0, and a scratch vector local_velocities() and energy() may overwrite.
  struct StateVectors {
    Vec positions, velocities, external_work, scratch;
  };
  [[nodiscard]] virtual StateVectors state_vectors() = 0;
  /// The vectors a checkpoint holds, in the file's order.
  [[nodiscard]] virtual std::vector<CheckpointVector> checkpoint_vectors() = 0;
  /// The cell fields a checkpoint holds (none by default).
  [[nodiscard]] virtual std::vector<CheckpointCellField> checkpoint_cell_fields() { return {}; }
  /// Called first by checkpoint().
  virtual void before_checkpoint() {}
  /// Called last by restore(), with step and time already the checkpoint's.
  virtual void after_restore() {}
  /// The contact energy of the current state (energy()); 0 unless the integrator has contact. Collective.
  [[nodiscard]] virtual double contact_energy() { return 0.0; }

  MPI_Comm comm_;
  const DynamicSpec& spec_;
  const LocalMesh& mesh_;
  Model model_;
  Assembler assembler_;
  bool quiet_;
  long long step_ = 0, n_steps_ = 0;
  double time_ = 0.0;

 private:
  bool restored_ = false;
};

}  // namespace edgefem
