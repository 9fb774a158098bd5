// SPDX-License-Identifier: BSD-3-Clause
// Gmsh reader tests: the same small mesh written in MSH 2.2 / 4.1, ASCII / binary (and byte-swapped binary)
// must read identically; malformed files must give messages naming the file and the line (or byte).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/gmsh.hpp"
#include "mesh/box.hpp"
#include "tests/support/msh_writer.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;

using testing::TestModel;
using testing::two_tet_model;
using testing::write_msh22;
using testing::write_msh41;

/// What every format of two_tet_model() must read as.
Mesh two_tet_expected() {
  Mesh m;
  m.coords = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  m.tets = {0, 1, 2, 3, 1, 2, 3, 4};
  m.tet_region = {1, 2};
  m.triangles = {0, 1, 2, 0, 2, 3, 1, 2, 4, 0, 1, 3};
  m.triangle_region = {11, 11, 12, 0};
  m.lines = {0, 1};
  m.line_region = {21};
  return m;
}

// ---- helpers ----------------------------------------------------------------------------------

class GmshTest : public testing::DirectoryTest {
 protected:
  GmshTest() : DirectoryTest("edgefem_gmsh") {}
  /// read_gmsh must throw an InputError whose message contains every piece.
  static std::string expect_error(const std::string& path, const std::vector<std::string>& pieces) {
    try {
      read_gmsh(path);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      for (const auto& piece : pieces)
        EXPECT_NE(msg.find(piece), std::string::npos) << "missing '" << piece << "' in: " << msg;
      return msg;
    }
    ADD_FAILURE() << "no InputError for " << path;
    return {};
  }
};

void expect_same_mesh(const Mesh& a, const Mesh& b) {
  EXPECT_EQ(a.coords, b.coords);
  EXPECT_EQ(a.tets, b.tets);
  EXPECT_EQ(a.tet_region, b.tet_region);
  EXPECT_EQ(a.triangles, b.triangles);
  EXPECT_EQ(a.triangle_region, b.triangle_region);
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.line_region, b.line_region);
}

