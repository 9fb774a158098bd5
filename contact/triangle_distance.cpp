// SPDX-License-Identifier: BSD-3-Clause
#include "contact/triangle_distance.hpp"

#include <cmath>

namespace edgefem::contact {

TriangleClosest closest_on_triangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c) {
  // Voronoi regions of the vertices, then of the edges, then the face (barycentric coordinates).
  TriangleClosest r;
  auto done = [&](const Vec3& p, TriangleFeature f, const std::array<double, 3>& barycentric) {
    r.point = p;
    r.feature = f;
    r.barycentric = barycentric;
    const Vec3 d = x - p;
    r.squared_distance = dot(d, d);
    return r;
  };
  const Vec3 ab = b - a, ac = c - a, ap = x - a;
  const double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0) return done(a, TriangleFeature::vertex_a, {1.0, 0.0, 0.0});
  const Vec3 bp = x - b;
  const double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) return done(b, TriangleFeature::vertex_b, {0.0, 1.0, 0.0});
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double v = d1 / (d1 - d3);
    return done(a + v * ab, TriangleFeature::edge_ab, {1.0 - v, v, 0.0});
  }
  const Vec3 cp = x - c;
  const double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) return done(c, TriangleFeature::vertex_c, {0.0, 0.0, 1.0});
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double w = d2 / (d2 - d6);
    return done(a + w * ac, TriangleFeature::edge_ca, {1.0 - w, 0.0, w});
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return done(b + w * (c - b), TriangleFeature::edge_bc, {0.0, 1.0 - w, w});
  }
  const double sum = va + vb + vc;
  if (!(sum > 0.0)) return done(a, TriangleFeature::vertex_a, {1.0, 0.0, 0.0});  // a degenerate triangle
  // The point by one reciprocal, as it always was; the coordinates by two divisions, as pbd_self_contact's were.
  const double denom = 1.0 / sum;
  const double v = vb / sum, w = vc / sum;
  return done(a + (vb * denom) * ab + (vc * denom) * ac, TriangleFeature::face, {1.0 - v - w, v, w});
}

double segment_triangle(const Vec3& x0, const Vec3& x1, const Vec3& a, const Vec3& b, const Vec3& c,
                        double tolerance) {
  // Moeller-Trumbore on the line x0 + t (x1 - x0): solve x0 + t w = a + u (b - a) + v (c - a).
  const Vec3 w = x1 - x0, e1 = b - a, e2 = c - a;
  const Vec3 p = cross(w, e2);
  const double det = dot(e1, p);
  if (std::abs(det) <= 1e-300) return -1.0;  // the segment is parallel to the triangle's plane
  const double inv = 1.0 / det;
  const Vec3 s = x0 - a;
  const double u = dot(s, p) * inv;
  if (u < -tolerance || u > 1.0 + tolerance) return -1.0;
  const Vec3 q = cross(s, e1);
  const double v = dot(w, q) * inv;
  if (v < -tolerance || u + v > 1.0 + tolerance) return -1.0;
  const double t = dot(e2, q) * inv;
  return t >= 0.0 && t <= 1.0 ? t : -1.0;
}

}  // namespace edgefem::contact
