// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file facets.hpp
/// A cell's facets (the faces of a tetrahedron, the edges of a triangle) as sorted vertex tuples: the key by which
/// the dual graphs (partition/partition.cpp, partition/distributed.cpp) and the topology (mesh/topology.cpp) match
/// the facets two cells share.
#include <array>
#include <utility>

namespace edgefem {

/// Local vertices of facet k of a tetrahedron (the face opposite vertex k) and of a triangle (the edge opposite
/// vertex k).
inline constexpr int kTetFacets[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
inline constexpr int kTriangleFacets[3][2] = {{1, 2}, {2, 0}, {0, 1}};

/// The n (2 or 3) vertex ids at v in ascending order; -1 in the third slot when n = 2.
template <class Id>
std::array<Id, 3> sorted_facet(const Id* v, int n) {
  std::array<Id, 3> f{v[0], v[1], n == 3 ? v[2] : Id{-1}};
  if (f[0] > f[1]) std::swap(f[0], f[1]);
  if (n == 3) {
    if (f[1] > f[2]) std::swap(f[1], f[2]);
    if (f[0] > f[1]) std::swap(f[0], f[1]);
  }
  return f;
}

/// Facet k of the cell with vertex ids v (nodes = 4: a tetrahedron, 3: a triangle), sorted (sorted_facet).
template <class Id>
std::array<Id, 3> cell_facet(const Id* v, int nodes, int k) {
  const int fs = nodes - 1;
  Id f[3] = {0, 0, 0};
  for (int j = 0; j < fs; ++j) f[j] = v[fs == 3 ? kTetFacets[k][j] : kTriangleFacets[k][j]];
  return sorted_facet(f, fs);
}

}  // namespace edgefem
