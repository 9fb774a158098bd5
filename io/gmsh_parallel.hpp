// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file gmsh_parallel.hpp
/// Parallel reader of Gmsh MSH 4.1 binary files: every rank reads a disjoint slice of $Nodes and $Elements
/// (mesh/slice.hpp) with pread at offsets; no rank reads the whole file. Rank 0 scans the section headers and
/// the block headers once (a few bytes per entity block, jumping over the data) and broadcasts the block table.
///
/// Handled: MSH 4.1, binary, 8-byte size_t, the machine's byte order, node tags consecutive in file order (what
/// Gmsh writes for a whole mesh); `gmsh41_binary_layout` says whether a file qualifies, the other files go to
/// the serial reader (read_gmsh). Numbering and tags are those of read_gmsh: vertices in file order, cells (tets,
/// or triangles without tets) in file order, facets (triangles, or lines) with the first physical tag of their
/// entity.
#include <mpi.h>

#include <string>

#include "mesh/slice.hpp"

namespace edgefem {

/// Whether `path` starts like a file read_gmsh_slice can read (MSH 4.1, binary, data size 8, native byte order).
/// Reads the first line of the file only; false for any other file (including ones that cannot be opened).
bool is_gmsh41_binary(const std::string& path);

/// Collective: this rank's slice of the mesh in `path`. Throws CollectiveError on every rank (naming the file,
/// the byte offset or section, and what was expected) for a truncated or damaged file, an unsupported element
/// type, a node tag that is not in $Nodes, non-consecutive node tags or a non-finite coordinate.
MeshSlice read_gmsh_slice(MPI_Comm comm, const std::string& path);

}  // namespace edgefem
