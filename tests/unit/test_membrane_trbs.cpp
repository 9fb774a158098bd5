// SPDX-License-Identifier: BSD-3-Clause
// trbs = the plane-stress StVK membrane A h (lambda/2 tr(E)^2 + mu tr(E^2)) (materials/trbs.cpp): energy to 1e-12,
// f and K of a direct per-triangle StVK implementation (tests/support/membrane_testing.hpp) to 1e-10, and the
// spring constants against Delingette's printed E, nu forms.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/membrane_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;            // tests/support: meshes, finite differences
using namespace testing::membrane;  // tests/support/membrane_testing.hpp

/// Condition number of the trbs spring sum: (sum of |spring terms|) / W, the factor by which the edge form
/// amplifies the round-off of the elongations l^2 - L^2 (large on slivers: the constants grow like cot^2 / A).
double spring_condition(const TriMesh& m, std::span<const MembraneMaterial> mat, const std::vector<double>& x) {
  double sum_abs = 0.0, W = 0.0;
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    std::array<double, 9> X;
    double d2[3];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tris[3 * t + i] + c];
    for (int i = 0; i < 3; ++i) {
      const LocalIndex a = m.tris[3 * t + (i + 1) % 3], b = m.tris[3 * t + (i + 2) % 3];
      double l2 = 0.0, L2 = 0.0;
      for (int c = 0; c < 3; ++c) {
        l2 += (x[3 * a + c] - x[3 * b + c]) * (x[3 * a + c] - x[3 * b + c]);
        L2 += (m.coords[3 * a + c] - m.coords[3 * b + c]) * (m.coords[3 * a + c] - m.coords[3 * b + c]);
      }
      d2[i] = l2 - L2;
    }
    const TriangleSprings s = trbs_springs(X, mat[t]);
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3, k = (i + 2) % 3;
      const double tk = s.tensile[i] / 4 * d2[i] * d2[i], tc = s.angular[k] / 2 * d2[i] * d2[j];
      sum_abs += std::abs(tk) + std::abs(tc);
      W += tk + tc;
    }
  }
  return sum_abs / W;
}

// ---------------------------------------------------------------------------------------------------------
// 2. TRBS = plane-stress StVK membrane.

/// A random 3D triangle with all angles above 5 degrees.
std::array<double, 9> random_triangle(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (;;) {
    std::array<double, 9> X;
    for (double& v : X) v = u(rng);
    double min_sin = 1.0;
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector3d p(X[3 * i], X[3 * i + 1], X[3 * i + 2]);
      const Eigen::Vector3d a = Eigen::Vector3d(X[3 * ((i + 1) % 3)], X[3 * ((i + 1) % 3) + 1],
                                                X[3 * ((i + 1) % 3) + 2]) -
                                p;
      const Eigen::Vector3d b = Eigen::Vector3d(X[3 * ((i + 2) % 3)], X[3 * ((i + 2) % 3) + 1],
                                                X[3 * ((i + 2) % 3) + 2]) -
                                p;
      min_sin = std::min(min_sin, a.cross(b).norm() / (a.norm() * b.norm()));
    }
    if (min_sin > std::sin(5.0 * M_PI / 180.0)) return X;
  }
}

TEST(MembraneTrbs, EnergyEqualsPlaneStressStvkOnRandomTriangles) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0), E(0.5, 10.0), nu(-0.9, 0.95), h(1e-3, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 500; ++trial) {
    TriMesh m;
    const auto X = random_triangle(rng);
    m.coords.assign(X.begin(), X.end());
    m.tris = {0, 1, 2};
    const std::vector<MembraneMaterial> mat = {{E(rng), nu(rng), h(rng)}};
    const auto form = make("trbs", m, mat);
    const double amp = std::pow(10.0, -2.0 + 2.0 * (trial % 5) / 4.0);  // 1e-2 .. 1 displacement amplitude
    std::vector<double> x(9);
    for (int i = 0; i < 9; ++i) x[i] = X[i] + amp * u(rng);
    const double W = form->energy(x);
    const double W_ref = stvk_triangle(X.data(), x.data(), mat[0]).W;
    ASSERT_GT(W_ref, 0.0);
    worst = std::max(worst, std::abs(W - W_ref) / W_ref);
    EXPECT_NEAR(W, W_ref, 1e-12 * W_ref) << "trial " << trial;
  }
  std::printf("[ membrane ] trbs energy vs plane-stress StVK, 500 random triangles: max rel err %.2e\n", worst);
}

