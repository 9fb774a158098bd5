// SPDX-License-Identifier: BSD-3-Clause
/// \file topology.cpp
/// Sort-based construction of edges, faces and TSEPs (see topology.hpp for the layout contract).
///
/// Edges and faces are deduplicated by a counting sort on their smallest vertex followed by a sort of
/// each (small) bucket, so the cost is O(N_T + N_V) plus O(N_T log d) for bucket sorts of degree d:
/// no std::map, no global comparison sort. TSEPs need no deduplication at all: a type-1 TSEP is a
/// (face, shared vertex) pair, a type-2 TSEP a (tet, opposite edge pair) (Kikuuwe footnote 1).
#include "mesh/topology.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/first_touch.hpp"
#include "mesh/facets.hpp"

namespace edgefem {

namespace {

constexpr int kEdgeLocal[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
constexpr int kFaceLocal[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};

/// Keys grouped by bucket (a vertex id), sorted and unique inside each bucket.
template <class Key>
struct BucketSet {
  std::vector<std::int64_t> offsets;  ///< n_buckets + 1
  std::vector<Key> keys;

  /// Global index of `key` in bucket b (the key must be present).
  [[nodiscard]] std::int64_t find(LocalIndex b, Key key) const {
    const auto first = keys.begin() + offsets[b], last = keys.begin() + offsets[b + 1];
    return std::lower_bound(first, last, key) - keys.begin();
  }
};

/// Build a BucketSet from the items `emit(sink)` produces through sink(bucket, key). emit is called twice
/// (count pass, fill pass) and must produce the same items both times.
template <class Key, class Emit>
BucketSet<Key> bucket_unique(LocalIndex n_buckets, Emit&& emit) {
  std::vector<std::int64_t> start(static_cast<std::size_t>(n_buckets) + 1, 0);
  emit([&](LocalIndex b, Key) { ++start[b + 1]; });
  for (LocalIndex b = 0; b < n_buckets; ++b) start[b + 1] += start[b];
  std::vector<Key> raw(static_cast<std::size_t>(start[n_buckets]));
  {
    std::vector<std::int64_t> cursor(start.begin(), start.end() - 1);
    emit([&](LocalIndex b, Key k) { raw[cursor[b]++] = k; });
  }
  std::vector<std::int64_t> n_unique(static_cast<std::size_t>(n_buckets));
#pragma omp parallel for schedule(dynamic, 1024)
  for (LocalIndex b = 0; b < n_buckets; ++b) {
    auto first = raw.begin() + start[b], last = raw.begin() + start[b + 1];
    std::sort(first, last);
    n_unique[b] = std::unique(first, last) - first;
  }
  BucketSet<Key> set;
  set.offsets.assign(static_cast<std::size_t>(n_buckets) + 1, 0);
  for (LocalIndex b = 0; b < n_buckets; ++b) set.offsets[b + 1] = set.offsets[b] + n_unique[b];
  resize_first_touched(set.keys, static_cast<std::size_t>(set.offsets[n_buckets]));
#pragma omp parallel for schedule(static)
  for (LocalIndex b = 0; b < n_buckets; ++b)
    std::copy_n(raw.begin() + start[b], n_unique[b], set.keys.begin() + set.offsets[b]);
  return set;
}

std::uint64_t face_key(LocalIndex b, LocalIndex c) {
  return (static_cast<std::uint64_t>(b) << 32) | static_cast<std::uint32_t>(c);
}

void check_fits(std::int64_t n, const char* what) {
  if (n > std::numeric_limits<LocalIndex>::max())
    throw std::invalid_argument(std::string("build_topology: too many ") + what + " for 32-bit local indices (" +
                                std::to_string(n) + ")");
}

/// The input checks of build_topology (see topology.hpp).
void check_tets(LocalIndex n_vertices, std::span<const LocalIndex> tets) {
  if (n_vertices < 0) throw std::invalid_argument("build_topology: negative vertex count");
  if (tets.size() % 4 != 0)
    throw std::invalid_argument("build_topology: tets holds " + std::to_string(tets.size()) +
                                " ids, expected a multiple of 4");
  const std::int64_t nt = static_cast<std::int64_t>(tets.size() / 4);
  check_fits(nt, "tetrahedra");
  for (std::int64_t t = 0; t < nt; ++t) {
    const LocalIndex* v = tets.data() + 4 * t;
    for (int i = 0; i < 4; ++i) {
      if (v[i] < 0 || v[i] >= n_vertices)
        throw std::invalid_argument("build_topology: tet " + std::to_string(t) + " has vertex id " +
                                    std::to_string(v[i]) + ", expected 0.." + std::to_string(n_vertices - 1));
      for (int j = 0; j < i; ++j)
        if (v[i] == v[j])
          throw std::invalid_argument("build_topology: tet " + std::to_string(t) + " repeats vertex " +
                                      std::to_string(v[i]));
    }
  }
}

/// Index of the edge (a, b), either order, in the edge set (bucket = smaller vertex).
LocalIndex edge_id(const BucketSet<LocalIndex>& edge_set, LocalIndex a, LocalIndex b) {
  return static_cast<LocalIndex>(edge_set.find(std::min(a, b), std::max(a, b)));
}

/// The vertices of face k (opposite local vertex k) of tet t, sorted.
std::array<LocalIndex, 3> sorted_face(std::span<const LocalIndex> tets, std::int64_t t, int k) {
  const LocalIndex* v = tets.data() + 4 * t;
  const LocalIndex f[3] = {v[kFaceLocal[k][0]], v[kFaceLocal[k][1]], v[kFaceLocal[k][2]]};
  return sorted_facet(f, 3);
}

/// Edges: bucket = smaller vertex, key = larger vertex. Buckets in vertex order and sorted keys give
/// lexicographically sorted edges. Fills topo.edges and topo.tet_edges; returns the edge set (for edge_id).
BucketSet<LocalIndex> add_edges(std::span<const LocalIndex> tets, Topology& topo) {
  const LocalIndex n_vertices = topo.n_vertices;
  const std::int64_t nt = static_cast<std::int64_t>(tets.size() / 4);
  auto edge_set = bucket_unique<LocalIndex>(n_vertices, [&](auto&& sink) {
    for (std::int64_t t = 0; t < nt; ++t) {
      const LocalIndex* v = tets.data() + 4 * t;
      for (const auto& p : kEdgeLocal) {
        const LocalIndex a = v[p[0]], b = v[p[1]];
        sink(std::min(a, b), std::max(a, b));
      }
    }
  });
  const std::int64_t ne = static_cast<std::int64_t>(edge_set.keys.size());
  check_fits(ne, "edges");
  resize_first_touched(topo.edges, static_cast<std::size_t>(ne));
#pragma omp parallel for schedule(static)
  for (LocalIndex v = 0; v < n_vertices; ++v)
    for (std::int64_t e = edge_set.offsets[v]; e < edge_set.offsets[v + 1]; ++e) topo.edges[e] = {v, edge_set.keys[e]};

  resize_first_touched(topo.tet_edges, static_cast<std::size_t>(nt));
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t) {
    const LocalIndex* v = tets.data() + 4 * t;
    for (int k = 0; k < 6; ++k) topo.tet_edges[t][k] = edge_id(edge_set, v[kEdgeLocal[k][0]], v[kEdgeLocal[k][1]]);
  }
  return edge_set;
}

/// Faces: bucket = smallest vertex, key = (middle, largest). Fills topo.faces and topo.tet_faces.
void add_faces(std::span<const LocalIndex> tets, Topology& topo) {
  const LocalIndex n_vertices = topo.n_vertices;
  const std::int64_t nt = static_cast<std::int64_t>(tets.size() / 4);
  const auto face_set = bucket_unique<std::uint64_t>(n_vertices, [&](auto&& sink) {
    for (std::int64_t t = 0; t < nt; ++t)
      for (int k = 0; k < 4; ++k) {
        const auto f = sorted_face(tets, t, k);
        sink(f[0], face_key(f[1], f[2]));
      }
  });
  const std::int64_t nf = static_cast<std::int64_t>(face_set.keys.size());
  check_fits(nf, "faces");
  resize_first_touched(topo.faces, static_cast<std::size_t>(nf));
#pragma omp parallel for schedule(static)
  for (LocalIndex v = 0; v < n_vertices; ++v)
    for (std::int64_t f = face_set.offsets[v]; f < face_set.offsets[v + 1]; ++f) {
      const std::uint64_t key = face_set.keys[f];
      topo.faces[f] = {v, static_cast<LocalIndex>(key >> 32), static_cast<LocalIndex>(key & 0xffffffffu)};
    }
  resize_first_touched(topo.tet_faces, static_cast<std::size_t>(nt));
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t)
    for (int k = 0; k < 4; ++k) {
      const auto f = sorted_face(tets, t, k);
      topo.tet_faces[t][k] = static_cast<LocalIndex>(face_set.find(f[0], face_key(f[1], f[2])));
    }
}

/// TSEPs. Type 1: the two edges of face (a,b,c) meeting at its k-th vertex; with lexicographic edge ids
/// e(a,b) < e(a,c) < e(b,c), so each pair below is already ordered. Type 2: opposite edges of a tet.
void add_tseps(const BucketSet<LocalIndex>& edge_set, Topology& topo) {
  const std::int64_t nf = topo.n_faces(), nt = topo.n_tets();
  topo.n_type1 = 3 * nf;
  topo.n_type2 = 3 * nt;
  resize_first_touched(topo.tseps, static_cast<std::size_t>(topo.n_type1 + topo.n_type2));
#pragma omp parallel for schedule(static)
  for (std::int64_t f = 0; f < nf; ++f) {
    const auto& fv = topo.faces[f];
    const LocalIndex ab = edge_id(edge_set, fv[0], fv[1]), ac = edge_id(edge_set, fv[0], fv[2]),
                     bc = edge_id(edge_set, fv[1], fv[2]);
    topo.tseps[3 * f + 0] = {ab, ac, 1};
    topo.tseps[3 * f + 1] = {ab, bc, 1};
    topo.tseps[3 * f + 2] = {ac, bc, 1};
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) {
      const LocalIndex e0 = topo.tet_edges[t][k], e1 = topo.tet_edges[t][5 - k];
      topo.tseps[topo.n_type1 + 3 * t + k] = {std::min(e0, e1), std::max(e0, e1), 2};
    }
}

}  // namespace

