// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file locality.hpp
/// Renumbering each rank's vertices so that the vertices of a cell have nearby numbers.
///
/// Why: a mesh file's vertex numbers carry no locality (Gmsh numbers a volume's interior vertices in the order its
/// mesher made them: on the 136,565-tet cantilever the two ends of a tet edge are 7,356 numbers apart on average,
/// of 27,116), and every sweep over a rank's matrix, vectors and term lists gathers the values of a row's
/// neighbours. With the owned vertices in reverse Cuthill-McKee order those gathers hit the caches: on a machine
/// whose last-level cache is smaller than the matrix, assembly, multigrid set-up and CG iterations all run faster
/// (docs/theory/design.md, "Vertex numbering").
///
/// The partition does not change, nor anything a user sees: outputs and checkpoints go by the file's vertex numbers
/// (LocalMesh::original_vertex), positions by coordinates.
#include <mpi.h>

#include <vector>

#include "partition/partition.hpp"

namespace edgefem {

/// The reverse Cuthill-McKee order of the vertices [0, n) of `cells` (`nodes_per_cell` local vertex numbers each;
/// vertices >= n are ignored): each connected part from a pseudo-peripheral vertex (George and Liu), neighbours
/// by increasing degree, ties by number. Returns new_number[v] for v < n, a permutation of [0, n).
std::vector<LocalIndex> reverse_cuthill_mckee(LocalIndex n, const std::vector<LocalIndex>& cells, int nodes_per_cell);

/// Collective. Renumbers `piece`'s owned vertices by reverse_cuthill_mckee over its cells (tets, else triangles),
/// its ghosts by their owners' new global numbers (ascending, as LocalMesh keeps them); every per-vertex array and
/// every cell's vertices follow. `piece` stays a LocalMesh of the same partition, with the same cells in the same
/// order.
void renumber_for_locality(MPI_Comm comm, LocalMesh& piece);

}  // namespace edgefem