TEST(MembraneTrbs, ForceAndStiffnessEqualDirectStvk) {
  // Energy against the StVK reference in long double, to 1e-12 relative, or 1e-15 kappa on slivers, kappa the
  // condition number of the spring sum (spring_condition: ~1e6 for the 1 % sliver stretched, where the edge form
  // loses ~4e-17 kappa while the F-based form does not); f and K against the double StVK reference to 1e-10.
  double worst_w = 0.0, worst_f = 0.0, worst_k = 0.0, worst_w_wellcond = 0.0;
  for (const std::string mesh_name : {"tri", "obtuse", "sliver", "patch"})
    for (const std::string def : {"random", "stretched", "compressed", "rotated", "collapsed"}) {
      const TriMesh m = triangle_mesh_by_name(mesh_name);
      const auto mat = random_materials(m.n_tris(), 23);
      const auto form = make("trbs", m, mat);
      const auto x = deform_triangles(m, def, 9);
      std::vector<double> f, f_ref, K_ref;
      const auto K = testing::dense_stiffness(*form, x, &f);
      stvk_mesh(m, mat, x, &f_ref, &K_ref);
      const long double W_ld = stvk_mesh<long double>(m, mat, x, nullptr, nullptr);
      const double kappa = spring_condition(m, mat, x);
      const double ew = static_cast<double>(std::abs(form->energy(x) - W_ld) / W_ld);
      const double ef = testing::rel_max_diff(f, f_ref), ek = testing::rel_max_diff(K, K_ref);
      EXPECT_LT(ew, std::max(1e-12, 1e-15 * kappa)) << mesh_name << " " << def << ", kappa " << kappa;
      EXPECT_LT(ef, 1e-10) << mesh_name << " " << def;
      EXPECT_LT(ek, 1e-10) << mesh_name << " " << def;
      worst_w = std::max(worst_w, ew), worst_f = std::max(worst_f, ef), worst_k = std::max(worst_k, ek);
      if (kappa < 1e3) worst_w_wellcond = std::max(worst_w_wellcond, ew);
    }
  std::printf("[ membrane ] trbs vs direct StVK: max rel err W %.2e (%.2e for kappa < 1e3), f %.2e, K %.2e\n", worst_w,
              worst_w_wellcond, worst_f, worst_k);
}

TEST(MembraneTrbs, SpringConstantsMatchDelingettesFormulas) {
  // k_i = h E (2 cot^2 a_i + 1 - nu) / (16 (1 - nu^2) A), c_k = h E (2 cot a_i cot a_j + nu - 1) / (16 (1 - nu^2) A)
  // with the angles from acos (independent of the code's cross/dot form), kappa = 2 L^2 k, gamma = 2 L_i L_j c.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> E(0.5, 10.0), nu(-0.9, 0.95), h(1e-3, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    const auto X = random_triangle(rng);
    const MembraneMaterial mat{E(rng), nu(rng), h(rng)};
    Eigen::Vector3d P[3];
    for (int i = 0; i < 3; ++i) P[i] = Eigen::Vector3d(X[3 * i], X[3 * i + 1], X[3 * i + 2]);
    double cot[3], L[3];
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector3d a = P[(i + 1) % 3] - P[i], b = P[(i + 2) % 3] - P[i];
      cot[i] = 1.0 / std::tan(std::acos(a.dot(b) / (a.norm() * b.norm())));
      L[i] = (P[(i + 2) % 3] - P[(i + 1) % 3]).norm();
    }
    const double A = 0.5 * (P[1] - P[0]).cross(P[2] - P[0]).norm();
    const double q = mat.thickness * mat.young / (16.0 * (1.0 - mat.poisson * mat.poisson) * A);
    const TriangleSprings b = trbs_springs(X, mat), t = trqs_springs(X, mat);
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3, k = (i + 2) % 3;
      const double ki = q * (2.0 * cot[i] * cot[i] + 1.0 - mat.poisson);
      const double ck = q * (2.0 * cot[i] * cot[j] + mat.poisson - 1.0);
      const double scale = q * (2.0 * (cot[i] * cot[i] + std::abs(cot[i] * cot[j])) + 2.0);
      EXPECT_NEAR(b.tensile[i], ki, 1e-12 * scale) << trial;
      EXPECT_NEAR(b.angular[k], ck, 1e-12 * scale) << trial;
      EXPECT_NEAR(t.tensile[i], 2.0 * L[i] * L[i] * ki, 1e-12 * scale * L[i] * L[i]) << trial;
      EXPECT_NEAR(t.angular[k], 2.0 * L[i] * L[j] * ck, 1e-12 * scale * L[i] * L[j]) << trial;
      EXPECT_GT(b.tensile[i], 0.0) << "tensile stiffness is always positive";
    }
  }
  // Delingette's Fig. 7: on a regular triangle the angular stiffness vanishes for nu = 1/3 and is negative below.
  const std::array<double, 9> reg = {0, 0, 0, 1, 0, 0, 0.5, std::sqrt(3.0) / 2, 0};
  const auto third = trbs_springs(reg, {1.0, 1.0 / 3.0, 1.0});
  for (double c : third.angular) EXPECT_NEAR(c, 0.0, 1e-15);
  for (double c : trbs_springs(reg, {1.0, 0.2, 1.0}).angular) EXPECT_LT(c, 0.0);
  for (double c : trbs_springs(reg, {1.0, 0.45, 1.0}).angular) EXPECT_GT(c, 0.0);
}

}  // namespace
}  // namespace edgefem
