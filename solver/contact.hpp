// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file contact.hpp
/// Contact of a Newton solver's body with the job's obstacles (docs/design.md "Contact"): IPC's barrier (or a
/// penalty) and lagged friction added to the incremental potential, a line search that never lets an iterate reach
/// an obstacle, and a first iterate of every step free of penetration. The geometry and the per-vertex terms are
/// contact/'s (no MPI, no PETSc); this class holds one rank's share and does the collective parts: the candidates
/// (the boundary vertices a rank owns), the stiffness, the reductions of the step limit and of the reports, and the
/// hand-over of the terms as residual entries and 3 x 3 blocks on the vertices' diagonal (Assembler,
/// MatrixCoefficients::vertex_blocks: the pattern is unchanged).
///
/// A step of the solver (a load step, a time step or a cut part of one) goes: begin_step (the obstacles at the
/// step's start, friction lagged there, then the obstacles moved to its end), carry_along on the start (vertices the
/// obstacles' move would hit move with them), limit_prediction on the predictor, the Newton solve (add_residual,
/// add_blocks, step_limit), and end_step on the converged state (the stiffness adapted, the step's report).
#include <mpi.h>
#include <petscvec.h>

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/obstacle.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// The contact candidates of a rank: the owned vertices of boundary faces (tets; found through a reverse ghost
/// scatter on `work`, a ghosted vector of the assembler's layout) or every owned vertex (membranes), without the
/// vertices with more than `max_prescribed` of their components prescribed. Collective.
std::vector<std::int32_t> contact_candidates(const LocalMesh& mesh, const Model& model, Vec work, int max_prescribed);

/// The body's stiffness seen by contact: the mean over `vertices`' components not prescribed in `model` of
/// diag(K) (`diagonal`, a vector of the assembler's layout) plus m / dt² (`lumped_mass`; dt = 0: K alone), over all
/// ranks; 1 where there is none. The automatic barrier and penalty stiffnesses start from it. Collective.
double mean_vertex_stiffness(MPI_Comm comm, const Model& model, Vec diagonal, const std::vector<double>& lumped_mass,
                             std::span<const std::int32_t> vertices, double dt);

/// The start's check of a body's contact candidates (local vertices, positions `reference`: 3 per local vertex)
/// against the obstacles: with the barrier, a candidate on or inside an obstacle is an InputError naming the
/// obstacle, the first such vertex (in the mesh's order) and its depth, on every rank; with the penalty a warning.
/// Collective.
void check_contact_start(MPI_Comm comm, const Job& job, const LocalMesh& mesh,
                         const std::vector<std::unique_ptr<contact::Obstacle>>& obstacles,
                         std::span<const std::int32_t> candidates, std::span<const double> reference, bool barrier);

/// One step's contact, the same on every rank.
struct ContactStepReport {
  long long active = 0;     ///< vertex-obstacle pairs within the activation distance (penalty: penetrating)
  double min_gap = 0.0;     ///< the smallest signed distance of a boundary vertex to an obstacle
  double penetration = 0.0;  ///< max(0, -min_gap): 0 with the barrier
  double stiffness = 0.0;   ///< kappa (or k) in the step
};

/// The progress line's part of a step's contact: "  contacts N  min gap G  penetration P" (every solver's step lines:
/// static, dynamic, position-based and frames).
std::string contact_progress(const ContactStepReport& report);

/// The output fields contact_gap and contact_force of every local vertex (the VTK and XDMF point fields), from one
/// rank's contact terms: `x`, the candidates' positions in `potential`'s layout (3 per entry); `owned_vertex[i]`, the
/// owned vertex whose position x's entry i is (empty: entry i is owned vertex i, the tets' layout); `x_local`, the
/// positions of every local vertex (3 each, ghosts up to date): contact_gap = each local vertex's smallest signed
/// distance to an obstacle, contact_force = the obstacles' force on each candidate (normal and friction, 3 per local
/// vertex, 0 elsewhere), ghosts from their owners through `work` (a ghosted block-3 vector of the mesh's owned
/// vertices). Collective (the ghost update). Shared by the tet solvers (ContactTerms) and the frames (FrameContact).
void contact_vertex_fields(const contact::ContactPotential& potential, std::span<const double> x,
                           std::span<const std::int32_t> owned_vertex, std::span<const double> x_local, Vec work,
                           std::vector<double>& gap, std::vector<double>& force);

/// Where one rank's contact time went (wall-clock seconds, accumulated over the run).
struct ContactSeconds {
  double residual = 0.0;    ///< distances, barrier and friction gradients (add_residual)
  double hessian = 0.0;     ///< the same with the 3 x 3 blocks (blocks)
  double step_limit = 0.0;  ///< continuous collision checks of the line search (this rank's, not the reduction)
  [[nodiscard]] double total() const { return residual + hessian + step_limit; }
};

