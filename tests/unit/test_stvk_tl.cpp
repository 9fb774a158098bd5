// SPDX-License-Identifier: BSD-3-Clause
// Tests of the total-Lagrangian StVK (materials/stvk_tl.cpp) as the oracle of the edge formulation: identical
// W, f, K to round-off (isotropic and transversely isotropic, every volumetric penalty, heterogeneous tables);
// rigid-motion invariance of the nonlinear formulations; rest stiffness = linear elasticity (+ the quadratic
// penalty's V0 k_vol dJ dJ^T); tet_strain_stress consistent with the forces.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>

#include "materials/cell_output.hpp"
#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

using testing::make_formulation;
using testing::penalty_name;
using testing::TetMesh;

/// x = A X + noise with A = scale * (I + strain noise); scale < 1 compresses (penalty active).
std::vector<double> random_tl_deformation(const TetMesh& m, double scale, double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::Matrix3d A;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) A(r, c) = scale * ((r == c) + 0.2 * u(rng));
  std::vector<double> x(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d y = A * Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k] + amplitude * u(rng);
  }
  return x;
}

// ---------------------------------------------------------------------------------------------------------
// Edge/TSEP and TL give the same W, f, K (to round-off) on a heterogeneous multi-tet mesh.

using SameParam = std::tuple<VolumetricPenalty, bool, double, unsigned>;  // penalty, anisotropic, scale, seed

class TlVsTsep : public ::testing::TestWithParam<SameParam> {};

TEST_P(TlVsTsep, SameEnergyForceAndStiffness) {
  const auto [penalty, aniso, scale, seed] = GetParam();
  const TetMesh m = testing::kuhn_box(3, 2, 2, 0.5, 0.12, seed);
  const auto mat = testing::random_materials(m.n_tets(), penalty, aniso, seed + 100);
  const auto tsep = make_formulation("stvk", m, mat), tl = make_formulation("stvk-tl", m, mat);
  const auto x = random_tl_deformation(m, scale, 0.08, seed);
  const double w_tsep = tsep->energy(x), w_tl = tl->energy(x);
  EXPECT_NEAR(w_tsep, w_tl, 1e-12 * std::abs(w_tl));
  std::vector<double> f_tsep, f_tl;
  const auto K_tsep = testing::dense_stiffness(*tsep, x, &f_tsep);
  const auto K_tl = testing::dense_stiffness(*tl, x, &f_tl);
  EXPECT_LT(testing::rel_max_diff(f_tsep, f_tl), 1e-12);
  // (stvk's K(E) TSEP terms keep their coefficients in single precision, issue 56: float's rounding, 2^-24 ~ 6e-8)
  EXPECT_LT(testing::rel_max_diff(K_tsep, K_tl), 2e-7);
  EXPECT_EQ(tsep->block_pattern(), tl->block_pattern()) << "same COO path";
}

INSTANTIATE_TEST_SUITE_P(StvkTlDeformations, TlVsTsep,
                         ::testing::Combine(::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic),
                                            ::testing::Bool(), ::testing::Values(0.6, 1.0, 1.5),
                                            ::testing::Values(1u, 2u, 3u)),
                         [](const auto& info) {
                           return std::string(penalty_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_aniso" : "_iso") + "_scale" +
                                  std::to_string(static_cast<int>(10 * std::get<2>(info.param))) + "_seed" +
                                  std::to_string(std::get<3>(info.param));
                         });

