// SPDX-License-Identifier: BSD-3-Clause
// Tests of mesh/topology: edges, faces, TSEPs (Kikuuwe §3.3) against brute-force std::set constructions.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "mesh/topology.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

constexpr int kEdgeLocal[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

TEST(Topology, SingleTet) {
  const std::vector<LocalIndex> tets = {3, 1, 0, 2};
  const Topology t = build_topology(4, tets);
  EXPECT_EQ(t.n_edges(), 6);
  EXPECT_EQ(t.n_faces(), 4);
  EXPECT_EQ(t.tseps.size(), 15u);  // "one tetrahedron includes 15 TSEPs"
  EXPECT_EQ(t.n_type1, 12);
  EXPECT_EQ(t.n_type2, 3);
  for (int k = 0; k < 6; ++k) {
    const auto e = t.edges[t.tet_edges[0][k]];
    const LocalIndex a = tets[kEdgeLocal[k][0]], b = tets[kEdgeLocal[k][1]];
    EXPECT_EQ(e[0], std::min(a, b));
    EXPECT_EQ(e[1], std::max(a, b));
  }
}

TEST(Topology, TwoTetsOfKikuuweFig2) {
  // Two tets sharing a face: 5 vertices, 9 edges, 7 faces, 27 TSEPs (Kikuuwe Fig. 2).
  const std::vector<LocalIndex> tets = {0, 1, 2, 3, 1, 2, 3, 4};
  const Topology t = build_topology(5, tets);
  EXPECT_EQ(t.n_edges(), 9);
  EXPECT_EQ(t.n_faces(), 7);
  EXPECT_EQ(t.tseps.size(), 27u);
  EXPECT_EQ(t.n_type1, 21);
  EXPECT_EQ(t.n_type2, 6);
}

/// Brute force: sets of edges, faces and unordered edge pairs sharing a tet.
struct Brute {
  std::set<std::pair<LocalIndex, LocalIndex>> edges;
  std::set<std::array<LocalIndex, 3>> faces;
  std::set<std::tuple<LocalIndex, LocalIndex, int>> pairs;  // (edge id, edge id, shared vertices) by topology ids
};

class TopologyBox : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(TopologyBox, MatchesBruteForceAndCounts) {
  const auto [nx, ny, nz] = GetParam();
  auto mesh = testing::kuhn_box(nx, ny, nz);
  // Shuffle tets and their vertex order so nothing relies on the generator's ordering.
  std::mt19937 rng(7);
  const LocalIndex nt = mesh.n_tets();
  std::vector<std::array<LocalIndex, 4>> tv(nt);
  for (LocalIndex t = 0; t < nt; ++t) {
    for (int i = 0; i < 4; ++i) tv[t][i] = mesh.tets[4 * t + i];
    std::shuffle(tv[t].begin(), tv[t].end(), rng);
  }
  std::shuffle(tv.begin(), tv.end(), rng);
  std::vector<LocalIndex> tets;
  for (const auto& a : tv) tets.insert(tets.end(), a.begin(), a.end());

  const Topology topo = build_topology(mesh.n_vertices(), tets);
  Brute brute;
  for (LocalIndex t = 0; t < nt; ++t) {
    const LocalIndex* v = tets.data() + 4 * t;
    for (const auto& p : kEdgeLocal) brute.edges.insert({std::min(v[p[0]], v[p[1]]), std::max(v[p[0]], v[p[1]])});
    for (int m = 0; m < 4; ++m) {
      std::array<LocalIndex, 3> f;
      int q = 0;
      for (int i = 0; i < 4; ++i)
        if (i != m) f[q++] = v[i];
      std::sort(f.begin(), f.end());
      brute.faces.insert(f);
    }
  }
  ASSERT_EQ(topo.n_edges(), static_cast<std::int64_t>(brute.edges.size()));
  ASSERT_EQ(topo.n_faces(), static_cast<std::int64_t>(brute.faces.size()));
  EXPECT_TRUE(std::is_sorted(topo.edges.begin(), topo.edges.end()));
  EXPECT_TRUE(std::equal(topo.edges.begin(), topo.edges.end(), brute.edges.begin(),
                         [](const auto& a, const auto& b) { return a[0] == b.first && a[1] == b.second; }));
  EXPECT_TRUE(std::equal(topo.faces.begin(), topo.faces.end(), brute.faces.begin()));

  // tet_edges / tet_faces per the documented local order.
  for (LocalIndex t = 0; t < nt; ++t) {
    const LocalIndex* v = tets.data() + 4 * t;
    for (int k = 0; k < 6; ++k) {
      const auto e = topo.edges[topo.tet_edges[t][k]];
      ASSERT_EQ(e[0], std::min(v[kEdgeLocal[k][0]], v[kEdgeLocal[k][1]]));
      ASSERT_EQ(e[1], std::max(v[kEdgeLocal[k][0]], v[kEdgeLocal[k][1]]));
    }
    for (int m = 0; m < 4; ++m) {
      const auto& f = topo.faces[topo.tet_faces[t][m]];
      ASSERT_EQ(std::count(f.begin(), f.end(), v[m]), 0);  // face m is opposite local vertex m
      for (int i = 0; i < 4; ++i)
        if (i != m) {
          ASSERT_EQ(std::count(f.begin(), f.end(), v[i]), 1);
        }
    }
  }

  // TSEPs: brute-force set of unordered pairs of distinct edges sharing a tet.
  std::set<std::pair<LocalIndex, LocalIndex>> brute_pairs;
  for (LocalIndex t = 0; t < nt; ++t)
    for (int a = 0; a < 6; ++a)
      for (int b = a + 1; b < 6; ++b) {
        const LocalIndex e0 = topo.tet_edges[t][a], e1 = topo.tet_edges[t][b];
        brute_pairs.insert({std::min(e0, e1), std::max(e0, e1)});
      }
  std::set<std::pair<LocalIndex, LocalIndex>> got;
  std::int64_t n1 = 0, n2 = 0;
  for (std::size_t p = 0; p < topo.tseps.size(); ++p) {
    const Tsep& s = topo.tseps[p];
    ASSERT_LT(s.edge0, s.edge1);
    got.insert({s.edge0, s.edge1});
    const auto a = topo.edges[s.edge0], b = topo.edges[s.edge1];
    const int shared = (a[0] == b[0]) + (a[0] == b[1]) + (a[1] == b[0]) + (a[1] == b[1]);
    ASSERT_EQ(s.type, shared == 1 ? 1 : 2);
    (s.type == 1 ? n1 : n2) += 1;
    if (static_cast<std::int64_t>(p) < topo.n_type1) {  // layout: tseps[3f+k] meet at faces[f][k]
      const LocalIndex g = topo.faces[p / 3][p % 3];
      ASSERT_TRUE((a[0] == g || a[1] == g) && (b[0] == g || b[1] == g));
    } else {
      const std::int64_t q = static_cast<std::int64_t>(p) - topo.n_type1, t = q / 3, k = q % 3;
      const LocalIndex e0 = topo.tet_edges[t][k], e1 = topo.tet_edges[t][5 - k];
      ASSERT_EQ(s.edge0, std::min(e0, e1));
      ASSERT_EQ(s.edge1, std::max(e0, e1));
    }
  }
  EXPECT_EQ(got.size(), topo.tseps.size()) << "each unordered pair once";
  EXPECT_EQ(got, brute_pairs);
  EXPECT_EQ(n1, topo.n_type1);
  EXPECT_EQ(n2, topo.n_type2);
  EXPECT_EQ(topo.n_type1, 3 * topo.n_faces());  // Kikuuwe footnote 1
  EXPECT_EQ(topo.n_type2, 3 * topo.n_tets());
  // A box is a ball: Euler characteristic V - E + F - T = 1.
  EXPECT_EQ(mesh.n_vertices() - topo.n_edges() + topo.n_faces() - topo.n_tets(), 1);
}

INSTANTIATE_TEST_SUITE_P(TopologyBoxes, TopologyBox,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(2, 2, 2), std::make_tuple(3, 1, 2),
                                           std::make_tuple(4, 3, 2)));