Topology build_topology(LocalIndex n_vertices, std::span<const LocalIndex> tets, bool edges_only) {
  check_tets(n_vertices, tets);
  Topology topo;
  topo.n_vertices = n_vertices;
  const BucketSet<LocalIndex> edge_set = add_edges(tets, topo);
  if (edges_only) return topo;
  add_faces(tets, topo);
  add_tseps(edge_set, topo);
  return topo;
}

TriangleEdges build_triangle_edges(std::span<const LocalIndex> triangles) {
  const std::size_t nt = triangles.size() / 3;
  std::vector<std::uint64_t> keys(3 * nt);  // (lo << 32 | hi) of the edge opposite local vertex m
  for (std::size_t t = 0; t < nt; ++t)
    for (int m = 0; m < 3; ++m) {
      const auto a = static_cast<std::uint32_t>(triangles[3 * t + (m + 1) % 3]);
      const auto b = static_cast<std::uint32_t>(triangles[3 * t + (m + 2) % 3]);
      keys[3 * t + m] = a < b ? std::uint64_t{a} << 32 | b : std::uint64_t{b} << 32 | a;
    }
  std::vector<std::uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  TriangleEdges te;
  te.edges.resize(sorted.size());
  for (std::size_t e = 0; e < sorted.size(); ++e)
    te.edges[e] = {static_cast<LocalIndex>(sorted[e] >> 32), static_cast<LocalIndex>(sorted[e] & 0xffffffffu)};
  te.triangle_edges.resize(3 * nt);
  for (std::size_t k = 0; k < keys.size(); ++k)
    te.triangle_edges[k] = static_cast<LocalIndex>(std::lower_bound(sorted.begin(), sorted.end(), keys[k]) -
                                                   sorted.begin());
  return te;
}

}  // namespace edgefem
