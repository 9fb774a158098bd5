// SPDX-License-Identifier: BSD-3-Clause
// Tests of the strain-stress curves of Volino's membrane (materials/curve.hpp): knots interpolated exactly,
// Steffen's derivatives on a hand example, C^1 at every knot (piece to the left vs piece to the right), monotone
// on monotone data, exact on linear data, odd extension, energy = the exact integral (Gauss-Legendre and finite
// differences), linear extrapolation, input errors, the CSV reader.
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
#include "tests/support/test_directory.hpp"
#include "tests/support/volino_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;          // tests/support: meshes, finite differences
using namespace testing::volino;  // tests/support/volino_testing.hpp

// ---------------------------------------------------------------------------------------------------------
// 1. Curves

TEST(VolinoCurve, InterpolatesKnotsWithSteffensDerivatives) {
  // Hand example: knots 0, 1, 2 with stresses 0, 1, 3: s = (1, 2); d_0 = s_0 = 1 (odd extension);
  // d_1 = 2 min(1, 2, p/2), p = (1 + 2)/2 = 1.5 -> 1.5; d_2 = p = 2 (1 + 1/2) - 1 (1/2) = 2.5 (< 2 s_1 = 4).
  const StressCurve c({{1.0, 1.0}, {2.0, 3.0}});
  ASSERT_EQ(c.knot_strains().size(), 3u) << "(0, 0) added";
  EXPECT_EQ(c.knot_slopes(), (std::vector<double>{1.0, 1.5, 2.5}));
  const StressCurve w = warp_curve();
  for (std::size_t k = 0; k < w.knot_strains().size(); ++k) {
    EXPECT_EQ(w.stress(w.knot_strains()[k]), w.knot_stresses()[k]) << k;
    EXPECT_EQ(w.stress(-w.knot_strains()[k]), -w.knot_stresses()[k]) << k;
  }
  // Steffen's end clamp: a last secant much steeper than the previous one is limited to 2 s_{n-1}... and a
  // sign change gives 0.
  const StressCurve up({{1.0, 0.1}, {1.1, 10.0}});
  EXPECT_LE(up.knot_slopes().back(), 2.0 * (10.0 - 0.1) / 0.1 + 1e-12);
  const StressCurve bump({{1.0, 2.0}, {2.0, 1.0}});
  EXPECT_EQ(bump.knot_slopes()[1], 0.0) << "local maximum at an interior knot: zero slope";
  EXPECT_FALSE(bump.nondecreasing());
  EXPECT_TRUE(w.nondecreasing());
}

TEST(VolinoCurve, IsC1AtEveryKnot) {
  double worst_s = 0.0, worst_d = 0.0, worst_w = 0.0;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<CurvePoint> p;
    double x = 0.0, y = 0.0;
    const int n = 2 + trial % 7;
    for (int k = 0; k < n; ++k) {
      x += 0.01 + u(rng);
      y += (trial % 3 == 0 ? u(rng) - 0.3 : u(rng) * u(rng) * 5.0);  // some non-monotone sets
      p.push_back({x, y});
    }
    const StressCurve c(p);
    const auto& X = c.knot_strains();
    for (std::size_t k = 1; k < X.size(); ++k) {
      const CurveValue l = c.evaluate_piece(k - 1, X[k]), r = c.evaluate_piece(k, X[k]);
      const double scale_s = std::max(1.0, std::abs(r.stress)), scale_d = std::max(1.0, std::abs(r.slope));
      const double scale_w = std::max(1.0, std::abs(r.energy));
      worst_s = std::max(worst_s, std::abs(l.stress - r.stress) / scale_s);
      worst_d = std::max(worst_d, std::abs(l.slope - r.slope) / scale_d);
      worst_w = std::max(worst_w, std::abs(l.energy - r.energy) / scale_w);
    }
    // At 0: the odd extension's slope is even, so left and right derivatives agree with d_0.
    EXPECT_EQ(c.evaluate(0.0).slope, c.knot_slopes()[0]);
    EXPECT_NEAR(c.evaluate(-1e-9).slope, c.evaluate(1e-9).slope, 1e-15 * std::max(1.0, std::abs(c.knot_slopes()[0])));
  }
  EXPECT_LT(worst_s, 1e-12) << "C0";
  EXPECT_LT(worst_d, 1e-12) << "C1";
  EXPECT_LT(worst_w, 1e-12) << "energy continuous";
  std::printf("[ volino ] curves: max jump at knots: stress %.1e, slope %.1e, energy %.1e (relative)\n", worst_s,
              worst_d, worst_w);
}

