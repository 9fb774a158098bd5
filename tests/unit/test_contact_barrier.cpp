// SPDX-License-Identifier: BSD-3-Clause
// The contact kernels' derivatives by central differences (relative tolerance), swept over near-degenerate inputs:
// IPC's barrier b(d) near 0 and near the activation distance, the friction mollifier and lagged friction below and
// above the slip and at zero slip, and the normal term of a vertex (barrier and penalty) with its PSD projection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "contact/barrier.hpp"
#include "contact/friction.hpp"
#include "contact/shapes.hpp"
#include "contact/vertex_contact.hpp"
#include "tests/support/contact_testing.hpp"

namespace edgefem::contact {
namespace {

using contact_testing::fd_gradient;
using contact_testing::fd_jacobian;
using contact_testing::relative_error;

class BarrierDerivatives : public ::testing::TestWithParam<double> {};

TEST_P(BarrierDerivatives, MatchCentralDifferences) {
  // d / dh from 1e-6 (a vertex almost touching) to 0.999 (at the activation distance); dh from 1e-4 to 10.
  for (const double dh : {1e-4, 1e-3, 1.0, 10.0}) {
    const double d = GetParam() * dh, h = 1e-6 * d;
    const double fd1 = (barrier(d + h, dh) - barrier(d - h, dh)) / (2 * h);
    const double fd2 = (barrier_first_derivative(d + h, dh) - barrier_first_derivative(d - h, dh)) / (2 * h);
    EXPECT_NEAR(barrier_first_derivative(d, dh), fd1, 1e-6 * std::abs(fd1) + 1e-12 * dh) << "d/dh " << GetParam();
    EXPECT_NEAR(barrier_second_derivative(d, dh), fd2, 1e-6 * std::abs(fd2) + 1e-12) << "d/dh " << GetParam();
    EXPECT_LT(barrier_first_derivative(d, dh), 0.0);
    EXPECT_GT(barrier_second_derivative(d, dh), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Gaps, BarrierDerivatives, ::testing::Values(1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.999));

TEST(Barrier, IsTwiceContinuousAtTheActivationDistanceAndInfiniteAtContact) {
  const double dh = 0.01;
  for (const double d : {dh, 1.5 * dh, 100.0}) {
    EXPECT_EQ(barrier(d, dh), 0.0);
    EXPECT_EQ(barrier_first_derivative(d, dh), 0.0);
    EXPECT_EQ(barrier_second_derivative(d, dh), 0.0);
  }
  const double below = dh * (1 - 1e-7);
  EXPECT_LT(barrier(below, dh), 1e-15 * dh * dh);
  EXPECT_LT(std::abs(barrier_first_derivative(below, dh)), 1e-9 * dh);
  EXPECT_LT(barrier_second_derivative(below, dh), 1e-5);
  EXPECT_TRUE(std::isinf(barrier(0.0, dh)));
  EXPECT_TRUE(std::isinf(barrier(-1e-3, dh)));
  EXPECT_GT(barrier(1e-12, dh), barrier(1e-6, dh));
}

class FrictionDerivatives : public ::testing::TestWithParam<double> {};

TEST_P(FrictionDerivatives, MatchCentralDifferencesAndArePositiveSemidefinite) {
  // The slip y / eps swept across the mollifier's knee (1), near 0 and far above it; a rotated tangent plane and a
  // moving obstacle.
  const double eps = 1e-3, ratio = GetParam();
  FrictionLag lag;
  const Vec3 n = (1.0 / std::sqrt(14.0)) * Vec3{1, -2, 3};
  lag.t1 = any_orthogonal(n);
  lag.t2 = cross(n, lag.t1);
  lag.force = 2.5;
  lag.start = {0.3, -0.1, 0.7};
  lag.obstacle_move = {1e-4, 2e-4, -3e-4};
  const Vec3 slip_direction = (1.0 / std::sqrt(2.0)) * (lag.t1 + lag.t2);
  const Vec3 x = lag.start + lag.obstacle_move + (ratio * eps) * slip_direction + 0.37 * eps * n;
  auto energy = [&](const Vec3& p) { return friction_terms(lag, p, eps, nullptr, nullptr); };
  auto gradient = [&](const Vec3& p) {
    Vec3 g{};
    friction_terms(lag, p, eps, &g, nullptr);
    return g;
  };
  Vec3 g{};
  Mat3 H{};
  friction_terms(lag, x, eps, &g, &H);
  const double h = 1e-4 * eps * std::max(ratio, 1e-2);
  EXPECT_LT(relative_error(g, fd_gradient(energy, x, h), lag.force), 1e-6) << "slip/eps " << ratio;
  if (std::abs(ratio - 1.0) > 1e-3) {  // the Hessian jumps at the knee (f1 is only C1 there)
    EXPECT_LT(relative_error(H, fd_jacobian(gradient, x, h), lag.force / eps), 1e-5) << "slip/eps " << ratio;
  }
  EXPECT_GE(contact_testing::min_rayleigh(H), -1e-12 * lag.force / eps);
  // Below the slip a spring, above it Coulomb's force mu lambda.
  if (ratio > 1.0) {
    EXPECT_NEAR(norm(g), lag.force, 1e-12 * lag.force);
  } else {
    EXPECT_LT(norm(g), lag.force);
  }
}

INSTANTIATE_TEST_SUITE_P(Slips, FrictionDerivatives,
                         ::testing::Values(0.0, 1e-6, 1e-3, 0.2, 0.7, 0.999, 1.001, 3.0, 1e3));

TEST(Friction, MollifierIsContinuousAtTheSlip) {
  const double eps = 0.01;
  EXPECT_NEAR(friction_f0(eps * (1 - 1e-12), eps), friction_f0(eps, eps), 1e-14);
  EXPECT_NEAR(friction_f1(eps * (1 - 1e-12), eps), 1.0, 1e-10);
  EXPECT_EQ(friction_f1(0.0, eps), 0.0);
  EXPECT_EQ(friction_f1_over_y(0.0, eps), 2.0 / eps);
}

class NormalTermDerivatives : public ::testing::TestWithParam<double> {};

TEST_P(NormalTermDerivatives, BarrierAndPenaltyMatchCentralDifferences) {
  // A ball (curved: the exact Hessian has the tangential term s'(d) H, which the projection drops) at gaps from
  // 1e-5 dh to 0.99 dh (barrier) and at depths (penalty).
  const SphereObstacle ball("ball", 0.0, {0.1, 0.2, -0.3}, 0.5);
  const double dh = 1e-2, kappa = 3.7;
  const Vec3 dir = (1.0 / std::sqrt(3.0)) * Vec3{1, 1, 1};
  for (const ContactMethod method : {ContactMethod::barrier, ContactMethod::penalty}) {
    const double gap = method == ContactMethod::barrier ? GetParam() * dh : -GetParam() * 0.1;
    const Vec3 x = Vec3{0.1, 0.2, -0.3} + (0.5 + gap) * dir;
    auto term = [&](const Vec3& p) {
      Proximity prox;
      ball.proximity(p, 1e300, true, prox);
      return normal_term(method, prox, dh, kappa, false);
    };
    const NormalTerm t = term(x);
    // The step: 1e-3 of the gap or of what is left to the activation distance (the scales of b's derivatives); the
    // distance itself carries the round-off of |x - c| (~1e-17), which limits the nearest gaps to ~1e-6.
    const double h = 1e-3 * (method == ContactMethod::barrier ? std::min(gap, dh - gap) : std::abs(gap));
    EXPECT_LT(relative_error(t.gradient, fd_gradient([&](const Vec3& p) { return term(p).energy; }, x, h), 1e-300),
              1e-5);
    EXPECT_LT(relative_error(t.hessian, fd_jacobian([&](const Vec3& p) { return term(p).gradient; }, x, h), 1e-300),
              1e-4);
    Proximity prox;
    ball.proximity(x, 1e300, true, prox);
    const NormalTerm projected = normal_term(method, prox, dh, kappa, true);
    double scale = 0.0;
    for (const double v : t.hessian) scale = std::max(scale, std::abs(v));
    EXPECT_GE(contact_testing::min_rayleigh(projected.hessian), -1e-12 * scale);
    // The projection keeps the normal stiffness s''(d) exactly.
    EXPECT_NEAR(dot(prox.normal, multiply(projected.hessian, prox.normal)), dot(prox.normal, multiply(t.hessian, prox.normal)),
                1e-10 * std::abs(dot(prox.normal, multiply(t.hessian, prox.normal))));
  }
}

INSTANTIATE_TEST_SUITE_P(Gaps, NormalTermDerivatives, ::testing::Values(1e-5, 1e-3, 0.1, 0.5, 0.99));

TEST(NormalTerm, ProjectsToPositiveSemidefinite) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 200; ++i) {
    Mat3 m{};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c <= r; ++c) m[3 * r + c] = m[3 * c + r] = u(rng);
    const Mat3 p = project_psd(m);
    EXPECT_GE(contact_testing::min_rayleigh(p), -1e-14);
    const Mat3 pp = project_psd(p);  // idempotent
    EXPECT_LT(contact_testing::relative_error(pp, p, 1e-12), 1e-12);
  }
}

}  // namespace
}  // namespace edgefem::contact
