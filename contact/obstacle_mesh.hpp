// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file obstacle_mesh.hpp
/// An obstacle given as a triangle surface (a Gmsh surface mesh or an STL file, contact/obstacle_set.hpp): the
/// distance to the nearest triangle through a bounding-volume hierarchy (bvh.hpp). A closed surface (every edge
/// shared by exactly two triangles, consistently oriented; an inward-oriented one is turned outward) has an inside:
/// the sign comes from the angle-weighted pseudo-normal of the nearest feature (Baerentzen and Aanaes 2005). An open
/// surface has none: its distance is unsigned and a body is kept on whichever side it starts.
///
/// Derivatives (p the closest point, u = |x - p| the unsigned distance, d = +-u): n = grad d = (x - p) / d; on a
/// face H = 0; on an edge of unit direction e, H = (I - e e^T - n n^T) / d; at a vertex, H = (I - n n^T) / d.
/// Feature ids of Proximity: 0 vertex, 1 edge, 2 face.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "contact/bvh.hpp"
#include "contact/obstacle.hpp"

namespace edgefem::contact {

class MeshObstacle final : public Obstacle {
 public:
  /// `triangles`: 3 indices into `points` each. Throws std::invalid_argument, naming the first bad triangle, for an
  /// empty surface, an index out of range, a non-finite point or a triangle of (near) zero area.
  MeshObstacle(std::string name, double friction, std::vector<Vec3> points, std::vector<std::array<int, 3>> triangles);
  [[nodiscard]] const char* shape_name() const override { return "mesh"; }
  [[nodiscard]] bool has_inside() const override { return closed_; }
  [[nodiscard]] std::size_t n_triangles() const { return triangles_.size(); }
  [[nodiscard]] const std::vector<Vec3>& points() const { return points_; }
  [[nodiscard]] const std::vector<std::array<int, 3>>& triangles() const { return triangles_; }

 protected:
  bool local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const override;
  [[nodiscard]] double local_time_of_impact(const Vec3& x0, const Vec3& x1) const override;

 private:
  /// Edges, their pseudo-normals, the vertices' pseudo-normals, closedness and orientation.
  void build_topology();
  /// The pseudo-normal of triangle t's feature f (for the sign).
  [[nodiscard]] Vec3 pseudo_normal(int t, TriangleFeature f) const;
  /// Fills `out` from the nearest triangle t and its closest point c (x: the query point).
  void fill(const Vec3& x, int t, const TriangleClosest& c, bool with_hessian, Proximity& out) const;

  std::vector<Vec3> points_;
  std::vector<std::array<int, 3>> triangles_;
  std::vector<Vec3> face_normals_;             ///< unit
  std::vector<std::array<int, 3>> face_edges_;  ///< per triangle: its edges ab, bc, ca
  std::vector<Vec3> edge_normals_;              ///< sum of the adjacent faces' normals
  std::vector<Vec3> vertex_normals_;            ///< angle-weighted sum of the incident faces' normals
  bool closed_ = false;
  std::optional<TriangleBvh> bvh_;
};

}  // namespace edgefem::contact
