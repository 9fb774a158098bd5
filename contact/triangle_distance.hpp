// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file triangle_distance.hpp
/// The closest point of a triangle to a point, with the feature it lies on (a vertex, an edge or the face), and a
/// segment-triangle intersection test: the narrow phase of the triangle-surface obstacle (obstacle_mesh.hpp).
#include <array>

#include "contact/vec3.hpp"

namespace edgefem::contact {

/// The feature of triangle (a, b, c) nearest to a point: vertex_a..c, edge_ab, edge_bc, edge_ca, or the face.
enum class TriangleFeature : int { vertex_a, vertex_b, vertex_c, edge_ab, edge_bc, edge_ca, face };

struct TriangleClosest {
  Vec3 point{};
  double squared_distance = 0.0;
  TriangleFeature feature = TriangleFeature::face;
  /// The point's barycentric coordinates (of a, b, c): in [0, 1] up to rounding, summing to 1, 0 for the vertices
  /// off the feature.
  std::array<double, 3> barycentric{1.0, 0.0, 0.0};
};

/// The point of triangle (a, b, c) closest to x (Ericson, Real-Time Collision Detection, 5.1.5), its feature and
/// its barycentric coordinates. Degenerate triangles: where the face's denominator (Ericson's va + vb + vc) is not
/// positive (or not a number), the result is vertex a (point a, vertex_a, {1, 0, 0}), not a division by it. Two
/// coincident vertices still give NaN on their zero-length edge (0/0), as they always did.
TriangleClosest closest_on_triangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c);

/// The parameter t in [0, 1] at which the segment x0 -> x1 meets triangle (a, b, c), or a negative value when it
/// does not. The triangle is grown by `tolerance` (relative, in barycentric coordinates) so that a segment through
/// an edge shared by two triangles meets at least one of them.
double segment_triangle(const Vec3& x0, const Vec3& x1, const Vec3& a, const Vec3& b, const Vec3& c,
                        double tolerance = 1e-9);

}  // namespace edgefem::contact