TEST(StvkTl, SmallHeterogeneousTableSharedByManyTets) {
  // A 4-entry table (isotropic cubic, isotropic quadratic, two fibre directions) indexed by t % 4 — the
  // memory layout build_model uses — against the same materials given one entry per tet.
  std::mt19937 rng(5);
  const std::vector<TetMaterial> table = {TetMaterial::isotropic_material(3.0, 0.3, VolumetricPenalty::cubic),
                                          TetMaterial::isotropic_material(1.5, 0.45, VolumetricPenalty::quadratic),
                                          testing::random_transverse(rng, {1, 0, 0}, VolumetricPenalty::cubic),
                                          testing::random_transverse(rng, {0.3, -0.5, 0.8}, VolumetricPenalty::none)};
  const TetMesh m = testing::kuhn_box(3, 3, 2, 0.4, 0.1, 8);
  std::vector<std::int32_t> ids;
  std::vector<TetMaterial> per_tet;
  for (LocalIndex t = 0; t < m.n_tets(); ++t) {
    ids.push_back(t % 4);
    per_tet.push_back(table[t % 4]);
  }
  for (double scale : {0.7, 1.2}) {
    const auto x = random_tl_deformation(m, scale, 0.05, 3);
    const auto tl = testing::make_formulation("stvk-tl", m, table, ids);
    std::vector<double> f_tl;
    const auto K_tl = testing::dense_stiffness(*tl, x, &f_tl);
    for (const char* name : {"stvk", "stvk-tl"}) {
      const auto a = testing::make_formulation(name, m, table, ids);
      const auto b = make_formulation(name, m, per_tet);
      std::vector<double> fa, fb;
      const auto Ka = testing::dense_stiffness(*a, x, &fa), Kb = testing::dense_stiffness(*b, x, &fb);
      EXPECT_EQ(a->energy(x), b->energy(x)) << name;
      EXPECT_EQ(fa, fb) << name;
      EXPECT_EQ(Ka, Kb) << name;
      EXPECT_NEAR(a->energy(x), tl->energy(x), 1e-12 * std::abs(tl->energy(x))) << name;
      EXPECT_LT(testing::rel_max_diff(fa, f_tl), 1e-12) << name;
      // (stvk's K terms in single precision, issue 56)
      EXPECT_LT(testing::rel_max_diff(Ka, K_tl), name == std::string("stvk") ? 2e-7 : 1e-12) << name;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Rigid motions give zero energy and force (relative to the scale of a unit Green strain).

class RigidMotion : public ::testing::TestWithParam<std::tuple<std::string, VolumetricPenalty>> {};

TEST_P(RigidMotion, ZeroEnergyAndForce) {
  const auto& [name, penalty] = GetParam();
  const TetMesh m = testing::kuhn_box(2, 2, 2, 1.0, 0.1, 4);
  const auto mat = testing::random_materials(m.n_tets(), penalty, true, 6);
  const auto form = make_formulation(name, m, mat);
  // Unit Green strain: x = sqrt(3) X gives E = I.
  std::vector<double> x_unit(m.coords), f_unit(m.coords.size()), f(m.coords.size());
  for (double& v : x_unit) v *= std::sqrt(3.0);
  form->force(x_unit, f_unit);
  const double w_scale = form->energy(x_unit);
  double f_scale = 0.0;
  for (double v : f_unit) f_scale = std::max(f_scale, std::abs(v));
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::Vector3d axis = Eigen::Vector3d(u(rng), u(rng), u(rng)).normalized();
    const Eigen::Matrix3d R = Eigen::AngleAxisd(3.0 * u(rng), axis).toRotationMatrix();
    const Eigen::Vector3d t(10 * u(rng), 10 * u(rng), 10 * u(rng));
    std::vector<double> x(m.coords.size());
    for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
      const Eigen::Vector3d y = R * Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]) + t;
      for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k];
    }
    EXPECT_LT(std::abs(form->energy(x)), 1e-13 * w_scale);
    form->force(x, f);
    for (double v : f) ASSERT_LT(std::abs(v), 1e-12 * f_scale);
  }
}