TEST(Topology, UnusedVerticesAndEulerOfTwoBalls) {
  // Two disjoint single tets in a numbering with unused vertices: V - E + F - T = 2 (two balls).
  const std::vector<LocalIndex> tets = {0, 2, 4, 6, 10, 9, 8, 7};
  const Topology t = build_topology(12, tets);
  EXPECT_EQ(t.n_vertices, 12);
  EXPECT_EQ(8 - t.n_edges() + t.n_faces() - t.n_tets(), 2);
  EXPECT_EQ(t.tseps.size(), 30u);
}

TEST(Topology, EdgesOnlyBuildsTheSameEdges) {
  // edges_only (used by stvk-tl and linear): identical edges and tet_edges, no faces or TSEPs.
  auto mesh = testing::kuhn_box(3, 2, 2, 1.0, 0.1, 2);
  std::swap(mesh.tets[0], mesh.tets[3]);  // orientation is irrelevant to the topology
  const Topology full = build_topology(mesh.n_vertices(), mesh.tets);
  const Topology edges = build_topology(mesh.n_vertices(), mesh.tets, /*edges_only=*/true);
  EXPECT_EQ(edges.n_vertices, full.n_vertices);
  EXPECT_EQ(edges.edges, full.edges);
  EXPECT_EQ(edges.tet_edges, full.tet_edges);
  EXPECT_TRUE(edges.faces.empty());
  EXPECT_TRUE(edges.tet_faces.empty());
  EXPECT_TRUE(edges.tseps.empty());
  EXPECT_EQ(edges.n_type1 + edges.n_type2, 0);
  EXPECT_THROW(build_topology(4, std::vector<LocalIndex>{0, 1, 2, 1}, true), std::invalid_argument);
}

