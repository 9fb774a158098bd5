// SPDX-License-Identifier: BSD-3-Clause
// Tests of Bergou's isometric bending (materials/bending.cpp): f = dW/dx and K = df/dx by central differences,
// zero energy and force for a flat sheet and for rigid motions of it, the per-stencil energy/gradient (the
// position-based solver's entry) against the formulation, the energy of a sheet rolled into a cylinder against its
// closed form, and the input checks.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "materials/bending.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

/// The hinge stencils of a triangle mesh: per edge shared by two triangles, (edge, opposite of the first, opposite
/// of the second) - the same rule as the distribution's (partition.cpp find_hinges).
std::vector<LocalIndex> hinges(const std::vector<LocalIndex>& tris) {
  std::map<std::pair<LocalIndex, LocalIndex>, std::vector<LocalIndex>> sides;  // edge -> opposite vertices
  for (std::size_t t = 0; t + 2 < tris.size(); t += 3)
    for (int k = 0; k < 3; ++k) {
      const LocalIndex a = tris[t + k], b = tris[t + (k + 1) % 3];
      sides[{std::min(a, b), std::max(a, b)}].push_back(tris[t + (k + 2) % 3]);
    }
  std::vector<LocalIndex> out;
  for (const auto& [e, opp] : sides)
    if (opp.size() == 2) out.insert(out.end(), {e.first, e.second, opp[0], opp[1]});
  return out;
}

struct Sheet {
  testing::TriMesh mesh;
  std::vector<LocalIndex> stencils;
  std::vector<double> kb;
};

/// A flat n x n sheet on [0, 1]^2 (jittered interior vertices, alternating diagonals), stiffness kb per stencil.
Sheet flat_sheet(int n, double jitter, double kb) {
  Sheet s;
  s.mesh = testing::triangle_patch(n, n, jitter, 3, true, false);
  s.stencils = hinges(s.mesh.tris);
  s.kb.assign(s.stencils.size() / 4, kb);
  return s;
}

TEST(Bending, ForceIsTheEnergyGradientAndStiffnessTheForceJacobian) {
  Sheet s = flat_sheet(4, 0.2, 0.7);
  for (std::size_t i = 0; i < s.kb.size(); ++i) s.kb[i] *= 1.0 + 0.1 * static_cast<double>(i % 3);  // heterogeneous
  const auto form = make_bending(s.mesh.coords, s.stencils, s.kb);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x = s.mesh.coords;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += 0.2 * u(rng);  // a random (non-isometric) deformed state
  const testing::FdComparison c = testing::compare_with_finite_differences(*form, x, 1e-6);
  testing::record_fd_errors(c);
  // W is quadratic: central differences are exact up to round-off (~eps |W| / h).
  EXPECT_LT(c.force_error, 1e-8);
  EXPECT_LT(c.stiffness_error, 1e-8);
  EXPECT_EQ(c.asymmetry, 0.0);
  EXPECT_EQ(c.f_only, c.f);
  EXPECT_GT(form->energy(x), 0.0);
  // The stiffness is constant: the same at another state.
  std::vector<double> x2 = x;
  for (double& v : x2) v += 0.3 * u(rng);
  EXPECT_EQ(testing::dense_stiffness(*form, x2), c.K);
}

TEST(Bending, FlatSheetAndItsRigidMotionsHaveZeroEnergyAndForce) {
  const Sheet s = flat_sheet(5, 0.25, 2.0);
  ASSERT_EQ(s.stencils.size() / 4, 3u * 5 * 5 - 2u * 5);  // interior edges of an n x n sheet: 3 n^2 - 2 n
  const auto form = make_bending(s.mesh.coords, s.stencils, s.kb);
  std::vector<double> f(s.mesh.coords.size());
  // Round-off scale of a force: the stiffness times the coordinates' size (|x| <= ~3 below).
  const double tol = 1e-14 * testing::max_abs(testing::dense_stiffness(*form, s.mesh.coords)) * 3.0;
  form->force(s.mesh.coords, f);
  EXPECT_LT(testing::max_abs(f), tol);
  EXPECT_LT(form->energy(s.mesh.coords), 1e-25);
  // Rotated and translated, and an in-plane stretch (not isometric but still flat: zero bending).
  const Eigen::Matrix3d& R = testing::generic_rotation();
  std::vector<double> x(f.size()), y(f.size());
  for (std::size_t v = 0; v < f.size() / 3; ++v) {
    const Eigen::Vector3d X(s.mesh.coords[3 * v], s.mesh.coords[3 * v + 1], s.mesh.coords[3 * v + 2]);
    const Eigen::Vector3d r = R * X + Eigen::Vector3d(0.3, -1.0, 2.0);
    const Eigen::Vector3d st = R * Eigen::Vector3d(1.3 * X[0], 0.8 * X[1] + 0.2 * X[0], X[2]);
    for (int c = 0; c < 3; ++c) x[3 * v + c] = r[c], y[3 * v + c] = st[c];
  }
  form->force(x, f);
  EXPECT_LT(testing::max_abs(f), tol);
  EXPECT_LT(form->energy(x), 1e-25);
  form->force(y, f);
  EXPECT_LT(testing::max_abs(f), tol);
}