class ContactTerms {
 public:
  /// Collective. Builds the obstacles (solver/obstacles.hpp), finds the candidates, sets the activation distance,
  /// the stiffness and the friction slip velocity (their `auto` values from the mesh and the assembled stiffness at
  /// rest; `dt`: the time step of a dynamic run, 0 for statics), and checks the start: with the barrier, a boundary
  /// vertex on or inside an obstacle is an InputError naming the obstacle, the vertex and its depth (every rank);
  /// with the penalty a warning. Moves the assembler's positions (one stiffness assembly at rest).
  ContactTerms(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Assembler& assembler,
               double dt);

  [[nodiscard]] bool barrier() const { return potential_->method() == contact::ContactMethod::barrier; }
  [[nodiscard]] const std::vector<std::unique_ptr<contact::Obstacle>>& obstacles() const { return obstacles_; }
  [[nodiscard]] double stiffness() const { return potential_->stiffness(); }
  [[nodiscard]] double activation_distance() const { return potential_->activation_distance(); }
  /// Whether some obstacle moves (the total energy is then not conserved).
  [[nodiscard]] bool moving() const;
  /// What a restart needs besides the positions and the time (the obstacles' places follow from the time, the lagged
  /// friction from the converged state at a step's start): the barrier's adapted stiffness kappa, whether the next
  /// step stiffens it, and the last step's smallest gap (+inf stored as 1e300). The same on every rank.
  [[nodiscard]] std::array<double, 3> saved_state() const;
  /// Restores saved_state()'s values (a checkpoint's); a stiffness of 0 (a checkpoint without contact state) keeps
  /// the automatic one of the start.
  void restore_state(const std::array<double, 3>& state);

  /// A step from the converged state x at obstacle time t0 to t1 (static: load factors; the initial static state of
  /// a dynamic run: 0 and 0), with `slip_step` the step friction's slip velocity is multiplied by (the time step or
  /// the load increment). Leaves the obstacles at t1.
  void begin_step(Vec x, double t0, double t1, double slip_step);
  /// x (the step's start, prescribed values set): the candidates the obstacles' move since begin_step would bring
  /// within a fifth of their gap are moved with them (they keep their gap). Local.
  void carry_along(Vec x);
  /// x (a prediction) pulled back, vertex by vertex, toward `start` (free of penetration) to stay 0.8 of the way
  /// to a first contact (barrier; nothing with the penalty). Local.
  void limit_prediction(Vec start, Vec x);
  /// After the step converged at x: the report, and the adaptive stiffness (auto: doubled from the next step on, up
  /// to 1e4 times its start, when the smallest gap fell below 1e-2 of the activation distance and shrank).
  /// Collective.
  ContactStepReport end_step(Vec x);

  /// r += the gradient of the contact potential at x (owned entries; x, r global vectors). Local.
  void add_residual(Vec x, Vec r);
  /// The Hessian blocks at x for MatrixCoefficients::vertex_blocks (valid until the next call). Local.
  [[nodiscard]] std::span<const contact::VertexBlock> blocks(Vec x);
  /// The largest fraction of the step x -> x - y no candidate of any rank crosses an obstacle on (0.8 of the first
  /// contact; 1 when none). Collective.
  double step_limit(Vec x, Vec y);
  /// The contact potential's energy at x (barrier or penalty and friction), summed over ranks. Collective.
  double energy(Vec x);

  /// Output at x (ghosts of `x_local` up to date: 3 per local vertex): each local vertex's smallest signed distance
  /// to an obstacle and contact force (3), for the VTK fields contact_gap and contact_force. Collective.
  void vertex_fields(Vec x, std::span<const double> x_local, std::vector<double>& gap, std::vector<double>& force);
  /// The force each obstacle exerts on the body at x (3 per obstacle), summed over ranks. Collective.
  std::vector<double> obstacle_forces(Vec x);
  /// This rank's time in the contact terms so far.
  [[nodiscard]] const ContactSeconds& seconds() const { return seconds_; }

 private:
  /// The auto stiffness: the mean diagonal of K at rest (plus m / dt^2) over the candidates' dofs, divided by
  /// b''(dh / 2) (barrier) or times 100 (penalty). Collective.
  double automatic_stiffness(const Model& model, double dt);
  /// The start's check (constructor). Collective.
  void check_start(const std::vector<double>& reference);

  MPI_Comm comm_;
  const Job& job_;
  const LocalMesh& mesh_;
  Assembler& assembler_;
  std::vector<std::unique_ptr<contact::Obstacle>> obstacles_;
  std::unique_ptr<contact::ContactPotential> potential_;
  PetscOwner<Vec, VecDestroy> work_;        ///< a ghosted vector of the assembler's layout
  std::vector<double> gradient_;            ///< 3 per owned vertex
  std::vector<contact::VertexBlock> blocks_;
  std::vector<double> moves_;               ///< 3 per obstacle: the current step's move
  double friction_velocity_ = 0.0;
  ContactSeconds seconds_;
  bool adaptive_ = false;
  bool stiffen_ = false;  ///< end_step asked for a stiffer barrier from the next begin_step
  double max_stiffness_ = 0.0, last_min_gap_ = 0.0;
  double t0_ = 0.0, t1_ = 0.0;  ///< the current step's obstacle times
  static constexpr double kFraction = 0.8;  ///< of the first contact a step may go
};

}  // namespace edgefem
