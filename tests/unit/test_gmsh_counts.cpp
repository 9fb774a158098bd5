// SPDX-License-Identifier: BSD-3-Clause
// The size of a .msh file's mesh from its headers (io/gmsh_counts.hpp, issue 50: the memory plan before the mesh is
// read): the same counts as the reader for MSH 2.2 and 4.1, ASCII and binary; nothing for a file that is not one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/gmsh.hpp"
#include "io/gmsh_counts.hpp"
#include "tests/support/msh_writer.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

std::string written(const std::string& name, const std::string& content) {
  const auto dir = std::filesystem::path(EDGEFEM_BINARY_DIR) / "test-out" / "gmsh_counts";
  std::filesystem::create_directories(dir);
  testing::write_text(dir / name, content);
  return (dir / name).string();
}

TEST(GmshCounts, Msh41CountsEachTypeLikeTheReader) {
  for (const bool binary : {false, true}) {
    const std::string path =
        written(binary ? "b41.msh" : "a41.msh", testing::write_msh41(testing::two_tet_model(), binary));
    const auto c = gmsh_header_counts(path);
    ASSERT_TRUE(c.has_value()) << path;
    const Mesh mesh = read_gmsh(path);
    EXPECT_EQ(c->nodes, mesh.n_vertices());
    EXPECT_TRUE(c->by_type);
    EXPECT_EQ(c->tets, mesh.n_tets());
    EXPECT_EQ(c->triangles, mesh.n_triangles());
    EXPECT_EQ(c->elements, 8);
  }
}

TEST(GmshCounts, Msh22CountsElementsTogether) {
  for (const bool binary : {false, true}) {
    const std::string path =
        written(binary ? "b22.msh" : "a22.msh", testing::write_msh22(testing::two_tet_model(), binary));
    const auto c = gmsh_header_counts(path);
    ASSERT_TRUE(c.has_value()) << path;
    EXPECT_EQ(c->nodes, 5);
    EXPECT_FALSE(c->by_type);
    EXPECT_EQ(c->elements, 8);
  }
}

TEST(GmshCounts, TheBundledMeshes) {
  for (const char* name : {"beam.msh", "column.msh", "bimaterial.msh", "cuboid.msh"}) {
    const std::string path = std::string(EDGEFEM_SOURCE_DIR) + "/jobs/examples/meshes/" + name;
    const auto c = gmsh_header_counts(path);
    ASSERT_TRUE(c.has_value()) << path;
    const Mesh mesh = read_gmsh(path);
    EXPECT_EQ(c->nodes, mesh.n_vertices()) << path;
    EXPECT_GE(c->elements, static_cast<std::int64_t>(mesh.n_tets()) + mesh.n_triangles()) << path;
    if (c->by_type) {
      EXPECT_EQ(c->tets, mesh.n_tets()) << path;
    }
  }
}

TEST(GmshCounts, NotAMeshFileGivesNothing) {
  EXPECT_FALSE(gmsh_header_counts(written("text.msh", "hello\n")).has_value());
  EXPECT_FALSE(gmsh_header_counts(written("huge.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n"
                                                      "99999999999\n1 0 0 0\n$EndNodes\n"))
                   .has_value());  // a count the file cannot hold
  EXPECT_FALSE(gmsh_header_counts("/no/such/file.msh").has_value());
}

}  // namespace
}  // namespace edgefem
