// SPDX-License-Identifier: BSD-3-Clause
// Contact input (issue 48): the job's `obstacles` and `contact` keys parse with every value, and each bad value is
// an InputError naming the file, the line and the key; the STL reader (ASCII and binary, points welded) and its
// errors; a mesh obstacle's unreadable or degenerate file names the obstacle (solver/obstacles.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "contact/obstacle.hpp"
#include "core/error.hpp"
#include "io/job.hpp"
#include "io/stl.hpp"
#include "solver/obstacles.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;

class ContactInput : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::weakly_canonical(fs::path(::testing::TempDir())) /
           ("edgefem_contact_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "tool.stl") << ascii_tetrahedron();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string ascii_tetrahedron() {
    // Four outward facets of the unit corner tetrahedron; 12 corners, 4 distinct points.
    const char* facets[4][3] = {{"0 0 0", "0 1 0", "1 0 0"},
                                {"0 0 0", "1 0 0", "0 0 1"},
                                {"0 0 0", "0 0 1", "0 1 0"},
                                {"1 0 0", "0 1 0", "0 0 1"}};
    std::string text = "solid tool\n";
    for (const auto& f : facets) {
      text += "  facet normal 0 0 0\n    outer loop\n";
      for (const char* v : f) text += "      vertex " + std::string(v) + "\n";
      text += "    endloop\n  endfacet\n";
    }
    return text + "endsolid tool\n";
  }
  std::string write(const std::string& text, const std::string& name = "job.yaml") const {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static std::string job(const std::string& obstacles, const std::string& rest = "") {
    return "mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}\n"
           "materials: [{young: 1, poisson: 0.1}]\n"
           "obstacles:\n" +
           obstacles + rest;
  }
  /// read_job must throw an InputError starting "<path>:<line>: " and holding every piece.
  void expect_error(const std::string& text, int line, const std::vector<std::string>& pieces) const {
    const std::string path = write(text);
    try {
      read_job(path);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      const std::string where = path + ":" + std::to_string(line) + ": ";
      EXPECT_EQ(msg.rfind(where, 0), 0u) << "expected the message to start with '" << where << "': " << msg;
      for (const auto& piece : pieces) EXPECT_NE(msg.find(piece), std::string::npos) << "missing '" << piece << "' in: " << msg;
      return;
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
  }
  fs::path dir_;
};

TEST_F(ContactInput, EveryKeyParses) {
  const Job j = read_job(write(job(
      "  - {name: table, shape: box, box: [[-1, -1, -0.05], [1, 1, 0]], friction: 0.3}\n"
      "  - {name: floor, shape: plane, point: [0, 0, -2], normal: [0, 0, 1]}\n"
      "  - {shape: sphere, center: [1, 2, 3], radius: 0.5}\n"
      "  - {name: rod, shape: cylinder, center: [0, 0, 5], axis: [1, 0, 0], radius: 0.2, length: 3}\n"
      "  - name: pusher\n"
      "    shape: mesh\n"
      "    file: tool.stl\n"
      "    motion: {translate: [0, 0, -0.2], schedule: {table: [[0, 0], [1, 1]]}}\n",
      "contact: {method: penalty, distance: 2.0e-3, stiffness: auto, friction_velocity: 0.5}\n")));
  ASSERT_EQ(j.obstacles.size(), 5u);
  EXPECT_EQ(j.obstacles[0].shape, ObstacleShape::box);
  EXPECT_EQ(j.obstacles[0].lo[2], -0.05);
  EXPECT_EQ(j.obstacles[0].friction, 0.3);
  EXPECT_EQ(j.obstacles[1].normal[2], 1.0);
  EXPECT_EQ(j.obstacles[2].name, "obstacle2");  // the default name
  EXPECT_EQ(j.obstacles[2].radius, 0.5);
  EXPECT_EQ(j.obstacles[3].length, 3.0);
  EXPECT_EQ(j.obstacles[4].file, (dir_ / "tool.stl").string());
  ASSERT_TRUE(j.obstacles[4].motion && j.obstacles[4].motion->schedule);
  EXPECT_EQ(j.obstacles[4].motion->translate[2], -0.2);
  EXPECT_EQ(j.contact.method, contact::ContactMethod::penalty);
  EXPECT_EQ(j.contact.distance, 2e-3);
  EXPECT_EQ(j.contact.stiffness, 0.0);  // auto
  EXPECT_EQ(j.contact.friction_velocity, 0.5);
  // Every rank builds them all; the mesh obstacle's STL is read and welded; the schedule moves the pusher.
  const auto obstacles = make_obstacles(j);
  ASSERT_EQ(obstacles.size(), 5u);
  EXPECT_STREQ(obstacles[4]->shape_name(), "mesh");
  EXPECT_NEAR(obstacles[4]->signed_distance({0.1, 0.1, 0.1}), -0.1, 1e-12);  // inside the tetrahedron
  EXPECT_NEAR(obstacles[0]->signed_distance({0, 0, 0.25}), 0.25, 1e-15);
  EXPECT_EQ(obstacle_offset(j, j.obstacles[4], 0.5)[2], -0.1);
}

TEST_F(ContactInput, BadValuesNameFileLineAndKey) {
  expect_error(job("  - {shape: plane, point: [0, 0, 0], normal: [0, 0, 2]}\n"), 5,
               {"obstacles[0].normal: expected a unit normal (length 1), got one of length 2", "[0, 0, 1]"});
  expect_error(job("  - {shape: plane, point: [0, 0, 0], normal: [0, 0, 0]}\n"), 5,
               {"obstacles[0].normal: expected a unit normal, got [0, 0, 0]"});
  expect_error(job("  - {shape: plane, point: [0, 0, 0], normal: [0, 0, 1], friction: -0.1}\n"), 5,
               {"obstacles[0].friction: expected a non-negative number", "got '-0.1'"});
  expect_error(job("  - {shape: sphere, center: [0, 0, 0], radius: 0}\n"), 5,
               {"obstacles[0].radius: expected a positive number, got '0'"});
  expect_error(job("  - {shape: box, box: [[0, 0, 0], [1, -1, 1]]}\n"), 5,
               {"obstacles[0].box: expected the first corner below the second"});
  expect_error(job("  - {shape: sphere, center: [0, 0, 0], radius: 1, normal: [0, 0, 1]}\n"), 5,
               {"obstacles[0].normal: not a key of shape sphere (its own keys: center, radius"});
  expect_error(job("  - {shape: sphere, center: [0, 0, 0], radius: 1, frition: 0.1}\n"), 5,
               {"unknown key 'obstacles[0].frition'", "did you mean 'friction'?"});
  expect_error(job("  - {shape: cone}\n"), 5, {"obstacles[0].shape: expected one of: plane, box, sphere, cylinder, mesh"});
  expect_error(job("  - {shape: mesh, file: missing.stl}\n"), 5, {"obstacles[0].file: file 'missing.stl' not found"});
  expect_error(job("  - {shape: mesh, file: job.yaml}\n"), 5, {"obstacles[0].file: expected a Gmsh .msh or an .stl"});
  expect_error(job("  - {name: a, shape: sphere, center: [0, 0, 0], radius: 1}\n"
                   "  - {name: a, shape: sphere, center: [0, 0, 0], radius: 1}\n"),
               6, {"obstacles[1]: the name 'a' is used by an earlier obstacle"});
  const std::string plane = "  - {shape: plane, point: [0, 0, -1], normal: [0, 0, 1]}\n";
  expect_error(job(plane, "contact: {distance: -1.0e-3}\n"), 6,
               {"contact.distance: expected a positive number or auto, got '-1.0e-3'"});
  expect_error(job(plane, "contact: {method: ipc}\n"), 6, {"contact.method: expected one of: barrier, penalty"});
  expect_error(job(plane, "contact: {stiffness: 0}\n"), 6, {"contact.stiffness: expected a positive number or auto"});
  expect_error("mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}\n"
               "materials: [{young: 1, poisson: 0.1}]\ncontact: {distance: 1.0e-3}\n",
               4, {"contact: given, but the job has no obstacles"});
  expect_error(job(plane, "analysis: {type: dynamic, dt: 0.1, end_time: 1, integrator: linearized-euler}\n"), 5,
               {"obstacles: not supported with integrator linearized-euler yet"});
}

TEST_F(ContactInput, StlAsciiAndBinaryGiveTheSameWeldedSurface) {
  const TriangleSurface ascii = read_stl((dir_ / "tool.stl").string());
  ASSERT_EQ(ascii.triangles.size(), 4u);
  EXPECT_EQ(ascii.points.size(), 4u);  // 12 corners welded into 4 points
  // The same facets as binary STL.
  const std::string binary_path = (dir_ / "tool_binary.stl").string();
  {
    std::ofstream out(binary_path, std::ios::binary);
    const std::string header(80, ' ');
    out.write(header.data(), 80);
    const auto n = static_cast<std::uint32_t>(ascii.triangles.size());
    out.write(reinterpret_cast<const char*>(&n), 4);
    for (const auto& t : ascii.triangles) {
      float record[12] = {0, 0, 0};
      for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d) record[3 + 3 * k + d] = static_cast<float>(ascii.points[t[k]][d]);
      out.write(reinterpret_cast<const char*>(record), 48);
      const std::uint16_t attribute = 0;
      out.write(reinterpret_cast<const char*>(&attribute), 2);
    }
  }
  const TriangleSurface binary = read_stl(binary_path);
  EXPECT_EQ(binary.points, ascii.points);
  EXPECT_EQ(binary.triangles, ascii.triangles);
}

TEST_F(ContactInput, BadStlFilesAreErrorsNamingTheFile) {
  auto message = [&](const std::string& text) {
    const std::string path = write(text, "bad.stl");
    try {
      read_stl(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("hello").find("bad.stl: not an STL file"), std::string::npos) << message("hello");
  const std::string nan = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 nan\nvertex 1 0 0\nvertex 0 1 0\n"
                          "endloop\nendfacet\nendsolid\n";
  EXPECT_NE(message(nan).find("expected a finite number, got 'nan'"), std::string::npos) << message(nan);
  // A surface with no area (three equal corners) is refused when the obstacle is built, naming it.
  const std::string flat = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 0 0 0\nvertex 0 0 0\n"
                           "endloop\nendfacet\nendsolid\n";
  write(flat, "flat.stl");
  const Job j = read_job(write(job("  - {name: tool, shape: mesh, file: flat.stl}\n")));
  try {
    make_obstacles(j);
    ADD_FAILURE() << "no error for a degenerate surface";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("obstacles[0] (tool): "), std::string::npos) << msg;
    EXPECT_NE(msg.find("flat.stl"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace edgefem
