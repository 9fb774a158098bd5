// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file coloring.hpp
/// Global, deterministic colouring of the cells for the position-based Gauss-Seidel sweep: cells that share a
/// vertex get different colours, so the cells of one colour can be projected in any order, on any rank and thread,
/// with the same result. The colouring depends only on the mesh file (cells visited in ascending file index, each
/// given the smallest colour none of its vertices has yet; vertices named by their file index), never on the
/// number of ranks or the partition.
#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "partition/partition.hpp"

namespace edgefem {

/// Largest number of colours supported (a vertex in more than this many cells cannot be coloured greedily).
inline constexpr int kMaxCellColors = 256;

/// Greedy colouring of cells given in visiting order: `cells` holds nodes_per_cell vertex ids (0 <= id <
/// n_vertices) per cell. Returns one colour per cell in [0, n_colors). Throws std::invalid_argument when a
/// vertex id is out of range or more than kMaxCellColors colours would be needed. No MPI.
std::vector<std::int32_t> greedy_cell_colors(std::span<const std::int64_t> cells, int nodes_per_cell,
                                             std::int64_t n_vertices);

/// Collective: the colour of each of this rank's cells (LocalMesh order: its tets, or with nodes_per_cell 3 its
/// triangles), from greedy_cell_colors over the whole
/// mesh in file order (gathered on rank 0, which colours it and sends every rank its cells' colours).
/// `n_colors` (optional) receives the number of colours on every rank. Throws CollectiveError on every rank if
/// the colouring fails.
std::vector<std::int32_t> distributed_cell_colors(MPI_Comm comm, const LocalMesh& mesh, int nodes_per_cell,
                                                  int* n_colors = nullptr);

/// Collective: the colours of this rank's membrane bending stencils (`stencils`: 4 local vertex ids each, the
/// interior edge first, as LocalMesh::hinges; every interior edge on exactly one rank), greedy over all stencils in
/// the order of their edges' file vertex indices (smaller, then larger): stencils sharing a vertex differ in colour,
/// and the colouring depends on the mesh file only. Throws CollectiveError on every rank if it fails.
std::vector<std::int32_t> distributed_stencil_colors(MPI_Comm comm, const LocalMesh& mesh,
                                                     std::span<const LocalIndex> stencils, int* n_colors = nullptr);

}  // namespace edgefem
