// SPDX-License-Identifier: BSD-3-Clause
#include "contact/ccd.hpp"

#include <cmath>

namespace edgefem::contact {

Interval half_line(double a, double b) {
  if (b == 0.0) return a <= 0.0 ? Interval{} : Interval{1.0, 0.0};
  const double t = -a / b;
  return b > 0.0 ? Interval{-std::numeric_limits<double>::infinity(), t}
                 : Interval{t, std::numeric_limits<double>::infinity()};
}

Interval slab(double z0, double dz, double h) {
  Interval i = half_line(z0 - h, dz);  // z <= h
  i.intersect(half_line(-z0 - h, -dz));  // -z <= h
  return i;
}

Interval quadratic_inside(double A, double B, double C) {
  // A tiny A (a motion almost along the axis of a cylinder, or none) makes the roots meaningless: then the line is
  // inside everywhere or nowhere (C's sign), to the round-off of the linear term.
  if (!(A > 1e-300) || std::abs(A) <= 1e-14 * std::abs(B)) return half_line(C, B);
  const double disc = B * B - 4.0 * A * C;
  if (disc < 0.0) return Interval{1.0, 0.0};
  // The stable pair of roots: q = -(B + sign(B) sqrt(disc)) / 2, roots q / A and C / q.
  const double q = -0.5 * (B + std::copysign(std::sqrt(disc), B));
  double t1 = q / A, t2 = q != 0.0 ? C / q : t1;
  if (t1 > t2) std::swap(t1, t2);
  return Interval{t1, t2};
}

double first_contact(const Interval& inside) {
  if (inside.empty() || inside.hi < 0.0 || inside.lo > 1.0) return kNoImpact;
  return std::max(inside.lo, 0.0);
}

}  // namespace edgefem::contact
