// SPDX-License-Identifier: BSD-3-Clause
#include "contact/self_friction.hpp"

#include <algorithm>
#include <cmath>

#include "contact/triangle_distance.hpp"

namespace edgefem::contact {
namespace {

/// The parameters (s, t) of the closest points of segments a0-a1 and b0-b1 (Ericson, Real-Time Collision Detection,
/// 5.1.9).
std::array<double, 2> segment_parameters(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
  const Vec3 d1 = a1 - a0, d2 = b1 - b0, r = a0 - b0;
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  if (a <= 0.0 && e <= 0.0) return {0.0, 0.0};
  if (a <= 0.0) return {0.0, std::clamp(f / e, 0.0, 1.0)};
  const double c = dot(d1, r);
  if (e <= 0.0) return {std::clamp(-c / a, 0.0, 1.0), 0.0};
  const double b = dot(d1, d2), denominator = a * e - b * b;
  double s = denominator > 0.0 ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0.0) {
    t = 0.0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1.0) {
    t = 1.0;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  return {s, t};
}

/// The barycentric coordinates of q (a point of triangle t0 t1 t2) in it.
std::array<double, 3> barycentric(const Vec3& q, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  const Vec3 v0 = t1 - t0, v1 = t2 - t0, v2 = q - t0;
  const double d00 = dot(v0, v0), d01 = dot(v0, v1), d11 = dot(v1, v1), d20 = dot(v2, v0), d21 = dot(v2, v1);
  const double denominator = d00 * d11 - d01 * d01;
  if (!(denominator > 0.0)) return {1.0, 0.0, 0.0};
  const double v = (d11 * d20 - d01 * d21) / denominator, w = (d00 * d21 - d01 * d20) / denominator;
  return {1.0 - v - w, v, w};
}

Vec3 relative(const std::array<double, 4>& w, const std::array<Vec3, 4>& y) {
  Vec3 r{0.0, 0.0, 0.0};
  for (int i = 0; i < 4; ++i) r = r + w[static_cast<std::size_t>(i)] * y[static_cast<std::size_t>(i)];
  return r;
}

}  // namespace

std::array<double, 4> closest_point_weights(const std::array<Vec3, 4>& y, bool edge_edge) {
  if (edge_edge) {
    const auto [s, t] = segment_parameters(y[0], y[1], y[2], y[3]);
    return {1.0 - s, s, -(1.0 - t), -t};
  }
  const TriangleClosest c = closest_on_triangle(y[0], y[1], y[2], y[3]);
  const auto b = barycentric(c.point, y[1], y[2], y[3]);
  return {1.0, -b[0], -b[1], -b[2]};
}

bool lag_self_friction(const std::array<Vec3, 4>& y, bool edge_edge, double lambda, double mu, SelfFrictionLag& out) {
  out.weights = closest_point_weights(y, edge_edge);
  const Vec3 r = relative(out.weights, y);
  const double length = norm(r);
  if (!(length > 0.0) || !(lambda > 0.0) || !(mu > 0.0)) return false;
  const Vec3 n = (1.0 / length) * r;
  out.lag.t1 = any_orthogonal(n);
  out.lag.t2 = cross(n, out.lag.t1);
  out.lag.force = mu * lambda;
  out.lag.start = r;
  out.lag.obstacle_move = {0.0, 0.0, 0.0};
  return true;
}

double self_friction_terms(const SelfFrictionLag& lag, const std::array<Vec3, 4>& y, double eps, double* gradient,
                           double* hessian) {
  Vec3 g{0.0, 0.0, 0.0};
  Mat3 h{};
  const double energy = friction_terms(lag.lag, relative(lag.weights, y), eps, gradient ? &g : nullptr,
                                       hessian ? &h : nullptr);
  const auto& w = lag.weights;
  for (int i = 0; i < 4; ++i) {
    if (gradient)
      for (int c = 0; c < 3; ++c) gradient[3 * i + c] += w[static_cast<std::size_t>(i)] * g[static_cast<std::size_t>(c)];
    if (hessian)
      for (int j = 0; j < 4; ++j)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            hessian[12 * (3 * i + r) + 3 * j + c] +=
                w[static_cast<std::size_t>(i)] * w[static_cast<std::size_t>(j)] * h[static_cast<std::size_t>(3 * r + c)];
  }
  return energy;
}

}  // namespace edgefem::contact
