// SPDX-License-Identifier: BSD-3-Clause
// Tests of Volino's laws and weft/warp frame (materials/volino.hpp): sigma = dw/deps and C = dsigma/deps by finite
// differences, positive-definiteness checks; eq. (5), default axes, angle, flipped triangles, projected 3D
// direction, rejected normal directions.
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

// ---------------------------------------------------------------------------------------------------------
// 2. Laws and frame

TEST(VolinoLaw, StressAndTangentAreDerivativesOfTheEnergy) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(-0.45, 0.45);
  const std::vector<std::pair<std::string, VolinoLaw>> laws = {
      {"iso", VolinoLaw::isotropic(3.0, 0.3)},
      {"ortho", VolinoLaw::orthotropic(4.0, 1.5, 0.4, 0.5)},
      {"general", VolinoLaw::linear({3, 1, 0.5, 1, 2, -0.3, 0.5, -0.3, 1})},
      {"curves", VolinoLaw::curves(weft_curve(), warp_curve(), shear_curve())}};
  for (const auto& [name, law] : laws) {
    double worst_s = 0.0, worst_c = 0.0;
    for (int trial = 0; trial < 100; ++trial) {
      const double eps[3] = {u(rng), u(rng), u(rng)};
      double sig[3], C[9];
      law.evaluate(eps, sig, C);
      for (int m = 0; m < 3; ++m) {
        const double h = 1e-6;
        double ep[3] = {eps[0], eps[1], eps[2]}, em[3] = {eps[0], eps[1], eps[2]}, sp[3], sm[3];
        ep[m] += h;
        em[m] -= h;
        const double dw = (law.evaluate(ep, sp, nullptr) - law.evaluate(em, sm, nullptr)) / (2 * h);
        worst_s = std::max(worst_s, std::abs(dw - sig[m]) / std::max(1.0, max_abs(sig)));
        for (int r = 0; r < 3; ++r)
          worst_c = std::max(worst_c, std::abs((sp[r] - sm[r]) / (2 * h) - C[3 * r + m]) / std::max(1.0, max_abs(C)));
      }
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) EXPECT_EQ(C[3 * r + c], C[3 * c + r]) << name;
    }
    EXPECT_LT(worst_s, 1e-8) << name;
    EXPECT_LT(worst_c, 1e-5) << name;
  }
  // Eq. (4) and the orthotropic matrix.
  const auto I = VolinoLaw::isotropic(2.0, 0.25).matrix();  // a copy: the law is a temporary
  EXPECT_NEAR(I[0], 2.0 / (1 - 0.0625), 1e-15);
  EXPECT_NEAR(I[1], 0.25 * 2.0 / (1 - 0.0625), 1e-15);
  EXPECT_NEAR(I[8], 2.0 / 2.5, 1e-15);
  const auto O = VolinoLaw::orthotropic(4.0, 1.0, 0.3, 0.5).matrix();  // a copy; nu_pw = 0.125, q = 0.9375
  EXPECT_NEAR(O[0], 4.0 / 0.9375, 1e-14);
  EXPECT_NEAR(O[4], 1.0 / 0.9375, 1e-14);
  EXPECT_NEAR(O[1], 0.5 / 0.9375, 1e-14);
  EXPECT_EQ(O[8], 0.3);
  // Uniaxial weft stress: eps_vv = -nu_wp eps_uu.
  const double eps_u[3] = {0.01, -0.005, 0.0};
  double s[3];
  VolinoLaw::orthotropic(4.0, 1.0, 0.3, 0.5).evaluate(eps_u, s, nullptr);
  EXPECT_NEAR(s[1], 0.0, 1e-16);
}

TEST(VolinoLaw, RejectsInvalidParameters) {
  auto msg = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([] { VolinoLaw::orthotropic(1.0, 4.0, 1.0, 0.6); }).find("not positive definite"), std::string::npos);
  EXPECT_NE(msg([] { VolinoLaw::orthotropic(1.0, 4.0, 1.0, 0.6); }).find("nu^2 < E_weft / E_warp"), std::string::npos);
  EXPECT_NO_THROW(VolinoLaw::orthotropic(1.0, 4.0, 1.0, 0.49));
  EXPECT_NE(msg([] { VolinoLaw::orthotropic(0.0, 4.0, 1.0, 0.1); }).find("weft modulus"), std::string::npos);
  EXPECT_NE(msg([] { VolinoLaw::orthotropic(1.0, -4.0, 1.0, 0.1); }).find("warp modulus"), std::string::npos);
  EXPECT_NE(msg([] { VolinoLaw::orthotropic(1.0, 4.0, 0.0, 0.1); }).find("shear modulus"), std::string::npos);
  EXPECT_NE(msg([] { VolinoLaw::isotropic(1.0, 1.0); }).find("Poisson"), std::string::npos);
  EXPECT_NE(msg([] { VolinoLaw::isotropic(-1.0, 0.3); }).find("Young"), std::string::npos);
  EXPECT_NE(msg([] {
              VolinoLaw::linear({1, 2, 0, 2, 1, 0, 0, 0, 1});
            }).find("not positive definite"),
            std::string::npos);
  EXPECT_NE(msg([] { VolinoLaw::linear({1, 0.1, 0, 0, 1, 0, 0, 0, 1}); }).find("not symmetric"), std::string::npos);
  VolinoMaterial m;
  m.thickness = 0.0;
  EXPECT_NE(msg([&] { check_volino_material(m); }).find("thickness"), std::string::npos);
  m.thickness = 1.0;
  m.viscosity = {1, 2, 0, 2, 1, 0, 0, 0, 1};
  EXPECT_NE(msg([&] { check_volino_material(m); }).find("positive semidefinite"), std::string::npos);
  m.viscosity = {1, 0, 0, 0, 0, 0, 0, 0, 1};  // singular PSD: accepted
  EXPECT_NO_THROW(check_volino_material(m));
  EXPECT_EQ(parse_volino_stabilization("eigen-clamp"), VolinoStabilization::eigen_clamp);
  EXPECT_EQ(to_string(VolinoStabilization::clamp), "clamp");
  EXPECT_NE(msg([] { parse_volino_stabilization("eigen"); }).find("none, clamp or eigen-clamp"), std::string::npos);
}

