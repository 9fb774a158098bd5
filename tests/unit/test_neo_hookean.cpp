// SPDX-License-Identifier: BSD-3-Clause
// Tests of the compressible neo-Hookean tetrahedra (materials/neo_hookean.cpp): f = dW/dx and K = df/dx by central
// differences at random deformed states (with and without the volumetric penalty), the per-element energy and
// gradient (the position-based solver's entry) against the formulation, the rest tangent = the linear/StVK
// tangent, zero force under rigid rotation, the energy's closed form, +infinity for inverted tets and the output
// stress (2nd Piola-Kirchhoff) against the forces.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "materials/neo_hookean.hpp"
#include "materials/registry.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

using testing::make_formulation;
using testing::TetMesh;

/// x = A X + noise, A = scale (I + 0.25 random): large stretches and shears, every tet J > 0 (checked).
std::vector<double> random_deformation(const TetMesh& m, double scale, double amplitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::Matrix3d A;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) A(r, c) = scale * ((r == c) + 0.25 * u(rng));
  std::vector<double> x(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d y = A * Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k] + amplitude * u(rng);
  }
  return x;
}

std::vector<TetMaterial> materials(LocalIndex n, VolumetricPenalty penalty) {
  std::vector<TetMaterial> t;
  for (LocalIndex i = 0; i < n; ++i)
    t.push_back(TetMaterial::isotropic_material(1.0 + 0.5 * (i % 3), 0.1 + 0.15 * (i % 3), penalty));
  return t;
}

class NeoHookeanFd : public ::testing::TestWithParam<std::tuple<VolumetricPenalty, double, unsigned>> {};

TEST_P(NeoHookeanFd, ForceIsTheEnergyGradientAndStiffnessTheForceJacobian) {
  const auto [penalty, scale, seed] = GetParam();
  const TetMesh m = testing::kuhn_box(2, 2, 1, 0.5, 0.12, seed);
  const auto form = make_formulation("neo-hookean", m, materials(m.n_tets(), penalty));
  const auto x = random_deformation(m, scale, 0.03, seed);
  ASSERT_TRUE(std::isfinite(form->energy(x)));
  const testing::FdComparison c = testing::compare_with_finite_differences(*form, x, 1e-6);
  testing::record_fd_errors(c);
  // Central differences with h = 1e-6: truncation ~h^2 |W'''|, round-off ~eps |W| / h; both below 1e-7 here.
  EXPECT_LT(c.force_error, 1e-7);
  EXPECT_LT(c.stiffness_error, 1e-7);
  EXPECT_LT(c.asymmetry, 1e-12 * testing::max_abs(c.K));
  EXPECT_EQ(c.f_only, c.f) << "force() and force_and_stiffness() give the same f";
}

INSTANTIATE_TEST_SUITE_P(Deformations, NeoHookeanFd,
                         ::testing::Combine(::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic),
                                            ::testing::Values(0.7, 1.0, 1.4), ::testing::Values(1u, 2u)),
                         [](const auto& info) {
                           return std::string(testing::penalty_name(std::get<0>(info.param))) + "_scale" +
                                  std::to_string(static_cast<int>(10 * std::get<1>(info.param))) + "_seed" +
                                  std::to_string(std::get<2>(info.param));
                         });

