// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file shapes.hpp
/// The analytic obstacles: a half space bounded by a plane, an axis-aligned box, a ball and a capped cylinder, all
/// solid (a point inside has a negative distance). Each gives the exact signed distance, its gradient and Hessian
/// (derived in shapes.cpp) and the exact first contact of a segment (contact/ccd.hpp). Feature ids of Proximity:
/// box 0 inside / 1 face / 2 edge / 3 corner; cylinder 0 inside / 1 lateral surface / 2 cap / 3 rim.
#include <string>

#include "contact/obstacle.hpp"

namespace edgefem::contact {

/// The half space {x : n . (x - p) <= 0} below the plane through `point` with unit `normal`.
class PlaneObstacle final : public Obstacle {
 public:
  PlaneObstacle(std::string name, double friction, const Vec3& point, const Vec3& normal);
  [[nodiscard]] const char* shape_name() const override { return "plane"; }
  [[nodiscard]] bool convex() const override { return true; }

 protected:
  bool local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const override;
  [[nodiscard]] double local_time_of_impact(const Vec3& x0, const Vec3& x1) const override;

 private:
  Vec3 point_, normal_;
};

/// The solid axis-aligned box [lo, hi].
class BoxObstacle final : public Obstacle {
 public:
  BoxObstacle(std::string name, double friction, const Vec3& lo, const Vec3& hi);
  [[nodiscard]] const char* shape_name() const override { return "box"; }
  [[nodiscard]] bool convex() const override { return true; }

 protected:
  bool local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const override;
  [[nodiscard]] double local_time_of_impact(const Vec3& x0, const Vec3& x1) const override;

 private:
  Vec3 lo_, hi_;
};

/// The solid ball of `radius` about `center`.
class SphereObstacle final : public Obstacle {
 public:
  SphereObstacle(std::string name, double friction, const Vec3& center, double radius);
  [[nodiscard]] const char* shape_name() const override { return "sphere"; }
  [[nodiscard]] bool convex() const override { return true; }

 protected:
  bool local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const override;
  [[nodiscard]] double local_time_of_impact(const Vec3& x0, const Vec3& x1) const override;

 private:
  Vec3 center_;
  double radius_;
};

/// The solid capped cylinder of `radius` whose axis is the segment of `length` centred at `center` along the unit
/// `axis`.
class CylinderObstacle final : public Obstacle {
 public:
  CylinderObstacle(std::string name, double friction, const Vec3& center, const Vec3& axis, double radius,
                   double length);
  [[nodiscard]] const char* shape_name() const override { return "cylinder"; }
  [[nodiscard]] bool convex() const override { return true; }

 protected:
  bool local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const override;
  [[nodiscard]] double local_time_of_impact(const Vec3& x0, const Vec3& x1) const override;

 private:
  Vec3 center_, axis_;
  double radius_, half_length_;
};

}  // namespace edgefem::contact