TEST(Bending, PerStencilFunctionMatchesTheFormulation) {
  const double X[12] = {0, 0, 0, 1, 0.1, 0, 0.3, 0.9, 0, 0.6, -0.8, 0};
  const double x[12] = {0, 0, 0.1, 1, 0.1, 0, 0.3, 0.9, 0.4, 0.6, -0.8, -0.2};
  const auto k = bending_weights(X, 1.5);
  EXPECT_NEAR(k[0] + k[1] + k[2] + k[3], 0.0, 1e-14);
  double g[12];
  const double w = bending_energy_gradient(k, x, g);
  const auto form = make_bending(std::vector<double>(X, X + 12), std::vector<LocalIndex>{0, 1, 2, 3},
                                 std::vector<double>{1.5});
  const std::vector<double> xv(x, x + 12);
  std::vector<double> f(12);
  form->force(xv, f);
  EXPECT_NEAR(form->energy(xv), w, 1e-15 * w);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(f[i], g[i], 1e-14) << i;
  // Q = 3 kb / (A0 + A1) K K^T: W = 3 kb / (2 (A0 + A1)) |sum K_i x_i|^2 with the paper's K (cotangents).
  auto cot = [](Eigen::Vector3d a, Eigen::Vector3d b) { return a.dot(b) / a.cross(b).norm(); };
  const Eigen::Vector3d p0(X[0], X[1], X[2]), p1(X[3], X[4], X[5]), p2(X[6], X[7], X[8]), p3(X[9], X[10], X[11]);
  // Stencil edges e0 = x0x1, e1 = x1x2, e2 = x2x0, e3 = x0x3, e4 = x3x1; c_jk = cot of the interior angle between.
  const double c01 = cot(p0 - p1, p2 - p1), c02 = cot(p1 - p0, p2 - p0), c03 = cot(p1 - p0, p3 - p0),
               c04 = cot(p0 - p1, p3 - p1);
  const double K[4] = {c01 + c04, c02 + c03, -c01 - c02, -c03 - c04};
  const double A = 0.5 * ((p1 - p0).cross(p2 - p0).norm() + (p1 - p0).cross(p3 - p0).norm());
  Eigen::Vector3d h = Eigen::Vector3d::Zero();
  for (int i = 0; i < 4; ++i) h += K[i] * Eigen::Vector3d(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
  EXPECT_NEAR(w, 3 * 1.5 / (2 * A) * h.squaredNorm(), 1e-14 * w);
}

TEST(Bending, CylinderEnergyMatchesTheClosedForm) {
  // An n x n sheet of the unit square rolled isometrically about an axis parallel to y (radius R): on this
  // structured mesh (either diagonal pattern) W = (3/2) kb (A / R^2) (1 - 1/n) up to O(1/n^2) (the hinges along
  // the two sides x = 0, 1 are boundary edges; measured here with R = 0.7: relative errors 1.3e-3 and 3.3e-4 at n = 16 and 32).
  // Tolerance 0.5 / n^2 (second order), and the error must fall by ~4 from n = 16 to n = 32.
  const double kb = 0.8, R = 0.7;
  double previous = 0.0;
  for (const int n : {16, 32}) {
    Sheet s = flat_sheet(n, 0.0, kb);
    const auto form = make_bending(s.mesh.coords, s.stencils, s.kb);
    std::vector<double> x = s.mesh.coords;
    for (std::size_t v = 0; v < x.size() / 3; ++v) {
      const double t = s.mesh.coords[3 * v] / R;
      x[3 * v] = R * std::sin(t);
      x[3 * v + 2] = R * (1.0 - std::cos(t));
    }
    const double closed = 1.5 * kb / (R * R) * (1.0 - 1.0 / n), rel = std::abs(form->energy(x) / closed - 1.0);
    std::printf("cylinder n = %d: W = %.9e, closed form %.9e, relative error %.3e\n", n, form->energy(x), closed, rel);
    EXPECT_LT(rel, 0.5 / (n * n));
    if (previous > 0.0) {
      EXPECT_LT(rel, previous / 3.0);
    }
    previous = rel;
  }
}

TEST(Bending, RejectsInconsistentInput) {
  const std::vector<double> X = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
  EXPECT_THROW((void)make_bending(X, std::vector<LocalIndex>{0, 1, 2}, std::vector<double>{1.0}),
               std::invalid_argument);
  EXPECT_THROW((void)make_bending(X, std::vector<LocalIndex>{0, 1, 2, 7}, std::vector<double>{1.0}),
               std::invalid_argument);
  EXPECT_THROW((void)make_bending(X, std::vector<LocalIndex>{0, 1, 2, 3}, std::vector<double>{-1.0}),
               std::invalid_argument);
  const std::vector<double> flat_triangle = {0, 0, 0, 1, 0, 0, 2, 0, 0, 1, 1, 0};  // x2 on the edge's line
  EXPECT_THROW((void)make_bending(flat_triangle, std::vector<LocalIndex>{0, 1, 2, 3}, std::vector<double>{1.0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace edgefem
