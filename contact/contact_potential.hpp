// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file contact_potential.hpp
/// One rank's contact terms: its candidate vertices (for a distributed body, the boundary vertices it owns)
/// against every obstacle, with the normal terms (barrier or penalty, vertex_contact.hpp) and lagged friction
/// (friction.hpp), their energy, gradient and 3 x 3 Hessian blocks (each on its vertex's diagonal block); the step
/// limit of a line search from continuous collision checks; the first iterate of a step made free of penetration;
/// and what a step reports (gaps, forces per obstacle). Positions are spans of 3 doubles per local vertex (any
/// numbering in which the candidates' indices are valid). Loops over the candidates run on the OpenMP threads,
/// each candidate writing its own entries. No MPI, no PETSc: the caller reduces over ranks (solver/contact.hpp).
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "contact/friction.hpp"
#include "contact/obstacle.hpp"
#include "contact/vertex_contact.hpp"

namespace edgefem::contact {

/// A Hessian block on the diagonal of vertex `vertex`.
struct VertexBlock {
  std::int32_t vertex = 0;
  Mat3 values{};
};

/// What a state's contact looks like on this rank (the caller sums or reduces the ranks').
struct ContactMeasure {
  long long active = 0;  ///< vertex-obstacle pairs within the activation distance (penalty: penetrating)
  double min_gap = std::numeric_limits<double>::infinity();  ///< the smallest signed distance of a candidate
  std::vector<double> obstacle_force;  ///< 3 per obstacle: the force it exerts on the body (normal + friction)
};

class ContactPotential {
 public:
  /// `obstacles` must outlive the potential; `vertices`: the candidate vertices (local indices).
  ContactPotential(const std::vector<std::unique_ptr<Obstacle>>& obstacles, std::vector<std::int32_t> vertices);

  /// Barrier or penalty, the activation distance dh (barrier), the stiffness kappa (or k) and the friction's slip
  /// eps (length; friction.hpp).
  void set_method(ContactMethod method) { method_ = method; }
  void set_activation_distance(double dh) { dh_ = dh; }
  void set_stiffness(double stiffness) { stiffness_ = stiffness; }
  void set_slip(double eps) { slip_ = eps; }
  [[nodiscard]] ContactMethod method() const { return method_; }
  [[nodiscard]] double activation_distance() const { return dh_; }
  [[nodiscard]] double stiffness() const { return stiffness_; }
  [[nodiscard]] const std::vector<std::int32_t>& vertices() const { return vertices_; }
  [[nodiscard]] const std::vector<std::unique_ptr<Obstacle>>& obstacles() const { return obstacles_; }

  /// The energy at positions x; adds its gradient to `gradient` (same layout as x; empty: skipped) and writes the
  /// Hessian blocks of the vertices with a term to `blocks` (null: skipped). Infinite when a candidate has reached
  /// an obstacle (barrier).
  double evaluate(std::span<const double> x, std::span<double> gradient, std::vector<VertexBlock>* blocks) const;
  /// The normal terms' energy at x alone (no friction: the potential energy stored in the contacts).
  [[nodiscard]] double normal_energy(std::span<const double> x) const;

  /// The unit-stiffness barrier's gradient (kappa = 1, no friction) added to `gradient`: IPC's balance of kappa.
  void add_unit_barrier_gradient(std::span<const double> x, std::span<double> gradient) const;

  /// The largest t in [0, 1] such that every candidate's segment x -> x - t' y, t' <= t, stays off every obstacle by
  /// the margin `fraction`: the smallest segment_limit over the candidates.
  [[nodiscard]] double step_limit(std::span<const double> x, std::span<const double> y, double fraction) const;

  /// How far (t in (0, 1]) a point may go along p0 -> p1: at most `fraction` of the way to a first contact with any
  /// obstacle (continuous check), and not so far that it ends closer than half of (1 - fraction) of its gap at p0 to
  /// one (a move that stops just short of the surface: the barrier there is huge, and so is its round-off).
  [[nodiscard]] double segment_limit(const Vec3& p0, const Vec3& p1, double fraction) const;

  /// Each candidate's move from `from` to `to` cut to its segment_limit (per vertex); returns how many were cut.
  long long limit_motion(std::span<const double> from, std::span<double> to, double fraction) const;

  /// Obstacles about to move by `moves` (3 per obstacle) from where they are now: a candidate of x the move would
  /// bring within `fraction` of its gap (a first contact of the relative motion before 1 / fraction... of the way)
  /// is carried along (x += move), so that it keeps its gap. Returns the number carried.
  long long carry_along(std::span<double> x, std::span<const double> moves, double fraction) const;

  /// Freezes friction (friction.hpp) at the step's start x (the obstacles placed where they were then) for the
  /// obstacles' coming `moves` (3 per obstacle); contacts of frictionless obstacles are skipped.
  void lag_friction(std::span<const double> x, std::span<const double> moves);
  /// Forgets the lagged friction.
  void clear_friction() { lags_.clear(), lag_offsets_.clear(); }
  [[nodiscard]] std::size_t n_lagged() const { return lags_.size(); }

  /// Counts, the smallest gap and the obstacles' forces at x; with `vertex_force` (3 per local vertex) and
  /// `vertex_gap` (1 per local vertex), also each candidate's contact force and smallest signed distance.
  ContactMeasure measure(std::span<const double> x, std::span<double> vertex_force = {},
                         std::span<double> vertex_gap = {}) const;
  /// The smallest signed distance of point p to an obstacle (+infinity without obstacles).
  [[nodiscard]] double nearest_distance(const Vec3& p) const;

 private:
  /// Candidate c's terms at its position p: energy, and gradient/Hessian added (either may be null); the force of
  /// each obstacle on it added to `per_obstacle` (3 each, may be null); its active pairs added to `active`.
  double vertex_terms(std::size_t c, const Vec3& p, Vec3* gradient, Mat3* hessian, double* per_obstacle,
                      long long* active, bool with_friction = true) const;

  const std::vector<std::unique_ptr<Obstacle>>& obstacles_;
  std::vector<std::int32_t> vertices_;
  ContactMethod method_ = ContactMethod::barrier;
  double dh_ = 1e-3, stiffness_ = 1.0, slip_ = 1e-3;
  struct Lag {
    std::int32_t obstacle = 0;
    FrictionLag lag;
  };
  std::vector<Lag> lags_;                 ///< sorted by candidate
  std::vector<std::size_t> lag_offsets_;  ///< per candidate + 1: its lags in lags_ (empty: none)
  mutable std::vector<Mat3> block_scratch_;  ///< evaluate(): a block per candidate
};

}  // namespace edgefem::contact
