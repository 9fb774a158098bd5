// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file topology.hpp
/// Edges, faces and tetrahedron-sharing edge pairs (TSEPs) of a set of tetrahedra (Kikuuwe §3.3).
/// Built from the tetrahedra given (on a rank: its own tets only), in their local vertex numbering.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// An ordered pair of distinct edges that share a tetrahedron.
/// type 1: the edges share a vertex (3 per face); type 2: opposite edges of a tet (3 per tet).
struct Tsep {
  LocalIndex edge0 = 0, edge1 = 0;
  std::uint8_t type = 0;
};

/// Layout contract (relied on by the formulations, checked by tests/unit/test_topology.cpp):
/// - edges are sorted lexicographically by (v0, v1);
/// - faces are sorted lexicographically;
/// - tseps[3 f + k] (f < n_faces(), k < 3) is the type-1 TSEP of face f whose two edges meet at the
///   face's k-th (sorted) vertex; tseps[n_type1 + 3 t + k] (k < 3) is the type-2 TSEP of tet t pairing
///   its local edge slots k and 5 - k; in every TSEP edge0 < edge1.
struct Topology {
  LocalIndex n_vertices = 0;
  std::vector<std::array<LocalIndex, 2>> edges;  ///< (v0, v1) with v0 < v1; edge vector = x(v0) - x(v1)
  std::vector<std::array<LocalIndex, 3>> faces;  ///< sorted vertex triples, each face once
  std::vector<std::array<LocalIndex, 6>>
      tet_edges;  ///< edge ids of each tet, local pairs (0,1),(0,2),(0,3),(1,2),(1,3),(2,3)
  std::vector<std::array<LocalIndex, 4>> tet_faces;  ///< face ids of each tet, face k is opposite local vertex k
  std::vector<Tsep> tseps;                           ///< each unordered pair once (layout above)
  std::int64_t n_type1 = 0, n_type2 = 0;

  [[nodiscard]] std::int64_t n_edges() const { return static_cast<std::int64_t>(edges.size()); }
  [[nodiscard]] std::int64_t n_faces() const { return static_cast<std::int64_t>(faces.size()); }
  [[nodiscard]] std::int64_t n_tets() const { return static_cast<std::int64_t>(tet_edges.size()); }
};

/// Build the topology of `tets` (4 vertex ids per tet, ids < n_vertices). O(n log n), sort-based.
/// With edges_only, only `edges` and `tet_edges` are built (faces, tet_faces, tseps stay empty and the TSEP
/// counts zero): what the per-tet formulations (stvk-tl, linear) need for their edge block pattern.
/// Throws std::invalid_argument if tets.size() is not a multiple of 4, an id is out of range or a tet
/// repeats a vertex.
Topology build_topology(LocalIndex n_vertices, std::span<const LocalIndex> tets, bool edges_only = false);

/// Unique edges of a triangle list and each triangle's edge ids.
struct TriangleEdges {
  std::vector<std::array<LocalIndex, 2>> edges;  ///< (v0, v1) with v0 < v1, sorted lexicographically
  std::vector<LocalIndex> triangle_edges;        ///< [3 t + m]: the edge of triangle t opposite its local vertex m
  [[nodiscard]] std::int64_t n_edges() const { return static_cast<std::int64_t>(edges.size()); }
};

/// The edges of `triangles` (3 non-negative vertex ids per triangle; not checked here). O(n log n).
TriangleEdges build_triangle_edges(std::span<const LocalIndex> triangles);

}  // namespace edgefem