TEST(NeoHookean, PerElementFunctionMatchesTheFormulationAndItsHessianIsTheGradientsJacobian) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double X[12] = {0, 0, 0, 1, 0.1, 0, 0.2, 0.9, 0.1, 0.1, 0.2, 1.1};
  double x[12];
  for (int i = 0; i < 12; ++i) x[i] = 1.2 * X[i] + 0.15 * u(rng);
  const TetMaterial mat = TetMaterial::isotropic_material(2.0, 0.3, VolumetricPenalty::none);
  const NeoHookeanRest rest = neo_hookean_rest(X);
  double g[12], H[144];
  const double w = neo_hookean_energy_gradient_hessian(rest, mat.mu, mat.lambda, x, g, H);
  // The same tet through the formulation (the Newton solver's route): same W, same gradient.
  TetMesh m;
  m.coords.assign(X, X + 12);
  m.tets = {0, 1, 2, 3};
  const auto form = make_formulation("neo-hookean", m, std::vector<TetMaterial>{mat});
  std::vector<double> xv(x, x + 12), f(12);
  EXPECT_NEAR(form->energy(xv), w, 1e-14 * std::abs(w));
  form->force(xv, f);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(f[i], g[i], 1e-13 * testing::max_abs(f)) << i;
  double g_only[12];
  EXPECT_EQ(neo_hookean_energy_gradient(rest, mat.mu, mat.lambda, x, g_only), w);
  // Central differences of the gradient against the Hessian.
  const double h = 1e-6;
  double max_err = 0.0, max_h = 0.0;
  for (int j = 0; j < 12; ++j) {
    double xp[12], xm[12], gp[12], gm[12];
    std::copy(x, x + 12, xp);
    std::copy(x, x + 12, xm);
    xp[j] += h, xm[j] -= h;
    neo_hookean_energy_gradient(rest, mat.mu, mat.lambda, xp, gp);
    neo_hookean_energy_gradient(rest, mat.mu, mat.lambda, xm, gm);
    for (int i = 0; i < 12; ++i) {
      max_err = std::max(max_err, std::abs((gp[i] - gm[i]) / (2 * h) - H[12 * i + j]));
      max_h = std::max(max_h, std::abs(H[12 * i + j]));
    }
  }
  EXPECT_LT(max_err, 1e-7 * max_h);
  // Energy closed form at F = diag(2, 1, 1): V0 [mu/2 (4 + 1 + 1 - 3) - mu ln 2 + lambda/2 ln^2 2].
  double xs[12];
  for (int v = 0; v < 4; ++v) xs[3 * v] = 2 * X[3 * v], xs[3 * v + 1] = X[3 * v + 1], xs[3 * v + 2] = X[3 * v + 2];
  const double l2 = std::log(2.0);
  EXPECT_NEAR(neo_hookean_energy_gradient(rest, mat.mu, mat.lambda, xs, g),
              rest.v0 * (1.5 * mat.mu - mat.mu * l2 + 0.5 * mat.lambda * l2 * l2), 1e-14);
}

TEST(NeoHookean, RestTangentIsTheLinearElasticTangentAndRestForceIsZero) {
  for (const VolumetricPenalty p : {VolumetricPenalty::none, VolumetricPenalty::cubic, VolumetricPenalty::quadratic}) {
    const TetMesh m = testing::kuhn_box(2, 2, 2, 0.5, 0.1, 3);
    const auto mat = materials(m.n_tets(), p);
    const auto nh = make_formulation("neo-hookean", m, mat), lin = make_formulation("linear", m, mat),
               tl = make_formulation("stvk-tl", m, mat);
    std::vector<double> f_nh;
    const auto K_nh = testing::dense_stiffness(*nh, m.coords, &f_nh);
    EXPECT_LT(testing::max_abs(f_nh), 1e-13);
    EXPECT_NEAR(nh->energy(m.coords), 0.0, 1e-15);
    EXPECT_LT(testing::rel_max_diff(K_nh, testing::dense_stiffness(*lin, m.coords)), 1e-13) << testing::penalty_name(p);
    EXPECT_LT(testing::rel_max_diff(K_nh, testing::dense_stiffness(*tl, m.coords)), 1e-13) << testing::penalty_name(p);
    EXPECT_EQ(nh->block_pattern(), tl->block_pattern()) << "same COO path as stvk";
  }
}

TEST(NeoHookean, RigidMotionGivesZeroEnergyAndForceAndAnIndifferentTangent) {
  const TetMesh m = testing::kuhn_box(2, 2, 2, 0.5, 0.1, 4);
  const auto form = make_formulation("neo-hookean", m, materials(m.n_tets(), VolumetricPenalty::cubic));
  const Eigen::Matrix3d& R = testing::generic_rotation();
  std::vector<double> x(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d y = R * Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k] + 0.3 * (k + 1);
  }
  std::vector<double> f;
  const auto K = testing::dense_stiffness(*form, x, &f);
  EXPECT_LT(testing::max_abs(f), 1e-13);
  EXPECT_NEAR(form->energy(x), 0.0, 1e-14);
  // K(R x) = R K(X) R^T block-wise.
  const auto K0 = testing::dense_stiffness(*form, m.coords);
  const std::size_t n = f.size();
  double err = 0.0;
  for (std::size_t a = 0; a < n / 3; ++a)
    for (std::size_t b = 0; b < n / 3; ++b) {
      Eigen::Matrix3d B0, B;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          B0(r, c) = K0[(3 * a + r) * n + 3 * b + c], B(r, c) = K[(3 * a + r) * n + 3 * b + c];
      err = std::max(err, (B - R * B0 * R.transpose()).cwiseAbs().maxCoeff());
    }
  EXPECT_LT(err, 1e-12 * testing::max_abs(K0));
}

