// SPDX-License-Identifier: BSD-3-Clause
// The per-rank contact potential (contact/contact_potential.hpp): its gradient and Hessian blocks against central
// differences of its energy (barrier and penalty, with lagged friction), and the step limits of the line search
// and of the predictions: no limited move ends inside or at an obstacle, a move that would stop just short of one
// keeps a part of its gap, and a move along a surface is not cut.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/shapes.hpp"
#include "tests/support/contact_testing.hpp"

namespace edgefem::contact {
namespace {

using contact_testing::relative_error;

std::vector<std::unique_ptr<Obstacle>> floor_and_ball(double mu) {
  std::vector<std::unique_ptr<Obstacle>> o;
  o.push_back(std::make_unique<PlaneObstacle>("floor", mu, Vec3{0, 0, 0}, Vec3{0, 0, 1}));
  o.push_back(std::make_unique<SphereObstacle>("ball", 0.0, Vec3{3, 0, 1}, 0.5));
  return o;
}

/// Three vertices: two above the floor within the activation distance, one near the ball.
std::vector<double> positions() { return {0.1, 0.2, 0.004, 1.0, -0.3, 0.0025, 3.0, 0.0, 1.507}; }

class PotentialDerivatives : public ::testing::TestWithParam<ContactMethod> {};

TEST_P(PotentialDerivatives, GradientAndBlocksMatchCentralDifferences) {
  const auto obstacles = floor_and_ball(0.4);
  ContactPotential p(obstacles, {0, 1, 2});
  p.set_method(GetParam());
  p.set_activation_distance(0.01);
  p.set_stiffness(GetParam() == ContactMethod::barrier ? 50.0 : 1e4);
  p.set_slip(1e-3);
  std::vector<double> x = positions();
  if (GetParam() == ContactMethod::penalty) x[2] = -0.004, x[5] = -0.0025, x[8] = 1.493;  // penetrating
  const std::vector<double> start = x;
  p.lag_friction(start, std::vector<double>(6, 0.0));
  ASSERT_EQ(p.n_lagged(), 2u);  // the floor's two contacts (the ball is frictionless)
  // Slip the vertices by more and by less than the friction's slip (both branches of the mollifier).
  x[0] += 4e-3, x[1] -= 1e-3, x[3] += 3e-4;
  std::vector<double> g(x.size(), 0.0);
  std::vector<VertexBlock> blocks;
  const double e = p.evaluate(x, g, &blocks);
  ASSERT_TRUE(std::isfinite(e));
  ASSERT_EQ(blocks.size(), 3u);
  const double h = 1e-7;
  for (std::size_t v = 0; v < 3; ++v) {
    Vec3 fd{};
    Mat3 fd_hessian{};
    for (int k = 0; k < 3; ++k) {
      std::vector<double> xp = x, xm = x, gp(x.size(), 0.0), gm(x.size(), 0.0);
      xp[3 * v + k] += h, xm[3 * v + k] -= h;
      fd[k] = (p.evaluate(xp, {}, nullptr) - p.evaluate(xm, {}, nullptr)) / (2 * h);
      p.evaluate(xp, gp, nullptr);
      p.evaluate(xm, gm, nullptr);
      for (int i = 0; i < 3; ++i) fd_hessian[3 * i + k] = (gp[3 * v + i] - gm[3 * v + i]) / (2 * h);
    }
    const Vec3 analytic{g[3 * v], g[3 * v + 1], g[3 * v + 2]};
    EXPECT_LT(relative_error(analytic, fd, 1e-8), 1e-5) << "vertex " << v;
    // The floor's blocks are exact (flat: b'' n n^T, PSD as it is); the ball's is projected to PSD, which drops
    // its negative curvature term: compare only the normal-normal entry there.
    const Mat3& block = blocks[v].values;
    if (v < 2) {
      EXPECT_LT(relative_error(block, fd_hessian, 1e-6), 1e-4) << "vertex " << v;
    } else {
      EXPECT_NEAR(block[8], fd_hessian[8], 1e-4 * std::abs(fd_hessian[8]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, PotentialDerivatives,
                         ::testing::Values(ContactMethod::barrier, ContactMethod::penalty));

TEST(StepLimit, AMoveThatWouldEndAtTheSurfaceKeepsPartOfItsGap) {
  const auto obstacles = floor_and_ball(0.0);
  ContactPotential p(obstacles, {0});
  const double f = 0.8;
  // Straight down onto the floor, ending exactly on it (the case of a free fall of a whole number of steps).
  const double t = p.segment_limit({0, 0, 0.1}, {0, 0, 0.0}, f);
  EXPECT_NEAR(t, 0.8, 1e-12);  // ends at (1 - f) of the gap
  // Through the floor: f of the way to the first contact.
  EXPECT_NEAR(p.segment_limit({0, 0, 0.1}, {0, 0, -0.1}, f), 0.4, 1e-12);
  // Along the floor (the gap kept): not cut.
  EXPECT_EQ(p.segment_limit({0, 0, 1e-4}, {5, 0, 1e-4}, f), 1.0);
  // Away from it: not cut.
  EXPECT_EQ(p.segment_limit({0, 0, 1e-4}, {0, 0, 1.0}, f), 1.0);
  // Onto the ball's top from above, ending 1e-15 from its surface.
  const double s = p.segment_limit({3, 0, 2.0}, {3, 0, 1.5 + 1e-15}, f);
  EXPECT_GT(s, 0.5);
  EXPECT_LE(s, 0.8 + 1e-12);
}

TEST(StepLimit, NoLimitedMoveEndsInsideOrAtAnObstacle) {
  const auto obstacles = floor_and_ball(0.0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int n = 400;
  std::vector<std::int32_t> ids(n);
  std::vector<double> from(3 * n), to(3 * n), y(3 * n);
  for (int v = 0; v < n; ++v) {
    ids[v] = v;
    // Starts above the floor and outside the ball, anywhere in [-1, 4] x [-1, 1] x (0, 2]; ends anywhere.
    Vec3 a{};
    do a = {1.5 + 2.5 * u(rng), u(rng), 1.0 + u(rng)};
    while (!(obstacles[0]->signed_distance(a) > 1e-6 && obstacles[1]->signed_distance(a) > 1e-6));
    const Vec3 b{a[0] + u(rng), a[1] + u(rng), a[2] + 2.0 * u(rng)};
    for (int k = 0; k < 3; ++k) from[3 * v + k] = a[k], to[3 * v + k] = b[k], y[3 * v + k] = a[k] - b[k];
  }
  ContactPotential p(obstacles, ids);
  const double limit = p.step_limit(from, y, 0.8);
  EXPECT_GT(limit, 0.0);
  std::vector<double> limited = to;
  const long long cut = p.limit_motion(from, limited, 0.8);
  EXPECT_GT(cut, 50);  // many of the random moves cross or reach an obstacle
  for (int v = 0; v < n; ++v) {
    const Vec3 a = load3(&from[3 * v]), b = load3(&limited[3 * v]);
    const Vec3 c = a + limit * (load3(&to[3 * v]) - a);  // the whole step scaled by the common limit
    for (const auto& o : obstacles) {
      const double d0 = o->signed_distance(a);
      EXPECT_GT(o->signed_distance(b), 0.0) << "vertex " << v;
      EXPECT_GE(o->signed_distance(b), 0.1 * (1.0 - 0.8) * d0 - 1e-15) << "vertex " << v;
      EXPECT_GT(o->signed_distance(c), 0.0) << "vertex " << v;
    }
  }
}

}  // namespace
}  // namespace edgefem::contact
