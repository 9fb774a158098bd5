// SPDX-License-Identifier: BSD-3-Clause
// Issue 50, distributed: the connected parts of a mesh found across ranks (partition/components.hpp) and the static
// support check (solver/free_body.hpp) give the same answer on 1, 2 and 3 ranks: a slender generated bar cut into
// slabs is one part spanning every rank, two_blocks.msh two parts told apart by position, a free box is refused
// naming it, a face held in x only leaves the rigid motions the serial test finds, a clamped bar is accepted.
// Issue 48: a block held in x and y at two bottom edges only is accepted resting on a plane (within the contact
// distance) or on a box, refused with the plane far below it, and refused resting on a cylinder (contact along a line
// leaves it free to roll).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "core/error.hpp"
#include "partition/components.hpp"
#include "solver/free_body.hpp"
#include "solver/model.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_free_body {  // one per file: the distributed test files share unity batches

Job job(const std::string& name, const std::string& yaml) {
  return mpitest::job_from_yaml(mpitest::scratch_dir("free_body"), name, yaml);
}

const char* kBar =
    "mesh: {generate: {shape: box, size: [12, 1, 1], cells: [48, 2, 2]}}\n"
    "materials: [{model: stvk, young: 1000, poisson: 0.3, density: 1}]\n"
    "loads: {gravity: [0, 0, -1]}\n"
    "analysis: {type: static}\n";

/// The message check_static_support throws on every rank ("" when it accepts the job).
std::string refusal(const Job& j, const LocalMesh& mesh) {
  try {
    check_static_support(MPI_COMM_WORLD, j, mesh, build_supports(MPI_COMM_WORLD, j, mesh));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Components, ASlenderBarIsOnePartOverEveryRank) {
  const Job j = job("bar", kBar);
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, j);
  const MeshComponents parts = connected_components(MPI_COMM_WORLD, mesh);
  EXPECT_EQ(parts.count, 1);
  for (const int p : parts.of_vertex) EXPECT_EQ(p, 0);
}

TEST(Components, TwoBlocksAreTwoPartsByPosition) {
  const Job j = job("two_blocks", std::string("mesh: {file: ") + EDGEFEM_SOURCE_DIR +
                                      "/tests/data/two_blocks.msh}\n"
                                      "materials: [{model: stvk, young: 1000, poisson: 0.3, density: 1}]\n");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, j);
  const MeshComponents parts = connected_components(MPI_COMM_WORLD, mesh);
  EXPECT_EQ(parts.count, 2);
  for (LocalIndex v = 0; v < mesh.n_local(); ++v)  // block 1 in [0, 1], block 2 in [2, 3] (file order)
    EXPECT_EQ(parts.of_vertex[v], mesh.mesh.point(v)[0] < 1.5 ? 0 : 1);
}

TEST(FreeBody, FreeBarIsRefusedNamingIt) {
  const Job j = job("free", kBar);
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, j);
  const std::string message = refusal(j, mesh);
  EXPECT_NE(message.find("the body (the whole mesh: region 1; 441 vertices in [0, 12] x [0, 1] x [0, 1]) is held by "
                         "nothing"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("translate along x, y and z and rotate about any axis"), std::string::npos) << message;
}

TEST(FreeBody, FaceHeldInXOnlyLeavesItsRigidMotions) {
  const Job j = job("x_only", std::string(kBar) + "boundary: [{select: {region: 11}, fix: [x]}]\n");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, j);
  const std::string message = refusal(j, mesh);
  EXPECT_NE(message.find("is held in some directions only: it may still translate along y and z and rotate about the "
                         "axis along (1, 0, 0) through (6, 0.5, 0.5)"),
            std::string::npos)
      << message;
}

TEST(FreeBody, ClampedBarAndDynamicsAreAccepted) {
  const Job clamped = job("clamped", std::string(kBar) + "boundary: [{select: {region: 11}, fix: [x, y, z]}]\n");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, clamped);
  EXPECT_EQ(refusal(clamped, mesh), "");
  const Job moving = job("dynamic", std::string(kBar).replace(std::string(kBar).find("analysis: {type: static}"), 24,
                                                              "analysis: {type: dynamic, dt: 0.1, end_time: 1}"));
  EXPECT_EQ(refusal(moving, mesh), "");
}

