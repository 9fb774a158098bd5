// SPDX-License-Identifier: BSD-3-Clause
// Kikuuwe Table I / eq. (36): the bundled meshes have primitive ratios inside the paper's ranges
// 0.18 < N_V/N_T < 1, 1.18 < N_E/N_T < 3, 2 < N_F/N_T < 3, and TSEP counts 3 N_F (type 1) and 3 N_T (type 2).
#include <gtest/gtest.h>

#include <string>

#include "io/gmsh.hpp"
#include "mesh/box.hpp"
#include "mesh/topology.hpp"

namespace edgefem {
namespace {

void expect_table_one_ratios(const Mesh& mesh, const std::string& name) {
  const Topology topo = build_topology(mesh.n_vertices(), mesh.tets);
  const double nt = mesh.n_tets();
  const double v = mesh.n_vertices() / nt, e = topo.n_edges() / nt, f = topo.n_faces() / nt;
  EXPECT_GT(v, 0.18) << name;
  EXPECT_LT(v, 1.0) << name;
  EXPECT_GT(e, 1.18) << name;
  EXPECT_LT(e, 3.0) << name;
  EXPECT_GT(f, 2.0) << name;
  EXPECT_LT(f, 3.0) << name;
  EXPECT_EQ(topo.n_type1, 3 * topo.n_faces()) << name;
  EXPECT_EQ(topo.n_type2, 3 * topo.n_tets()) << name;
  // Euler characteristic of a solid ball: V - E + F - T = 1.
  EXPECT_EQ(mesh.n_vertices() - topo.n_edges() + topo.n_faces() - topo.n_tets(), 1) << name;
}

TEST(MeshStatistics, BundledGmshMeshesAreInKikuuweRanges) {
  for (const char* file : {"cuboid.msh", "column.msh", "bimaterial.msh"}) {
    const std::string path = std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/meshes/" + file;
    expect_table_one_ratios(read_gmsh(path), file);
  }
}

TEST(MeshStatistics, TwistCuboidIsComparableToMeshMC) {
  // The paper's M_C: 441 vertices, 1984 edges, 2744 faces, 1200 tets.
  const Mesh mesh = read_gmsh(std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/meshes/cuboid.msh");
  EXPECT_NEAR(mesh.n_vertices(), 441, 10);
  EXPECT_NEAR(mesh.n_tets(), 1200, 300);
}

TEST(MeshStatistics, GeneratedBoxesAreInKikuuweRanges) {
  expect_table_one_ratios(generate_box({1, 1, 1}, {6, 6, 8}), "box 6x6x8");
  expect_table_one_ratios(generate_box({10, 1, 1}, {40, 4, 4}), "box 40x4x4");
}

}  // namespace
}  // namespace edgefem
