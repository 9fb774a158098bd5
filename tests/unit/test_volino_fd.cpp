// SPDX-License-Identifier: BSD-3-Clause
// Finite-difference tests of Volino's membrane (materials/volino.hpp): f vs W and K vs f for every law on single
// triangles (generic, obtuse, sliver) and a curved, shuffled patch, deformed randomly, stretched, compressed,
// rotated and nearly collapsed, and with strains 1e-4 away from curve knots (FD step 1e-7).
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include <unistd.h>

#include "materials/curve.hpp"
#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "materials/volino.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/volino_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;          // tests/support: meshes, finite differences
using namespace testing::volino;  // tests/support/volino_testing.hpp

using VolinoFdParam = std::tuple<std::string, std::string, std::string>;  // law, mesh, deformation
class VolinoFd : public ::testing::TestWithParam<VolinoFdParam> {};

TEST_P(VolinoFd, ForceAndStiffnessMatchFiniteDifferences) {
  const auto& [law, mesh_name, def] = GetParam();
  const TriMesh m = triangle_mesh_by_name(mesh_name);
  const auto mat = random_volino(law, m.n_tris(), 11);
  const auto form = make(m, mat);
  EXPECT_EQ(form->name(), "volino");
  const auto x = deform_triangles(m, def, 5);

  const auto c = testing::compare_with_finite_differences(*form, x, 1e-6);
  EXPECT_LT(c.force_error, 1e-6) << "f vs dW/dx";
  EXPECT_LT(c.stiffness_error, 1e-6) << "K vs df/dx";
  record_fd_errors(c);
  EXPECT_GT(max_abs(c.f), 0.0);
  EXPECT_EQ(c.f_only, c.f) << "force() and force_and_stiffness() agree";
  EXPECT_EQ(c.asymmetry, 0.0) << "K exactly symmetric";
  // The misprinted eq. (13) (shear stiffness with only two, swapped, terms; geometric term with the wrong sign)
  // is far from the FD tangent: the check can tell.
  double worst13 = 0.0;
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    const VolinoTriangle& r = form->reference(t);
    const auto xt = tri_coords(m, x, t);
    VolinoElement el;
    volino_element(r, mat[t], xt, VolinoStabilization::none, true, el);
    Eigen::Vector3d U = Eigen::Vector3d::Zero(), V = Eigen::Vector3d::Zero();
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector3d p(xt[3 * i], xt[3 * i + 1], xt[3 * i + 2]);
      U += r.ru[i] * p, V += r.rv[i] * p;
    }
    double C[9], s[3];
    mat[t].law.evaluate(el.strain.data(), s, C);
    const double ah = r.area * mat[t].thickness;
    std::vector<double> K13(81), Kel(el.K.begin(), el.K.end());
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        const Eigen::Matrix3d B =
            ah * (C[0] * r.ru[j] * r.ru[i] * U * U.transpose() + C[4] * r.rv[j] * r.rv[i] * V * V.transpose() +
                  C[8] * (r.ru[j] * r.rv[i] * U * V.transpose() + r.rv[j] * r.ru[i] * V * U.transpose())) -
            (s[0] * r.ru[j] * r.ru[i] + s[1] * r.rv[j] * r.rv[i] + s[2] * (r.ru[j] * r.rv[i] + r.rv[j] * r.ru[i])) *
                Eigen::Matrix3d::Identity();
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) K13[9 * (3 * j + a) + 3 * i + b] = B(a, b);
      }
    worst13 = std::max(worst13, testing::rel_max_diff(K13, Kel));
  }
  EXPECT_GT(worst13, 1e-3) << "printed eq. (13) vs the corrected tangent";
}

INSTANTIATE_TEST_SUITE_P(VolinoAllLaws, VolinoFd,
                         ::testing::Combine(::testing::Values("iso", "ortho", "curves"),
                                            ::testing::Values("tri", "obtuse", "sliver", "patch"),
                                            ::testing::Values("random", "stretched", "compressed", "rotated",
                                                              "collapsed")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param);
                         });

