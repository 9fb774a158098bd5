#pragma once
/// \file ownership.hpp
/// Which part owns each vertex of a partitioned mesh: balanced owned counts (no MPI, no METIS).
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// The owner part of every vertex, given the part of every cell (`cells`: `nodes` vertex ids per cell).
/// A vertex touched by one part belongs to it. A vertex shared by several parts goes to one of them so that
/// the owned counts are balanced: first greedily, in vertex order, to the touching part owning the fewest
/// vertices so far; then vertices are shifted along chains of parts (each vertex to another part touching
/// it) from parts above ceil(N_V / n_parts) to parts below it, and into parts below floor(N_V / n_parts)
/// from parts above it, shortest chains first, while such a chain exists; a part left above (below) then
/// moves vertices to (from) parts owning at least two fewer (more) while a chain reaches one. No part owns
/// fewer than the vertices only its cells touch, which bounds the balance a cell partition allows.
/// Deterministic: ties go to the lowest part id, vertices and parts are visited in ascending order, no
/// threads. A vertex in no cell gets owner n_parts (the caller reports it).
std::vector<int> balanced_vertex_owners(const std::vector<LocalIndex>& cells, int nodes,
                                        const std::vector<int>& cell_part, int n_parts, LocalIndex n_vertices);

}  // namespace edgefem
