// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file obstacle.hpp
/// A rigid obstacle a deformable body must not penetrate: its geometry (closest point, signed distance and its
/// first and second derivatives, a continuous collision check along a segment) and its rigid motion (a translation
/// set by place()). The shapes are in shapes.hpp (plane, box, sphere, capped cylinder) and obstacle_mesh.hpp
/// (a triangle surface with a bounding-volume hierarchy). No MPI, no PETSc: every rank holds every obstacle.
///
/// Conventions: the signed distance d is positive outside the obstacle and negative inside (an open triangle
/// surface has no inside: d is the unsigned distance to it). Its gradient, `normal`, is the unit vector from the
/// closest surface point to the query point (the obstacle's outward normal there) and its Hessian is 0 on flat
/// features and (I - n n^T - ...) / d-like on edges, vertices and curved surfaces (every shape's file derives its
/// own). A contact solver uses d, n and the Hessian; the position-based and frame solvers (which project
/// positions) need only d, the closest point and n, and time_of_impact() to keep a move from crossing the surface.
#include <limits>
#include <string>

#include "contact/vec3.hpp"

namespace edgefem::contact {

/// What a point sees of an obstacle.
struct Proximity {
  double distance = std::numeric_limits<double>::infinity();  ///< signed: > 0 outside, < 0 inside
  Vec3 point{};                                               ///< the closest point on the obstacle's surface
  Vec3 normal{};   ///< the distance's gradient: unit, from the surface toward the query point (outward)
  Mat3 hessian{};  ///< the distance's Hessian (filled when asked for)
  int feature = 0;  ///< which kind of feature is closest (shape-specific, e.g. face/edge/vertex; for tests)
};

/// The first time t in [0, 1] at which a moving point touches an obstacle, or kNoImpact.
inline constexpr double kNoImpact = std::numeric_limits<double>::infinity();

class Obstacle {
 public:
  Obstacle(std::string name, double friction) : name_(std::move(name)), friction_(friction) {}
  virtual ~Obstacle() = default;
  Obstacle(const Obstacle&) = delete;
  Obstacle& operator=(const Obstacle&) = delete;

  /// The job's name of the obstacle (reactions.csv, summary.json, messages).
  [[nodiscard]] const std::string& name() const { return name_; }
  /// Coulomb's coefficient between the body and this obstacle (0: frictionless).
  [[nodiscard]] double friction() const { return friction_; }
  /// "plane", "box", "sphere", "cylinder" or "mesh".
  [[nodiscard]] virtual const char* shape_name() const = 0;
  /// Whether the shape is convex (plane, box, sphere, capped cylinder): then the tangent plane at the closest
  /// point to any outside point bounds it (the position-based contacts' plane constraints, pbd/pbd_contact.hpp).
  [[nodiscard]] virtual bool convex() const { return false; }
  /// Whether the distance is signed (the shape has an inside); false for an open triangle surface.
  [[nodiscard]] virtual bool has_inside() const { return true; }

  /// Moves the obstacle rigidly to `offset` from where the job file placed it; every query sees it there.
  void place(const Vec3& offset) { offset_ = offset; }
  [[nodiscard]] const Vec3& offset() const { return offset_; }

  /// The proximity of point x when the obstacle's surface is within `max_distance` of x (then true, and `out`
  /// filled: the Hessian only `with_hessian`); false otherwise (`out` then unspecified). Points inside are always
  /// near.
  bool proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const {
    if (!local_proximity(x - offset_, max_distance, with_hessian, out)) return false;
    out.point = out.point + offset_;
    return true;
  }
  /// The signed distance of x (any distance).
  [[nodiscard]] double signed_distance(const Vec3& x) const {
    Proximity p;
    local_proximity(x - offset_, std::numeric_limits<double>::infinity(), false, p);
    return p.distance;
  }
  /// Continuous collision check of the segment x0 -> x1 (the point at x0 + t (x1 - x0), t in [0, 1]): the first t
  /// at which it reaches the surface from outside, 0 when x0 is not outside, kNoImpact when it stays outside. A
  /// moving obstacle's own motion by `move` is the segment x0 -> x0 - move relative to it.
  [[nodiscard]] double time_of_impact(const Vec3& x0, const Vec3& x1) const {
    return local_time_of_impact(x0 - offset_, x1 - offset_);
  }

 protected:
  /// proximity() and time_of_impact() in the obstacle's own frame (offset 0).
  virtual bool local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const = 0;
  [[nodiscard]] virtual double local_time_of_impact(const Vec3& x0, const Vec3& x1) const = 0;

 private:
  std::string name_;
  double friction_ = 0.0;
  Vec3 offset_{};
};

}  // namespace edgefem::contact
