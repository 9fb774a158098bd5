// SPDX-License-Identifier: BSD-3-Clause
// Stabilisation of Volino's membrane (materials/volino.hpp): forces unchanged, tangents unchanged for PSD stress,
// eigen-clamp geometric part PSD and the element tangent PSD under compression, clamp vs eigen-clamp on a sheared
// stress.
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
// 5. Stabilisation

TEST(VolinoStabilization, GeometricStressProjection) {
  // Clamp leaves sigma_uv: S = [[1, 2], [2, 1]] (eigenvalues 3, -1) stays indefinite; eigen-clamp gives 3 e e^T,
  // e = (1, 1)/sqrt 2.
  const std::array<double, 3> S = {1.0, 1.0, 2.0};
  EXPECT_EQ(volino_geometric_stress(S, VolinoStabilization::clamp), S);
  const auto P = volino_geometric_stress(S, VolinoStabilization::eigen_clamp);
  EXPECT_NEAR(P[0], 1.5, 1e-15);
  EXPECT_NEAR(P[1], 1.5, 1e-15);
  EXPECT_NEAR(P[2], 1.5, 1e-15);
  EXPECT_EQ(volino_geometric_stress({-1.0, 2.0, 0.0}, VolinoStabilization::clamp),
            (std::array<double, 3>{0.0, 2.0, 0.0}));
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 1000; ++trial) {
    const std::array<double, 3> s = {u(rng), u(rng), u(rng)};
    Eigen::Matrix2d M;
    M << s[0], s[2], s[2], s[1];
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> es(M);
    const Eigen::Matrix2d ref = es.eigenvectors() * es.eigenvalues().cwiseMax(0.0).asDiagonal() *
                                es.eigenvectors().transpose();
    const auto p = volino_geometric_stress(s, VolinoStabilization::eigen_clamp);
    EXPECT_NEAR(p[0], ref(0, 0), 1e-14) << trial;
    EXPECT_NEAR(p[1], ref(1, 1), 1e-14) << trial;
    EXPECT_NEAR(p[2], ref(0, 1), 1e-14) << trial;
    if (es.eigenvalues().minCoeff() >= 0) {
      EXPECT_EQ(p, s) << "PSD stress unchanged";
    }
    EXPECT_EQ(volino_geometric_stress(s, VolinoStabilization::none), s);
  }
}

TEST(VolinoStabilization, ForcesUnchangedTangentsUnchangedForTensileStress) {
  const TriMesh m = triangle_patch(5, 4, 0.3, 6);
  for (const char* law : {"iso", "curves"}) {
    auto mat = random_volino(law, m.n_tris(), 4);
    if (std::string(law) == "iso")
      for (auto& mt : mat) mt.law = VolinoLaw::isotropic(2.0, 0.3);  // nu >= 0: uniform stretch -> S PSD
    const auto none = make(m, mat), clamp = make(m, mat, VolinoStabilization::clamp),
               eig = make(m, mat, VolinoStabilization::eigen_clamp);
    EXPECT_EQ(eig->stabilization(), VolinoStabilization::eigen_clamp);
    for (const std::string def : {"uniform-stretch", "compressed", "random"}) {
      const auto x = deform_triangles(m, def, 2);
      std::vector<double> f0, f1, f2;
      const auto K0 = testing::dense_stiffness(*none, x, &f0);
      const auto K1 = testing::dense_stiffness(*clamp, x, &f1);
      const auto K2 = testing::dense_stiffness(*eig, x, &f2);
      EXPECT_EQ(f0, f1) << law << " " << def;
      EXPECT_EQ(f0, f2) << law << " " << def;
      EXPECT_EQ(none->energy(x), eig->energy(x));
      std::vector<double> eps(3 * m.n_tris()), sig(eps.size());
      none->strain_stress(x, eps, sig);
      bool all_tensile = true, all_psd = true;
      for (std::size_t t = 0; t < m.n_tris(); ++t) {
        const double a = sig[3 * t], b = sig[3 * t + 1], c = sig[3 * t + 2];
        all_tensile = all_tensile && a >= 0 && b >= 0;
        all_psd = all_psd && a >= 0 && b >= 0 && a * b - c * c >= 0;
      }
      if (def == "uniform-stretch") {
        ASSERT_TRUE(all_psd) << law << ": the test needs a PSD stress everywhere";
        EXPECT_EQ(K0, K1) << law;
        EXPECT_EQ(K0, K2) << law;
      }
      if (def == "compressed") {
        ASSERT_FALSE(all_tensile);
        EXPECT_GT(testing::rel_max_diff(K1, K0), 1e-3) << law;
        EXPECT_GT(testing::rel_max_diff(K2, K0), 1e-3) << law;
      }
    }
  }
}

