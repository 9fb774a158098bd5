// SPDX-License-Identifier: BSD-3-Clause
// Self-contact kernels (issue 53; contact/self_*.hpp): the distance types against brute force, every type's
// barrier gradient and Hessian (with and without the edge-edge mollifier) against central differences, the PSD
// projection, additive CCD's guarantee (no contact along the accepted part of a move, a tenth of the gap kept),
// the exact triangle-triangle intersection test, and the surface potential: its gradient and diagonal blocks
// against differences, and the split of the pairs between owners summing to the serial terms.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "contact/self_broad_phase.hpp"
#include "contact/self_ccd.hpp"
#include "contact/self_distance.hpp"
#include "contact/self_friction.hpp"
#include "contact/self_intersection.hpp"
#include "contact/self_potential.hpp"
#include "contact/triangle_distance.hpp"
#include "core/radix_sort.hpp"

namespace edgefem::contact {
namespace {

std::array<Vec3, 4> random_pair(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::array<Vec3, 4> x;
  for (auto& p : x) p = {u(rng), u(rng), u(rng)};
  return x;
}

/// The smallest distance between points of the segments, by sampling both densely (an upper bound within h).
double sampled_segments(const std::array<Vec3, 4>& x, int n) {
  double best = 1e300;
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) {
      const double s = double(i) / n, t = double(j) / n;
      best = std::min(best, norm((x[0] + s * (x[1] - x[0])) - (x[2] + t * (x[3] - x[2]))));
    }
  return best;
}

TEST(SelfDistance, PointTriangleEqualsTheClosestPointOnTheTriangle) {
  std::mt19937 rng(1);
  for (int k = 0; k < 2000; ++k) {
    const auto x = random_pair(rng);
    const TriangleClosest c = closest_on_triangle(x[0], x[1], x[2], x[3]);
    EXPECT_NEAR(point_triangle_squared_distance(x), c.squared_distance, 1e-12 * (1 + c.squared_distance));
  }
}

TEST(SelfDistance, EdgeEdgeIsTheSegmentsDistance) {
  std::mt19937 rng(2);
  for (int k = 0; k < 300; ++k) {
    auto x = random_pair(rng);
    if (k % 10 == 0) x[3] = x[2] + 0.7 * (x[1] - x[0]);  // parallel edges
    const double d = std::sqrt(edge_edge_squared_distance(x));
    const double sampled = sampled_segments(x, 400);
    EXPECT_LE(d, sampled + 1e-12);
    EXPECT_GE(d, sampled - 2.0 * 2.0 * std::sqrt(3.0) / 400);  // within the samples' spacing
  }
}

/// Central differences of the pair's energy (gradient) and gradient (Hessian), unprojected, at configurations whose
/// type is the same at every perturbed point.
void check_derivatives(bool edge_edge, double ex_scale, std::set<int>& types_seen) {
  std::mt19937 rng(edge_edge ? 3 : 4);
  const double dh = 1.0, kappa = 2.5, h = 1e-6;
  int checked = 0;
  for (int k = 0; k < 4000 && checked < 300; ++k) {
    auto x = random_pair(rng);
    if (edge_edge && k % 3 == 0) {  // nearly parallel edges: the mollifier's range
      std::uniform_real_distribution<double> u(-0.05, 0.05);
      x[3] = x[2] + 0.8 * (x[1] - x[0]) + Vec3{u(rng), u(rng), u(rng)};
    }
    const auto type = [&](const std::array<Vec3, 4>& y) {
      return static_cast<int>(edge_edge ? edge_edge_type(y[0], y[1], y[2], y[3]) : point_triangle_type(y[0], y[1], y[2], y[3]));
    };
    const double ex = edge_edge ? ex_scale * norm(cross(x[1] - x[0], x[3] - x[2])) * norm(cross(x[1] - x[0], x[3] - x[2])) + 1e-30 : 0;
    const auto terms = [&](const std::array<Vec3, 4>& y) {
      return edge_edge ? edge_edge_terms(y, dh, kappa, ex, true, false) : point_triangle_terms(y, dh, kappa, true, false);
    };
    const PairTerms t = terms(x);
    if (!(t.distance > 0.05 && t.distance < 0.9 * dh)) continue;
    bool stable = true;
    for (int i = 0; i < 12 && stable; ++i)
      for (const double s : {-2 * h, 2 * h}) {
        auto y = x;
        y[i / 3][i % 3] += s;
        stable = stable && type(y) == type(x);
      }
    if (!stable) continue;
    types_seen.insert(type(x));
    ++checked;
    double scale = 0;
    for (double g : t.gradient) scale = std::max(scale, std::abs(g));
    double hscale = 0;
    for (double v : t.hessian) hscale = std::max(hscale, std::abs(v));
    for (int i = 0; i < 12; ++i) {
      auto p = x, m = x;
      p[i / 3][i % 3] += h, m[i / 3][i % 3] -= h;
      const PairTerms tp = terms(p), tm = terms(m);
      EXPECT_NEAR(t.gradient[i], (tp.energy - tm.energy) / (2 * h), 1e-6 * (1 + scale)) << "type " << type(x);
      for (int j = 0; j < 12; ++j)
        EXPECT_NEAR(t.hessian[12 * i + j], (tp.gradient[j] - tm.gradient[j]) / (2 * h), 1e-5 * (1 + hscale))
            << "type " << type(x) << " entry " << i << "," << j;
    }
  }
  EXPECT_GE(checked, 100);
}

TEST(SelfDistance, PointTriangleBarrierDerivativesMatchCentralDifferences) {
  std::set<int> seen;
  check_derivatives(false, 0.0, seen);
  EXPECT_EQ(seen.size(), 7u);  // pp0..pp2, pe0..pe2, pt
}

TEST(SelfDistance, EdgeEdgeBarrierDerivativesMatchCentralDifferences) {
  std::set<int> seen, mollified;
  check_derivatives(true, 1e-12, seen);  // mollifier off (x >= ex)
  check_derivatives(true, 4.0, mollified);  // mollifier on: x = ex / 4
  EXPECT_EQ(seen.size(), 9u);  // the four endpoint pairs, four endpoint-edge types, ee
  EXPECT_GE(mollified.size(), 5u);
}

TEST(SelfDistance, ProjectedHessianIsPositiveSemiDefiniteAndKeepsPsdMatrices) {
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0, 1);
  std::array<double, 144> a{}, b{};
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j <= i; ++j) a[12 * i + j] = a[12 * j + i] = n(rng);
  project_psd(a);
  for (int k = 0; k < 50; ++k) {  // v^T P v >= 0
    std::array<double, 12> v;
    for (double& c : v) c = n(rng);
    double q = 0;
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 12; ++j) q += v[i] * a[12 * i + j] * v[j];
    EXPECT_GE(q, -1e-12);
  }
  for (int i = 0; i < 12; ++i)  // B = C C^T is PSD: unchanged
    for (int j = 0; j < 12; ++j)
      for (int k = 0; k < 12; ++k) b[12 * i + j] += std::sin(1.0 + i + 3 * k) * std::sin(1.0 + j + 3 * k);
  auto c = b;
  project_psd(c);
  for (int i = 0; i < 144; ++i) EXPECT_NEAR(c[i], b[i], 1e-12 * 12);
}

