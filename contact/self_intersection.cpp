// SPDX-License-Identifier: BSD-3-Clause
#include "contact/self_intersection.hpp"

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>

#include "contact/self_broad_phase.hpp"

namespace edgefem::contact {
namespace {

using Rational = boost::multiprecision::cpp_rational;

template <class T>
int sign_of(const T& v) {
  return v > 0 ? 1 : (v < 0 ? -1 : 0);
}

/// det[u; v; w] of rationals.
Rational det3(const std::array<Rational, 3>& u, const std::array<Rational, 3>& v, const std::array<Rational, 3>& w) {
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
}

/// The sign of the 2D orientation of (a, b, c) in coordinates (i, j).
int orient2d(const Vec3& a, const Vec3& b, const Vec3& c, int i, int j) {
  const double l = (b[i] - a[i]) * (c[j] - a[j]), r = (b[j] - a[j]) * (c[i] - a[i]);
  const double det = l - r, bound = 1e-14 * (std::abs(l) + std::abs(r));
  if (std::abs(det) > bound) return sign_of(det);
  const Rational e = (Rational(b[i]) - a[i]) * (Rational(c[j]) - a[j]) - (Rational(b[j]) - a[j]) * (Rational(c[i]) - a[i]);
  return sign_of(e);
}

/// Whether c lies on segment a-b, given that a, b, c are collinear (coordinates i, j).
bool between(const Vec3& a, const Vec3& b, const Vec3& c, int i, int j) {
  return std::min(a[i], b[i]) <= c[i] && c[i] <= std::max(a[i], b[i]) && std::min(a[j], b[j]) <= c[j] &&
         c[j] <= std::max(a[j], b[j]);
}

bool segments_meet_2d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, int i, int j) {
  const int o1 = orient2d(a, b, c, i, j), o2 = orient2d(a, b, d, i, j), o3 = orient2d(c, d, a, i, j),
            o4 = orient2d(c, d, b, i, j);
  if (o1 * o2 < 0 && o3 * o4 < 0) return true;
  return (o1 == 0 && between(a, b, c, i, j)) || (o2 == 0 && between(a, b, d, i, j)) ||
         (o3 == 0 && between(c, d, a, i, j)) || (o4 == 0 && between(c, d, b, i, j));
}

bool inside_2d(const Vec3& x, const Vec3& p, const Vec3& q, const Vec3& r, int i, int j) {
  const int a = orient2d(p, q, x, i, j), b = orient2d(q, r, x, i, j), c = orient2d(r, p, x, i, j);
  return !((a > 0 || b > 0 || c > 0) && (a < 0 || b < 0 || c < 0));
}

/// Segment and triangle in one plane: projected along the normal's largest component.
bool coplanar_segment_triangle(const Vec3& a, const Vec3& b, const Vec3& p, const Vec3& q, const Vec3& r) {
  const Vec3 n = cross(q - p, r - p);
  int drop = 0;
  for (int k = 1; k < 3; ++k)
    if (std::abs(n[k]) > std::abs(n[drop])) drop = k;
  const int i = (drop + 1) % 3, j = (drop + 2) % 3;
  return inside_2d(a, p, q, r, i, j) || inside_2d(b, p, q, r, i, j) || segments_meet_2d(a, b, p, q, i, j) ||
         segments_meet_2d(a, b, q, r, i, j) || segments_meet_2d(a, b, r, p, i, j);
}

}  // namespace

int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 u = b - a, v = c - a, w = d - a;
  const double m0 = v[1] * w[2] - v[2] * w[1], m1 = v[0] * w[2] - v[2] * w[0], m2 = v[0] * w[1] - v[1] * w[0];
  const double det = u[0] * m0 - u[1] * m1 + u[2] * m2;
  const double permanent = std::abs(u[0]) * (std::abs(v[1] * w[2]) + std::abs(v[2] * w[1])) +
                           std::abs(u[1]) * (std::abs(v[0] * w[2]) + std::abs(v[2] * w[0])) +
                           std::abs(u[2]) * (std::abs(v[0] * w[1]) + std::abs(v[1] * w[0]));
  // Shewchuk's bound for this evaluation order is ~7.8e-16 of the permanent (with the differences rounded, a few
  // ulps more); 1e-13 leaves a wide margin.
  if (std::abs(det) > 1e-13 * permanent) return sign_of(det);
  // One coordinate the same at all four points: u, v, w have an exact zero component there and lie in a plane, so
  // the determinant is exactly 0 (a flat sheet's triangles, without the exact arithmetic below).
  for (int k = 0; k < 3; ++k)
    if (a[k] == b[k] && a[k] == c[k] && a[k] == d[k]) return 0;
  const auto exact = [&](const Vec3& x) {
    return std::array<Rational, 3>{Rational(x[0]) - a[0], Rational(x[1]) - a[1], Rational(x[2]) - a[2]};
  };
  return sign_of(det3(exact(b), exact(c), exact(d)));
}

bool segment_meets_triangle(const Vec3& a, const Vec3& b, const Vec3& p, const Vec3& q, const Vec3& r) {
  const int oa = orient3d(p, q, r, a), ob = orient3d(p, q, r, b);
  if (oa * ob > 0) return false;
  if (oa == 0 && ob == 0) return coplanar_segment_triangle(a, b, p, q, r);
  const int s1 = orient3d(a, b, p, q), s2 = orient3d(a, b, q, r), s3 = orient3d(a, b, r, p);
  return !((s1 > 0 || s2 > 0 || s3 > 0) && (s1 < 0 || s2 < 0 || s3 < 0));
}

bool triangles_intersect(const std::array<Vec3, 3>& s, const std::array<Vec3, 3>& t) {
  for (int k = 0; k < 3; ++k) {
    if (segment_meets_triangle(s[k], s[(k + 1) % 3], t[0], t[1], t[2])) return true;
    if (segment_meets_triangle(t[k], t[(k + 1) % 3], s[0], s[1], s[2])) return true;
  }
  return false;
}

long long count_intersecting_pairs(const std::vector<double>& x, const std::vector<std::array<int, 3>>& triangles) {
  const auto point = [&](int v) { return load3(&x[3 * static_cast<std::size_t>(v)]); };
  std::vector<Aabb> boxes(triangles.size());
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (const int v : triangles[t]) boxes[t].grow(point(v));
  const BoxTree tree(boxes);
  // Every two triangles whose boxes overlap, from one traversal of the tree with itself (on the OpenMP threads).
  std::vector<long long> counts(static_cast<std::size_t>(omp_get_max_threads()), 0);
  tree.each_overlap([&](int thread, int s, int t) {
    const auto& a = triangles[static_cast<std::size_t>(s)];
    const auto& b = triangles[static_cast<std::size_t>(t)];
    const bool shared = std::any_of(a.begin(), a.end(), [&](int v) { return std::find(b.begin(), b.end(), v) != b.end(); });
    if (!shared && triangles_intersect({point(a[0]), point(a[1]), point(a[2])}, {point(b[0]), point(b[1]), point(b[2])}))
      ++counts[static_cast<std::size_t>(thread)];
  });
  long long count = 0;
  for (const long long c : counts) count += c;
  return count;
}

}  // namespace edgefem::contact