TEST(VolinoCurve, MonotoneOnMonotoneData) {
  // Data with flat stretches and abrupt steps, where an unconstrained C^1 cubic (e.g. Catmull-Rom) overshoots.
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<CurvePoint> p;
    double x = 0.0, y = 0.0;
    for (int k = 0; k < 8; ++k) {
      x += 0.05 + u(rng);
      const double r = u(rng);
      y += r < 0.3 ? 0.0 : (r < 0.6 ? 10.0 * u(rng) : 0.1 * u(rng));
      p.push_back({x, y});
    }
    const StressCurve c(p);
    ASSERT_TRUE(c.nondecreasing());
    double prev = -1e300;
    const double xmax = c.knot_strains().back() * 1.2;
    for (int s = -2000; s <= 2000; ++s) {
      const double e = xmax * s / 2000.0;
      const CurveValue v = c.evaluate(e);
      EXPECT_GE(v.stress, prev - 1e-13 * std::max(1.0, std::abs(prev))) << "trial " << trial << " eps " << e;
      EXPECT_GE(v.slope, -1e-12) << "trial " << trial << " eps " << e;
      prev = v.stress;
    }
    // No overshoot: between two knots the curve stays between their stresses.
    const auto& X = c.knot_strains();
    const auto& Y = c.knot_stresses();
    for (std::size_t k = 0; k + 1 < X.size(); ++k)
      for (int s = 1; s < 50; ++s) {
        const double v = c.stress(X[k] + (X[k + 1] - X[k]) * s / 50.0);
        EXPECT_GE(v, Y[k] - 1e-13 * std::abs(Y[k + 1]));
        EXPECT_LE(v, Y[k + 1] + 1e-13 * std::abs(Y[k + 1]));
      }
  }
}

TEST(VolinoCurve, ExactOnLinearDataAndOdd) {
  const double k = 37.5;
  const StressCurve c({{0.013, k * 0.013}, {0.05, k * 0.05}, {0.051, k * 0.051}, {0.4, k * 0.4}, {1.7, k * 1.7}});
  double worst = 0.0;
  for (int s = -300; s <= 300; ++s) {
    const double e = 2.5 * s / 300.0;  // compression, interior, extrapolation
    const CurveValue v = c.evaluate(e);
    worst = std::max({worst, std::abs(v.stress - k * e) / (k * 2.5), std::abs(v.slope - k) / k,
                      std::abs(v.energy - 0.5 * k * e * e) / (k * 2.5 * 2.5)});
    const CurveValue m = c.evaluate(-e);
    EXPECT_EQ(m.stress, -v.stress) << "odd";
    EXPECT_EQ(m.slope, v.slope) << "slope even";
    EXPECT_EQ(m.energy, v.energy) << "energy even";
  }
  EXPECT_LT(worst, 1e-14);
  const StressCurve lin = StressCurve::linear(k);
  EXPECT_NEAR(lin.stress(3.0), 3.0 * k, 1e-13 * k);
  EXPECT_EQ(StressCurve().stress(0.7), 0.0);
}