TEST(SelfCcd, PointThroughATriangleStopsBeforeIt) {
  const std::array<Vec3, 4> x{Vec3{0.2, 0.2, 1.0}, Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};
  const std::array<Vec3, 4> dx{Vec3{0, 0, -2.0}, Vec3{}, Vec3{}, Vec3{}};
  const double t = additive_ccd(x, dx, false);
  EXPECT_LT(t, 0.5);                 // the impact is at t = 0.5
  EXPECT_GE(1.0 - 2.0 * t, 0.1 - 1e-12);  // a tenth of the gap 1 kept
  EXPECT_GT(t, 0.3);                 // and not far short of that (ACCD's steps: 0.45, then 0.9 of the rest...)
  const std::array<Vec3, 4> away{Vec3{0, 0, 2.0}, Vec3{}, Vec3{}, Vec3{}};
  EXPECT_EQ(additive_ccd(x, away, false), 1.0);
}

TEST(SelfCcd, NoContactAlongTheAcceptedMoveOfRandomPairs) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int cut = 0;
  for (int k = 0; k < 400; ++k) {
    const bool ee = k % 2 == 1;
    const auto x = random_pair(rng);
    std::array<Vec3, 4> dx;
    for (auto& d : dx) d = {2 * u(rng), 2 * u(rng), 2 * u(rng)};
    const auto dist = [&](double t) {
      std::array<Vec3, 4> y;
      for (int i = 0; i < 4; ++i) y[i] = x[i] + t * dx[i];
      return std::sqrt(ee ? edge_edge_squared_distance(y) : point_triangle_squared_distance(y));
    };
    const double d0 = dist(0.0);
    if (d0 < 1e-3) continue;
    const double t = additive_ccd(x, dx, ee);
    cut += t < 1.0;
    ASSERT_GT(t, 0.0);
    for (int s = 0; s <= 500; ++s) EXPECT_GT(dist(t * s / 500.0), 0.0);
    EXPECT_GE(dist(t), 0.1 * d0 * (1 - 1e-9));
  }
  EXPECT_GT(cut, 20);  // the moves are large: many are cut
}

