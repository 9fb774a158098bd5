// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file gmsh.hpp
/// Gmsh .msh reader: format 2.2 and 4.1, ASCII and binary. Physical tags become regions.
/// Tetrahedra (type 4) -> Mesh::tets, triangles (2) -> Mesh::triangles, lines (1) -> Mesh::lines;
/// points (15) are ignored; any other element type is an InputError. Vertices are renumbered
/// 0..n-1 in file order; vertices no element uses are an InputError (unused vertex), as are
/// NaN/Inf coordinates, missing node ids, and truncated files (the message names file and line).
#include <string>

#include "mesh/mesh.hpp"

namespace edgefem {

Mesh read_gmsh(const std::string& path);

/// Checks a mesh a user gave us: finite coordinates, vertex ids in range, no unused vertices,
/// no degenerate (|volume| <= tol * h^3) and no inverted (negative volume) tets. Throws InputError
/// naming `source` and the first offending cell.
void check_mesh(const Mesh& mesh, const std::string& source);

/// Nodes of the Gmsh element types edgefem reads: line (1) 2, triangle (2) 3, tetrahedron (4) 4, point (15) 1;
/// 0 for any other type (unsupported). Shared by the reader, the parallel reader and the header counts.
int gmsh_nodes_per_element(int type);

}  // namespace edgefem
