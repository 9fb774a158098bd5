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

struct Mesh {
  std::vector<double> coords;          ///< 3 per vertex, reference coordinates
  std::vector<LocalIndex> tets;        ///< 4 per tetrahedron (volume cells)
  std::vector<int> tet_region;         ///< physical tag per tetrahedron (0 = none)
  std::vector<LocalIndex> triangles;   ///< 3 per triangle: boundary facets of a solid, or membrane cells
  std::vector<int> triangle_region;    ///< physical tag per triangle (0 = none)
  std::vector<LocalIndex> lines;       ///< 2 per line: boundary edges of a membrane mesh
  std::vector<int> line_region;        ///< physical tag per line

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
    const auto p0 = vertex(v[0]), p1 = vertex(v[1]), p2 = vertex(v[2]);
    double a[3], b[3];
    for (int d = 0; d < 3; ++d) a[d] = p1[d] - p0[d], b[d] = p2[d] - p0[d];
    const double cx = a[1] * b[2] - a[2] * b[1], cy = a[2] * b[0] - a[0] * b[2], cz = a[0] * b[1] - a[1] * b[0];
    return 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
  }
  /// Unsigned reference volume of tetrahedron t.
  [[nodiscard]] double tet_volume(LocalIndex t) const {
    const LocalIndex* v = tets.data() + 4 * static_cast<std::size_t>(t);
    const auto p0 = vertex(v[0]), p1 = vertex(v[1]), p2 = vertex(v[2]), p3 = vertex(v[3]);
    double a[3], b[3], c[3];
    for (int d = 0; d < 3; ++d) a[d] = p1[d] - p0[d], b[d] = p2[d] - p0[d], c[d] = p3[d] - p0[d];
    const double det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                       a[2] * (b[0] * c[1] - b[1] * c[0]);
    return (det < 0 ? -det : det) / 6.0;
  }
};

}  // namespace edgefem