TEST(SelfIntersection, ExactTriangleTriangleCases) {
  const std::array<Vec3, 3> t{Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};
  EXPECT_TRUE(triangles_intersect(t, {Vec3{0.2, 0.2, -1}, Vec3{0.2, 0.2, 1}, Vec3{0.3, 0.3, 1}}));  // pierces
  EXPECT_FALSE(triangles_intersect(t, {Vec3{0.2, 0.2, 1e-300}, Vec3{0.2, 0.3, 1}, Vec3{0.3, 0.3, 1}}));  // above
  EXPECT_TRUE(triangles_intersect(t, {Vec3{0.2, 0.2, 0}, Vec3{0.2, 0.3, 1}, Vec3{0.3, 0.3, 1}}));  // touches
  EXPECT_TRUE(triangles_intersect(t, {Vec3{0.5, 0.5, 0}, Vec3{-1, 2, 0}, Vec3{2, 2, 0}}));  // coplanar, edge touch
  EXPECT_FALSE(triangles_intersect(t, {Vec3{0.6, 0.6, 0}, Vec3{-1, 2, 0}, Vec3{2, 2, 0}}));  // coplanar, apart
  EXPECT_TRUE(triangles_intersect(t, {Vec3{0.1, 0.1, 0}, Vec3{0.2, 0.1, 0}, Vec3{0.1, 0.2, 0}}));  // inside
  // A point on the plane x + y + z = 0.3 that double arithmetic cannot place: exactly decided either way.
  const std::array<Vec3, 3> tilted{Vec3{0.3, 0, 0}, Vec3{0, 0.3, 0}, Vec3{0, 0, 0.3}};
  const int s = orient3d(tilted[0], tilted[1], tilted[2], Vec3{0.1, 0.1, 0.1});
  EXPECT_EQ(s, orient3d(tilted[0], tilted[1], tilted[2], Vec3{0.1, 0.1, 0.1}));
  EXPECT_EQ(orient3d(Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0.25, 0.25, 0}), 0);
  EXPECT_EQ(orient3d(Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0.25, 0.25, 1e-300}), 1);
}