/// Positions of a flat mesh (z = 0, default warp = y) under the homogeneous deformation with weft strain e_uu,
/// warp strain e_vv and shear e_uv: x = c + R (u U + v V), U = sqrt(1 + 2 e_uu) e_x, V = a e_x + b e_y,
/// a = e_uv / |U|, b = sqrt(1 + 2 e_vv - a^2), R a generic rotation.
std::vector<double> homogeneous(const TriMesh& m, double e_uu, double e_vv, double e_uv) {
  const double lu = std::sqrt(1.0 + 2.0 * e_uu), a = e_uv / lu, b = std::sqrt(1.0 + 2.0 * e_vv - a * a);
  std::vector<double> x(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const double u = m.coords[3 * v], w = m.coords[3 * v + 1];
    const Eigen::Vector3d y = generic_rotation() * Eigen::Vector3d(lu * u + a * w, b * w, 0.0) +
                              Eigen::Vector3d(0.2, 0.1, -0.3);
    for (int c = 0; c < 3; ++c) x[3 * v + c] = y[c];
  }
  return x;
}

TEST(VolinoFdKnots, CurvesNearKnots) {
  // Strains 1e-4 from knots of all three curves (both sides, tension and compression, and around 0); the FD step
  // 1e-7 moves the strains by < 1e-6 (edges ~ 0.25, |r| < 8), so the stencil never straddles a knot.
  const TriMesh m = triangle_patch(4, 3, 0.2, 5, true, false);  // flat
  std::vector<VolinoMaterial> mat(1);
  mat[0].thickness = 0.3;
  mat[0].law = VolinoLaw::curves(weft_curve(), warp_curve(), shear_curve());
  const std::vector<std::int32_t> ids(m.n_tris(), 0);
  const auto form = make_volino(m.coords, m.tris, mat, ids);
  double worst_f = 0.0, worst_k = 0.0;
  for (double side : {-1.0, 1.0})
    for (double sign : {-1.0, 1.0})
      for (int k = 0; k < 4; ++k) {
        const double d = side * 1e-4;
        const double kw[4] = {0.0, 0.01, 0.05, 0.1}, kp[4] = {0.02, 0.06, 0.15, 0.3}, ks[4] = {0.05, 0.2, 0.5, 0.0};
        const double e_uu = sign * (kw[k] + d), e_vv = sign * (kp[k] - d), e_uv = sign * (ks[k] + d);
        const auto x = homogeneous(m, e_uu, e_vv, e_uv);
        std::vector<double> eps(3 * m.n_tris()), sig(eps.size());
        form->strain_stress(x, eps, sig);
        ASSERT_NEAR(eps[0], e_uu, 1e-12);
        ASSERT_NEAR(eps[1], e_vv, 1e-12);
        ASSERT_NEAR(eps[2], e_uv, 1e-12);
        // Perturb so that the FD sees a generic (non-equilibrium) state, keeping strains within 1e-5 of the target.
        std::vector<double> xp = x;
        std::mt19937 rng(k);
        std::uniform_real_distribution<double> u(-1e-6, 1e-6);
        for (double& c : xp) c += u(rng);
        std::vector<double> f;
        const auto K = testing::dense_stiffness(*form, xp, &f);
        const auto f_fd = testing::fd_force(*form, xp, 1e-7);
        const auto K_fd = testing::fd_stiffness(*form, xp, 1e-7);
        const double ef = testing::rel_max_diff(f, f_fd, 1e-3), ek = testing::rel_max_diff(K, K_fd);
        EXPECT_LT(ek, 1e-6) << "knot " << k << " side " << side << " sign " << sign;
        EXPECT_LT(ef, 1e-5) << "knot " << k << " side " << side << " sign " << sign;
        worst_f = std::max(worst_f, ef), worst_k = std::max(worst_k, ek);
      }
  std::printf("[ volino ] near knots (1e-4 away, FD step 1e-7): max rel err f %.2e, K %.2e\n", worst_f, worst_k);
}

}  // namespace
}  // namespace edgefem