int line_containing(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// ---- all formats read the same mesh -----------------------------------------------------------

TEST_F(GmshTest, AllFourFormatsReadIdentically) {
  const TestModel model = two_tet_model();
  const Mesh expected = two_tet_expected();
  const struct {
    const char* name;
    std::string content;
  } files[] = {
      {"v22_ascii.msh", write_msh22(model, false)},
      {"v22_binary.msh", write_msh22(model, true)},
      {"v41_ascii.msh", write_msh41(model, false)},
      {"v41_binary.msh", write_msh41(model, true)},
      {"v22_binary_swapped.msh", write_msh22(model, true, true)},
      {"v41_binary_swapped.msh", write_msh41(model, true, true)},
  };
  for (const auto& f : files) {
    SCOPED_TRACE(f.name);
    const Mesh mesh = read_gmsh(write(f.name, f.content));
    expect_same_mesh(mesh, expected);
    EXPECT_NO_THROW(check_mesh(mesh, f.name));
  }
}

TEST_F(GmshTest, ToleratesCrLfAndUnknownSections) {
  std::string text = write_msh41(two_tet_model(), false);
  text.insert(text.find("$Nodes"), "$Comments\nanything $Nodes-like here\n$EndComments\n");
  std::string crlf;
  for (const char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  expect_same_mesh(read_gmsh(write("crlf.msh", crlf)), two_tet_expected());
}

TEST_F(GmshTest, ReadsBoxMeshWrittenAsMsh) {
  // A generated box round-trips through both ASCII formats (tests a realistic size and dense tags).
  const Mesh box = generate_box({2, 1, 1}, {8, 4, 4});
  TestModel model;
  model.entities = {{2, 1, {11}}, {3, 1, {1}}};
  for (LocalIndex v = 0; v < box.n_vertices(); ++v)
    model.nodes.push_back({static_cast<std::uint64_t>(v) + 1, box.vertex(v), 3, 1});
  for (LocalIndex t = 0; t < box.n_triangles(); ++t) {
    const auto* v = &box.triangles[3 * static_cast<std::size_t>(t)];
    model.elements.push_back({2, 2, 1, {v[0] + 1ULL, v[1] + 1ULL, v[2] + 1ULL}});
  }
  for (LocalIndex t = 0; t < box.n_tets(); ++t) {
    const auto* v = &box.tets[4 * static_cast<std::size_t>(t)];
    model.elements.push_back({4, 3, 1, {v[0] + 1ULL, v[1] + 1ULL, v[2] + 1ULL, v[3] + 1ULL}});
  }
  for (const bool binary : {false, true}) {
    const Mesh a = read_gmsh(write("box22.msh", write_msh22(model, binary)));
    const Mesh b = read_gmsh(write("box41.msh", write_msh41(model, binary)));
    EXPECT_EQ(a.tets, box.tets);
    EXPECT_EQ(a.triangles, box.triangles);
    EXPECT_EQ(a.coords, box.coords);
    expect_same_mesh(a, b);
  }
}

// ---- errors -----------------------------------------------------------------------------------

const char* const good22 = R"($MeshFormat
2.2 0 8
$EndMeshFormat
$Nodes
4
1 0 0 0
2 1 0 0
3 0 1 0
4 0 0 1
$EndNodes
$Elements
1
1 4 2 7 1 1 2 3 4
$EndElements
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST_F(GmshTest, MinimalFileReads) {
  const Mesh m = read_gmsh(write("good.msh", good22));
  EXPECT_EQ(m.n_vertices(), 4);
  EXPECT_EQ(m.n_tets(), 1);
  EXPECT_EQ(m.tet_region, std::vector<int>{7});
}

TEST_F(GmshTest, TruncatedAsciiFileNamesTheLastLine) {
  const std::string text = write_msh41(two_tet_model(), false);
  const std::string cut = text.substr(0, text.rfind("8 20 35 7 100") + 8);  // last element: 2 of 4 nodes
  const std::string path = write("truncated.msh", cut);
  const int last_line = 1 + static_cast<int>(std::count(cut.begin(), cut.end(), '\n'));
  expect_error(path, {path + ":" + std::to_string(last_line) + ":", "unexpected end of file"});

  // Cut after a complete line: the missing '$EndNodes' is named.
  const std::string path2 = write("truncated2.msh",
                                  std::string(good22).substr(0, std::string(good22).find("$EndNodes")));
  expect_error(path2, {path2 + ":10:", "unexpected end of file", "$EndNodes"});
}

TEST_F(GmshTest, TruncatedBinaryFileNamesTheByte) {
  for (const bool v41 : {false, true}) {
    const std::string text = v41 ? write_msh41(two_tet_model(), true) : write_msh22(two_tet_model(), true);
    const std::string cut = text.substr(0, text.find("$EndNodes") - 20);  // inside the node coordinates
    const std::string path = write(v41 ? "t41.msh" : "t22.msh", cut);
    expect_error(path, {path + ": byte ", "unexpected end of file", "coordinate"});
  }
}

TEST_F(GmshTest, UnknownElementTypeIsNamed) {
  const std::string text = replace(good22, "$EndElements", "2 3 2 7 1 1 2 3 4\n$EndElements");
  const std::string with_count = replace(text, "$Elements\n1\n", "$Elements\n2\n");
  const std::string path = write("quad.msh", with_count);
  expect_error(path, {path + ":14:", "unsupported element type 3", "4-node quadrangle"});

  // MSH 4.1: the block header names the type.
  std::string v41 = write_msh41(two_tet_model(), false);
  v41 = replace(v41, "\n3 2 4 1\n", "\n3 2 11 1\n");  // last block: 10-node tetrahedron
  const std::string path41 = write("tet10.msh", v41);
  expect_error(path41, {path41 + ":" + std::to_string(line_containing(v41, "\n3 2 11 1\n") + 1) + ":",
                        "unsupported element type 11", "10-node second-order tetrahedron"});
}

TEST_F(GmshTest, UnknownNodeIsNamed) {
  const std::string path = write("unknown.msh", replace(good22, "1 4 2 7 1 1 2 3 4", "1 4 2 7 1 1 2 3 999"));
  expect_error(path, {path + ":13:", "node 999", "unknown node"});
  TestModel model = two_tet_model();
  model.elements.back().nodes[3] = 12345;
  const std::string pathb = write("unknown_bin.msh", write_msh41(model, true));
  expect_error(pathb, {pathb + ": byte ", "node 12345", "unknown node"});
}

TEST_F(GmshTest, NonFiniteCoordinateIsNamed) {
  const std::string path = write("nan.msh", replace(good22, "3 0 1 0", "3 0 nan 0"));
  expect_error(path, {path + ":8:", "node 3", "non-finite"});
  const std::string path_inf = write("inf.msh", replace(good22, "3 0 1 0", "3 0 1e999 0"));
  expect_error(path_inf, {path_inf + ":8:", "node 3", "non-finite"});
  TestModel model = two_tet_model();
  model.nodes[2].x[1] = std::numeric_limits<double>::quiet_NaN();
  const std::string pathb = write("nan_bin.msh", write_msh22(model, true));
  expect_error(pathb, {pathb + ": byte ", "node 35", "non-finite"});
  const std::string path41 = write("nan41.msh", write_msh41(model, false));
  expect_error(path41, {path41 + ":", "node 35", "non-finite"});
}

TEST_F(GmshTest, UnusedAndDuplicateVerticesAreErrors) {
  const std::string unused = replace(replace(good22, "4 0 0 1\n", "4 0 0 1\n55 5 5 5\n"), "$Nodes\n4\n", "$Nodes\n5\n");
  const std::string path = write("unused.msh", unused);
  expect_error(path, {path + ":10:", "node 55", "unused vertex"});

  const std::string duplicate = replace(replace(good22, "4 0 0 1\n", "4 0 0 1\n2 5 5 5\n"), "$Nodes\n4\n",
                                        "$Nodes\n5\n");
  const std::string path2 = write("duplicate.msh", duplicate);
  expect_error(path2, {path2 + ":10:", "duplicate node tag 2", "line 7"});

  // A node used only by a boundary triangle of a tet mesh is unused by the solid.
  TestModel model = two_tet_model();
  model.nodes.push_back({77, {3, 3, 3}, 2, 1});
  model.elements.insert(model.elements.begin() + 2, {2, 2, 1, {10, 20, 77}});
  const std::string path3 = write("facet_only.msh", write_msh41(model, true));
  expect_error(path3, {path3 + ": byte ", "node 77", "not used by any tetrahedron"});
}

TEST_F(GmshTest, BadHeadersAreNamed) {
  expect_error((dir_ / "missing.msh").string(), {"missing.msh", "cannot open"});
  const std::string path = write("not_msh.msh", "solid cube\nfacet normal 0 0 1\n");
  expect_error(path, {path + ":1:", "not a Gmsh .msh file", "solid"});
  const std::string v40 = write("v40.msh", replace(good22, "2.2 0 8", "4 0 8"));
  expect_error(v40, {v40 + ":2:", "unsupported MSH version '4'"});
  const std::string empty = write("empty.msh", "");
  expect_error(empty, {empty + ":1:", "empty"});
  const std::string junk = write("junk.msh", replace(good22, "4 0 0 1\n", "4 0 0 x1\n"));
  expect_error(junk, {junk + ":9:", "got 'x1'"});
  const std::string endian = write("endian.msh", std::string("$MeshFormat\n4.1 1 8\n\x02\0\0\0\n$EndMeshFormat\n", 40));
  expect_error(endian, {endian, "endianness"});
  std::string partitioned = write_msh41(two_tet_model(), false);
  partitioned.insert(partitioned.find("$Nodes"), "$PartitionedEntities\n2\n0\n0 0 0 0\n$EndPartitionedEntities\n");
  const std::string part = write("partitioned.msh", partitioned);
  expect_error(part, {part + ":" + std::to_string(line_containing(partitioned, "$PartitionedEntities")) + ":",
                      "partitioned .msh files are not supported"});
}

// ---- check_mesh -------------------------------------------------------------------------------

TEST(GmshCheckMesh, AcceptsGoodMeshesAndNamesBadCells) {
  Mesh good = two_tet_expected();
  EXPECT_NO_THROW(check_mesh(good, "good"));

  Mesh inverted = good;
  std::swap(inverted.tets[4], inverted.tets[5]);
  try {
    check_mesh(inverted, "inv.msh");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("inv.msh: tetrahedron 1 (vertices 2 1 3 4) is inverted"), std::string::npos) << msg;
  }

  Mesh flat = good;  // vertex 3 into the z = 0 plane of vertices 0, 1, 2: tet 0 has zero volume
  flat.coords[3 * 3 + 0] = 0.3;
  flat.coords[3 * 3 + 1] = 0.3;
  flat.coords[3 * 3 + 2] = 0.0;
  try {
    check_mesh(flat, "flat");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("flat: tetrahedron 0 (vertices 0 1 2 3) is degenerate"), std::string::npos)
        << e.what();
  }

  Mesh duplicate = good;  // a tet listed twice (MSH 2.2 repeats elements per physical group)
  duplicate.tets.insert(duplicate.tets.end(), {3, 1, 2, 4});
  duplicate.tet_region.push_back(7);
  try {
    check_mesh(duplicate, "dup");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dup: tetrahedron 2 (vertices 3 1 2 4) duplicates tetrahedron 1"),
              std::string::npos)
        << e.what();
  }

  Mesh out_of_range = good;
  out_of_range.triangles[2] = 9;
  EXPECT_THROW(check_mesh(out_of_range, "x"), InputError);

  Mesh nan = good;
  nan.coords[4] = std::nan("");
  try {
    check_mesh(nan, "nan");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vertex 1 has a non-finite coordinate"), std::string::npos) << e.what();
  }

  Mesh huge = good;  // finite coordinates whose volume overflows: found by fuzzing (NaN passed every comparison)
  for (int k = 0; k < 3; ++k) huge.coords[3 * 4 + k] = 1e200 * (k + 1);
  try {
    check_mesh(huge, "huge");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("huge: tetrahedron 1 (vertices 1 2 3 4): its volume overflows"),
              std::string::npos)
        << e.what();
  }

  Mesh unused = good;
  unused.coords.insert(unused.coords.end(), {5, 5, 5});
  try {
    check_mesh(unused, "u");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vertex 5 is not used by any tetrahedron"), std::string::npos) << e.what();
  }

  EXPECT_NO_THROW(check_mesh(generate_sheet({1, 1}, {2, 2}), "sheet"));
  Mesh collinear = generate_sheet({1, 1}, {1, 1});  // triangles (0,1,3), (0,3,2)
  collinear.coords[3 * 2 + 0] = 0.5;                // vertex 2 onto the diagonal 0-3
  collinear.coords[3 * 2 + 1] = 0.5;
  try {
    check_mesh(collinear, "c");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("triangle 1 (vertices 0 3 2) is degenerate"), std::string::npos) << e.what();
  }
  Mesh huge_sheet = generate_sheet({1, 1}, {1, 1});
  huge_sheet.coords[3 * 3 + 0] = 1e300;
  try {
    check_mesh(huge_sheet, "hs");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("its area overflows"), std::string::npos) << e.what();
  }
}

