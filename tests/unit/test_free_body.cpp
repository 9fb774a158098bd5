// SPDX-License-Identifier: BSD-3-Clause
// The rigid motions a static problem's conditions leave free (solver/free_body.hpp, issue 50): the held components
// of a 4 x 1 x 1 box's grid vertices reduced to per-direction moments, and the null space of their rows. Exact for
// the common supports: a clamped face, pinned points, rollers, a face held in one direction; and the union-find the
// mesh's parts are found with (partition/components.hpp).
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <vector>

#include "partition/components.hpp"
#include "solver/free_body.hpp"

namespace edgefem {
namespace {

using Point = std::array<double, 3>;

/// The vertices of a 9 x 3 x 3 grid over [0, 4] x [0, 1] x [0, 1].
std::vector<Point> grid() {
  std::vector<Point> points;
  for (int k = 0; k <= 2; ++k)
    for (int j = 0; j <= 2; ++j)
      for (int i = 0; i <= 8; ++i) points.push_back({0.5 * i, 0.5 * j, 0.5 * k});
  return points;
}

/// The moments of the grid's vertices for which hold(point, direction) is true (centre (2, 0.5, 0.5), diagonal
/// sqrt(18)).
HeldMoments held(const std::function<bool(const Point&, int)>& hold) {
  const Point c{2, 0.5, 0.5};
  const double size = std::sqrt(18.0);
  HeldMoments m;
  for (const Point& p : grid())
    for (int d = 0; d < 3; ++d)
      if (hold(p, d)) m.add(d, {(p[0] - c[0]) / size, (p[1] - c[1]) / size, (p[2] - c[2]) / size});
  return m;
}

int translations(const std::vector<FreeMotion>& free) {
  int n = 0;
  for (const FreeMotion& f : free) n += f.rotation ? 0 : 1;
  return n;
}

bool at(const Point& p, double x, double y, double z) { return p[0] == x && p[1] == y && p[2] == z; }

TEST(FreeBody, NothingHeldLeavesEveryRigidMotion) {
  const auto free = free_rigid_motions(held([](const Point&, int) { return false; }));
  EXPECT_EQ(free.size(), 6U);
  EXPECT_EQ(translations(free), 3);
}

TEST(FreeBody, ClampedFaceHoldsEverything) {
  EXPECT_TRUE(free_rigid_motions(held([](const Point& p, int) { return p[0] == 0; })).empty());
}

TEST(FreeBody, FaceHeldInXOnlySlidesInYZAndTurnsAboutX) {
  const auto free = free_rigid_motions(held([](const Point& p, int d) { return p[0] == 0 && d == 0; }));
  ASSERT_EQ(free.size(), 3U);
  EXPECT_EQ(translations(free), 2);
  for (const FreeMotion& f : free) {
    if (!f.rotation) continue;
    EXPECT_NEAR(f.direction[0], 1.0, 1e-12);  // about x, through the face's centre line
    EXPECT_NEAR(f.point[1], 0.0, 1e-12);
    EXPECT_NEAR(f.point[2], 0.0, 1e-12);
  }
}

TEST(FreeBody, OnePinnedPointLeavesThreeRotations) {
  const auto free = free_rigid_motions(held([](const Point& p, int) { return at(p, 0, 0, 0); }));
  EXPECT_EQ(free.size(), 3U);
  EXPECT_EQ(translations(free), 0);
}

TEST(FreeBody, TwoPinnedPointsLeaveTheRotationAboutTheirLine) {
  const auto free =
      free_rigid_motions(held([](const Point& p, int) { return at(p, 0, 0, 0) || at(p, 4, 1, 1); }));
  ASSERT_EQ(free.size(), 1U);
  EXPECT_TRUE(free[0].rotation);
  EXPECT_NEAR(free[0].direction[0], 4 / std::sqrt(18.0), 1e-9);
}

TEST(FreeBody, ThreePinnedPointsOffALineHoldEverything) {
  EXPECT_TRUE(free_rigid_motions(held([](const Point& p, int) {
                return at(p, 0, 0, 0) || at(p, 4, 0, 0) || at(p, 0, 1, 0);
              })).empty());
}

TEST(FreeBody, PinnedEdgeLeavesTheRotationAboutIt) {
  const auto free = free_rigid_motions(held([](const Point& p, int) { return p[1] == 0 && p[2] == 0; }));
  ASSERT_EQ(free.size(), 1U);
  EXPECT_NEAR(free[0].direction[0], 1.0, 1e-12);
}

TEST(FreeBody, RollerOnTheBottomWithOnePointStillTurnsAboutZ) {
  // z on the bottom face and x, y at the corner (0, 0, 0): the box turns about the vertical through that corner.
  const auto free = free_rigid_motions(held([](const Point& p, int d) {
    return (p[2] == 0 && d == 2) || (at(p, 0, 0, 0) && d < 2);
  }));
  ASSERT_EQ(free.size(), 1U);
  EXPECT_TRUE(free[0].rotation);
  EXPECT_NEAR(free[0].direction[2], 1.0, 1e-12);
}

TEST(FreeBody, RollersWithASecondPointHoldEverything) {
  // ... and y at the corner (4, 0, 0) stops that turn.
  EXPECT_TRUE(free_rigid_motions(held([](const Point& p, int d) {
                return (p[2] == 0 && d == 2) || (at(p, 0, 0, 0) && d < 2) || (at(p, 4, 0, 0) && d == 1);
              })).empty());
}

TEST(FreeBody, SymmetryPlanesHoldEverything) {
  // x on x = 0, y on y = 0, z on z = 0 (a quarter model's symmetry conditions).
  EXPECT_TRUE(free_rigid_motions(held([](const Point& p, int d) { return p[d] == 0; })).empty());
}

TEST(FreeBody, SolvesStaticProblem) {
  Job job;
  EXPECT_TRUE(solves_static_problem(job));
  job.analysis_type = AnalysisType::dynamics;
  job.dynamic = DynamicSpec{};
  EXPECT_FALSE(solves_static_problem(job));
  job.dynamic->initial_state = InitialState::static_equilibrium;
  EXPECT_TRUE(solves_static_problem(job));
}

TEST(UnionFind, LabelsSetsInOrderOfTheirSmallestElement) {
  UnionFind uf(6);
  uf.unite(4, 1);
  uf.unite(5, 3);
  uf.unite(3, 4);
  std::vector<std::int64_t> labels;
  EXPECT_EQ(uf.label(labels), 3);
  EXPECT_EQ(labels, (std::vector<std::int64_t>{0, 1, 2, 1, 1, 1}));
}

}  // namespace
}  // namespace edgefem