INSTANTIATE_TEST_SUITE_P(StvkTlAllFormulations, RigidMotion,
                         ::testing::Combine(::testing::Values("stvk", "stvk-nsn", "stvk-tl"),
                                            ::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic)),
                         [](const auto& info) {
                           std::string s = std::get<0>(info.param) + "_" + penalty_name(std::get<1>(info.param));
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// ---------------------------------------------------------------------------------------------------------
// At rest, K of stvk, stvk-tl and linear is the linear-elasticity stiffness sum_T V0 B^T D B (Voigt, engineering
// shear), plus V0 k_vol dJ dJ^T (dJ/dx_a = alpha_a at rest) for the quadratic penalty; NSN's is not (it is a
// spring network).

class RestStiffness : public ::testing::TestWithParam<std::tuple<VolumetricPenalty, bool>> {};

TEST_P(RestStiffness, IsLinearElasticity) {
  const auto [penalty, aniso] = GetParam();
  const TetMesh m = testing::kuhn_box(2, 1, 1, 1.0, 0.0, 1);
  const auto mat = testing::random_materials(m.n_tets(), penalty, aniso, 3);
  const std::size_t n = m.coords.size();
  Eigen::MatrixXd K_lin = Eigen::MatrixXd::Zero(n, n);
  for (LocalIndex t = 0; t < m.n_tets(); ++t) {
    double X[12];
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tets[4 * t + i] + c];
    const auto r = tetgeo::reference_tet(X, t);
    Eigen::Matrix<double, 6, 12> B = Eigen::Matrix<double, 6, 12>::Zero();
    Eigen::Matrix<double, 12, 1> dJ;
    for (int a = 0; a < 4; ++a) {
      const double* g = r.alpha[a];
      B(0, 3 * a) = g[0], B(1, 3 * a + 1) = g[1], B(2, 3 * a + 2) = g[2];
      B(3, 3 * a) = g[1], B(3, 3 * a + 1) = g[0];      // 2 eps_xy
      B(4, 3 * a + 1) = g[2], B(4, 3 * a + 2) = g[1];  // 2 eps_yz
      B(5, 3 * a) = g[2], B(5, 3 * a + 2) = g[0];      // 2 eps_zx
      for (int c = 0; c < 3; ++c) dJ[3 * a + c] = g[c];
    }
    Eigen::Matrix<double, 6, 6> D;
    for (int p = 0; p < 6; ++p)
      for (int q = 0; q < 6; ++q) D(p, q) = mat[t].D[6 * p + q];
    Eigen::Matrix<double, 12, 12> Ke = r.v0 * B.transpose() * D * B;
    if (mat[t].volumetric == VolumetricPenalty::quadratic) Ke += r.v0 * mat[t].k_vol * dJ * dJ.transpose();
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        K_lin.block<3, 3>(3 * m.tets[4 * t + a], 3 * m.tets[4 * t + b]) += Ke.block<3, 3>(3 * a, 3 * b);
  }
  const std::vector<double> ref(K_lin.data(), K_lin.data() + n * n);  // symmetric: layout irrelevant
  for (const char* name : {"stvk", "stvk-tl", "linear"}) {
    std::vector<double> f;
    const auto K = testing::dense_stiffness(*make_formulation(name, m, mat), m.coords, &f);
    // (stvk's K(E) TSEP terms in single precision, issue 56: float's rounding)
    EXPECT_LT(testing::rel_max_diff(K, ref), name == std::string("stvk") ? 2e-7 : 1e-13) << name;
    for (double v : f) EXPECT_EQ(v, 0.0) << name << ": no force at rest";
  }
  const auto K_nsn = testing::dense_stiffness(*make_formulation("stvk-nsn", m, mat), m.coords);
  EXPECT_GT(testing::rel_max_diff(K_nsn, ref), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(StvkTl, RestStiffness,
                         ::testing::Combine(::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(penalty_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_aniso" : "_iso");
                         });

// ---------------------------------------------------------------------------------------------------------
// tet_strain_stress: exact values under a uniform stretch, and V0 (F S) alpha_a reproduces the TL forces
// of a single tet, volumetric penalty included.

namespace {

/// The tet X (12 doubles) under the homogeneous map x = A X + shift (A row-major 3x3).
void map_tet(const double* X, const double* A, const double shift[3], double* x) {
  for (int i = 0; i < 4; ++i)
    for (int r = 0; r < 3; ++r)
      x[3 * i + r] = A[3 * r] * X[3 * i] + A[3 * r + 1] * X[3 * i + 1] + A[3 * r + 2] * X[3 * i + 2] + shift[r];
}

/// The unit tet stretched by diag(s) and shifted by 0.5: X and x (12 doubles each).
void stretched_unit_tet(const double s[3], double* X, double* x) {
  const double unit[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double A[9] = {s[0], 0, 0, 0, s[1], 0, 0, 0, s[2]}, shift[3] = {0.5, 0.5, 0.5};
  std::copy(unit, unit + 12, X);
  map_tet(X, A, shift, x);
}

}  // namespace

TEST(StvkTl, StrainStressOfUniformStretch) {
  const double s[3] = {1.2, 0.9, 1.1};
  double X[12], x[12];
  stretched_unit_tet(s, X, x);
  const auto mat = TetMaterial::isotropic_material(3.0, 0.3, VolumetricPenalty::none);
  std::array<double, 9> E, S;
  tet_strain_stress(X, x, mat, E, S);
  const double tr = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] - 3) / 2;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double e = a == b ? (s[a] * s[a] - 1) / 2 : 0.0;
      EXPECT_NEAR(E[3 * a + b], e, 1e-15);
      EXPECT_NEAR(S[3 * a + b], 2 * mat.mu * e + (a == b ? mat.lambda * tr : 0.0), 1e-14);
    }
}

// tet_strain_stress hands out the F it used: that of the homogeneous map x = A X + c.
TEST(StvkTl, StrainStressGivesItsDeformationGradient) {
  const double X[12] = {0.1, -0.05, 0.02, 1.0, 0.1, -0.1, 0.2, 0.9, 0.05, -0.1, 0.15, 1.1};
  const double A[9] = {1.1, 0.2, -0.1, 0.05, 0.9, 0.15, -0.2, 0.1, 1.2};
  const double shift[3] = {0.0, 0.3, 0.6};
  double x[12];
  map_tet(X, A, shift, x);
  const auto mat = TetMaterial::isotropic_material(3.0, 0.3, VolumetricPenalty::none);
  std::array<double, 9> E, S;
  double F[9];
  tet_strain_stress(X, x, mat, E, S, F);
  for (int q = 0; q < 9; ++q) EXPECT_NEAR(F[q], A[q], 1e-14) << q;
}

// The output's von Mises value (tet_cell_strain_stress) is that of the Cauchy stress F S F^T / J: under a
// uniform stretch diag(s) sigma_aa = s_a^2 S_aa / (s0 s1 s2) in closed form; a rigid rotation of the deformed
// tet changes neither E, S nor the value (sigma rotates with it), with or without the volumetric penalty.
TEST(StvkTl, CellOutputVonMisesIsThatOfTheCauchyStress) {
  const double s[3] = {1.2, 0.9, 1.1};
  double X[12], x[12];
  stretched_unit_tet(s, X, x);
  for (const VolumetricPenalty penalty : {VolumetricPenalty::none, VolumetricPenalty::quadratic}) {
    const auto mat = TetMaterial::isotropic_material(3.0, 0.3, penalty);
    double E[9], S[9];
    const double vm = tet_cell_strain_stress(X, x, mat, E, S);
    const double J = s[0] * s[1] * s[2];
    double sigma[3];
    for (int a = 0; a < 3; ++a) sigma[a] = s[a] * s[a] * S[4 * a] / J;
    const double expected = std::sqrt(0.5 * ((sigma[0] - sigma[1]) * (sigma[0] - sigma[1]) +
                                             (sigma[1] - sigma[2]) * (sigma[1] - sigma[2]) +
                                             (sigma[2] - sigma[0]) * (sigma[2] - sigma[0])));
    EXPECT_GT(expected, 0.1);
    EXPECT_NEAR(vm, expected, 1e-13 * expected);
    std::array<double, 9> Et, St;
    tet_strain_stress(X, x, mat, Et, St);
    for (int q = 0; q < 9; ++q) {
      EXPECT_EQ(E[q], Et[q]);
      EXPECT_EQ(S[q], St[q]);
    }

    const Eigen::Matrix3d R = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, -2, 0.5).normalized()).toRotationMatrix();
    double xr[12];
    for (int i = 0; i < 4; ++i) {
      const Eigen::Vector3d p = R * Eigen::Vector3d(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
      for (int c = 0; c < 3; ++c) xr[3 * i + c] = p[c];
    }
    double Er[9], Sr[9];
    EXPECT_NEAR(tet_cell_strain_stress(X, xr, mat, Er, Sr), expected, 1e-12 * expected);
    for (int q = 0; q < 9; ++q) {
      EXPECT_NEAR(Er[q], E[q], 1e-14);
      EXPECT_NEAR(Sr[q], S[q], 1e-13 * mat.mu);
    }
  }
}

