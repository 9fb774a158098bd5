// SPDX-License-Identifier: BSD-3-Clause
#include "contact/obstacle_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace edgefem::contact {
namespace {

std::uint64_t edge_key(int a, int b) {
  return (static_cast<std::uint64_t>(std::min(a, b)) << 32) | static_cast<std::uint32_t>(std::max(a, b));
}

/// The angle at corner p between the edges to q and r.
double corner_angle(const Vec3& p, const Vec3& q, const Vec3& r) {
  const Vec3 u = q - p, v = r - p;
  return std::atan2(norm(cross(u, v)), dot(u, v));
}

}  // namespace

MeshObstacle::MeshObstacle(std::string name, double friction, std::vector<Vec3> points,
                           std::vector<std::array<int, 3>> triangles)
    : Obstacle(std::move(name), friction), points_(std::move(points)), triangles_(std::move(triangles)) {
  if (triangles_.empty()) throw std::invalid_argument("the surface has no triangles");
  Aabb box;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    for (const double c : points_[i])
      if (!std::isfinite(c)) throw std::invalid_argument("point " + std::to_string(i) + " is not finite");
    box.grow(points_[i]);
  }
  const Vec3 extent = box.hi - box.lo;
  const double diagonal = norm(extent);
  const auto n_points = static_cast<int>(points_.size());
  for (std::size_t t = 0; t < triangles_.size(); ++t) {
    const auto& v = triangles_[t];
    for (const int i : v)
      if (i < 0 || i >= n_points)
        throw std::invalid_argument("triangle " + std::to_string(t) + " refers to point " + std::to_string(i) +
                                    ", not one of the " + std::to_string(n_points) + " points");
    const double area = 0.5 * norm(cross(points_[v[1]] - points_[v[0]], points_[v[2]] - points_[v[0]]));
    if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2] || !(area > 1e-14 * diagonal * diagonal))
      throw std::invalid_argument("triangle " + std::to_string(t) + " is degenerate (zero area)");
  }
  build_topology();
  bvh_.emplace(points_, triangles_);
}

void MeshObstacle::build_topology() {
  // Closed: every edge in exactly two triangles that run through it in opposite directions.
  std::unordered_map<std::uint64_t, std::array<int, 2>> uses;  // edge -> (triangles, orientation sum)
  for (const auto& v : triangles_)
    for (int k = 0; k < 3; ++k) {
      auto& u = uses[edge_key(v[k], v[(k + 1) % 3])];
      u[0] += 1;
      u[1] += v[k] < v[(k + 1) % 3] ? 1 : -1;
    }
  closed_ = std::all_of(uses.begin(), uses.end(), [](const auto& e) { return e.second[0] == 2 && e.second[1] == 0; });
  if (closed_) {  // outward orientation: a positive enclosed volume
    double volume = 0.0;
    for (const auto& v : triangles_) volume += dot(points_[v[0]], cross(points_[v[1]], points_[v[2]]));
    if (volume < 0.0)
      for (auto& v : triangles_) std::swap(v[1], v[2]);
  }
  std::unordered_map<std::uint64_t, int> edge_index;
  face_normals_.resize(triangles_.size());
  face_edges_.resize(triangles_.size());
  vertex_normals_.assign(points_.size(), Vec3{});
  for (std::size_t t = 0; t < triangles_.size(); ++t) {
    const auto& v = triangles_[t];
    const Vec3 n = cross(points_[v[1]] - points_[v[0]], points_[v[2]] - points_[v[0]]);
    face_normals_[t] = (1.0 / norm(n)) * n;
    for (int k = 0; k < 3; ++k) {
      const auto [it, added] = edge_index.try_emplace(edge_key(v[k], v[(k + 1) % 3]),
                                                      static_cast<int>(edge_normals_.size()));
      if (added) edge_normals_.push_back(Vec3{});
      edge_normals_[static_cast<std::size_t>(it->second)] =
          edge_normals_[static_cast<std::size_t>(it->second)] + face_normals_[t];
      face_edges_[t][k] = it->second;
      const double angle = corner_angle(points_[v[k]], points_[v[(k + 1) % 3]], points_[v[(k + 2) % 3]]);
      vertex_normals_[v[k]] = vertex_normals_[v[k]] + angle * face_normals_[t];
    }
  }
}

Vec3 MeshObstacle::pseudo_normal(int t, TriangleFeature f) const {
  const auto& v = triangles_[static_cast<std::size_t>(t)];
  const auto& e = face_edges_[static_cast<std::size_t>(t)];
  switch (f) {
    case TriangleFeature::vertex_a: return vertex_normals_[v[0]];
    case TriangleFeature::vertex_b: return vertex_normals_[v[1]];
    case TriangleFeature::vertex_c: return vertex_normals_[v[2]];
    case TriangleFeature::edge_ab: return edge_normals_[e[0]];
    case TriangleFeature::edge_bc: return edge_normals_[e[1]];
    case TriangleFeature::edge_ca: return edge_normals_[e[2]];
    case TriangleFeature::face: break;
  }
  return face_normals_[static_cast<std::size_t>(t)];
}

void MeshObstacle::fill(const Vec3& x, int t, const TriangleClosest& c, bool with_hessian, Proximity& out) const {
  const double u = std::sqrt(c.squared_distance);
  const Vec3 pseudo = pseudo_normal(t, c.feature);
  const Vec3 diff = x - c.point;
  const double sign = closed_ && dot(diff, pseudo) < 0.0 ? -1.0 : 1.0;
  const double d = sign * u;
  const int kind = c.feature == TriangleFeature::face ? 2 : (static_cast<int>(c.feature) >= 3 ? 1 : 0);
  out.distance = d;
  out.point = c.point;
  out.feature = kind;
  out.normal = u > 0.0 ? (1.0 / d) * diff : (1.0 / norm(pseudo)) * pseudo;
  out.hessian = {};
  if (!with_hessian || kind == 2 || u == 0.0) return;
  Mat3 h = identity3();
  add_scaled(h, -1.0, outer(out.normal, out.normal));
  if (kind == 1) {
    const auto& v = triangles_[static_cast<std::size_t>(t)];
    const int k = static_cast<int>(c.feature) - 3;  // edge ab, bc, ca: from corner k to corner k + 1
    const Vec3 edge = points_[v[(k + 1) % 3]] - points_[v[k]];
    const Vec3 e = (1.0 / norm(edge)) * edge;
    add_scaled(h, -1.0, outer(e, e));
  }
  for (double& value : h) value /= d;
  out.hessian = h;
}

bool MeshObstacle::local_proximity(const Vec3& x, double max_distance, bool with_hessian, Proximity& out) const {
  TriangleClosest c;
  const double bound = max_distance > 0.0 ? max_distance * max_distance : 0.0;
  int t = bvh_->nearest(x, std::isfinite(bound) ? bound : std::numeric_limits<double>::infinity(), c);
  if (t < 0) {
    // Nothing within the distance: only a point inside a closed surface (and so inside its box) is still near.
    if (!closed_ || bvh_->bounds().squared_distance(x) > 0.0) return false;
    t = bvh_->nearest(x, std::numeric_limits<double>::infinity(), c);
  }
  fill(x, t, c, with_hessian, out);
  return out.distance <= max_distance;
}

double MeshObstacle::local_time_of_impact(const Vec3& x0, const Vec3& x1) const {
  const double t = bvh_->first_hit(x0, x1);
  return t >= 0.0 ? t : kNoImpact;
}

}  // namespace edgefem::contact
