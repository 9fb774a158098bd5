// SPDX-License-Identifier: BSD-3-Clause
// The analytic obstacles (contact/shapes.hpp): the signed distance's gradient (the normal) and Hessian against
// central differences in every region of every shape (faces, edges, corners, the rim, curved surfaces, inside),
// near-degenerate points swept (close to a surface, an edge or the axis); and the continuous collision check against
// a fine sampling of the signed distance along random segments.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "contact/ccd.hpp"
#include "contact/shapes.hpp"
#include "tests/support/contact_testing.hpp"

namespace edgefem::contact {
namespace {

using contact_testing::distance_of;
using contact_testing::fd_gradient;
using contact_testing::fd_jacobian;
using contact_testing::normal_of;
using contact_testing::relative_error;

/// The obstacles of these tests, each with points in each of its regions (expected feature id) at scale `gap`.
struct Case {
  std::string label;
  Vec3 point;
  int feature;
};

std::unique_ptr<Obstacle> make(const std::string& shape) {
  if (shape == "plane") return std::make_unique<PlaneObstacle>("p", 0.0, Vec3{0, 0, 1}, (1.0 / 3.0) * Vec3{1, 2, 2});
  if (shape == "box") return std::make_unique<BoxObstacle>("b", 0.0, Vec3{-1, -0.5, 0}, Vec3{1, 0.5, 0.25});
  if (shape == "sphere") return std::make_unique<SphereObstacle>("s", 0.0, Vec3{0.2, -0.1, 0.3}, 0.4);
  const Vec3 axis = (1.0 / 3.0) * Vec3{2, 1, -2};
  return std::make_unique<CylinderObstacle>("c", 0.0, Vec3{0.1, 0.2, 0.3}, axis, 0.3, 1.2);
}

std::vector<Case> cases(const std::string& shape, double gap) {
  if (shape == "plane") return {{"above", Vec3{0.2, -0.1, 1.0} + (gap / 3.0) * Vec3{1, 2, 2}, 1}};
  if (shape == "box")
    return {{"face", {0.3, 0.1, 0.25 + gap}, 1},
            {"edge", {0.2, 0.5 + gap, 0.25 + 0.7 * gap}, 2},
            {"corner", {1 + 0.3 * gap, -0.5 - gap, -0.6 * gap}, 3},
            {"inside", {0.3, 0.1, 0.25 - gap}, 0}};
  if (shape == "sphere") return {{"outside", Vec3{0.2, -0.1, 0.3} + (0.4 + gap) * (1.0 / 3.0) * Vec3{1, -2, 2}, 1}};
  // Cylinder: frame a = axis, e1, e2 orthonormal to it.
  const Vec3 c{0.1, 0.2, 0.3}, a = (1.0 / 3.0) * Vec3{2, 1, -2};
  const Vec3 e1 = any_orthogonal(a), e2 = cross(a, e1);
  const Vec3 radial = (1.0 / std::sqrt(2.0)) * (e1 - e2);
  return {{"lateral", c + 0.2 * a + (0.3 + gap) * radial, 1},
          {"cap", c + (0.6 + gap) * a + 0.1 * radial, 2},
          {"rim", c - (0.6 + 0.5 * gap) * a + (0.3 + gap) * radial, 3},
          {"inside lateral", c + 0.1 * a + (0.3 - gap) * radial, 0},
          {"inside cap", c + (0.6 - gap) * a + 0.05 * radial, 0}};
}

struct ShapeGap {
  std::string shape;
  double gap;
};

class ShapeDerivatives : public ::testing::TestWithParam<ShapeGap> {};

TEST_P(ShapeDerivatives, NormalAndHessianMatchCentralDifferences) {
  const auto obstacle = make(GetParam().shape);
  obstacle->place({0.05, -0.02, 0.01});  // a moved obstacle: the queries see it there
  for (const Case& c : cases(GetParam().shape, GetParam().gap)) {
    const Vec3 x = c.point + obstacle->offset();
    Proximity p;
    ASSERT_TRUE(obstacle->proximity(x, 1e300, true, p)) << c.label;
    EXPECT_EQ(p.feature, c.feature) << c.label;
    const double h = 1e-4 * GetParam().gap;
    EXPECT_LT(relative_error(p.normal, fd_gradient(distance_of(*obstacle), x, h), 1e-300), 1e-6) << c.label;
    EXPECT_NEAR(norm(p.normal), 1.0, 1e-12) << c.label;
    EXPECT_LT(relative_error(p.hessian, fd_jacobian(normal_of(*obstacle), x, h), 1.0), 1e-5) << c.label;
    // The closest point is on the surface, at |d| from x along the normal.
    const Vec3 back = x - p.distance * p.normal;
    EXPECT_LT(norm(back - p.point), 1e-12) << c.label;
    EXPECT_NEAR(obstacle->signed_distance(p.point), 0.0, 1e-12) << c.label;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ShapeDerivatives,
    ::testing::Values(ShapeGap{"plane", 0.1}, ShapeGap{"plane", 1e-5}, ShapeGap{"box", 0.05}, ShapeGap{"box", 1e-5},
                      ShapeGap{"sphere", 0.2}, ShapeGap{"sphere", 1e-5}, ShapeGap{"cylinder", 0.05},
                      ShapeGap{"cylinder", 1e-5}),
    [](const auto& info) {
      return info.param.shape + (info.param.gap < 1e-3 ? "_near" : "_far");
    });

TEST(Shapes, ProximityHonoursTheDistanceBound) {
  for (const std::string shape : {"plane", "box", "sphere", "cylinder"}) {
    const auto obstacle = make(shape);
    for (const Case& c : cases(shape, 0.05)) {
      Proximity p;
      const double d = obstacle->signed_distance(c.point);
      EXPECT_EQ(obstacle->proximity(c.point, d + 1e-9, false, p), true) << shape << " " << c.label;
      if (d > 0.0) {
        EXPECT_EQ(obstacle->proximity(c.point, d - 1e-9, false, p), false) << shape << " " << c.label;
      }
    }
  }
}

TEST(Shapes, TimeOfImpactIsTheFirstZeroOfTheDistance) {
  // Random segments from outside points: the first sign change of the sampled distance (to the sampling's
  // resolution) agrees with the exact first contact; segments that stay outside report none.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (const std::string shape : {"plane", "box", "sphere", "cylinder"}) {
    const auto obstacle = make(shape);
    int hits = 0, misses = 0;
    for (int trial = 0; trial < 400; ++trial) {
      const Vec3 x0{u(rng), u(rng), u(rng)}, x1{u(rng), u(rng), u(rng)};
      if (obstacle->signed_distance(x0) <= 0.0) continue;
      const double toi = obstacle->time_of_impact(x0, x1);
      constexpr int n = 4000;
      double first = kNoImpact;
      for (int k = 1; k <= n; ++k) {
        const double t = static_cast<double>(k) / n;
        if (obstacle->signed_distance(x0 + t * (x1 - x0)) <= 0.0) {
          first = t;
          break;
        }
      }
      if (first == kNoImpact) {
        // (a graze between two samples may be missed by the sampling, never reported past the end)
        if (toi != kNoImpact) {
          EXPECT_LE(obstacle->signed_distance(x0 + toi * (x1 - x0)), 1e-9) << shape;
        }
        ++misses;
        continue;
      }
      ++hits;
      ASSERT_NE(toi, kNoImpact) << shape << " trial " << trial;
      EXPECT_LE(toi, first + 1e-12) << shape;
      EXPECT_GE(toi, first - 1.0 / n - 1e-12) << shape;
      EXPECT_NEAR(obstacle->signed_distance(x0 + toi * (x1 - x0)), 0.0, 1e-9) << shape;
    }
    EXPECT_GT(hits, 20) << shape;
    EXPECT_GT(misses, 20) << shape;
  }
}

TEST(Shapes, TimeOfImpactOfAMovingObstacleIsTheRelativeMotions) {
  // A vertex at rest 0.1 above a plane that rises by 0.25: the relative segment x -> x - move first touches at 0.4.
  PlaneObstacle floor("floor", 0.0, {0, 0, 0}, {0, 0, 1});
  const Vec3 x{0.3, 0.2, 0.1}, move{0.05, 0.0, 0.25};
  EXPECT_NEAR(floor.time_of_impact(x, x - move), 0.4, 1e-15);
  EXPECT_EQ(floor.time_of_impact(x, x + move), kNoImpact);
  EXPECT_EQ(floor.time_of_impact({0, 0, -0.1}, {0, 0, 1}), 0.0);  // a start inside: 0
}

TEST(Ccd, IntervalsOfTheLine) {
  EXPECT_TRUE(quadratic_inside(1.0, 0.0, 1.0).empty());
  const Interval i = quadratic_inside(1.0, -3.5, 3.0);  // (t - 1.5)(t - 2) <= 0
  EXPECT_NEAR(i.lo, 1.5, 1e-15);
  EXPECT_NEAR(i.hi, 2.0, 1e-15);
  EXPECT_EQ(first_contact(i), kNoImpact);
  const Interval s = slab(2.0, -4.0, 1.0);  // |2 - 4 t| <= 1: [0.25, 0.75]
  EXPECT_NEAR(first_contact(s), 0.25, 1e-15);
  EXPECT_TRUE(half_line(1.0, 0.0).empty());
}

}  // namespace
}  // namespace edgefem::contact
