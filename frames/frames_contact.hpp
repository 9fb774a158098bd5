// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frames_contact.hpp
/// Contact of a frame-based model with the job's obstacles (issue 48; Gilles et al. §6: contact points mapped to
/// the frames): the candidates are the body's boundary vertices (each rank its owned ones), skinned by the frames
/// like any point, x_k(q) = blend of the frames' transforms with the vertex's weights. The contact energy is the
/// Newton solvers' (contact/vertex_contact.hpp): per candidate and obstacle IPC's barrier kappa b(d(x_k)) (or the
/// penalty), a potential of the points that FrameSpace::add_point_potential takes to the frames through the
/// points' Jacobian (exact gradient and Hessian: J^T H_p J, plus g_p . d^2 x / dq^2 for rigid frames; the per-point
/// Hessian is the exact one, not projected: the frame solver shifts an indefinite K itself). The Newton line search
/// starts at step_limit: 0.8 of the way to the first contact of any candidate on any rank along its straight move
/// (affine frames: the exact path; rigid frames: the chord, the barrier's +infinity inside rejecting the rest).
/// Friction: the Newton solvers' lagged, smoothed Coulomb friction (contact/friction.hpp), frozen at each load or
/// time step's start (normal forces, tangent bases, positions, the obstacles' moves over the step), slip eps =
/// friction_velocity x the load increment (statics) or the time step (dynamics). The
/// per-point terms are contact::ContactPotential's, with the skinned points as its candidates.
/// Obstacles replicated (solver/obstacles.hpp); moving ones (`motion`) are placed at the step's end, reached from
/// the step's start through advance() (frames_solver.cpp): statics and the Newton dynamics (backward-euler).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "contact/contact_method.hpp"
#include "contact/contact_potential.hpp"
#include "contact/obstacle.hpp"
#include "io/job.hpp"
#include "linalg/petsc_util.hpp"
#include "materials/frame_model.hpp"
#include "partition/partition.hpp"
#include "solver/contact.hpp"
#include "solver/model.hpp"

namespace edgefem {

class FrameContact {
 public:
  /// Collective: the obstacles (at load factor 0), the candidates (boundary vertices not held in all of x, y, z) with their weights (`weights[v * n_frames + i]`
  /// per local vertex), the activation distance (auto: 1e-3 of the bounding-box diagonal), the stiffness (auto: the
  /// largest Young's modulus times the mean tet size, over b''(dh / 2); penalty: 100 E h), and the start's check
  /// (check_contact_start: an InputError on every rank with the barrier).
  FrameContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model,
               std::span<const double> weights, int n_frames);

  [[nodiscard]] bool barrier() const { return method_ == contact::ContactMethod::barrier; }
  [[nodiscard]] double stiffness() const { return stiffness_; }
  [[nodiscard]] double activation_distance() const { return dh_; }
  /// The candidates as points for FrameSpace::add_point_potential, their reference positions and weights (3 and
  /// n_frames per point) for FrameSpace::skin.
  [[nodiscard]] const frames::FramePoints& points() const { return points_; }
  [[nodiscard]] std::span<const double> reference() const { return reference_; }
  [[nodiscard]] std::span<const double> weights() const { return weights_; }
  /// The contact energy of a point at p, its gradient and Hessian (frames::PointPotential).
  [[nodiscard]] const frames::PointPotential& potential() const { return potential_; }
  /// The obstacles at load factor (static) or time (dynamics) t.
  void place(double t);
  /// Whether some obstacle has a motion.
  [[nodiscard]] bool moving() const;
  /// A step's start (obstacle time t0, the step's end t1): friction lagged at the points' positions x (3 each) with
  /// the obstacles at t0 and their moves to t1 (the slip relative to the obstacle), slip eps = friction_velocity x
  /// `slip_step` (the load increment or the time step). Leaves the obstacles at t0.
  void begin_step(std::span<const double> x, double slip_step, double t0, double t1);
  /// The obstacles' continuation within a step (moving obstacles; frames_solver.cpp): from time s (where the points
  /// x, 3 each, are free of them) the latest s' in (s, to] (to, or s + (to - s) / 2^k) whose moves s -> s' take no
  /// point of any rank more than kAdvance of the way to a first contact (the tet solver's carry_along test,
  /// ContactPotential::carry_along); the obstacles are left at s'. Collective; throws SolverError when 60 halvings
  /// do not get there (an obstacle pushing into a held part).
  double advance(std::span<const double> x, double s, double to);
  /// The largest fraction of the moves x0 -> x1 (the candidates' positions, 3 each) no candidate of any rank
  /// crosses an obstacle on: 0.8 of the first contact, 1 when none (the penalty: 1). Collective.
  [[nodiscard]] double step_limit(std::span<const double> x0, std::span<const double> x1) const;
  /// The report at the candidates' positions x (3 each): the smallest gap, the pairs within the activation distance,
  /// the penetration; and each obstacle's force on the body (3 per obstacle, -dE/dx summed). Collective.
  ContactStepReport report(std::span<const double> x, std::vector<double>& forces) const;
  /// The output fields contact_gap (every local vertex's smallest signed distance to an obstacle) and contact_force
  /// (3 per local vertex: the obstacles' force on the contact points) at the points' positions x (3 each) and every
  /// local vertex's `x_local` (3 each, the skinned mesh): contact_vertex_fields, as the tet solvers'. Collective.
  void vertex_fields(std::span<const double> x, std::span<const double> x_local, std::vector<double>& gap,
                     std::vector<double>& force) const;
  /// This rank's time in the contact terms so far (the frame solver adds the potential's evaluations to it:
  /// `residual` the energy and gradient, `hessian` with the Hessian; step_limit() its continuous checks).
  [[nodiscard]] ContactSeconds& seconds() const { return seconds_; }

 private:
  MPI_Comm comm_;
  contact::ContactMethod method_ = contact::ContactMethod::barrier;
  double dh_ = 0.0, stiffness_ = 0.0;
  const Job& job_;
  std::vector<std::unique_ptr<contact::Obstacle>> obstacles_;
  std::unique_ptr<contact::ContactPotential> terms_;  ///< the per-point terms (candidates: the points)
  double friction_velocity_ = 0.0;
  std::vector<std::int32_t> candidates_;  ///< the points' owned vertices
  PetscOwner<Vec, VecDestroy> work_;       ///< a ghosted block-3 vector of the mesh's owned vertices (the fields)
  mutable ContactSeconds seconds_;
  frames::FramePoints points_;
  std::vector<double> reference_, weights_;
  frames::PointPotential potential_;
  static constexpr double kFraction = 0.8;  ///< of the first contact a step may go
  static constexpr double kAdvance = 0.5;   ///< of the gap an obstacle's move within a step may take (advance)
  /// The obstacles' moves from time a to b, 3 per obstacle.
  [[nodiscard]] std::vector<double> moves(double a, double b) const;
};

}  // namespace edgefem
