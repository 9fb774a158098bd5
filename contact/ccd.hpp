// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file ccd.hpp
/// Continuous collision detection of a moving point against convex solids, exactly: the line x0 + t w meets a
/// convex set in one interval of t, the intersection of the intervals of the sets it is an intersection of (half
/// spaces, slabs, a ball, an infinite cylinder). The point first touches the solid at the interval's start; it
/// starts inside when the interval contains 0. Used by the analytic obstacles (shapes.cpp); a triangle surface
/// tests its triangles (obstacle_mesh.cpp).
#include <algorithm>
#include <limits>

#include "contact/obstacle.hpp"

namespace edgefem::contact {

/// An interval of the line parameter t; empty when lo > hi.
struct Interval {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  [[nodiscard]] bool empty() const { return lo > hi; }
  void intersect(const Interval& o) { lo = std::max(lo, o.lo), hi = std::min(hi, o.hi); }
};

/// {t : a + b t <= 0} (a half space along the line; b = 0: everything or nothing).
Interval half_line(double a, double b);
/// {t : |z0 + t dz| <= h} (a slab of half-width h).
Interval slab(double z0, double dz, double h);
/// {t : A t^2 + B t + C <= 0} for A >= 0 (a ball or an infinite cylinder: A = |w_perp|^2, C = |q0|^2 - r^2).
Interval quadratic_inside(double A, double B, double C);
/// The first t in [0, 1] of the interval: 0 when it contains 0 (the start is inside), its start when that lies in
/// (0, 1], kNoImpact otherwise.
double first_contact(const Interval& inside);

}  // namespace edgefem::contact