/// Two unit squares (2 triangles each), the upper one `gap` above and turned by `angle`.
SelfSurface two_squares(double gap, double angle) {
  std::vector<double> x{0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  const double c = std::cos(angle), s = std::sin(angle);
  for (const auto& p : std::vector<std::array<double, 2>>{{0, 0}, {1, 0}, {1, 1}, {0, 1}}) {
    const double u = p[0] - 0.5, v = p[1] - 0.5;
    x.insert(x.end(), {0.5 + c * u - s * v, 0.5 + s * u + c * v, gap + 0.01 * p[0]});
  }
  return make_self_surface({{0, 1, 2}, {0, 2, 3}, {4, 5, 6}, {4, 6, 7}}, x);
}

TEST(SelfPotential, GradientAndDiagonalBlocksMatchDifferencesAndOwnersSumToSerial) {
  const SelfSurface surface = two_squares(0.004, 0.3);
  const SelfPotential p(surface, 0.01, 3.0);
  std::vector<double> x = surface.rest, g(x.size(), 0.0), diag(3 * x.size(), 0.0);
  std::vector<SelfPairHessian> full;
  const double e = p.evaluate(x, g, &diag, &full);
  EXPECT_GT(e, 0.0);
  EXPECT_GE(full.size(), 6u);
  const SelfMeasure m = p.measure(x);
  EXPECT_EQ(m.active, static_cast<long long>(full.size()));
  EXPECT_NEAR(m.min_distance, 0.004, 1e-12);
  const double h = 1e-7;
  double scale = 0;
  for (double v : g) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto a = x, b = x;
    a[i] += h, b[i] -= h;
    EXPECT_NEAR(g[i], (p.evaluate(a, {}, nullptr) - p.evaluate(b, {}, nullptr)) / (2 * h), 1e-6 * scale) << i;
  }
  std::vector<double> from_full(diag.size(), 0.0);  // the diagonal blocks are those of the pairs' matrices
  for (const auto& f : full)
    for (int i = 0; i < 4; ++i)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) from_full[9 * f.vertices[i] + 3 * r + c] += f.values[12 * (3 * i + r) + 3 * i + c];
  for (std::size_t i = 0; i < diag.size(); ++i) EXPECT_NEAR(diag[i], from_full[i], 1e-12 * (1 + std::abs(diag[i])));
  // Two owners (points and edges split by parity) sum to the serial energy and gradient.
  double split = 0;
  std::vector<double> gs(x.size(), 0.0);
  for (int owner = 0; owner < 2; ++owner) {
    SelfSurface part = surface;
    for (std::size_t v = 0; v < part.point_owned.size(); ++v) part.point_owned[v] = (v % 2) == static_cast<std::size_t>(owner);
    for (std::size_t k = 0; k < part.edge_owned.size(); ++k) part.edge_owned[k] = (k % 2) == static_cast<std::size_t>(owner);
    split += SelfPotential(part, 0.01, 3.0).evaluate(x, gs, nullptr);
  }
  EXPECT_NEAR(split, e, 1e-12 * e);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(gs[i], g[i], 1e-12 * scale);
}

TEST(SelfPotential, StepLimitStopsTheSquaresBeforeTheyMeetAndCountsIntersections) {
  const SelfSurface surface = two_squares(0.004, 0.3);
  const SelfPotential p(surface, 0.01, 3.0);
  std::vector<double> x = surface.rest, dx(x.size(), 0.0);
  for (int v = 4; v < 8; ++v) dx[3 * v + 2] = -0.01;  // the upper square through the lower
  const double t = p.step_limit(x, dx);
  EXPECT_LT(t, 0.4);
  EXPECT_GT(t, 0.2);
  std::vector<double> y = x, z = x;
  for (std::size_t i = 0; i < x.size(); ++i) y[i] += t * dx[i], z[i] += dx[i];
  EXPECT_EQ(count_intersecting_pairs(y, surface.triangles), 0);
  EXPECT_GE(p.measure(y).min_distance, 0.1 * 0.004 - 1e-15);
  EXPECT_GT(count_intersecting_pairs(z, surface.triangles), 0);  // the full move would cross
  std::vector<double> sideways(x.size(), 0.0);
  for (int v = 4; v < 8; ++v) sideways[3 * v] = 0.5;
  EXPECT_EQ(p.step_limit(x, sideways), 1.0);
}

