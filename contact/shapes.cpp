// SPDX-License-Identifier: BSD-3-Clause
/// \file shapes.cpp
/// The analytic obstacles (shapes.hpp). For each, the signed distance d(x), its gradient n = grad d (|n| = 1) and
/// Hessian H = grad grad d. Two facts give every Hessian below: H n = 0 (|grad d| = 1), and for d = |x - p(x)|, the
/// distance to a feature p, d^2 / 2 has the Hessian n n^T + d H, so H = (grad grad (d^2 / 2) - n n^T) / d.
#include "contact/shapes.hpp"

#include <algorithm>
#include <cmath>

#include "contact/ccd.hpp"

namespace edgefem::contact {

PlaneObstacle::PlaneObstacle(std::string name, double friction, const Vec3& point, const Vec3& normal)
    : Obstacle(std::move(name), friction), point_(point), normal_(normal) {}

bool PlaneObstacle::local_proximity(const Vec3& x, double max_distance, bool, Proximity& out) const {
  // d = n . (x - p): n is the gradient and H = 0.
  const double d = dot(normal_, x - point_);
  if (d > max_distance) return false;
  out.distance = d;
  out.normal = normal_;
  out.point = x - d * normal_;
  out.hessian = {};
  out.feature = 1;
  return true;
}

double PlaneObstacle::local_time_of_impact(const Vec3& x0, const Vec3& x1) const {
  const double d0 = dot(normal_, x0 - point_), d1 = dot(normal_, x1 - point_);
  return first_contact(half_line(d0, d1 - d0));
}

BoxObstacle::BoxObstacle(std::string name, double friction, const Vec3& lo, const Vec3& hi)
    : Obstacle(std::move(name), friction), lo_(lo), hi_(hi) {}

bool BoxObstacle::local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const {
  // Outside: p = the clamp of x to the box, d = |x - p|. With P the projector on the axes clamped, d^2 / 2 has
  // the Hessian P, so H = (P - n n^T) / d: 0 on a face (P = n n^T), a rank-1 curvature on an edge, rank 2 at a
  // corner. Inside: d = -(distance to the nearest face), n that face's outward normal, H = 0.
  Vec3 p = x;
  Mat3 projector{};
  int clamped = 0;
  for (int k = 0; k < 3; ++k) {
    if (x[k] < lo_[k]) p[k] = lo_[k];
    else if (x[k] > hi_[k]) p[k] = hi_[k];
    else continue;
    projector[4 * k] = 1.0;
    ++clamped;
  }
  if (clamped == 0) {
    int axis = 0;
    double depth = x[0] - lo_[0], side = -1.0;
    for (int k = 0; k < 3; ++k) {
      if (x[k] - lo_[k] < depth) depth = x[k] - lo_[k], axis = k, side = -1.0;
      if (hi_[k] - x[k] < depth) depth = hi_[k] - x[k], axis = k, side = 1.0;
    }
    out.distance = -depth;
    out.normal = {};
    out.normal[axis] = side;
    out.point = x;
    out.point[axis] = side > 0 ? hi_[axis] : lo_[axis];
    out.hessian = {};
    out.feature = 0;
    return true;
  }
  const Vec3 diff = x - p;
  const double d = norm(diff);
  if (d > max_distance) return false;
  out.distance = d;
  out.normal = (1.0 / d) * diff;
  out.point = p;
  out.feature = clamped;
  out.hessian = {};
  if (with_hessian && clamped > 1) {
    out.hessian = projector;
    add_scaled(out.hessian, -1.0, outer(out.normal, out.normal));
    for (double& h : out.hessian) h /= d;
  }
  return true;
}

double BoxObstacle::local_time_of_impact(const Vec3& x0, const Vec3& x1) const {
  Interval inside;
  for (int k = 0; k < 3; ++k)
    inside.intersect(slab(x0[k] - 0.5 * (lo_[k] + hi_[k]), x1[k] - x0[k], 0.5 * (hi_[k] - lo_[k])));
  return first_contact(inside);
}

SphereObstacle::SphereObstacle(std::string name, double friction, const Vec3& center, double radius)
    : Obstacle(std::move(name), friction), center_(center), radius_(radius) {}

bool SphereObstacle::local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const {
  // d = |x - c| - r, n = (x - c) / |x - c|, H = (I - n n^T) / |x - c| (the level sets are spheres).
  const Vec3 v = x - center_;
  const double rho = norm(v), d = rho - radius_;
  if (d > max_distance) return false;
  out.distance = d;
  out.normal = rho > 0.0 ? (1.0 / rho) * v : Vec3{0, 0, 1};
  out.point = center_ + radius_ * out.normal;
  out.feature = 1;
  out.hessian = {};
  if (with_hessian && rho > 0.0) {
    out.hessian = identity3();
    add_scaled(out.hessian, -1.0, outer(out.normal, out.normal));
    for (double& h : out.hessian) h /= rho;
  }
  return true;
}

double SphereObstacle::local_time_of_impact(const Vec3& x0, const Vec3& x1) const {
  const Vec3 w = x1 - x0, q = x0 - center_;
  return first_contact(quadratic_inside(dot(w, w), 2.0 * dot(q, w), dot(q, q) - radius_ * radius_));
}

CylinderObstacle::CylinderObstacle(std::string name, double friction, const Vec3& center, const Vec3& axis,
                                   double radius, double length)
    : Obstacle(std::move(name), friction), center_(center), axis_(axis), radius_(radius), half_length_(0.5 * length) {}

namespace {

/// P - e e^T over rho, P = I - a a^T: the Hessian of the distance rho to the axis, restricted as the formulas need.
Mat3 radial_curvature(const Vec3& a, const Vec3& e, double rho) {
  Mat3 h = identity3();
  add_scaled(h, -1.0, outer(a, a));
  add_scaled(h, -1.0, outer(e, e));
  for (double& v : h) v /= rho;
  return h;
}

}  // namespace

bool CylinderObstacle::local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const {
  // Coordinates: z = a . (x - c) along the axis, rho = |q| from it (q = x - c - z a, e = q / rho), excesses
  // s = rho - r (radial) and t = |z| - h (axial), sigma = sign z. grad rho = e, grad grad rho = (P - e e^T) / rho
  // with P = I - a a^T; grad t = sigma a, grad grad t = 0.
  //  lateral (s > 0 >= t): d = s, n = e, H = (P - e e^T) / rho;   cap (t > 0 >= s): d = t, n = sigma a, H = 0;
  //  rim (s, t > 0): d^2 = s^2 + t^2, d^2 / 2 has the Hessian e e^T + s (P - e e^T) / rho + a a^T, so
  //    H = (e e^T + a a^T + s (P - e e^T) / rho - n n^T) / d with n = (s e + t sigma a) / d;
  //  inside (s, t <= 0): d = max(s, t) with the lateral or the cap formulas.
  const Vec3 v = x - center_;
  const double z = dot(axis_, v);
  const Vec3 q = v - z * axis_;
  const double rho = norm(q);
  const Vec3 e = rho > 0.0 ? (1.0 / rho) * q : any_orthogonal(axis_);
  const double s = rho - radius_, t = std::abs(z) - half_length_, sigma = z >= 0.0 ? 1.0 : -1.0;
  const bool inside = s <= 0.0 && t <= 0.0;
  const bool lateral = inside ? s >= t : t <= 0.0;
  const bool cap = inside ? !lateral : s <= 0.0;
  out.hessian = {};
  if (lateral) {
    out.distance = s;
    out.normal = e;
    out.point = center_ + z * axis_ + radius_ * e;
    if (with_hessian && rho > 0.0) out.hessian = radial_curvature(axis_, e, rho);
  } else if (cap) {
    out.distance = t;
    out.normal = sigma * axis_;
    out.point = x - t * out.normal;
  } else {
    const double d = std::sqrt(s * s + t * t);
    out.distance = d;
    out.normal = (1.0 / d) * (s * e + (t * sigma) * axis_);
    out.point = center_ + (sigma * half_length_) * axis_ + radius_ * e;
    if (with_hessian) {
      Mat3 h = outer(e, e);
      add_scaled(h, 1.0, outer(axis_, axis_));
      if (rho > 0.0) add_scaled(h, s, radial_curvature(axis_, e, rho));
      add_scaled(h, -1.0, outer(out.normal, out.normal));
      for (double& value : h) value /= d;
      out.hessian = h;
    }
  }
  out.feature = inside ? 0 : (lateral ? 1 : (cap ? 2 : 3));
  return out.distance <= max_distance;
}

double CylinderObstacle::local_time_of_impact(const Vec3& x0, const Vec3& x1) const {
  const Vec3 w = x1 - x0, v = x0 - center_;
  const double z0 = dot(axis_, v), dz = dot(axis_, w);
  const Vec3 q0 = v - z0 * axis_, qw = w - dz * axis_;
  Interval inside = quadratic_inside(dot(qw, qw), 2.0 * dot(q0, qw), dot(q0, q0) - radius_ * radius_);
  inside.intersect(slab(z0, dz, half_length_));
  return first_contact(inside);
}

}  // namespace edgefem::contact