TEST(Topology, RejectsBadInput) {
  EXPECT_THROW(build_topology(4, std::vector<LocalIndex>{0, 1, 2}), std::invalid_argument);
  EXPECT_THROW(build_topology(4, std::vector<LocalIndex>{0, 1, 2, 4}), std::invalid_argument);
  EXPECT_THROW(build_topology(4, std::vector<LocalIndex>{0, 1, 2, -1}), std::invalid_argument);
  EXPECT_THROW(build_topology(4, std::vector<LocalIndex>{0, 1, 2, 1}), std::invalid_argument);
  const Topology empty = build_topology(3, {});
  EXPECT_EQ(empty.n_edges(), 0);
  EXPECT_EQ(empty.tseps.size(), 0u);
}

TEST(Topology, LargeBoxCounts) {
  // 30^3 cubes = 162000 tets: closed-form counts of the Kuhn box. Its time (once asserted here, under 5 s) is a
  // benchmark: build/bench/edgefem_bench_mesh_setup.
  const int n = 30;
  const auto mesh = testing::kuhn_box(n, n, n);
  const Topology topo = build_topology(mesh.n_vertices(), mesh.tets);
  const std::int64_t c = n, v = (c + 1) * (c + 1) * (c + 1);
  // Edges: axis edges 3 c (c+1)^2, face diagonals 3 c^2 (c+1), body diagonals c^3.
  EXPECT_EQ(topo.n_edges(), 3 * c * (c + 1) * (c + 1) + 3 * c * c * (c + 1) + c * c * c);
  EXPECT_EQ(topo.n_tets(), 6 * c * c * c);
  EXPECT_EQ(v - topo.n_edges() + topo.n_faces() - topo.n_tets(), 1);
  EXPECT_EQ(topo.n_type1, 3 * topo.n_faces());
}

}  // namespace
}  // namespace edgefem