/// Friction of a pair lagged at y0 (mu 0.3, lambda 2, slip eps 1e-3), at y0 moved by `move` random steps:
/// gradient against central differences of D, Hessian against central differences of the gradient.
void check_self_friction(const std::array<Vec3, 4>& y0, bool edge_edge, double move, std::mt19937& rng) {
  SelfFrictionLag lag;
  ASSERT_TRUE(lag_self_friction(y0, edge_edge, 2.0, 0.3, lag));
  const double eps = 1e-3;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::array<Vec3, 4> y = y0;
  for (auto& p : y)
    for (double& c : p) c += move * u(rng);
  std::array<double, 12> g{};
  std::array<double, 144> h{};
  const double d = self_friction_terms(lag, y, eps, g.data(), h.data());
  EXPECT_GT(d, 0.0);
  double gscale = 1e-30, hscale = 1e-30;
  for (double v : g) gscale = std::max(gscale, std::abs(v));
  for (double v : h) hscale = std::max(hscale, std::abs(v));
  const double step = 1e-4 * std::max(move, eps);
  for (int k = 0; k < 12; ++k) {
    auto a = y, b = y;
    a[k / 3][k % 3] += step, b[k / 3][k % 3] -= step;
    std::array<double, 12> ga{}, gb{};
    const double da = self_friction_terms(lag, a, eps, ga.data(), nullptr);
    const double db = self_friction_terms(lag, b, eps, gb.data(), nullptr);
    EXPECT_NEAR(g[k], (da - db) / (2 * step), 1e-5 * gscale) << k;
    for (int j = 0; j < 12; ++j) EXPECT_NEAR(h[12 * j + k], (ga[j] - gb[j]) / (2 * step), 1e-4 * hscale) << j << " " << k;
  }
}

// Friction between parts: a point over a triangle and two crossing edges, lagged apart, then slipping below and
// above the smoothing slip eps: the gradient and the Hessian match central differences, and the force on the
// point opposes its slip with Coulomb's mu lambda once it slides.
TEST(SelfFriction, GradientAndHessianMatchDifferencesBelowAndAboveTheSlip) {
  std::mt19937 rng(3);
  const std::array<Vec3, 4> pt{Vec3{0.2, 0.3, 0.01}, Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};
  const std::array<Vec3, 4> ee{Vec3{0.1, 0.5, 0.01}, Vec3{0.9, 0.4, 0.012}, Vec3{0.5, 0, 0}, Vec3{0.45, 1, 0}};
  for (const double move : {2e-4, 5e-3}) {
    check_self_friction(pt, false, move, rng);
    check_self_friction(ee, true, move, rng);
  }
  SelfFrictionLag lag;
  ASSERT_TRUE(lag_self_friction(pt, false, 2.0, 0.3, lag));
  std::array<Vec3, 4> slid = pt;
  slid[0][0] += 0.05;  // the point slides along x by 50 eps
  std::array<double, 12> g{};
  self_friction_terms(lag, slid, 1e-3, g.data(), nullptr);
  EXPECT_NEAR(g[0], 0.6, 1e-12);  // dD/dx = mu lambda: the force -g opposes the slide
  EXPECT_NEAR(g[1], 0.0, 1e-12);
  EXPECT_NEAR(g[3] + g[6] + g[9], -0.6, 1e-12);  // and the triangle is dragged along
}