// ---- real Gmsh output (optional) --------------------------------------------------------------

TEST_F(GmshTest, ReadsRealGmshOutputWhenGmshIsInstalled) {
  if (!fs::exists("/usr/bin/gmsh")) GTEST_SKIP() << "gmsh not installed";
  const std::string geo = write("cube.geo", R"(SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 2, 1, 1};
Physical Volume(1) = {1};
Physical Surface(11) = {1};
Physical Surface(12) = {2};
Mesh.MeshSizeMax = 0.4;
)");
  const std::string v41 = (dir_ / "cube41.msh").string(), v22 = (dir_ / "cube22.msh").string();
  const std::string base = "/usr/bin/gmsh -3 -v 0 -nt 1 " + geo;
  ASSERT_EQ(std::system((base + " -format msh41 -bin -o " + v41 + " > /dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(std::system((base + " -format msh22 -o " + v22 + " > /dev/null 2>&1").c_str()), 0);
  const Mesh a = read_gmsh(v41);
  Mesh b = read_gmsh(v22);
  EXPECT_GT(a.n_tets(), 20);
  EXPECT_NO_THROW(check_mesh(a, v41));
  // The ASCII file rounds coordinates to 16 digits; the binary one is exact.
  ASSERT_EQ(a.coords.size(), b.coords.size());
  for (std::size_t i = 0; i < a.coords.size(); ++i) ASSERT_NEAR(a.coords[i], b.coords[i], 1e-14) << i;
  b.coords = a.coords;
  expect_same_mesh(a, b);
  double volume = 0.0;
  for (LocalIndex t = 0; t < a.n_tets(); ++t) {
    const auto* v = &a.tets[4 * static_cast<std::size_t>(t)];
    const auto x0 = a.vertex(v[0]), x1 = a.vertex(v[1]), x2 = a.vertex(v[2]), x3 = a.vertex(v[3]);
    double e[3][3];
    for (int c = 0; c < 3; ++c) e[0][c] = x1[c] - x0[c], e[1][c] = x2[c] - x0[c], e[2][c] = x3[c] - x0[c];
    volume += (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
               e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1])) /
              6.0;
  }
  EXPECT_NEAR(volume, 2.0, 1e-9);
  EXPECT_TRUE(std::all_of(a.tet_region.begin(), a.tet_region.end(), [](int r) { return r == 1; }));
  EXPECT_TRUE(std::count(a.triangle_region.begin(), a.triangle_region.end(), 11) > 0);
  EXPECT_TRUE(std::count(a.triangle_region.begin(), a.triangle_region.end(), 12) > 0);
}

}  // namespace
}  // namespace edgefem
