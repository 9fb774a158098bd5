// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file components.hpp
/// The connected parts of a distributed mesh (cells sharing a vertex, or a membrane bending hinge, are connected),
/// found without gathering the mesh: each rank joins its own cells' vertices (union-find), a ghost vertex ties the
/// rank's part to the owner's part holding it, and rank 0 joins those ties (a few per rank and neighbour) and hands
/// every rank its parts' numbers.
#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "partition/partition.hpp"

namespace edgefem {

struct MeshComponents {
  int count = 0;                ///< parts of the whole mesh
  std::vector<int> of_vertex;   ///< per local vertex: its part, 0 .. count - 1 (the same on every rank holding it)
};

/// Collective. Parts are numbered in the order of their first vertex in the mesh file (the same on any number of ranks).
MeshComponents connected_components(MPI_Comm comm, const LocalMesh& mesh);

/// Union-find over 0 .. n - 1 (path halving, union by index: the smaller root wins). Pure.
class UnionFind {
 public:
  explicit UnionFind(std::size_t n);
  std::int64_t find(std::int64_t a);
  void unite(std::int64_t a, std::int64_t b);
  /// Every element's set as 0 .. sets - 1, numbered in the order of their smallest element; returns sets.
  std::int64_t label(std::vector<std::int64_t>& out);

 private:
  std::vector<std::int64_t> parent_;
};

}  // namespace edgefem
