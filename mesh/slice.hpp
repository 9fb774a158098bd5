// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file slice.hpp
/// One rank's slice of a mesh that no rank holds whole: what the parallel Gmsh reader (io/gmsh_parallel.hpp)
/// and the block generator (generate_box_slice, mesh/box.hpp) give each rank, and what distribute_slices
/// (partition/distributed.hpp) partitions and migrates. Plain data: no MPI.
///
/// Numbering: vertex and cell ids are *original* (input) ids, 0-based, global over the whole mesh: the same
/// numbers the serial path gives (read_gmsh's file order, generate_box's grid order). Rank r of n holds the
/// vertices [slice_begin(N_V, r, n), slice_begin(N_V, r + 1, n)) with their coordinates; its cells are any
/// contiguous range of cell ids, the ranks' ranges in rank order covering all cells once; its facets (triangles
/// of a tet mesh, lines of a triangle mesh: boundary selections and tags) are any subset, each file facet on
/// one rank.
#include <cstdint>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// The first id of part `part` of `n` split into `parts` near-equal contiguous blocks.
inline GlobalIndex slice_begin(GlobalIndex n, int part, int parts) {
  return static_cast<GlobalIndex>((static_cast<__int128>(n) * part) / parts);
}

struct MeshSlice {
  int nodes = 4;                    ///< vertices per cell: 4 (tets, facets are triangles) or 3 (triangles, lines)
  GlobalIndex n_vertices = 0;       ///< of the whole mesh
  GlobalIndex n_cells = 0;          ///< of the whole mesh
  GlobalIndex vertex_begin = 0;     ///< original id of this rank's first vertex (slice_begin(n_vertices, ...))
  std::vector<double> coords;       ///< 3 per vertex of this rank's block
  GlobalIndex cell_begin = 0;       ///< original id of this rank's first cell
  std::vector<GlobalIndex> cells;   ///< `nodes` original vertex ids per cell
  std::vector<int> cell_region;     ///< physical tag per cell (0 = none)
  std::vector<GlobalIndex> facets;  ///< `nodes - 1` original vertex ids per facet
  std::vector<int> facet_region;    ///< physical tag per facet

  [[nodiscard]] GlobalIndex n_local_vertices() const { return static_cast<GlobalIndex>(coords.size() / 3); }
  [[nodiscard]] GlobalIndex n_local_cells() const { return static_cast<GlobalIndex>(cell_region.size()); }
};

/// Rank `rank` of `ranks`' slice of a whole mesh (cells and facets split in near-equal blocks): what the
/// distributed path is tested with against distribute_mesh.
MeshSlice slice_of(const Mesh& whole, int rank, int ranks);

}  // namespace edgefem