TEST(NeoHookean, InvertedTetGivesInfiniteEnergyAndForceNotNaN) {
  const TetMesh m = testing::kuhn_box(1, 1, 1, 1.0, 0.0, 1);
  const auto form = make_formulation("neo-hookean", m, materials(m.n_tets(), VolumetricPenalty::none));
  std::vector<double> x = m.coords;
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) x[3 * v + 2] = -x[3 * v + 2];  // mirrored: every J = -1
  EXPECT_EQ(form->energy(x), std::numeric_limits<double>::infinity());
  std::vector<double> f(x.size());
  form->force(x, f);
  for (const double v : f) EXPECT_TRUE(std::isinf(v));
  std::vector<double> blocks(9 * form->block_pattern().size());
  form->force_and_stiffness(x, f, blocks);
  for (const double v : f) EXPECT_TRUE(std::isinf(v));
  for (const double v : blocks) EXPECT_TRUE(std::isfinite(v));
  const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, xi[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, -1};
  double g[12];
  EXPECT_EQ(neo_hookean_energy_gradient(neo_hookean_rest(X), 1.0, 1.0, xi, g), std::numeric_limits<double>::infinity());
  for (const double v : g) EXPECT_EQ(v, 0.0);
  // The output marks the cell rather than reporting a finite stress.
  const TetMaterial mat = TetMaterial::isotropic_material(1.0, 0.3, VolumetricPenalty::none);
  double E[9], S[9];
  EXPECT_TRUE(std::isnan(neo_hookean_strain_stress(X, xi, mat, E, S)));
}

TEST(NeoHookean, OutputStressIsTheSecondPiolaKirchhoffOfTheForces) {
  // One tet: f_a = V0 F S alpha_a, so the output S reproduces the forces; uniaxial stretch gives its closed form.
  const double X[12] = {0, 0, 0, 1, 0.1, 0, 0.2, 0.9, 0.1, 0.1, 0.2, 1.1};
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double x[12];
  for (int i = 0; i < 12; ++i) x[i] = 1.1 * X[i] + 0.1 * u(rng);
  const TetMaterial mat = TetMaterial::isotropic_material(3.0, 0.25, VolumetricPenalty::quadratic);
  double E[9], S[9];
  const double vm = neo_hookean_strain_stress(X, x, mat, E, S);
  EXPECT_GT(vm, 0.0);
  TetMesh m;
  m.coords.assign(X, X + 12);
  m.tets = {0, 1, 2, 3};
  const auto form = make_formulation("neo-hookean", m, std::vector<TetMaterial>{mat});
  std::vector<double> f(12);
  form->force(std::vector<double>(x, x + 12), f);
  const NeoHookeanRest rest = neo_hookean_rest(X);
  Eigen::Matrix3d F = Eigen::Matrix3d::Zero(), Sm, Dinv;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) Sm(r, c) = S[3 * r + c], Dinv(r, c) = rest.dm_inv[3 * r + c];
  for (int i = 0; i < 3; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) F(r, c) += (x[3 * (i + 1) + r] - x[r]) * Dinv(i, c);
  for (int i = 0; i < 3; ++i) {
    const Eigen::Vector3d fa = rest.v0 * F * Sm * Dinv.row(i).transpose();
    for (int r = 0; r < 3; ++r) EXPECT_NEAR(fa[r], f[3 * (i + 1) + r], 1e-13 * testing::max_abs(f));
  }
  // Green strain of the output.
  const Eigen::Matrix3d Eg = 0.5 * (F.transpose() * F - Eigen::Matrix3d::Identity());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(E[3 * r + c], Eg(r, c), 1e-14);
}

TEST(NeoHookean, RejectsAnisotropicMaterialsAndTheRegistryRowIsComplete) {
  const TetMesh m = testing::kuhn_box(1, 1, 1);
  std::mt19937 rng(1);
  std::vector<TetMaterial> aniso(m.n_tets(), testing::random_transverse(rng, {1, 0, 0}, VolumetricPenalty::none));
  EXPECT_THROW((void)make_formulation("neo-hookean", m, aniso), std::invalid_argument);
  const ModelInfo& info = model_named("neo-hookean");
  EXPECT_EQ(info.cell, CellKind::tetrahedron);
  EXPECT_FALSE(info.keys.anisotropy);
  EXPECT_EQ(info.flops, nullptr);
}

}  // namespace
}  // namespace edgefem
