// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file mesh.hpp
/// The plain mesh container shared by readers, generators, the partitioner and the solver.
///
/// Numbering: inside a Mesh every vertex index is *local* to that Mesh (0 .. n_vertices()-1),
/// 32-bit. A whole mesh read on rank 0 and a rank's local piece use the same type.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace edgefem {

using LocalIndex = std::int32_t;   ///< index into one rank's (or one file's) arrays
using GlobalIndex = std::int64_t;  ///< index across all ranks; converted to PetscInt at the PETSc boundary

/// (p1 - p0) x (p2 - p0): the normal of triangle (p0, p1, p2), of length twice its area (3 doubles per point).
inline std::array<double, 3> triangle_normal(const double* p0, const double* p1, const double* p2) {
  double a[3], b[3];
  for (int d = 0; d < 3; ++d) a[d] = p1[d] - p0[d], b[d] = p2[d] - p0[d];
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Area of triangle (p0, p1, p2).
inline double triangle_area(const double* p0, const double* p1, const double* p2) {
  const auto n = triangle_normal(p0, p1, p2);
  return 0.5 * std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

/// (p1 - p0) . ((p2 - p0) x (p3 - p0)): six times the signed volume of tetrahedron (p0, p1, p2, p3).
inline double tet_volume6(const double* p0, const double* p1, const double* p2, const double* p3) {
  double a[3];
  for (int d = 0; d < 3; ++d) a[d] = p1[d] - p0[d];
  const auto n = triangle_normal(p0, p2, p3);
  return a[0] * n[0] + a[1] * n[1] + a[2] * n[2];
}

/// Unsigned volume of tetrahedron (p0, p1, p2, p3).
inline double tet_volume(const double* p0, const double* p1, const double* p2, const double* p3) {
  return std::abs(tet_volume6(p0, p1, p2, p3)) / 6.0;
}

struct Mesh {
  std::vector<double> coords;         ///< 3 per vertex, reference coordinates
  std::vector<LocalIndex> tets;       ///< 4 per tetrahedron (volume cells)
  std::vector<int> tet_region;        ///< physical tag per tetrahedron (0 = none)
  std::vector<LocalIndex> triangles;  ///< 3 per triangle: boundary facets of a solid, or membrane cells
  std::vector<int> triangle_region;   ///< physical tag per triangle (0 = none)
  std::vector<LocalIndex> lines;      ///< 2 per line: boundary edges of a membrane mesh
  std::vector<int> line_region;       ///< physical tag per line

  [[nodiscard]] LocalIndex n_vertices() const { return static_cast<LocalIndex>(coords.size() / 3); }
  [[nodiscard]] LocalIndex n_tets() const { return static_cast<LocalIndex>(tets.size() / 4); }
  [[nodiscard]] LocalIndex n_triangles() const { return static_cast<LocalIndex>(triangles.size() / 3); }
  [[nodiscard]] LocalIndex n_lines() const { return static_cast<LocalIndex>(lines.size() / 2); }
  [[nodiscard]] std::array<double, 3> vertex(LocalIndex v) const {
    return {coords[3 * v], coords[3 * v + 1], coords[3 * v + 2]};
  }
  /// Reference area of triangle t.
  [[nodiscard]] double triangle_area(LocalIndex t) const {
    const LocalIndex* v = triangles.data() + 3 * static_cast<std::size_t>(t);
    return edgefem::triangle_area(point(v[0]), point(v[1]), point(v[2]));
  }
  /// Unsigned reference volume of tetrahedron t.
  [[nodiscard]] double tet_volume(LocalIndex t) const {
    const LocalIndex* v = tets.data() + 4 * static_cast<std::size_t>(t);
    return edgefem::tet_volume(point(v[0]), point(v[1]), point(v[2]), point(v[3]));
  }
  /// The 3 reference coordinates of vertex v.
  [[nodiscard]] const double* point(LocalIndex v) const { return coords.data() + 3 * static_cast<std::size_t>(v); }
};

}  // namespace edgefem
