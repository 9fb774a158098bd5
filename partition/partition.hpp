// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file partition.hpp
/// METIS partition of the cells and the distribution of a mesh read on rank 0.
///
/// Ownership: a vertex is owned by one of the ranks that have a cell containing it, chosen so that the
/// ranks own nearly equal numbers of vertices (balanced_vertex_owners, ownership.hpp: every rank within
/// [floor, ceil] of the mean where the mesh allows; deterministic, ties to the lowest rank). Global vertex
/// numbering: rank 0's owned vertices first, then rank 1's, ... (each rank's owned range contiguous,
/// in original file order inside a rank). On a rank, local vertices are its owned vertices (ascending
/// global id) followed by its ghosts (ascending global id): ghosts are vertices of its own cells owned
/// by another rank (and, with bending hinges, the opposite vertices of the hinge stencils it assembles).
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// The partition of a whole mesh into parts, computed on one process (no MPI).
struct PartitionPlan {
  int n_parts = 1;
  std::vector<int> cell_part;            ///< per tet (or per triangle for membrane meshes)
  std::vector<int> vertex_owner;         ///< per original vertex
  std::vector<GlobalIndex> global_id;    ///< per original vertex: its global number
  std::vector<GlobalIndex> owned_begin;  ///< n_parts + 1 offsets: part p owns [owned_begin[p], owned_begin[p+1])
  std::vector<std::vector<LocalIndex>> part_vertices;  ///< per part: original vertex ids, owned first then ghosts
  std::vector<std::vector<LocalIndex>> part_cells;     ///< per part: original cell ids, ascending
  double seconds_cells = 0;                            ///< wall time of the cell partition (METIS)
  double seconds_owners = 0;                           ///< wall time of the vertex ownership (balanced_vertex_owners)
  double seconds = 0;                                  ///< wall time of plan_partition in all

  [[nodiscard]] LocalIndex n_owned(int part) const {
    return static_cast<LocalIndex>(owned_begin[part + 1] - owned_begin[part]);
  }
};

/// Which partitioner splits the cells: METIS on one process (METIS_PartGraphKway of the dual graph, seed 1), or PT-Scotch on the
/// distributed dual graph (SCOTCH_dgraphPart, default strategy, random seed 1).
enum class CellPartitioner : std::uint8_t { metis, ptscotch };
const char* to_string(CellPartitioner method);

/// METIS_PartGraphKway of the dual graph of `cells` (`nodes` vertex ids per cell, 0-based, < n_vertices; cells
/// sharing a face or an edge of a triangle are neighbours) into n_parts, seed 1 (the
/// partition plan_partition makes). Throws InputError when METIS fails or the mesh is too large for it.
std::vector<int> metis_cell_parts(const std::vector<LocalIndex>& cells, int nodes, LocalIndex n_vertices, int n_parts);

/// Collective on comm: SCOTCH_dgraphPart of the distributed dual graph into n_parts. Each rank passes its
/// consecutive block of graph vertices (cells) as CSR: `offsets` (n_local + 1) into `neighbours` (global cell
/// ids). Returns the part of each local cell. Throws InputError (on the ranks where PT-Scotch failed; callers
/// agree on failure) when the graph does not fit PT-Scotch's 32-bit integers or the partition fails.
std::vector<int> scotch_cell_parts(MPI_Comm comm, const std::vector<std::int64_t>& offsets,
                                   const std::vector<GlobalIndex>& neighbours, int n_parts);

/// Partition the cells of `mesh` (tets, or triangles when it has no tets) into n_parts with METIS or PT-Scotch
/// (on MPI_COMM_SELF) (dual graph: cells sharing a face, or an edge for triangles). n_parts == 1 skips both.
/// Throws InputError when the mesh is too large for 32-bit METIS or n_parts exceeds the cell count.
PartitionPlan plan_partition(const Mesh& mesh, int n_parts, CellPartitioner method = CellPartitioner::metis);

/// How good a partition is for the distributed solve (what `edgefem info` prints).
struct PartitionQuality {
  std::int64_t cut_facets = 0;       ///< dual-graph edges cut: facets of two cells in different parts
  std::int64_t shared_vertices = 0;  ///< vertices touched by more than one part
  std::int64_t owned_min = 0, owned_max = 0, ghost_min = 0, ghost_max = 0, cells_max = 0;
  double owned_mean = 0, ghost_mean = 0, cells_mean = 0;
  double max_ghost_ratio = 0;  ///< the largest ghosts / owned of a part (infinite if a part owns none)
  int max_ghost_ratio_part = 0;
};

/// The quality of `plan`, a partition of `mesh` made by plan_partition.
PartitionQuality partition_quality(const Mesh& mesh, const PartitionPlan& plan);

/// One rank's piece of the distributed mesh.
struct LocalMesh {
  /// Local cells in local vertex numbering. For a tet mesh, `mesh.triangles` holds the boundary faces
  /// of this rank's own tets (each boundary face of the whole mesh on exactly one rank), tagged with
  /// the region of the matching file triangle (0 if none).
  Mesh mesh;
  LocalIndex n_owned = 0;                    ///< local vertices [0, n_owned) are owned
  std::vector<GlobalIndex> global_vertex;    ///< per local vertex
  std::vector<GlobalIndex> original_vertex;  ///< per local vertex: its index in the mesh file (0-based)
  GlobalIndex first_owned = 0;               ///< global id of local vertex 0
  GlobalIndex n_global_vertices = 0;
  GlobalIndex n_global_cells = 0;
  std::vector<GlobalIndex> cell_global;  ///< original (file) index of each local cell
  /// Region tags touching each local vertex (tags of the cells and file facets containing it), CSR.
  std::vector<int> vertex_region_offsets;
  std::vector<int> vertex_regions;
  /// Membrane bending stencils (distribute_mesh with hinges = true): 4 local vertices per interior edge this rank
  /// assembles (the edge, then the opposite vertex of hinge_cell, then that of the other triangle), and the local
  /// cell (a triangle of this rank) each belongs to. An interior edge is an edge shared by exactly two triangles of
  /// the same region tag; it is assigned to the rank of the triangle with the smaller file index, whose ghosts then
  /// include the other triangle's opposite vertex (a ghost that no local cell touches).
  std::vector<LocalIndex> hinges;
  std::vector<LocalIndex> hinge_cell;
  bool has_hinges = false;  ///< the stencils were computed (hinges may still be empty)

  [[nodiscard]] LocalIndex n_local() const { return mesh.n_vertices(); }
  [[nodiscard]] LocalIndex n_ghost() const { return n_local() - n_owned; }
  [[nodiscard]] bool vertex_in_region(LocalIndex v, int region) const;
};

/// Collective: rank 0 passes the whole mesh (others pass an empty Mesh); rank 0 partitions it into
/// the communicator's size and sends every rank its piece. Throws CollectiveError on every rank if
/// rank 0 fails. `partition_seconds` (optional): on rank 0, the wall time of plan_partition (METIS) alone; the
/// rest of the call is the distribution (cutting the pieces, sending them, building the LocalMesh).
/// `hinges`: also find the membrane bending stencils (LocalMesh::hinges; every rank passes the same value).
/// `method`: the cell partitioner rank 0 runs (plan_partition; PT-Scotch on MPI_COMM_SELF, sequential).
LocalMesh distribute_mesh(MPI_Comm comm, const Mesh& whole, double* partition_seconds = nullptr, bool hinges = false,
                          CellPartitioner method = CellPartitioner::metis);

}  // namespace edgefem