/// A 1 x 1 x 1 block of 6 x 6 x 6 cubes under gravity, its corner (0, 0, 0) held in x and y and its corner (1, 0, 0)
/// in y: free to translate along z and turn about the x axis and about y through the origin; `obstacle` below it.
Job block_on(const std::string& name, const std::string& obstacle) {
  return job(name, "mesh: {generate: {shape: box, size: [1, 1, 1], cells: [6, 6, 6]}}\n"
                   "materials: [{model: stvk, young: 1000, poisson: 0.3, density: 1}]\n"
                   "loads: {gravity: [0, 0, -1]}\n"
                   "boundary:\n"
                   "  - {select: {point: [0, 0, 0]}, fix: [x, y]}\n"
                   "  - {select: {point: [1, 0, 0]}, fix: [y]}\n"
                   "obstacles: [" + obstacle + "]\n"
                   "contact: {distance: 1.0e-3}\n"
                   "analysis: {type: static}\n");
}

TEST(FreeBody, ABlockRestingOnAPlaneOrBoxIsHeldByIt) {
  const Job plane = block_on("on_plane", "{shape: plane, point: [0, 0, -5.0e-4], normal: [0, 0, 1]}");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, plane);
  EXPECT_EQ(refusal(plane, mesh), "");
  const Job box = block_on("on_box", "{shape: box, box: [[-1, -1, -1], [2, 2, -9.0e-4]]}");
  EXPECT_EQ(refusal(box, mesh), "");
  // Without the obstacle the same supports are refused (the rule holds the rest of the check).
  const Job none = job("no_obstacle", "mesh: {generate: {shape: box, size: [1, 1, 1], cells: [6, 6, 6]}}\n"
                                      "materials: [{model: stvk, young: 1000, poisson: 0.3, density: 1}]\n"
                                      "boundary:\n"
                                      "  - {select: {point: [0, 0, 0]}, fix: [x, y]}\n"
                                      "  - {select: {point: [1, 0, 0]}, fix: [y]}\n");
  const std::string message = refusal(none, mesh);
  EXPECT_NE(message.find("is held in some directions only: it may still translate along z and rotate"),
            std::string::npos)
      << message;
}

TEST(FreeBody, AFarObstacleDoesNotHoldIt) {
  const Job far = block_on("far_plane", "{shape: plane, point: [0, 0, -0.5], normal: [0, 0, 1]}");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, far);
  const std::string message = refusal(far, mesh);
  EXPECT_NE(message.find("a static analysis needs every part of the mesh held against rigid motion"), std::string::npos)
      << message;
  EXPECT_NE(message.find("the body (the whole mesh: region 1; 343 vertices in [0, 1] x [0, 1] x [0, 1]) is held in "
                         "some directions only: it may still translate along z and rotate"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the obstacles do not hold it either: none of its boundary vertices is within the contact "
                         "distance (0.001) of an obstacle at the start"),
            std::string::npos)
      << message;
  // Just beyond the reach (1.0e-3) is as far.
  const Job beyond = block_on("beyond", "{shape: plane, point: [0, 0, -1.01e-3], normal: [0, 0, 1]}");
  EXPECT_NE(refusal(beyond, mesh).find("none of its boundary vertices is within"), std::string::npos);
}

TEST(FreeBody, ALineContactLeavesItFreeToRoll) {
  // A cylinder along y under the middle of the bottom: the contact rows all act at x = 0.5, the block can turn about
  // the line of contact.
  const Job roll = block_on("on_cylinder", "{shape: cylinder, center: [0.5, 0.5, -0.5005], axis: [0, 1, 0], "
                                           "radius: 0.5, length: 3}");
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, roll);
  const std::string message = refusal(roll, mesh);
  EXPECT_NE(message.find("the obstacles do not hold it either: the normals of the obstacles at its boundary vertices "
                         "within the contact distance (0.001) at the start leave some of these motions free"),
            std::string::npos)
      << message;
}

}  // namespace test_free_body
}  // namespace edgefem
