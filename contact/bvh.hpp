// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file bvh.hpp
/// A bounding-volume hierarchy of axis-aligned boxes over the triangles of a surface: the broad phase of the
/// triangle-surface obstacle (obstacle_mesh.hpp). Built once by median splits of the triangles' centroids along the
/// longest axis (leaves of at most four triangles); queried for the nearest triangle within a distance and for the
/// first triangle a segment meets. No MPI, no PETSc; queries are const and thread-safe.
#include <algorithm>
#include <array>
#include <vector>

#include "contact/triangle_distance.hpp"
#include "contact/vec3.hpp"

namespace edgefem::contact {

/// An axis-aligned box (empty: lo > hi).
struct Aabb {
  Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  void grow(const Vec3& p) {
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], p[k]), hi[k] = std::max(hi[k], p[k]);
  }
  void grow(const Aabb& b) {
    grow(b.lo);
    grow(b.hi);
  }
  /// The squared distance from x to the box (0 inside).
  [[nodiscard]] double squared_distance(const Vec3& x) const;
  /// Whether the segment x0 + t (x1 - x0), t in [0, t_max], meets the box.
  [[nodiscard]] bool meets_segment(const Vec3& x0, const Vec3& x1, double t_max) const;
};

class TriangleBvh {
 public:
  /// Over `triangles` (3 indices into `points` each). The arrays must outlive the hierarchy and not change.
  TriangleBvh(const std::vector<Vec3>& points, const std::vector<std::array<int, 3>>& triangles);

  /// The triangle nearest to x if one lies within sqrt(max_squared_distance) (its index, `best` its closest point),
  /// else -1.
  int nearest(const Vec3& x, double max_squared_distance, TriangleClosest& best) const;
  /// The first t in [0, 1] at which the segment x0 -> x1 meets a triangle, or a negative value.
  [[nodiscard]] double first_hit(const Vec3& x0, const Vec3& x1) const;
  [[nodiscard]] const Aabb& bounds() const { return nodes_.front().box; }
  [[nodiscard]] std::size_t n_nodes() const { return nodes_.size(); }

 private:
  struct Node {
    Aabb box;
    int left = -1, right = -1;  ///< children (-1: a leaf)
    int first = 0, count = 0;   ///< a leaf's triangles: order_[first, first + count)
  };
  /// Builds the subtree of order_[first, last) and returns its node index.
  int build(int first, int last, const std::vector<Vec3>& centroids);
  [[nodiscard]] Aabb triangle_box(int t) const;

  const std::vector<Vec3>& points_;
  const std::vector<std::array<int, 3>>& triangles_;
  std::vector<Node> nodes_;
  std::vector<int> order_;
};

}  // namespace edgefem::contact
