// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file static_solver.hpp
/// Static equilibrium by load stepping, each step solved by the Newton driver (solver/newton.hpp) from the extrapolated
/// converged states: residual R(x) = f_int(x) - s * f_ext on free dofs, R = x - x_D(s) on prescribed dofs; Jacobian =
/// assembled K with prescribed rows and columns replaced by the identity (symmetric, for CG).
/// Assembly: each rank's formulations fill one COO value array written into the matrix by AijInsertion;
/// entries of other ranks' rows are sent to and summed by their owners. Positions of ghost vertices are refreshed
/// with a VecGhost update before every evaluation.
#include <mpi.h>
#include <petscsnes.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/contact.hpp"
#include "solver/self_contact.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {

/// Convergence history of a run, identical on every rank.
struct StepReport {
  int step = 0;
  double load_factor = 0.0;
  int newton_iterations = 0;
  int ksp_iterations = 0;  ///< summed over the step's Newton iterations
  int substeps = 1;        ///< > 1 when the step had to be cut
  double seconds = 0.0;
  NewtonStats stats;  ///< the step's solver counts and times (PC set-ups, assembly, ...)
  ContactStepReport contact;  ///< with obstacles: the step's last (sub)step's contact, the deepest penetration of all
};

/// The owned-entry indices of the prescribed dofs (identity rows of every Jacobian).
std::vector<PetscInt> prescribed_rows(const Model& model);

/// The linear-system kind of a model's assembler (dofs, membrane or solid) for the solver defaults.
LinearSystemKind linear_system_kind(MPI_Comm comm, const LocalMesh& mesh, const Model& model, bool dynamic);

class StaticSolver {
 public:
  /// Sets up vectors, the COO pattern and the Newton driver with our defaults, then applies the job's PETSc
  /// options and finally `cli_petsc_options` (which win).
  /// `quiet`: nothing on the console; `iteration_lines`: one line per Newton iteration besides one per step.
  StaticSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, const std::string& cli_petsc_options,
               bool quiet, bool iteration_lines = false);
  ~StaticSolver();
  StaticSolver(const StaticSolver&) = delete;
  StaticSolver& operator=(const StaticSolver&) = delete;

  /// Solve all load steps; `on_step(step, load_factor)` is called after step 0 (reference) and each
  /// converged step (for output). `should_stop()` (if given) is called after `on_step` of every converged step
  /// but the last; true ends the run there. It must return the same on every rank. Throws SolverError when a
  /// step fails.
  std::vector<StepReport> run(const std::function<void(int, double)>& on_step,
                              const std::function<bool()>& should_stop = {});

  /// Current positions of all local vertices (owned then ghosts), 3 per vertex, ghosts up to date.
  [[nodiscard]] std::vector<double> local_positions();
  /// Internal force f_int = dW/dx summed over ranks, for all local vertices (ghosts up to date).
  /// At prescribed dofs of a converged state this is the reaction force.
  [[nodiscard]] std::vector<double> local_internal_force();

  [[nodiscard]] const LocalMesh& mesh() const { return mesh_; }
  [[nodiscard]] const Model& model() const { return model_; }
  /// Counts and times of all Newton solves so far.
  [[nodiscard]] const NewtonStats& stats() const { return newton_->stats(); }
  /// The preconditioner of the load steps' linear solves (NewtonDriver::preconditioner_name).
  [[nodiscard]] std::string preconditioner_name() const { return newton_->preconditioner_name(); }
  [[nodiscard]] const NewtonDriver& newton() const { return *newton_; }
  [[nodiscard]] const Assembler& assembler() const { return assembler_; }
  /// Bytes of the solver's own vectors (positions, loads, the predictor's states) on this rank.
  [[nodiscard]] std::size_t vector_bytes() const;
  /// The contact with the job's obstacles (null without obstacles).
  [[nodiscard]] ContactTerms* contact() { return contact_ ? &*contact_ : nullptr; }
  /// Self-contact (`contact: {self: true}`; null without).
  [[nodiscard]] SelfContactTerms* self_contact() { return self_contact_ ? &*self_contact_ : nullptr; }
  /// The current state (owned entries; the ghosts are not kept up to date).
  [[nodiscard]] Vec state() const { return x_; }
  /// With obstacles: the last load step's contact (its cut parts' deepest penetration).
  [[nodiscard]] const ContactStepReport& last_contact() const { return contact_step_; }

 private:
  void residual(Vec x, Vec r);
  /// The matrix coefficients at the current load factor and positions x: the attachments' springs on the diagonal,
  /// the contact's blocks.
  [[nodiscard]] MatrixCoefficients coefficients(Vec x);
  void jacobian(Vec x, Mat P);
  void set_prescribed(Vec x, double load_factor);
  /// The first step's predictor (no converged states to extrapolate yet): x moved by one linear solve with the
  /// load increment and the prescribed increment lifted (the rest of the body follows the prescribed dofs at
  /// once, instead of the elements next to them taking the jump).
  void tangent_predict(Vec x, double to);
  /// One (sub)increment of the load factor from the converged state in x_ at `from` to `to`; on failure x_ is
  /// restored.
  bool load_step(double from, double to, std::string& why);

  MPI_Comm comm_;
  const Job& job_;
  const LocalMesh& mesh_;
  Model model_;
  Assembler assembler_;  // after model_: it refers to it
  bool quiet_;
  int rank_ = 0;

  PetscOwner<Vec, VecDestroy> x_, f_ext_, saved_;
  PetscOwner<Vec, VecDestroy> lift_in_, lift_out_, rhs_, dx_;  ///< tangent predictor
  std::vector<double> attachment_diagonal_;
  std::optional<ContactTerms> contact_;  ///< with obstacles
  std::optional<SelfContactTerms> self_contact_;  ///< with contact.self
  std::vector<contact::VertexBlock> contact_blocks_;  ///< the obstacles' and the self-contact's blocks together
  ContactStepReport contact_step_;       ///< the last converged (sub)step's
  std::optional<FeasibleStart> feasible_;
  std::optional<NewtonDriver> newton_;
  std::optional<Extrapolator> predictor_;
  double load_factor_ = 0.0;
  int step_ = 0, n_steps_ = 1;
};

}  // namespace edgefem