// scale (< 1: cubic penalty active), penalty, anisotropic
class StrainStressForces : public ::testing::TestWithParam<std::tuple<double, VolumetricPenalty, bool>> {};

TEST_P(StrainStressForces, ReproduceTlForces) {
  const auto [scale, penalty, aniso] = GetParam();
  TetMesh m;
  m.coords = {0.1, -0.05, 0.02, 1.0, 0.1, -0.1, 0.2, 0.9, 0.05, -0.1, 0.15, 1.1};
  m.tets = {0, 2, 1, 3};  // negatively oriented on purpose
  std::mt19937 rng(4);
  const auto mat = aniso ? testing::random_transverse(rng, {0.2, 0.9, -0.4}, penalty)
                         : TetMaterial::isotropic_material(2.0, 0.4, penalty);
  const auto x = random_tl_deformation(m, scale, 0.05, 17);
  double X[12], xt[12];
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tets[i] + c], xt[3 * i + c] = x[3 * m.tets[i] + c];
  std::array<double, 9> E, S;
  tet_strain_stress(X, xt, mat, E, S);
  const auto r = tetgeo::reference_tet(X, 0);
  Eigen::Matrix3d F = Eigen::Matrix3d::Zero(), Sm;
  for (int i = 0; i < 4; ++i)
    F += Eigen::Vector3d(xt[3 * i], xt[3 * i + 1], xt[3 * i + 2]) *
         Eigen::Vector3d(r.alpha[i][0], r.alpha[i][1], r.alpha[i][2]).transpose();
  for (int q = 0; q < 9; ++q) Sm(q / 3, q % 3) = S[q];
  EXPECT_LT((Sm - Sm.transpose()).cwiseAbs().maxCoeff(), 1e-14 * Sm.cwiseAbs().maxCoeff()) << "S symmetric";
  const auto tl = make_formulation("stvk-tl", m, std::vector<TetMaterial>{mat});
  std::vector<double> f(12);
  tl->force(x, f);
  double fmax = 0.0, diff = 0.0;
  for (int i = 0; i < 4; ++i) {
    const Eigen::Vector3d fa = r.v0 * F * Sm * Eigen::Vector3d(r.alpha[i][0], r.alpha[i][1], r.alpha[i][2]);
    for (int c = 0; c < 3; ++c) {
      diff = std::max(diff, std::abs(fa[c] - f[3 * m.tets[i] + c]));
      fmax = std::max(fmax, std::abs(f[3 * m.tets[i] + c]));
    }
  }
  EXPECT_LT(diff, 1e-12 * fmax);
}

