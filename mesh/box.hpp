// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file box.hpp
/// Mesh generators (docs/theory/design.md, "Job contract": mesh.generate).
#include <array>

#include "mesh/mesh.hpp"
#include "mesh/slice.hpp"

namespace edgefem {

/// Physical tags the box generator gives its tets and its six faces' boundary triangles.
namespace box_region {
inline constexpr int volume = 1;
inline constexpr int x_min = 11, x_max = 12, y_min = 13, y_max = 14, z_min = 15, z_max = 16;
}  // namespace box_region

/// Box [0,size] split into cells[0] x cells[1] x cells[2] hexahedra, 6 tets each (Kuhn split, mirrored in
/// every other cell along each axis so no diagonal direction is preferred; conforming),
/// tets tagged box_region::volume, boundary triangles tagged by face (box_region::x_min, ...).
/// Vertices are numbered x fastest: v(i,j,k) = i + (cells[0]+1) * (j + (cells[1]+1) * k).
/// Every tet has det[x1-x0, x2-x0, x3-x0] > 0; every boundary triangle is a tet face, ordered so that its
/// normal (x1-x0) x (x2-x0) points out of the box. Throws InputError for cells < 1, size <= 0 or a mesh
/// too large for 32-bit local indices.
Mesh generate_box(const std::array<double, 3>& size, const std::array<int, 3>& cells);

/// Rank `rank` of `ranks`' slice of generate_box(size, cells) (mesh/slice.hpp): the vertices of its block with
/// their coordinates, the 6 tets of each hexahedron of its block of hexahedra (hexahedron id i + nx (j + ny k),
/// tet id 6 hex + t: the numbering of generate_box) and its block of the boundary triangles. No rank builds the
/// whole mesh. Same input checks as generate_box.
MeshSlice generate_box_slice(const std::array<double, 3>& size, const std::array<int, 3>& cells, int rank, int ranks);

/// Rectangle [0,size[0]] x [0,size[1]] in the z = 0 plane, cells[0] x cells[1] quads split into two
/// triangles each (same diagonal everywhere, normal +z), tagged box_region::volume (1). Boundary lines
/// are tagged box_region::x_min, x_max, y_min, y_max (11..14) and run counter-clockwise around the sheet.
/// Vertices are numbered x fastest: v(i,j) = i + (cells[0]+1) * j. Same input checks as generate_box.
Mesh generate_sheet(std::array<double, 2> size, std::array<int, 2> cells);

/// Rank `rank` of `ranks`' slice of generate_sheet(size, cells) (mesh/slice.hpp): the vertices of its block with
/// their coordinates, the 2 triangles of each quad of its block of quads (quad id i + nx j, triangle id 2 quad + t:
/// the numbering of generate_sheet) and its block of the boundary edges (nodes = 3). No rank builds the whole
/// sheet. Same input checks as generate_sheet.
MeshSlice generate_sheet_slice(const std::array<double, 2>& size, const std::array<int, 2>& cells, int rank, int ranks);

}  // namespace edgefem