// The surface potential with friction lagged: the upper square slid sideways; its gradient (barrier + friction)
// matches central differences of its energy, and friction resists the slide.
TEST(SelfPotential, FrictionAddsToTheGradientAndResistsTheSlide) {
  const SelfSurface surface = two_squares(0.004, 0.3);
  SelfPotential p(surface, 0.01, 3.0);
  p.lag_friction(surface.rest, 0.5, 1e-4);
  EXPECT_GE(p.n_friction_pairs(), 6u);
  std::vector<double> x = surface.rest;
  for (int v = 4; v < 8; ++v) x[3 * v] += 0.01;
  std::vector<double> g(x.size(), 0.0), diag(3 * x.size(), 0.0);
  p.evaluate(x, g, &diag);
  double scale = 0, upper = 0;
  for (double v : g) scale = std::max(scale, std::abs(v));
  for (int v = 4; v < 8; ++v) upper += g[3 * v];
  EXPECT_GT(upper, 0.0);  // the force -g on the upper square points back
  const double h = 1e-7;
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto a = x, b = x;
    a[i] += h, b[i] -= h;
    EXPECT_NEAR(g[i], (p.evaluate(a, {}, nullptr) - p.evaluate(b, {}, nullptr)) / (2 * h), 1e-6 * scale) << i;
  }
  p.lag_friction(surface.rest, 0.0, 1e-4);
  EXPECT_EQ(p.n_friction_pairs(), 0u);
}

bool same_pairs(const std::vector<SelfPair>& a, const std::vector<SelfPair>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].edge_edge != b[k].edge_edge || a[k].a != b[k].a || a[k].b != b[k].b) return false;
  return true;
}

/// Two wavy 12 x 12 grids of triangles 0.004 apart.
SelfSurface two_wavy_grids() {
  const int n = 12;
  std::vector<double> rest;
  std::vector<std::array<int, 3>> triangles;
  for (int sheet = 0; sheet < 2; ++sheet) {
    const int first = static_cast<int>(rest.size() / 3);
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) {
        const double u = double(i) / n, v = double(j) / n;
        rest.insert(rest.end(), {u + 0.01 * sheet, v, 0.004 * sheet + 0.002 * std::sin(7 * u + 5 * v)});
      }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const int a = first + j * (n + 1) + i;
        triangles.push_back({a, a + 1, a + n + 2});
        triangles.push_back({a, a + n + 2, a + n + 1});
      }
  }
  return make_self_surface(triangles, rest);
}

