// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file distributed.hpp
/// The distributed path from slices to LocalMeshes: no rank ever holds the whole mesh.
///
/// Each rank passes its MeshSlice (mesh/slice.hpp: a block of vertices with coordinates, a block of cells, some
/// file facets). distribute_slices then, with all-to-all exchanges only:
///  1. builds the dual graph: every cell facet (sorted original vertex ids) goes to a rank chosen by its hash;
///     there facets of two cells become dual-graph links, facets of one cell boundary facets (tagged by the file
///     facet with the same vertices, the smallest tag if several, else 0), both sent back to the cell's rank;
///  2. partitions the cells: METIS on rank 0 with only the cell connectivity gathered (the partition
///     plan_partition makes, so the result is the one distribute_mesh gives), or PT-Scotch on the distributed
///     dual graph;
///  3. migrates cells with their boundary facets to their parts;
///  4. settles the vertices in a directory (vertex id -> the rank whose block holds it): the parts touching each
///     vertex, its region tags (cells and file facets), its owner — the vertices one part touches are that
///     part's; the shared ones (a partition surface, small) are gathered on rank 0 and balanced by
///     balance_shared_owners (ownership.hpp), which gives exactly the owners of balanced_vertex_owners — and its
///     global number (the owner's owned range in original order, from an exclusive scan over the blocks);
///  5. each part builds its LocalMesh as distribute_mesh does: owned vertices then ghosts by global number,
///     cells ascending by original id, boundary facets sorted by their original vertex ids.
/// With METIS the LocalMesh of every rank equals distribute_mesh's, array for array
/// (Slices.MetisEqualsDistributeMesh, tests/mpi/test_slices.cpp).
#include <mpi.h>

#include "mesh/slice.hpp"
#include "partition/partition.hpp"

namespace edgefem {

/// Wall times of distribute_slices, on this rank.
struct SliceTimes {
  double partition = 0;   ///< dual graph, cell partition, vertex owners and numbering
  double distribute = 0;  ///< migration of cells, facets, vertices and tags; the LocalMesh
};

/// Collective: partition the slices of all ranks into the communicator's size and build every rank's piece.
/// `slice` is consumed. Throws CollectiveError on every rank (message: the lowest failing rank's) for a cell that
/// names a vertex out of range, a vertex in no cell, more ranks than cells, or a failing partitioner.
LocalMesh distribute_slices(MPI_Comm comm, MeshSlice&& slice, CellPartitioner method, SliceTimes* times = nullptr);

/// Collective: rank 0 passes a whole mesh (the others an empty one); every rank gets slice_of(whole, rank, size)
/// (for a mesh read on rank 0 and partitioned by PT-Scotch).
MeshSlice scatter_slices(MPI_Comm comm, const Mesh& whole);

}  // namespace edgefem