INSTANTIATE_TEST_SUITE_P(StvkTlScales, StrainStressForces,
                         ::testing::Combine(::testing::Values(0.5, 0.8, 1.0, 1.3),
                                            ::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic),
                                            ::testing::Bool()));

TEST(StvkTl, StrainStressIsDTimesGreenStrain) {
  // Anisotropic S = D eps in Voigt form under a general homogeneous deformation (no penalty).
  std::mt19937 rng(9);
  const auto mat = testing::random_transverse(rng, {1.0, 2.0, -0.5}, VolumetricPenalty::none);
  const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double A[9] = {1.1, 0.2, -0.1, 0.05, 0.9, 0.15, -0.2, 0.1, 1.2};
  const double shift[3] = {0.0, 0.0, 0.0};
  double x[12];
  map_tet(X, A, shift, x);
  std::array<double, 9> E, S;
  tet_strain_stress(X, x, mat, E, S);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double e = 0.5 * (A[a] * A[b] + A[3 + a] * A[3 + b] + A[6 + a] * A[6 + b] - (a == b));
      EXPECT_NEAR(E[3 * a + b], e, 1e-15);
    }
  const double eps[6] = {E[0], E[4], E[8], 2 * E[1], 2 * E[5], 2 * E[6]};
  const int row[3][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      double s = 0.0;
      for (int q = 0; q < 6; ++q) s += mat.D[6 * row[a][b] + q] * eps[q];
      EXPECT_NEAR(S[3 * a + b], s, 1e-14 * 10);
    }
}

}  // namespace
}  // namespace edgefem