TEST(VolinoCurve, EnergyIsTheExactIntegralAndExtrapolationIsLinear) {
  const StressCurve c = warp_curve();
  // 3-point Gauss-Legendre is exact on cubics: integrate piece by piece.
  const double gx[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
  const auto& X = c.knot_strains();
  double W = 0.0, worst = 0.0;
  for (std::size_t k = 0; k + 1 < X.size(); ++k) {
    const double a = X[k], b = X[k + 1];
    for (int q = 0; q < 3; ++q) W += 0.5 * (b - a) * gw[q] * c.stress(0.5 * (a + b) + 0.5 * (b - a) * gx[q]);
    worst = std::max(worst, std::abs(c.evaluate(b).energy - W) / W);
  }
  EXPECT_LT(worst, 1e-13);
  // dw/deps = sigma and dsigma/deps = slope by central differences (h = 1e-6), away from knots.
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  double worst_w = 0.0, worst_s = 0.0;
  for (int i = 0; i < 200; ++i) {
    const double e = u(rng), h = 1e-6;
    const CurveValue v = c.evaluate(e);
    worst_w = std::max(worst_w, std::abs((c.evaluate(e + h).energy - c.evaluate(e - h).energy) / (2 * h) - v.stress) /
                                    std::max(1.0, std::abs(v.stress)));
    worst_s = std::max(worst_s, std::abs((c.stress(e + h) - c.stress(e - h)) / (2 * h) - v.slope) /
                                    std::max(1.0, std::abs(v.slope)));
  }
  EXPECT_LT(worst_w, 1e-7);
  EXPECT_LT(worst_s, 1e-5);  // O(h sigma''' jump) near knots
  // Beyond the last knot: y_n + d_n t.
  const double xn = X.back(), yn = c.knot_stresses().back(), dn = c.knot_slopes().back();
  EXPECT_GT(dn, 0.0);
  for (double t : {0.0, 0.1, 1.0, 5.0}) {
    EXPECT_NEAR(c.stress(xn + t), yn + dn * t, 1e-13 * (yn + dn * t));
    EXPECT_EQ(c.evaluate(xn + t).slope, dn);
  }
}

TEST(VolinoCurve, RejectsBadPoints) {
  auto msg = [](std::vector<CurvePoint> p) {
    try {
      StressCurve c(std::move(p), "warp curve");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg({}).find("no (strain, stress) points"), std::string::npos);
  EXPECT_NE(msg({{0.1, 1.0}, {0.1, 2.0}}).find("strictly increasing"), std::string::npos);
  EXPECT_NE(msg({{0.2, 1.0}, {0.1, 2.0}}).find("point 1"), std::string::npos);
  EXPECT_NE(msg({{-0.1, -1.0}, {0.1, 2.0}}).find("negative strain"), std::string::npos);
  EXPECT_NE(msg({{0.0, 1.0}, {0.1, 2.0}}).find("(0, 0)"), std::string::npos);
  EXPECT_NE(msg({{0.1, std::nan("")}}).find("not finite"), std::string::npos);
  EXPECT_NE(msg({{0.0, 0.0}}).find("at least one point"), std::string::npos);
  EXPECT_NE(msg({{0.2, 1.0}, {0.1, 2.0}}).find("warp curve"), std::string::npos);
}

class CurveCsv : public testing::DirectoryTest {
 protected:
  CurveCsv() : DirectoryTest("volino_curve") {}
  std::string error_of(const std::string& path) {
    try {
      read_curve_csv(path);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(CurveCsv, ReadsHeaderCommentsAndSeparators) {
  const auto p = write("warp.csv",
                       "\xEF\xBB\xBFstrain,stress  # Green strain, Pa\n"
                       "# measured warp curve\n"
                       "\n"
                       "0, 0\r\n"
                       "0.01 ,0.5\n"
                       "0.05;3.0\n"
                       "  0.1\t12   # tab separated\n"
                       "2e-1 6.0e1\n");
  const auto pts = read_curve_csv(p);
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_EQ(pts[1].strain, 0.01);
  EXPECT_EQ(pts[2].stress, 3.0);
  EXPECT_EQ(pts[3].stress, 12.0);
  EXPECT_EQ(pts[4].strain, 0.2);
  EXPECT_EQ(pts[4].stress, 60.0);
  const StressCurve c(pts);
  EXPECT_EQ(c.stress(0.05), 3.0);
  // Without a header either.
  EXPECT_EQ(read_curve_csv(write("b.csv", "0.1,1\n0.2,3\n")).size(), 2u);
}

TEST_F(CurveCsv, ErrorsNameFileLineAndValue) {
  const auto bad = write("bad.csv", "strain,stress\n0.01,0.5\n0.05,x1\n");
  std::string e = error_of(bad);
  EXPECT_NE(e.find(bad), std::string::npos) << e;
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("'x1'"), std::string::npos) << e;
  e = error_of(write("s.csv", "0.01,0.5\n0.02a,1\n"));
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("strain '0.02a'"), std::string::npos) << e;
  e = error_of(write("cols.csv", "0.01,0.5\n\n0.02,1,3\n"));
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 2 values"), std::string::npos) << e;
  e = error_of(write("order.csv", "0.01,0.5\n# c\n0.03,1\n0.02,2\n"));
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  EXPECT_NE(e.find("line 3"), std::string::npos) << e << " (names the previous point's line)";
  EXPECT_NE(e.find("strictly increasing"), std::string::npos) << e;
  e = error_of(write("neg.csv", "-0.01,-0.5\n0.02,1\n"));
  EXPECT_NE(e.find("line 1"), std::string::npos) << e;
  EXPECT_NE(e.find("negative"), std::string::npos) << e;
  e = error_of(write("zero.csv", "0,0.5\n0.02,1\n"));
  EXPECT_NE(e.find("at strain 0 must be 0"), std::string::npos) << e;
  e = error_of(write("inf.csv", "0.01,inf\n"));
  EXPECT_NE(e.find("'inf'"), std::string::npos) << e;
  e = error_of(write("empty.csv", "# nothing\nstrain,stress\n"));
  EXPECT_NE(e.find("no (strain, stress) points"), std::string::npos) << e;
  e = error_of((dir_ / "missing.csv").string());
  EXPECT_NE(e.find("cannot open"), std::string::npos) << e;
  EXPECT_NE(e.find("missing.csv"), std::string::npos) << e;
}

}  // namespace
}  // namespace edgefem
