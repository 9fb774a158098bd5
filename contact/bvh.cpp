// SPDX-License-Identifier: BSD-3-Clause
#include "contact/bvh.hpp"

#include <algorithm>
#include <cmath>

namespace edgefem::contact {

double Aabb::squared_distance(const Vec3& x) const {
  double s = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double d = x[k] < lo[k] ? lo[k] - x[k] : (x[k] > hi[k] ? x[k] - hi[k] : 0.0);
    s += d * d;
  }
  return s;
}

bool Aabb::meets_segment(const Vec3& x0, const Vec3& x1, double t_max) const {
  // Slabs: the segment's parameter interval inside each pair of planes (grown by a relative margin so that a
  // segment grazing a face of a flat box is not lost to round-off).
  double t0 = 0.0, t1 = t_max;
  for (int k = 0; k < 3; ++k) {
    const double margin = 1e-12 * (std::abs(lo[k]) + std::abs(hi[k]) + 1.0);
    const double w = x1[k] - x0[k], a = lo[k] - margin, b = hi[k] + margin;
    if (w == 0.0) {
      if (x0[k] < a || x0[k] > b) return false;
      continue;
    }
    double ta = (a - x0[k]) / w, tb = (b - x0[k]) / w;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta), t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  return true;
}

TriangleBvh::TriangleBvh(const std::vector<Vec3>& points, const std::vector<std::array<int, 3>>& triangles)
    : points_(points), triangles_(triangles) {
  std::vector<Vec3> centroids(triangles_.size());
  for (std::size_t t = 0; t < triangles_.size(); ++t) {
    const auto& v = triangles_[t];
    centroids[t] = (1.0 / 3.0) * (points_[v[0]] + points_[v[1]] + points_[v[2]]);
  }
  order_.resize(triangles_.size());
  for (std::size_t t = 0; t < order_.size(); ++t) order_[t] = static_cast<int>(t);
  nodes_.reserve(triangles_.size() / 2 + 1);  // (about 2 n / 4 nodes for leaves of up to 4)
  build(0, static_cast<int>(order_.size()), centroids);
}

Aabb TriangleBvh::triangle_box(int t) const {
  Aabb b;
  for (const int v : triangles_[static_cast<std::size_t>(t)]) b.grow(points_[static_cast<std::size_t>(v)]);
  return b;
}

int TriangleBvh::build(int first, int last, const std::vector<Vec3>& centroids) {
  const int index = static_cast<int>(nodes_.size());
  nodes_.emplace_back();
  Aabb box, centroid_box;
  for (int i = first; i < last; ++i) {
    box.grow(triangle_box(order_[i]));
    centroid_box.grow(centroids[static_cast<std::size_t>(order_[i])]);
  }
  nodes_[index].box = box;
  if (last - first <= 4) {
    nodes_[index].first = first;
    nodes_[index].count = last - first;
    return index;
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (centroid_box.hi[k] - centroid_box.lo[k] > centroid_box.hi[axis] - centroid_box.lo[axis]) axis = k;
  const int middle = first + (last - first) / 2;
  std::nth_element(order_.begin() + first, order_.begin() + middle, order_.begin() + last, [&](int a, int b) {
    return centroids[static_cast<std::size_t>(a)][axis] < centroids[static_cast<std::size_t>(b)][axis];
  });
  const int left = build(first, middle, centroids);
  const int right = build(middle, last, centroids);
  nodes_[index].left = left;
  nodes_[index].right = right;
  return index;
}

int TriangleBvh::nearest(const Vec3& x, double max_squared_distance, TriangleClosest& best) const {
  // Branch and bound: a subtree whose box is farther than the best triangle so far is skipped; the nearer child
  // is visited first.
  int found = -1;
  double bound = max_squared_distance;
  int stack[128];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& node = nodes_[static_cast<std::size_t>(stack[--top])];
    if (node.box.squared_distance(x) > bound) continue;
    if (node.left < 0) {
      for (int i = node.first; i < node.first + node.count; ++i) {
        const auto& v = triangles_[static_cast<std::size_t>(order_[i])];
        const TriangleClosest c = closest_on_triangle(x, points_[v[0]], points_[v[1]], points_[v[2]]);
        if (c.squared_distance <= bound) bound = c.squared_distance, best = c, found = order_[i];
      }
      continue;
    }
    const double dl = nodes_[static_cast<std::size_t>(node.left)].box.squared_distance(x);
    const double dr = nodes_[static_cast<std::size_t>(node.right)].box.squared_distance(x);
    if (dl <= dr) {
      stack[top++] = node.right;
      stack[top++] = node.left;
    } else {
      stack[top++] = node.left;
      stack[top++] = node.right;
    }
  }
  return found;
}

double TriangleBvh::first_hit(const Vec3& x0, const Vec3& x1) const {
  double best = -1.0, t_max = 1.0;
  int stack[128];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& node = nodes_[static_cast<std::size_t>(stack[--top])];
    if (!node.box.meets_segment(x0, x1, t_max)) continue;
    if (node.left < 0) {
      for (int i = node.first; i < node.first + node.count; ++i) {
        const auto& v = triangles_[static_cast<std::size_t>(order_[i])];
        const double t = segment_triangle(x0, x1, points_[v[0]], points_[v[1]], points_[v[2]]);
        if (t >= 0.0 && t <= t_max) best = t, t_max = t;
      }
      continue;
    }
    stack[top++] = node.right;
    stack[top++] = node.left;
  }
  return best;
}

}  // namespace edgefem::contact