TEST(VolinoStabilization, EigenClampMakesTheTangentPositiveSemidefinite) {
  // Compression (sigma < 0): the exact element tangent has negative eigenvalues (the geometric part acts alone on
  // out-of-plane motions); with the eigen-clamp the geometric part h A D S~ D^T is PSD, K_eig - K_none is exactly
  // that change, and with monotone laws (C PSD) the element and the assembled tangents are PSD.
  const TriMesh m = triangle_patch(4, 3, 0.3, 2);
  for (const char* law : {"iso", "ortho", "curves"}) {
    const auto mat = random_volino(law, m.n_tris(), 6);
    for (const std::string def : {"compressed", "random", "collapsed"}) {
      const auto x = deform_triangles(m, def, 7);
      double min_none = 0.0, min_eig = 1e300, min_geo = 1e300, worst_diff = 0.0;
      for (std::size_t t = 0; t < m.n_tris(); ++t) {
        const auto X = tri_coords(m, m.coords, t), xt = tri_coords(m, x, t);
        const VolinoTriangle r = volino_reference(X, mat[t].warp);
        VolinoElement e0, e2;
        volino_element(r, mat[t], xt, VolinoStabilization::none, true, e0);
        volino_element(r, mat[t], xt, VolinoStabilization::eigen_clamp, true, e2);
        const auto Sg = volino_geometric_stress(e0.stress, VolinoStabilization::eigen_clamp);
        const double ah = r.area * mat[t].thickness;
        Eigen::Matrix3d G;
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i)
            G(j, i) = ah * (r.ru[j] * r.ru[i] * Sg[0] + r.rv[j] * r.rv[i] * Sg[1] +
                            (r.ru[j] * r.rv[i] + r.rv[j] * r.ru[i]) * Sg[2]);
        const double gmax = std::max(1e-300, G.cwiseAbs().maxCoeff());
        min_geo = std::min(min_geo, Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(G).eigenvalues().minCoeff() / gmax);
        // K_eig - K_none = h A (D (S~ - S) D^T) (x) I
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) {
            const double dg = ah *
                              (r.ru[j] * r.ru[i] * (Sg[0] - e0.stress[0]) + r.rv[j] * r.rv[i] * (Sg[1] - e0.stress[1]) +
                               (r.ru[j] * r.rv[i] + r.rv[j] * r.ru[i]) * (Sg[2] - e0.stress[2]));
            for (int a = 0; a < 3; ++a)
              for (int b = 0; b < 3; ++b) {
                const int q = 9 * (3 * j + a) + 3 * i + b;
                worst_diff = std::max(worst_diff, std::abs(e2.K[q] - e0.K[q] - (a == b ? dg : 0.0)) / max_abs(e0.K));
              }
          }
        Eigen::Matrix<double, 9, 9> K0, K2;
        for (int a = 0; a < 81; ++a) K0(a / 9, a % 9) = e0.K[a], K2(a / 9, a % 9) = e2.K[a];
        const double kmax = K0.cwiseAbs().maxCoeff();
        min_none = std::min(min_none,
                            Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>>(K0).eigenvalues().minCoeff() /
                                kmax);
        min_eig = std::min(min_eig,
                           Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>>(K2).eigenvalues().minCoeff() /
                               kmax);
      }
      EXPECT_GE(min_geo, -1e-14) << law << " " << def;
      EXPECT_GE(min_eig, -1e-12) << law << " " << def;
      EXPECT_LT(worst_diff, 1e-13) << law << " " << def;
      if (def == "compressed") {
        EXPECT_LT(min_none, -1e-3) << law << ": the exact tangent is indefinite";
      }
      // Assembled: sum of PSD element tangents.
      const auto K = testing::dense_stiffness(*make(m, mat, VolinoStabilization::eigen_clamp), x);
      const std::size_t n = x.size();
      const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(as_matrix(K, n)).eigenvalues();
      EXPECT_GE(ev.minCoeff(), -1e-12 * ev.cwiseAbs().maxCoeff()) << law << " " << def;
    }
  }
  // Clamp is not enough when sigma_uv is large: a sheared state with sigma_uu, sigma_vv >= 0 but S indefinite.
  TriMesh one = single_triangle("tri");
  std::vector<VolinoMaterial> mat(1);
  mat[0].law = VolinoLaw::orthotropic(1.0, 1.0, 20.0, 0.0);  // stiff shear
  const VolinoTriangle r = volino_reference(std::span<const double, 9>(one.coords.data(), 9), mat[0].warp);
  std::vector<double> x(9);
  for (int i = 0; i < 3; ++i)  // x = X + 0.3 (v_i) weft + 0.02 (u_i + v_i) (weft + warp): shear >> stretch
    for (int c = 0; c < 3; ++c) {
      double u = 0, v = 0;
      for (int d = 0; d < 3; ++d) {
        u += (one.coords[3 * i + d] - one.coords[d]) * r.weft[d];
        v += (one.coords[3 * i + d] - one.coords[d]) * r.warp[d];
      }
      x[3 * i + c] = one.coords[3 * i + c] + 0.3 * v * r.weft[c] + 0.05 * (u * r.weft[c] + v * r.warp[c]);
    }
  VolinoElement e1, e2;
  volino_element(r, mat[0], std::span<const double, 9>(x.data(), 9), VolinoStabilization::clamp, true, e1);
  volino_element(r, mat[0], std::span<const double, 9>(x.data(), 9), VolinoStabilization::eigen_clamp, true, e2);
  ASSERT_GE(e1.stress[0], 0.0);
  ASSERT_GE(e1.stress[1], 0.0);
  ASSERT_LT(e1.stress[0] * e1.stress[1] - e1.stress[2] * e1.stress[2], 0.0);
  Eigen::Matrix<double, 9, 9> K1, K2;
  for (int a = 0; a < 81; ++a) K1(a / 9, a % 9) = e1.K[a], K2(a / 9, a % 9) = e2.K[a];
  const double kmax = K1.cwiseAbs().maxCoeff();
  using Eig9 = Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>>;
  EXPECT_LT(Eig9(K1).eigenvalues().minCoeff(), -1e-3 * kmax) << "clamp leaves the shear stress: indefinite";
  EXPECT_GE(Eig9(K2).eigenvalues().minCoeff(), -1e-12 * kmax);
}

}  // namespace
}  // namespace edgefem
