// SPDX-License-Identifier: BSD-3-Clause
#include "contact/friction.hpp"

#include <cmath>

namespace edgefem::contact {

double friction_f0(double y, double eps) {
  if (y >= eps) return y;
  return -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0;
}

double friction_f1(double y, double eps) {
  if (y >= eps) return 1.0;
  return 2.0 * y / eps - y * y / (eps * eps);
}

double friction_f1_over_y(double y, double eps) {
  if (y >= eps) return 1.0 / y;
  return 2.0 / eps - y / (eps * eps);
}

Vec3 friction_slip(const FrictionLag& lag, const Vec3& x) {
  const Vec3 r = x - lag.start - lag.obstacle_move;
  return dot(lag.t1, r) * lag.t1 + dot(lag.t2, r) * lag.t2;
}

double friction_terms(const FrictionLag& lag, const Vec3& x, double eps, Vec3* gradient, Mat3* hessian) {
  if (lag.force == 0.0) return 0.0;
  const Vec3 r = x - lag.start - lag.obstacle_move;
  const double u1 = dot(lag.t1, r), u2 = dot(lag.t2, r);
  const double y = std::sqrt(u1 * u1 + u2 * u2);
  const double f1_y = friction_f1_over_y(y, eps);
  const Vec3 slip = u1 * lag.t1 + u2 * lag.t2;  // T u
  if (gradient) *gradient = *gradient + (lag.force * f1_y) * slip;
  if (hessian) {
    // mu lambda [ f1/y T T^T + c (T u)(T u)^T ], c = (f1' y - f1) / y^3: -1 / (eps^2 y) below eps, -1 / y^3 above.
    const double c = y >= eps ? -1.0 / (y * y * y) : (y > 0.0 ? -1.0 / (eps * eps * y) : 0.0);
    Mat3 h = outer(lag.t1, lag.t1);
    add_scaled(h, 1.0, outer(lag.t2, lag.t2));
    for (double& v : h) v *= f1_y;
    add_scaled(h, c, outer(slip, slip));
    add_scaled(*hessian, lag.force, h);
  }
  return lag.force * friction_f0(y, eps);
}

}  // namespace edgefem::contact
