// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_contact.hpp
/// Contact of the position-based integrator with the job's obstacles (issue 48): collision constraints inside the
/// constraint sweep, Bender et al.'s Algorithm 1 line 11.
///
///  - Generation, once per step (begin_step, after the prediction x*): a contact is a pair (candidate, obstacle)
///    whose obstacle is within reach of the candidate at x*: signed distance at x* <= |x* - x_n| + |obstacle's move|
///    + R, with R = max(the largest |x* - x_n| of any candidate on any rank, 2e-2 of the body's bounding-box
///    diagonal) covering the moves the sweeps add to the prediction. Candidates: the owned boundary vertices with no
///    prescribed component (solver/contact.hpp).
///  - The constraint of a convex obstacle (plane, box, sphere, cylinder) is its tangent plane at the point closest
///    to the vertex's start x_n (the obstacle placed where the step ends), fixed over the step: d(x) = (x - q) . n,
///    q that point, n the outward normal there (x_n inside: the nearest face's). A convex obstacle lies behind every
///    such plane, so a vertex in front of it is outside the obstacle. Projecting onto the obstacle itself instead
///    (its closest point, the normal where the sweep's position y lies) moved a vertex near a box's edge to one face
///    or the other from sweep to sweep and pushed the vertices of a curved contact apart radially: both pumped
///    energy into a fine cloth laid over a table's edge or a sphere (the strain energy of a 10^5-triangle cloth grew
///    without bound). A mesh obstacle (not known to be convex) keeps the projection onto its closest point.
///  - Projection, in every sweep (PbdConstraints::set_contact: the sweep's last colour, so every sweep ends with no
///    candidate of a generated contact inside an obstacle): an inequality C(x) = d(x) >= 0 of zero compliance
///    against a rigid, infinitely heavy obstacle (the whole correction is the vertex's), in the consistent form of
///    the sweep's XPBD constraints: the contact keeps its share p of the vertex's position (x = y + p, y the
///    position without it) and each projection replaces it,
///      normal:   lambda = max(0, -d(y)) (the normal correction, position units), n the obstacle's normal at y;
///      friction: s_t the tangential part of the move over the step, relative to the obstacle, at y + lambda n;
///                t = -s_t min(1, mu lambda / |s_t|)  (static: the whole slip removed while |s_t| <= mu lambda;
///                kinetic: cut by mu lambda),
///      p = lambda n + t,
///    Macklin et al.'s position-level Coulomb friction (2014 §6.1; the static/kinetic rule of Macklin et al. 2019,
///    "Small steps") with the normal correction as the multiplier. Its fixed point is M (x - x*) / dt^2 + dE/dx =
///    M p / dt^2: m p / dt^2 is the obstacle's force on the vertex (obstacle_forces), with |tangential| <= mu |normal|.
///    Several obstacles at one vertex are projected in the obstacles' order.
/// Distribution: obstacles replicated (solver/obstacles.hpp); each rank generates and projects the contacts of its
/// owned vertices, which depend on that vertex alone: the same numbers on any number of ranks (the caller updates
/// the ghosts). OpenMP over the vertices.
#include <mpi.h>
#include <petscvec.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "contact/obstacle.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/contact.hpp"
#include "solver/model.hpp"

namespace edgefem {

class PbdContact {
 public:
  /// Collective: the obstacles, the candidates (`work`: a ghosted vector of the sweep's layout) and the reach scale.
  PbdContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Vec work);
  /// A step from time t0 (positions x_n) to t1 (the prediction x_pred): the obstacles placed at t1 and the step's
  /// contacts generated (shares zero). Collective (the reach's maximum).
  void begin_step(double t0, double t1, Vec x_n, Vec x_pred);
  /// Projects every contact of the step at the local positions x (3 per local vertex; owned vertices only are
  /// changed). Local.
  void project(double* x);
  /// The step's report at x: the smallest gap of any candidate, the contacts with a nonzero normal correction.
  /// Collective.
  ContactStepReport report(Vec x);
  /// The force of each obstacle on the body (3 per obstacle): sum of m p / dt^2 over its contacts (`inverse_mass`
  /// per local dof), summed over ranks. Collective.
  std::vector<double> obstacle_forces(std::span<const double> inverse_mass, double dt);
  /// Per local vertex: the smallest signed distance to an obstacle (`x_local`: 3 per local vertex), and the
  /// obstacles' force m p / dt^2 (3; owned contact vertices, zero elsewhere). Local.
  void vertex_fields(std::span<const double> x_local, std::span<const double> inverse_mass, double dt,
                     std::vector<double>& gap, std::vector<double>& force) const;
  [[nodiscard]] std::size_t n_contacts() const { return contacts_.size(); }
  /// This rank's wall-clock seconds so far: generation (begin_step) in step_limit, projections in residual.
  [[nodiscard]] const ContactSeconds& seconds() const { return seconds_; }

 private:
  struct Contact {
    std::int32_t vertex = 0, obstacle = 0;
    contact::Vec3 start{};  ///< x_n + the obstacle's move over the step: where a sticking vertex stays
    contact::Vec3 share{};  ///< p: this contact's part of the vertex's position
    double normal = 0.0;    ///< lambda of the last projection
    /// A convex obstacle's tangent plane at the closest point to x_n (the obstacle where the step ends): the
    /// contact is (x - plane_point) . plane_normal >= 0 (unused for other obstacles: the obstacle itself)
    contact::Vec3 plane_point{}, plane_normal{};
  };
  /// The new share of contact c for the vertex at y (its position without the share).
  void project_one(Contact& c, const contact::Vec3& y, contact::Vec3& share) const;

  MPI_Comm comm_;
  const Job& job_;
  std::vector<std::unique_ptr<contact::Obstacle>> obstacles_;
  std::vector<std::int32_t> candidates_;
  std::vector<double> moves_;           ///< 3 per obstacle: its translation over the current step
  double reach_floor_ = 0.0;            ///< 2e-2 of the bounding-box diagonal
  std::vector<Contact> contacts_;       ///< the step's, grouped by vertex (candidate order, then obstacle order)
  std::vector<std::size_t> group_;      ///< offsets of the vertex groups into contacts_ (one more than groups)
  ContactSeconds seconds_;
};

}  // namespace edgefem
