// SPDX-License-Identifier: BSD-3-Clause
// The triangle-surface obstacle (contact/obstacle_mesh.hpp) and its pieces: the closest point of a triangle, its
// feature and barycentric coordinates (every Voronoi region, degenerate triangles), the bounding-volume hierarchy
// against brute force (nearest triangle, first segment hit), the signed distance's normal and Hessian against central
// differences near a face, an edge and a vertex (closed and open surfaces), the inside of a closed surface and the
// collision check of segments through it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <stdexcept>
#include <vector>

#include "contact/bvh.hpp"
#include "contact/obstacle_mesh.hpp"
#include "contact/triangle_distance.hpp"
#include "tests/support/contact_testing.hpp"

namespace edgefem::contact {
namespace {

using contact_testing::distance_of;
using contact_testing::fd_gradient;
using contact_testing::fd_jacobian;
using contact_testing::normal_of;
using contact_testing::relative_error;

/// A unit tetrahedron's surface, outward or (flipped) inward.
MeshObstacle tetrahedron(bool inward) {
  std::vector<Vec3> p{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  std::vector<std::array<int, 3>> t{{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  if (inward)
    for (auto& f : t) std::swap(f[1], f[2]);
  return MeshObstacle("tet", 0.0, p, t);
}

TEST(TriangleDistance, FeaturesOfTheClosestPoint) {
  const Vec3 a{0, 0, 0}, b{1, 0, 0}, c{0, 1, 0};
  EXPECT_EQ(closest_on_triangle({0.2, 0.2, 1}, a, b, c).feature, TriangleFeature::face);
  EXPECT_EQ(closest_on_triangle({-1, -1, 0.3}, a, b, c).feature, TriangleFeature::vertex_a);
  EXPECT_EQ(closest_on_triangle({2, -0.1, 0}, a, b, c).feature, TriangleFeature::vertex_b);
  EXPECT_EQ(closest_on_triangle({0.5, -1, 0}, a, b, c).feature, TriangleFeature::edge_ab);
  EXPECT_EQ(closest_on_triangle({1, 1, 0.5}, a, b, c).feature, TriangleFeature::edge_bc);
  EXPECT_EQ(closest_on_triangle({-1, 0.5, 0}, a, b, c).feature, TriangleFeature::edge_ca);
  const TriangleClosest r = closest_on_triangle({1, 1, 0.5}, a, b, c);
  EXPECT_NEAR(r.squared_distance, 0.5 + 0.25, 1e-15);
  EXPECT_NEAR(segment_triangle({0.2, 0.2, 1}, {0.2, 0.2, -1}, a, b, c), 0.5, 1e-15);
  EXPECT_LT(segment_triangle({0.8, 0.8, 1}, {0.8, 0.8, -1}, a, b, c), 0.0);
}

/// Barycentric coordinates in [0, 1] summing to 1 and giving the closest point (to 1e-14 of the triangle's size).
void expect_barycentric_of_point(const TriangleClosest& r, const Vec3& a, const Vec3& b, const Vec3& c,
                                 const std::string& label) {
  const auto& l = r.barycentric;
  EXPECT_NEAR(l[0] + l[1] + l[2], 1.0, 1e-15) << label;
  for (const double li : l) {
    EXPECT_GE(li, 0.0) << label;
    EXPECT_LE(li, 1.0) << label;
  }
  const double size = std::max({norm(a), norm(b), norm(c)});
  EXPECT_LE(norm(l[0] * a + l[1] * b + l[2] * c - r.point), 1e-14 * size) << label;
}

TEST(TriangleDistance, BarycentricCoordinatesInEveryVoronoiRegion) {
  const Vec3 a{0.3, -0.2, 0.1}, b{1.4, 0.5, -0.3}, c{-0.1, 1.1, 0.7};  // no side along an axis
  const Vec3 normal = (1.0 / norm(cross(b - a, c - a))) * cross(b - a, c - a);
  auto unit = [](const Vec3& v) { return (1.0 / norm(v)) * v; };
  // Away from a vertex: against its two edges' directions. Away from an edge: in the plane, off the third vertex
  // ((a, b, c) turn counter-clockwise about the normal).
  auto off_vertex = [&](const Vec3& p, const Vec3& q, const Vec3& o) { return -1.0 * (unit(q - p) + unit(o - p)); };
  auto off_edge = [&](const Vec3& p, const Vec3& q) { return unit(cross(q - p, normal)); };
  struct Region {
    const char* label;
    TriangleFeature feature;
    Vec3 base, away;
    std::array<double, 3> expected;  // the base's coordinates
  };
  for (const double s : {0.1, 0.5, 0.9}) {
    const double v = 0.6 * s, w = 0.35 * (1.0 - s);  // v + w < 1
    const Region regions[] = {
        {"vertex a", TriangleFeature::vertex_a, a, off_vertex(a, b, c), {1, 0, 0}},
        {"vertex b", TriangleFeature::vertex_b, b, off_vertex(b, c, a), {0, 1, 0}},
        {"vertex c", TriangleFeature::vertex_c, c, off_vertex(c, a, b), {0, 0, 1}},
        {"edge ab", TriangleFeature::edge_ab, a + s * (b - a), off_edge(a, b), {1 - s, s, 0}},
        {"edge bc", TriangleFeature::edge_bc, b + s * (c - b), off_edge(b, c), {0, 1 - s, s}},
        {"edge ca", TriangleFeature::edge_ca, c + s * (a - c), off_edge(c, a), {s, 0, 1 - s}},
        {"face", TriangleFeature::face, a + v * (b - a) + w * (c - a), {0, 0, 0}, {1 - v - w, v, w}}};
    for (const Region& region : regions)
      for (const double t : {0.05, 1.0, 7.0})
        for (const double h : {-2.0, 0.0, 0.3}) {
          const Vec3 x = region.base + t * region.away + h * normal;
          const std::string label = std::string(region.label) + " s " + std::to_string(s) + " t " + std::to_string(t) +
                                    " h " + std::to_string(h);
          const TriangleClosest r = closest_on_triangle(x, a, b, c);
          ASSERT_EQ(r.feature, region.feature) << label;
          EXPECT_LE(norm(r.point - region.base), 1e-14 * (1.0 + t)) << label;
          for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.barycentric[i], region.expected[i], 1e-14) << label;
          expect_barycentric_of_point(r, a, b, c, label);
        }
  }
}

TEST(TriangleDistance, DegenerateTrianglesGiveFiniteResults) {
  // Collinear (c between a and b, beyond b, before a) and all three vertices at one point, from every side. The
  // collinear ones reach every region, the face too (about 1 % of the points, by rounding); the coordinates still
  // give the point. (Two coincident vertices are not covered: 0/0 on their edge, NaN.)
  const Vec3 a{0.3, -0.2, 0.1}, d{1.1, 0.7, -0.4};
  const std::vector<std::array<Vec3, 3>> triangles{{a, a + d, a + 0.3 * d},
                                                   {a, a + d, a + 2.5 * d},
                                                   {a, a + d, a - 1.5 * d},
                                                   {a, a, a}};
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (std::size_t k = 0; k < triangles.size(); ++k)
    for (int trial = 0; trial < 2000; ++trial) {
      const auto& [p, q, s] = triangles[k];
      const double along = u(rng);
      const Vec3 off{u(rng), u(rng), u(rng)};
      const Vec3 x = a + along * d + off;
      const TriangleClosest r = closest_on_triangle(x, p, q, s);
      const std::string label = "triangle " + std::to_string(k) + " trial " + std::to_string(trial);
      for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(std::isfinite(r.point[i])) << label;
        ASSERT_TRUE(std::isfinite(r.barycentric[i])) << label;
      }
      ASSERT_TRUE(std::isfinite(r.squared_distance)) << label;
      const auto& l = r.barycentric;
      EXPECT_NEAR(l[0] + l[1] + l[2], 1.0, 1e-15) << label;
      EXPECT_LE(norm(l[0] * p + l[1] * q + l[2] * s - r.point), 1e-14 * (1.0 + 3.5 * norm(d))) << label;
    }
}

TEST(TriangleBvh, AgreesWithBruteForce) {
  std::vector<Vec3> points;
  std::vector<std::array<int, 3>> triangles;
  contact_testing::icosphere({0.1, 0.2, 0.3}, 0.7, 3, points, triangles);  // 1280 triangles
  const TriangleBvh bvh(points, triangles);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (int trial = 0; trial < 300; ++trial) {
    const Vec3 x{u(rng), u(rng), u(rng)}, y{u(rng), u(rng), u(rng)};
    double best = 1e300, first = -1.0;
    for (const auto& f : triangles) {
      best = std::min(best, closest_on_triangle(x, points[f[0]], points[f[1]], points[f[2]]).squared_distance);
      const double t = segment_triangle(x, y, points[f[0]], points[f[1]], points[f[2]]);
      if (t >= 0.0 && (first < 0.0 || t < first)) first = t;
    }
    TriangleClosest c;
    ASSERT_GE(bvh.nearest(x, 1e300, c), 0);
    EXPECT_NEAR(c.squared_distance, best, 1e-14);
    EXPECT_EQ(bvh.nearest(x, 0.9 * best, c), -1);  // nothing within a smaller bound
    EXPECT_NEAR(bvh.first_hit(x, y), first, 1e-14);
  }
}

struct MeshCase {
  const char* label;
  Vec3 point;
  int feature;  // 0 vertex, 1 edge, 2 face
};

TEST(MeshObstacle, NormalAndHessianMatchCentralDifferencesNearEveryFeature) {
  for (const double gap : {0.1, 1e-4}) {
    for (const bool inward : {false, true}) {  // an inward-oriented closed surface is turned outward
      const MeshObstacle tet = tetrahedron(inward);
      ASSERT_TRUE(tet.has_inside());
      const double s = gap / std::sqrt(3.0);
      const MeshCase cases[] = {{"face", {0.2, 0.2, -gap}, 2},
                                {"face slanted", Vec3{0.25, 0.25, 0.5} + s * Vec3{1, 1, 1}, 2},
                                {"edge", {0.5, -gap / std::sqrt(2.0), -gap / std::sqrt(2.0)}, 1},
                                {"vertex", {-s, -s, -s}, 0},
                                {"vertex apex", Vec3{0, 0, 1} + (gap / std::sqrt(6.0)) * Vec3{-1, -1, 2}, 0},
                                {"inside", {0.2, 0.25, gap}, 2}};
      for (const MeshCase& c : cases) {
        Proximity p;
        ASSERT_TRUE(tet.proximity(c.point, 1e300, true, p)) << c.label;
        EXPECT_EQ(p.feature, c.feature) << c.label;
        EXPECT_NEAR(std::abs(p.distance), gap, 1e-12) << c.label;
        EXPECT_EQ(p.distance < 0.0, std::string(c.label) == "inside") << c.label;
        const double h = 1e-4 * gap;
        EXPECT_LT(relative_error(p.normal, fd_gradient(distance_of(tet), c.point, h), 1e-300), 1e-6) << c.label;
        EXPECT_LT(relative_error(p.hessian, fd_jacobian(normal_of(tet), c.point, h), 1.0 / gap), 1e-5) << c.label;
      }
    }
  }
}

TEST(MeshObstacle, AnOpenSurfaceHasAnUnsignedDistance) {
  const MeshObstacle sheet("sheet", 0.0, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, {{{0, 1, 2}}, {{1, 3, 2}}});
  EXPECT_FALSE(sheet.has_inside());
  EXPECT_NEAR(sheet.signed_distance({0.5, 0.5, -0.2}), 0.2, 1e-15);
  EXPECT_NEAR(sheet.signed_distance({0.5, 0.5, 0.3}), 0.3, 1e-15);
  Proximity p;
  ASSERT_TRUE(sheet.proximity({0.5, 0.5, -0.2}, 1.0, true, p));
  EXPECT_NEAR(p.normal[2], -1.0, 1e-15);  // away from the surface, on the side the point is
  // A segment through the shared edge (the diagonal) is caught.
  EXPECT_NEAR(sheet.time_of_impact({0.5, 0.5, 1}, {0.5, 0.5, -1}), 0.5, 1e-12);
}

TEST(MeshObstacle, InsideAClosedSphereAndTheFirstCrossing) {
  std::vector<Vec3> points;
  std::vector<std::array<int, 3>> triangles;
  contact_testing::icosphere({0, 0, 0}, 1.0, 3, points, triangles);
  const MeshObstacle ball("ball", 0.0, points, triangles);
  EXPECT_LT(ball.signed_distance({0.1, 0.2, -0.3}), -0.5);  // deep inside, found beyond any bound
  Proximity p;
  EXPECT_TRUE(ball.proximity({0.1, 0.2, -0.3}, 1e-3, false, p));
  EXPECT_FALSE(ball.proximity({2, 0, 0}, 0.5, false, p));
  const double t = ball.time_of_impact({-3, 0.05, 0.02}, {3, 0.05, 0.02});
  EXPECT_NEAR(t, 1.0 / 3.0, 0.01);
  EXPECT_NEAR(ball.signed_distance(Vec3{-3, 0.05, 0.02} + t * Vec3{6, 0, 0}), 0.0, 1e-12);
}

TEST(MeshObstacle, RejectsDegenerateSurfaces) {
  EXPECT_THROW(MeshObstacle("m", 0.0, {}, {}), std::invalid_argument);
  EXPECT_THROW(MeshObstacle("m", 0.0, {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{{0, 1, 2}}}), std::invalid_argument);
  EXPECT_THROW(MeshObstacle("m", 0.0, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{{0, 1, 5}}}), std::invalid_argument);
  EXPECT_THROW(MeshObstacle("m", 0.0, {{0, 0, 0}, {1, 0, NAN}, {0, 1, 0}}, {{{0, 1, 2}}}), std::invalid_argument);
}

}  // namespace
}  // namespace edgefem::contact
