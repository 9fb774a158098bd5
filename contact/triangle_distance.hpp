// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file triangle_distance.hpp
/// The closest point of a triangle to a point, with the feature it lies on (a vertex, an edge or the face), and a
/// segment-triangle intersection test: the narrow phase of the triangle-surface obstacle (obstacle_mesh.hpp).
#include "contact/vec3.hpp"

namespace edgefem::contact {

/// The feature of triangle (a, b, c) nearest to a point: vertex_a..c, edge_ab, edge_bc, edge_ca, or the face.
enum class TriangleFeature : int { vertex_a, vertex_b, vertex_c, edge_ab, edge_bc, edge_ca, face };

struct TriangleClosest {
  Vec3 point{};
  double squared_distance = 0.0;
  TriangleFeature feature = TriangleFeature::face;
};

/// The point of triangle (a, b, c) closest to x (Ericson, Real-Time Collision Detection, 5.1.5) and its feature.
TriangleClosest closest_on_triangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c);

/// The parameter t in [0, 1] at which the segment x0 -> x1 meets triangle (a, b, c), or a negative value when it
/// does not. The triangle is grown by `tolerance` (relative, in barycentric coordinates) so that a segment through
/// an edge shared by two triangles meets at least one of them.
double segment_triangle(const Vec3& x0, const Vec3& x1, const Vec3& a, const Vec3& b, const Vec3& c,
                        double tolerance = 1e-9);

}  // namespace edgefem::contact
