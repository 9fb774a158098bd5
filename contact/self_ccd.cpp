// SPDX-License-Identifier: BSD-3-Clause
#include "contact/self_ccd.hpp"

#include <algorithm>
#include <cmath>

#include "contact/self_distance.hpp"

namespace edgefem::contact {

double additive_ccd(const std::array<Vec3, 4>& x, const std::array<Vec3, 4>& dx, bool edge_edge, double s,
                    int max_iterations) {
  Vec3 mean{};
  for (const Vec3& d : dx) mean = mean + 0.25 * d;
  std::array<Vec3, 4> p;
  for (int i = 0; i < 4; ++i) p[i] = dx[i] - mean;
  double l = 0.0;
  if (edge_edge) {
    l = std::max(norm(p[0]), norm(p[1])) + std::max(norm(p[2]), norm(p[3]));
  } else {
    l = norm(p[0]) + std::max({norm(p[1]), norm(p[2]), norm(p[3])});
  }
  if (!(l > 0.0)) return 1.0;
  const auto distance = [edge_edge](const std::array<Vec3, 4>& y) {
    return std::sqrt(std::max(edge_edge ? edge_edge_squared_distance(y) : point_triangle_squared_distance(y), 0.0));
  };
  std::array<Vec3, 4> y = x;
  double d = distance(y);
  if (!(d > 0.0)) return 0.0;
  const double g = s * d;
  double t = 0.0, step = (1.0 - s) * d / l;
  for (int it = 0; it < max_iterations; ++it) {
    const bool last = t + step >= 1.0;  // the last advance ends exactly at 1, which is then checked too
    if (last) step = 1.0 - t;
    for (int i = 0; i < 4; ++i) y[i] = y[i] + step * p[i];
    d = distance(y);
    if (t > 0.0 && d < g) return t;  // (the first advance keeps s d0 by the Lipschitz bound itself)
    if (last) return 1.0;
    t += step;
    step = 0.9 * d / l;
  }
  return t;
}

}  // namespace edgefem::contact