// The broad phase's Verlet list answers with the same pairs, in the same order, as new trees: two wavy 12 x 12
// grids 0.004 apart (dh 0.01), moved by random steps of 0.1 to 3 dh (small ones answered from the list, large
// ones rebuild it), both for the barrier's query at a state and for the swept boxes of a move.
TEST(SelfPotential, TheCandidateListGivesTheTreesPairs) {
  const SelfSurface surface = two_wavy_grids();
  const double dh = 0.01;
  const SelfPotential p(surface, dh, 1.0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x = surface.rest;
  int compared = 0;
  for (int k = 0; k < 40; ++k) {
    const double size = (k % 5 == 4 ? 3.0 : 0.1) * dh;
    std::vector<double> dx(x.size());
    for (double& d : dx) d = size * u(rng);
    EXPECT_TRUE(same_pairs(p.near_pairs(x), tree_pairs(surface, x, x, 0.5 * dh))) << k;
    std::vector<double> end(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) end[i] = x[i] + dx[i];
    const std::vector<SelfPair> swept = p.swept_pairs(x, dx);
    EXPECT_TRUE(same_pairs(swept, tree_pairs(surface, x, end, 0.0))) << k;
    compared += static_cast<int>(swept.size());
    x = end;
  }
  EXPECT_GT(compared, 1000);
  EXPECT_GT(p.candidate_hits(), 40);          // most queries from the list
  EXPECT_GE(p.candidate_builds(), 8);         // every large move rebuilt it
  EXPECT_LT(p.candidate_builds(), 20);
}

// The fail-safe's pairs from the step's trees (SweptPairs::moved) are those of new trees over the move: two wavy
// 12 x 12 grids 0.004 apart, a predicted move of up to 0.002 (boxes grown by 0.003), then a move that keeps most
// vertices inside their boxes and sends some (every 7th, or all) up to 0.02 away; with every primitive owned and
// present, and with a third of the points and edges not owned and some primitives absent (a rank's view, the
// absent ones changing from step to step). The trees are kept across the steps (built at the rest positions,
// refitted while the positions drift from the rest by a random walk of up to 0.022 a step) and give new trees'
// pairs in the same order; so do trees built for the step alone.
TEST(SweptPairs, TheMovedPairsAreTheTreesPairs) {
  SelfSurface whole = two_wavy_grids();
  SelfSurface part = whole;
  for (std::size_t v = 0; v < part.point_owned.size(); ++v) part.point_owned[v] = v % 3 != 0;
  for (std::size_t e = 0; e < part.edge_owned.size(); ++e) part.edge_owned[e] = e % 3 != 1;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  long long compared = 0, escaped = 0, active = 0;
  for (SelfSurface* surface : {&whole, &part}) {
    SweptPairs kept(*surface);
    std::vector<double> x = surface->rest;
    for (int k = 0; k < 12; ++k) {
      if (surface == &part) {  // (the absent primitives of this step)
        for (std::size_t t = 0; t < part.triangle_present.size(); ++t) part.triangle_present[t] = (t + k) % 11 != 0;
        for (std::size_t e = 0; e < part.edge_present.size(); ++e)
          part.edge_present[e] = part.edge_owned[e] || (e + k) % 13 != 0;
      }
      std::vector<double> x1(x.size()), x2(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) x1[i] = x[i] + 0.002 * u(rng);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const bool far = k % 4 == 3 || (i / 3) % 7 == static_cast<std::size_t>(k % 7);
        x2[i] = x1[i] + (far ? 0.02 : 0.001) * u(rng);
      }
      kept.start(x, x1, 0.003);
      SweptPairs fresh(*surface, x, x1, 0.003);
      EXPECT_TRUE(same_pairs(kept.pairs(), tree_pairs(*surface, x, x1, 0.003))) << k;
      EXPECT_TRUE(same_pairs(fresh.pairs(), kept.pairs())) << k;
      const std::vector<SelfPair> moved = kept.moved(x, x2);
      EXPECT_TRUE(same_pairs(moved, tree_pairs(*surface, x, x2, 0.0))) << k;
      EXPECT_TRUE(same_pairs(fresh.moved(x, x2), moved)) << k;
      // Grown by dh / 2 (the fail-safe's, for the step's record): new trees' pairs; those of them whose boxes
      // overlap without growing are the moved pairs; their pairs within dh at x2 are the potential's.
      SweptPairs grown(*surface, x, x1, 0.003);
      const std::vector<SelfPair> near = grown.moved(x, x2, 0.0015);
      EXPECT_TRUE(same_pairs(near, tree_pairs(*surface, x, x2, 0.0015))) << k;
      EXPECT_TRUE(same_pairs(swept_overlapping(*surface, near, x, x2), moved)) << k;
      const SelfPotential potential(*surface, 0.003, 1.0);
      const SelfMeasure m = measure_pairs(*surface, near, x2, 0.003);
      for (const bool listed : {true, false}) {
        const SelfMeasure full = potential.measure(x2, listed);
        EXPECT_EQ(m.active, full.active) << k;
        EXPECT_EQ(m.min_distance, full.min_distance) << k;
      }
      active += m.active;
      compared += static_cast<long long>(moved.size());
      escaped += kept.escaped();
      x = x2;
    }
  }
  EXPECT_GT(compared, 2000);
  EXPECT_GT(escaped, 500);  // the refitted trees were asked
  EXPECT_GT(active, 100);   // pairs within dh were measured
}

