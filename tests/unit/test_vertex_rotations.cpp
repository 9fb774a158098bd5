// SPDX-License-Identifier: BSD-3-Clause
// Each vertex's rotation from the reference to the current positions (mesh/vertex_rotations.hpp): exact for rigid
// motions and uniform scalings after them, the identity where no tet touches a vertex, and the polar factor of a
// general map's cross-covariance otherwise.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "mesh/vertex_rotations.hpp"

namespace edgefem {
namespace {

using Row3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;

/// A unit cube (vertices 0-7, bit k of the index = coordinate k) in Kuhn's six tets, and a ninth vertex no tet uses.
struct Cube {
  std::vector<double> coords;
  std::vector<LocalIndex> tets = {0, 1, 3, 7, 0, 1, 5, 7, 0, 2, 3, 7, 0, 2, 6, 7, 0, 4, 5, 7, 0, 4, 6, 7};
  Cube() {
    for (int v = 0; v < 8; ++v)
      for (int k = 0; k < 3; ++k) coords.push_back(static_cast<double>((v >> k) & 1));
    coords.insert(coords.end(), {3.0, 3.0, 3.0});
  }
};

Row3 rotation(double angle, Eigen::Vector3d axis) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

std::vector<double> mapped(const std::vector<double>& X, const Row3& A, const Eigen::Vector3d& t) {
  std::vector<double> x(X.size());
  for (std::size_t v = 0; v < X.size() / 3; ++v)
    Eigen::Map<Eigen::Vector3d>(x.data() + 3 * v) = A * Eigen::Map<const Eigen::Vector3d>(X.data() + 3 * v) + t;
  return x;
}

TEST(VertexRotations, RigidMotionAndUniformScalingGiveTheRotation) {
  const Cube cube;
  const Row3 R = rotation(0.7, {1.0, -2.0, 0.5});
  for (const double scale : {1.0, 1.3}) {
    const auto x = mapped(cube.coords, scale * R, {0.4, -1.0, 2.0});
    const auto rotations = vertex_rotations(cube.coords, x, cube.tets, 9);
    ASSERT_EQ(rotations.size(), 81u);
    for (int v = 0; v < 8; ++v)
      EXPECT_LT((Eigen::Map<const Row3>(rotations.data() + 9 * v) - R).cwiseAbs().maxCoeff(), 1e-14)
          << "vertex " << v << ", scale " << scale;
    EXPECT_LT((Eigen::Map<const Row3>(rotations.data() + 72) - Row3::Identity()).cwiseAbs().maxCoeff(), 1e-15)
        << "the vertex without tets";
  }
}

TEST(VertexRotations, GeneralMapGivesThePolarFactorOfTheCrossCovariance) {
  // x = A X with A = R U (U symmetric positive definite, not a multiple of I): vertex v's rotation is the polar
  // factor of A S_v, S_v = sum of its reference edge vectors' outer products. Checked against that closed form, and
  // it is a proper rotation. Only vertices below n_vertices get one; edges to the others still count.
  const Cube cube;
  const Row3 R = rotation(-1.1, {0.3, 0.2, 1.0});
  Row3 U;
  U << 1.2, 0.1, 0.0, 0.1, 0.9, 0.05, 0.0, 0.05, 1.1;
  const Row3 A = R * U;
  const auto x = mapped(cube.coords, A, {0.0, 0.0, 0.0});
  const auto rotations = vertex_rotations(cube.coords, x, cube.tets, 4);
  ASSERT_EQ(rotations.size(), 36u);
  for (int v = 0; v < 4; ++v) {
    Row3 S = Row3::Zero();
    for (std::size_t t = 0; t < cube.tets.size() / 4; ++t)
      for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) {
          const LocalIndex a = cube.tets[4 * t + i], b = cube.tets[4 * t + j];
          if (a != v && b != v) continue;
          const Eigen::Vector3d D = Eigen::Map<const Eigen::Vector3d>(&cube.coords[3 * a]) -
                                    Eigen::Map<const Eigen::Vector3d>(&cube.coords[3 * b]);
          S += D * D.transpose();
        }
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(A * S, Eigen::ComputeFullU | Eigen::ComputeFullV);
    const Row3 expected = svd.matrixU() * svd.matrixV().transpose();
    const Eigen::Map<const Row3> got(rotations.data() + 9 * v);
    EXPECT_LT((got - expected).cwiseAbs().maxCoeff(), 1e-13) << "vertex " << v;
    EXPECT_NEAR(got.determinant(), 1.0, 1e-13);
    EXPECT_LT((got * got.transpose() - Row3::Identity()).cwiseAbs().maxCoeff(), 1e-14);
    // Not the rotation of the whole map: the stretch U tilts each neighbourhood's fit differently.
    EXPECT_GT((got - R).cwiseAbs().maxCoeff(), 1e-3) << "vertex " << v;
  }
}

TEST(VertexRotations, InconsistentSizesAreRefused) {
  const Cube cube;
  std::vector<double> x = cube.coords;
  x.pop_back();
  EXPECT_THROW(vertex_rotations(cube.coords, x, cube.tets, 9), std::invalid_argument);
  EXPECT_THROW(vertex_rotations(cube.coords, cube.coords, cube.tets, 10), std::invalid_argument);
}

}  // namespace
}  // namespace edgefem