TEST(VolinoFrame, WeftWarpFrameAndEquationFive) {
  // Sheet in the z = 0 plane, defaults: weft = x, warp = y, for both vertex orders.
  const std::array<double, 9> X = {0.1, 0.2, 0, 1.3, 0.4, 0, 0.5, 1.1, 0};
  const std::array<double, 9> Xf = {0.1, 0.2, 0, 0.5, 1.1, 0, 1.3, 0.4, 0};  // flipped orientation
  for (const auto& P : {X, Xf}) {
    const VolinoTriangle r = volino_reference(P, WarpDirection{});
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(r.weft[c], c == 0 ? 1.0 : 0.0, 1e-15);
      EXPECT_NEAR(r.warp[c], c == 1 ? 1.0 : 0.0, 1e-15);
      EXPECT_NEAR(r.normal[c], c == 2 ? 1.0 : 0.0, 1e-15);
    }
    // Eq. (5): sum r_u = sum r_v = 0, sum r_u u = sum r_v v = 1, sum r_u v = sum r_v u = 0 with u = x, v = y.
    double s[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      s[0] += r.ru[i], s[1] += r.rv[i], s[2] += r.ru[i] * P[3 * i], s[3] += r.rv[i] * P[3 * i + 1];
      s[4] += r.ru[i] * P[3 * i + 1], s[5] += r.rv[i] * P[3 * i];
    }
    EXPECT_NEAR(s[0], 0, 1e-14);
    EXPECT_NEAR(s[1], 0, 1e-14);
    EXPECT_NEAR(s[2], 1, 1e-14);
    EXPECT_NEAR(s[3], 1, 1e-14);
    EXPECT_NEAR(s[4], 0, 1e-14);
    EXPECT_NEAR(s[5], 0, 1e-14);
    const double A = 0.5 * std::abs((1.3 - 0.1) * (1.1 - 0.2) - (0.5 - 0.1) * (0.4 - 0.2));
    EXPECT_NEAR(r.area, A, 1e-15);
  }
  // Angle: weft = (cos a, sin a, 0), warp = (-sin a, cos a, 0).
  WarpDirection w;
  w.angle = 0.6;
  const VolinoTriangle r = volino_reference(X, w);
  EXPECT_NEAR(r.weft[0], std::cos(0.6), 1e-15);
  EXPECT_NEAR(r.weft[1], std::sin(0.6), 1e-15);
  EXPECT_NEAR(r.warp[0], -std::sin(0.6), 1e-15);
  EXPECT_NEAR(r.warp[1], std::cos(0.6), 1e-15);
  // A 3D direction is projected into the plane; `up` = -z turns the angle the other way.
  w = WarpDirection{{1.0, 1.0, 5.0}, 0.0, {0, 0, 1}};
  const VolinoTriangle p = volino_reference(X, w);
  EXPECT_NEAR(p.warp[0], std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(p.warp[1], std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(p.warp[2], 0.0, 1e-15);
  w = WarpDirection{{0, 1, 0}, 0.6, {0, 0, -1}};
  EXPECT_NEAR(volino_reference(X, w).warp[0], std::sin(0.6), 1e-15);
  EXPECT_NEAR(volino_reference(X, w).warp[1], std::cos(0.6), 1e-15);
  // A direction normal to the plane is rejected, and so is a degenerate triangle.
  w = WarpDirection{{0, 0, 1}, 0.0, {0, 0, 1}};
  EXPECT_THROW(volino_reference(X, w), std::invalid_argument);
  const std::array<double, 9> line = {0, 0, 0, 1, 1, 1, 2, 2, 2};
  EXPECT_THROW(volino_reference(line, WarpDirection{}), std::invalid_argument);
}

TEST(VolinoFrame, RestStateIsStrainAndForceFree) {
  for (const char* law : {"iso", "ortho", "curves"}) {
    const TriMesh m = triangle_patch(5, 4, 0.3, 3);
    const auto mat = random_volino(law, m.n_tris(), 8);
    const auto form = make(m, mat);
    std::vector<double> eps(3 * m.n_tris()), sig(eps.size()), f(m.coords.size()), fs(f.size());
    form->strain_stress(m.coords, eps, sig);
    EXPECT_LT(max_abs(eps), 1e-14) << law;
    form->force(m.coords, f);
    form->force(deform_triangles(m, "stretched", 1), fs);
    EXPECT_LT(max_abs(f), 1e-13 * max_abs(fs)) << law;
    EXPECT_LT(std::abs(form->energy(m.coords)), 1e-25) << law;
  }
}

}  // namespace
}  // namespace edgefem
