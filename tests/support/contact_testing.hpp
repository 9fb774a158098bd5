// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file contact_testing.hpp
/// Helpers of the contact tests: central differences of functions of a point, relative errors, a random point in a
/// box, an icosphere surface and the obstacles' distances as functions. Test-only, header-only.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "contact/obstacle.hpp"
#include "contact/vec3.hpp"

namespace edgefem::contact_testing {

using namespace edgefem::contact;  // Vec3, Mat3 and their operators

/// Central-difference gradient of f at x (step h).
inline Vec3 fd_gradient(const std::function<double(const Vec3&)>& f, const Vec3& x, double h) {
  Vec3 g{};
  for (int k = 0; k < 3; ++k) {
    Vec3 p = x, m = x;
    p[k] += h, m[k] -= h;
    g[k] = (f(p) - f(m)) / (2 * h);
  }
  return g;
}

/// Central-difference Jacobian (row-major: J[3 i + k] = d g_i / d x_k) of g at x (step h).
inline Mat3 fd_jacobian(const std::function<Vec3(const Vec3&)>& g, const Vec3& x, double h) {
  Mat3 J{};
  for (int k = 0; k < 3; ++k) {
    Vec3 p = x, m = x;
    p[k] += h, m[k] -= h;
    const Vec3 gp = g(p), gm = g(m);
    for (int i = 0; i < 3; ++i) J[3 * i + k] = (gp[i] - gm[i]) / (2 * h);
  }
  return J;
}

/// max |a - b| / max(max |b|, floor) over the entries.
template <std::size_t N>
double relative_error(const std::array<double, N>& a, const std::array<double, N>& b, double floor) {
  double diff = 0.0, scale = floor;
  for (std::size_t i = 0; i < N; ++i) diff = std::max(diff, std::abs(a[i] - b[i])), scale = std::max(scale, std::abs(b[i]));
  return diff / scale;
}

/// The smallest eigenvalue of a symmetric 3 x 3 lies at or above -tol * scale: checked through x^T M x on many
/// directions (a test of positive semidefiniteness that needs no eigensolver).
inline double min_rayleigh(const Mat3& m) {
  double worst = 1e300;
  std::mt19937 rng(7);
  std::normal_distribution<double> g;
  for (int i = 0; i < 2000; ++i) {
    Vec3 v{g(rng), g(rng), g(rng)};
    const double n2 = contact::dot(v, v);
    worst = std::min(worst, contact::dot(v, contact::multiply(m, v)) / n2);
  }
  return worst;
}

/// An icosphere of `radius` about `center`, refined `levels` times, outward-oriented.
inline void icosphere(const Vec3& center, double radius, int levels, std::vector<Vec3>& points,
                      std::vector<std::array<int, 3>>& triangles) {
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  points = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
            {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  triangles = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
               {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
               {3, 8, 9},  {4, 9, 5},  {2, 4, 11},  {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (auto& p : points) p = (1.0 / contact::norm(p)) * p;
  for (int level = 0; level < levels; ++level) {
    std::map<std::pair<int, int>, int> middle;
    auto mid = [&](int a, int b) {
      const auto key = std::minmax(a, b);
      const auto it = middle.find(key);
      if (it != middle.end()) return it->second;
      Vec3 m = 0.5 * (points[a] + points[b]);
      points.push_back((1.0 / contact::norm(m)) * m);
      return middle[key] = static_cast<int>(points.size()) - 1;
    };
    std::vector<std::array<int, 3>> finer;
    for (const auto& f : triangles) {
      const int ab = mid(f[0], f[1]), bc = mid(f[1], f[2]), ca = mid(f[2], f[0]);
      finer.push_back({f[0], ab, ca});
      finer.push_back({f[1], bc, ab});
      finer.push_back({f[2], ca, bc});
      finer.push_back({ab, bc, ca});
    }
    triangles = std::move(finer);
  }
  for (auto& p : points) p = center + radius * p;
}

/// The signed distance of `o` as a function, and its normal.
inline std::function<double(const Vec3&)> distance_of(const contact::Obstacle& o) {
  return [&o](const Vec3& x) { return o.signed_distance(x); };
}
inline std::function<Vec3(const Vec3&)> normal_of(const contact::Obstacle& o) {
  return [&o](const Vec3& x) {
    contact::Proximity p;
    o.proximity(x, 1e300, false, p);
    return p.normal;
  };
}

}  // namespace edgefem::contact_testing