// BoxTree::each_overlap (SweptPairs::start's traversal) meets exactly the overlapping pairs of boxes, each once: 600
// random boxes (one in 9 empty) against 500 and against themselves, compared with all pairs tested one by one, in
// trees built at other boxes and refitted (as SweptPairs keeps them).
TEST(BoxTree, EachOverlapMeetsEveryOverlappingPairOnce) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto boxes = [&](int n) {
    std::vector<Aabb> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      if (i % 9 == 4) continue;  // (empty)
      const Vec3 c{u(rng), u(rng), 0.1 * u(rng)};
      out[static_cast<std::size_t>(i)].grow(c);
      out[static_cast<std::size_t>(i)].grow(c + Vec3{0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng)});
    }
    return out;
  };
  BoxTree a(boxes(600)), b(boxes(500));
  a.refit(boxes(600)), b.refit(boxes(500));
  // On 1 and on 3 OpenMP threads (the node pairs shared out), each thread's finds apart.
  const int saved = omp_get_max_threads();
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    std::vector<std::vector<std::array<int, 2>>> found(static_cast<std::size_t>(threads));
    std::vector<std::array<int, 2>> met, expected;
    const auto gather = [&] {
      for (auto& some : found) met.insert(met.end(), some.begin(), some.end()), some.clear();
    };
    const auto add = [&](int thread, int i, int j) { found[static_cast<std::size_t>(thread)].push_back({i, j}); };
    a.each_overlap(b, add);
    gather();
    for (int i = 0; i < 600; ++i)
      for (int j = 0; j < 500; ++j)
        if (overlap(a.box(i), b.box(j))) expected.push_back({i, j});
    std::sort(met.begin(), met.end());
    EXPECT_EQ(met, expected) << threads << " threads";
    EXPECT_GT(expected.size(), 500u);
    met.clear(), expected.clear();
    a.each_overlap(add);
    gather();
    for (int i = 0; i < 600; ++i)
      for (int j = i + 1; j < 600; ++j)
        if (overlap(a.box(i), a.box(j))) expected.push_back({i, j});
    std::sort(met.begin(), met.end());
    EXPECT_EQ(met, expected) << threads << " threads";
    EXPECT_GT(expected.size(), 500u);
  }
  omp_set_num_threads(saved);
}

// The branch-free box test is the closed boxes' overlap: touching counts, a gap on any one axis (either side) does
// not, an empty box overlaps nothing (not even itself or a box around everything).
TEST(BoxTree, OverlapIsTheClosedBoxesTest) {
  Aabb a;
  a.grow(Vec3{0.0, 0.0, 0.0});
  a.grow(Vec3{1.0, 2.0, 3.0});
  EXPECT_TRUE(overlap(a, a));
  for (int k = 0; k < 3; ++k)
    for (const double side : {-1.0, 1.0}) {
      Aabb b = a;
      const double width = a.hi[k] - a.lo[k];
      b.lo[k] += side * width, b.hi[k] += side * width;  // touching a on axis k
      EXPECT_TRUE(overlap(a, b) && overlap(b, a)) << k << " " << side;
      b.lo[k] += side * 1e-9, b.hi[k] += side * 1e-9;  // a gap on axis k alone
      EXPECT_FALSE(overlap(a, b) || overlap(b, a)) << k << " " << side;
    }
  Aabb all;
  all.grow(Vec3{-1e9, -1e9, -1e9});
  all.grow(Vec3{1e9, 1e9, 1e9});
  EXPECT_TRUE(overlap(a, all));
  const Aabb empty;
  EXPECT_FALSE(overlap(empty, empty) || overlap(empty, all) || overlap(all, empty));
}

// radix_sort (the broad phase's pair keys) sorts as std::sort does: random keys of 1 to 64 bits (one to five passes
// of up to 13 bits), with many repeats (few bits) and without, 0, 1 and 50,000 keys.
TEST(RadixSort, SortsAsStdSortDoes) {
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> scratch;
  for (const int bits : {1, 5, 13, 14, 26, 37, 39, 40, 63, 64})
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{50000}}) {
      std::vector<std::uint64_t> keys(n);
      for (auto& k : keys) k = bits == 64 ? rng() : rng() & ((std::uint64_t{1} << bits) - 1);
      std::vector<std::uint64_t> expected = keys;
      std::sort(expected.begin(), expected.end());
      radix_sort(keys, bits, scratch);
      EXPECT_EQ(keys, expected) << bits << " bits, " << n << " keys";
    }
}

}  // namespace
}  // namespace edgefem::contact
