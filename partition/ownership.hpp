// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file ownership.hpp
/// Which part owns each vertex of a partitioned mesh: balanced owned counts (no MPI, no METIS).
#include <cstdint>
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

/// The balancing step of balanced_vertex_owners alone, on the shared vertices only (what a distributed
/// partition gathers: partition/distributed.cpp). Row i (`shared_begin[i] .. shared_begin[i+1]` of
/// `shared_parts`) lists the parts touching the i-th shared vertex, ascending, at least two; rows in ascending
/// vertex order. `load`: per part, the vertices only that part touches; `n_used`: the vertices in cells. Returns
/// the owner of each shared vertex: exactly what balanced_vertex_owners gives them for the same mesh.
std::vector<int> balance_shared_owners(std::vector<std::int64_t> shared_begin, std::vector<int> shared_parts,
                                       std::vector<std::int64_t> load, std::int64_t n_used, int n_parts);

}  // namespace edgefem
