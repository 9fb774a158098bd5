// SPDX-License-Identifier: BSD-3-Clause
// The local Hessian pieces of the position-based sweep's block projection (materials/tet_local_hessian.hpp,
// pbd/pbd_block.hpp, issue 47), against finite differences of the element kernels on random irregular tets with
// random deformations (stretched, compressed, sheared):
//  - the block constraint's Jacobian J = d eps / dx (Green strain, Voigt, engineering shear);
//  - the Hessian of plain StVK (isotropic, transversely isotropic, plastic) is V0 J^T D J + V0 (A S A^T) (x) I_3
//    with the second Piola stress S of stvk_second_piola (the geometric term);
//  - with a volumetric penalty (cubic, quadratic) F S is the kernel's first Piola stress, and F^-1 P recovered
//    from the gradient (second_piola_from_gradient) is S;
//  - spectral_bound bounds every |eigenvalue|;
//  - the block step: one lane of block_step_lanes = block_step_one = block_step_general = the dense formula
//    ds = -(I + dt^2 H W)^-1 r, H = V0 (J^T D~ J + diag(gamma_a) (x) I_3); r = 0 gives ds = 0;
//  - the triangles' block step (tri_block_step, 3 x 3 Woodbury solve) = the dense formula with H the finite-difference
//    Hessian of the trbs kernel, its geometric term V (alpha S alpha^T) (x) I_3 replaced by the bound.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "materials/element_energy.hpp"
#include "materials/membrane_energy.hpp"
#include "materials/plasticity.hpp"
#include "materials/tet_inversion.hpp"
#include "materials/tet_local_hessian.hpp"
#include "pbd/pbd_block.hpp"

namespace edgefem {
namespace {

using Mat12 = Eigen::Matrix<double, 12, 12>;

/// A random irregular tet (rest X) and a deformed state x = A X + noise with |A - I| ~ `strain`.
struct Sample {
  double X[12], x[12];
  TetRest rest;
};

Sample random_sample(std::mt19937& rng, double strain) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Sample s;
  const double base[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int i = 0; i < 12; ++i) s.X[i] = base[i] + 0.2 * u(rng);
  double A[9];
  for (int k = 0; k < 9; ++k) A[k] = (k % 4 == 0 ? 1.0 : 0.0) + strain * u(rng);
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r)
      s.x[3 * a + r] = A[3 * r] * s.X[3 * a] + A[3 * r + 1] * s.X[3 * a + 1] + A[3 * r + 2] * s.X[3 * a + 2] +
                       0.05 * strain * u(rng);
  s.rest = tet_rest(s.X, 0);
  return s;
}

/// Central differences of a gradient function g(x) (n -> n; a tet's 12 by default).
template <int n = 12, class Gradient>
Eigen::Matrix<double, n, n> fd_hessian(const double* x, Gradient gradient) {
  Eigen::Matrix<double, n, n> K;
  const double h = 1e-6;
  for (int j = 0; j < n; ++j) {
    double xp[n], xm[n], gp[n], gm[n];
    std::copy(x, x + n, xp), std::copy(x, x + n, xm);
    xp[j] += h, xm[j] -= h;
    gradient(xp, gp), gradient(xm, gm);
    for (int i = 0; i < n; ++i) K(i, j) = (gp[i] - gm[i]) / (2.0 * h);
  }
  return K;
}

/// V0 J^T D J + V0 (A S A^T) (x) I_3 at x.
Mat12 model_hessian(const TetRest& rest, const double* x, const TetMaterial& m, const double* plastic) {
  double al[4][3], F[9], J[6][12], S[6], L[4][4];
  tet_alphas(rest, al);
  deformation_gradient(rest, x, F);
  strain_jacobian(al, F, J);
  stvk_second_piola(m, F, plastic, S);
  geometric_block(al, S, L);
  const Eigen::Map<const Eigen::Matrix<double, 6, 12, Eigen::RowMajor>> Jm(&J[0][0]);
  const Eigen::Map<const Eigen::Matrix<double, 6, 6, Eigen::RowMajor>> D(m.D.data());
  Mat12 H = Jm.transpose() * D * Jm;
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j)
      if (i % 3 == j % 3) H(i, j) += L[i / 3][j / 3];
  return rest.v0 * H;
}

TEST(TetLocalHessian, StrainJacobianIsTheDerivativeOfTheGreenStrain) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const Sample s = random_sample(rng, 0.3);
    double al[4][3], F[9], J[6][12];
    tet_alphas(s.rest, al);
    deformation_gradient(s.rest, s.x, F);
    strain_jacobian(al, F, J);
    auto eps = [&](const double* x, double* e) {
      double E[6];
      green_strain(s.rest, x, E);  // tensor components xx yy zz xy yz zx
      for (int p = 0; p < 6; ++p) e[p] = p < 3 ? E[p] : 2.0 * E[p];
    };
    double worst = 0.0, scale = 0.0;
    for (int j = 0; j < 12; ++j) {
      double xp[12], xm[12], ep[6], em[6];
      std::copy(s.x, s.x + 12, xp), std::copy(s.x, s.x + 12, xm);
      xp[j] += 1e-6, xm[j] -= 1e-6;
      eps(xp, ep), eps(xm, em);
      for (int p = 0; p < 6; ++p) {
        worst = std::max(worst, std::abs((ep[p] - em[p]) / 2e-6 - J[p][j]));
        scale = std::max(scale, std::abs(J[p][j]));
      }
    }
    EXPECT_LT(worst, 1e-8 * scale) << trial;
  }
}

TEST(TetLocalHessian, StvkHessianIsGaussNewtonPlusGeometricTerm) {
  std::mt19937 rng(12);
  const TetMaterial materials[2] = {TetMaterial::isotropic_material(1e4, 0.3, VolumetricPenalty::none),
                                    TetMaterial::transversely_isotropic({1, 2, 0.5}, 3e4, 1e4, 4e3, 0.3, 0.25,
                                                                        VolumetricPenalty::none)};
  for (const TetMaterial& m : materials)
    for (int trial = 0; trial < 20; ++trial) {
      const Sample s = random_sample(rng, 0.4);
      const Mat12 fd = fd_hessian(s.x,
                                  [&](const double* x, double* g) { stvk_element_energy_gradient(s.rest, x, m, g); });
      const Mat12 model = model_hessian(s.rest, s.x, m, nullptr);
      EXPECT_LT((fd - model).cwiseAbs().maxCoeff(), 1e-6 * model.cwiseAbs().maxCoeff()) << trial;
      // The geometric term matters here (the stress is of the order of 0.1 E).
      double F[9], S[6];
      deformation_gradient(s.rest, s.x, F);
      stvk_second_piola(m, F, nullptr, S);
      EXPECT_GT(spectral_bound(S), 1e-2 * m.D[0]) << trial;
    }
}

TEST(TetLocalHessian, PlasticStvkHessianUsesTheElasticStress) {
  std::mt19937 rng(13);
  const TetMaterial m = TetMaterial::isotropic_material(1e4, 0.3, VolumetricPenalty::none);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  for (int trial = 0; trial < 10; ++trial) {
    const Sample s = random_sample(rng, 0.3);
    double plastic[6];
    for (double& p : plastic) p = u(rng);
    const Mat12 fd = fd_hessian(s.x, [&](const double* x, double* g) {
      stvk_plastic_energy_gradient(s.rest, x, m, plastic, g);
    });
    const Mat12 model = model_hessian(s.rest, s.x, m, plastic);
    EXPECT_LT((fd - model).cwiseAbs().maxCoeff(), 1e-6 * model.cwiseAbs().maxCoeff()) << trial;
  }
}

TEST(TetLocalHessian, SecondPiolaStressGivesTheKernelsGradientWithEveryPenalty) {
  std::mt19937 rng(14);
  for (const VolumetricPenalty penalty :
       {VolumetricPenalty::none, VolumetricPenalty::cubic, VolumetricPenalty::quadratic}) {
    const TetMaterial m = TetMaterial::isotropic_material(1e4, 0.3, penalty);
    for (int trial = 0; trial < 20; ++trial) {
      const Sample s = random_sample(rng, 0.3);  // J on both sides of 1
      double g[12], F[9], S[6];
      stvk_element_energy_gradient(s.rest, s.x, m, g);
      deformation_gradient(s.rest, s.x, F);
      ASSERT_GT(F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                    F[2] * (F[3] * F[7] - F[4] * F[6]),
                0.0);
      stvk_second_piola(m, F, nullptr, S);
      const double Sf[9] = {S[0], S[3], S[5], S[3], S[1], S[4], S[5], S[4], S[2]};
      double worst = 0.0, scale = 0.0;
      for (int a = 0; a < 3; ++a)
        for (int r = 0; r < 3; ++r) {
          double ga = 0.0;  // V0 (F S alpha_a)_r
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) ga += s.rest.v0 * F[3 * r + i] * Sf[3 * i + j] * s.rest.alpha[a][j];
          worst = std::max(worst, std::abs(ga - g[3 * (a + 1) + r]));
          scale = std::max(scale, std::abs(g[3 * (a + 1) + r]));
        }
      EXPECT_LT(worst, 1e-12 * scale) << trial;
      // The same stress recovered from the gradient (as for laws without a closed form here).
      double from_gradient[6];
      second_piola_from_gradient(s.rest, F, g, from_gradient);
      for (int p = 0; p < 6; ++p) EXPECT_NEAR(from_gradient[p], S[p], 1e-10 * spectral_bound(S)) << trial;
    }
  }
}

TEST(TetLocalHessian, SpectralBoundBoundsEveryEigenvalue) {
  std::mt19937 rng(15);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    double S[6];
    for (double& v : S) v = u(rng);
    Eigen::Matrix3d M;
    M << S[0], S[3], S[5], S[3], S[1], S[4], S[5], S[4], S[2];
    const double largest = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(M).eigenvalues().cwiseAbs().maxCoeff();
    EXPECT_GE(spectral_bound(S), largest * (1.0 - 1e-15));
  }
}

/// A block step's inputs: a stressed tet, random shares, inverse masses with a prescribed vertex.
struct BlockCase {
  Sample s;
  TetMaterial m = TetMaterial::isotropic_material(1e4, 0.3, VolumetricPenalty::quadratic);
  double w[4], res[12], dt2 = 1e-4;
  std::array<double, 36> tangent{}, compliance{};
};

BlockCase block_case(std::mt19937& rng, bool prescribed) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  BlockCase b;
  b.s = random_sample(rng, 0.3);
  for (int a = 0; a < 4; ++a) b.w[a] = 1.0 + 0.5 * u(rng);
  if (prescribed) b.w[2] = 0.0;
  for (double& r : b.res) r = 0.1 * u(rng);
  b.tangent = b.m.D;
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) b.tangent[6 * p + q] += b.m.k_vol;
  const Eigen::Map<const Eigen::Matrix<double, 6, 6, Eigen::RowMajor>> Dt(b.tangent.data());
  Eigen::Matrix<double, 6, 6, Eigen::RowMajor> inverse = Dt.inverse();
  std::copy(inverse.data(), inverse.data() + 36, b.compliance.begin());
  return b;
}

/// The dense formula ds = -(I + dt^2 H W)^-1 r.
Eigen::Matrix<double, 12, 1> dense_step(const BlockCase& b, double bound) {
  double al[4][3], F[9], J[6][12];
  tet_alphas(b.s.rest, al);
  deformation_gradient(b.s.rest, b.s.x, F);
  strain_jacobian(al, F, J);
  const Eigen::Map<const Eigen::Matrix<double, 6, 12, Eigen::RowMajor>> Jm(&J[0][0]);
  const Eigen::Map<const Eigen::Matrix<double, 6, 6, Eigen::RowMajor>> Dt(b.tangent.data());
  Mat12 H = Jm.transpose() * Dt * Jm, W = Mat12::Zero();
  for (int a = 0; a < 4; ++a) {
    double gamma = 0.0;
    for (int c = 0; c < 4; ++c) gamma += std::abs(al[a][0] * al[c][0] + al[a][1] * al[c][1] + al[a][2] * al[c][2]);
    for (int r = 0; r < 3; ++r) H(3 * a + r, 3 * a + r) += bound * gamma, W(3 * a + r, 3 * a + r) = b.w[a];
  }
  H *= b.s.rest.v0;
  const Eigen::Map<const Eigen::Matrix<double, 12, 1>> r(b.res);
  return -(Mat12::Identity() + b.dt2 * H * W).lu().solve(r);
}

BlockBatch<1> one_lane(const BlockCase& b, double bound) {
  BlockBatch<1> in;
  for (int i = 0; i < 12; ++i) in.x[i][0] = b.s.x[i], in.res[i][0] = b.res[i];
  for (int a = 0; a < 3; ++a)
    for (int q = 0; q < 3; ++q) in.alpha[3 * a + q][0] = b.s.rest.alpha[a][q];
  for (int a = 0; a < 4; ++a) in.w[a][0] = b.w[a];
  for (int p = 0, e = 0; p < 6; ++p)
    for (int q = 0; q <= p; ++q, ++e) in.ci[e][0] = b.compliance[6 * p + q];
  in.bound[0] = bound;
  in.c[0] = b.dt2 * b.s.rest.v0;
  return in;
}

TEST(PbdBlock, StepIsTheDenseNewtonStepOnEveryPath) {
  std::mt19937 rng(16);
  for (int trial = 0; trial < 20; ++trial) {
    const BlockCase b = block_case(rng, trial % 2 == 1);
    const double bound = trial < 10 ? 0.0 : 3e3;  // unstressed, and a geometric term of order 1
    const Eigen::Matrix<double, 12, 1> expected = dense_step(b, bound);
    BlockBatch<1> one = one_lane(b, bound);
    block_step_one(one);
    BlockBatch<kLanes> lanes;  // lane 3 holds the case, the others copies
    for (int l = 0; l < kLanes; ++l) {
      for (int i = 0; i < 12; ++i) lanes.x[i][l] = one.x[i][0], lanes.res[i][l] = one.res[i][0];
      for (int i = 0; i < 9; ++i) lanes.alpha[i][l] = one.alpha[i][0];
      for (int a = 0; a < 4; ++a) lanes.w[a][l] = one.w[a][0];
      for (int e = 0; e < 21; ++e) lanes.ci[e][l] = one.ci[e][0];
      lanes.bound[l] = bound, lanes.c[l] = one.c[0];
    }
    block_step_lanes(lanes);
    double al[4][3], F[9], general[12], w12[12];
    tet_alphas(b.s.rest, al);
    deformation_gradient(b.s.rest, b.s.x, F);
    for (int i = 0; i < 12; ++i) w12[i] = b.w[i / 3];
    block_step_general(al, F, w12, b.res, bound, b.tangent.data(), b.s.rest.v0, b.dt2, general);
    const double scale = expected.cwiseAbs().maxCoeff();
    for (int i = 0; i < 12; ++i) {
      if (b.w[i / 3] == 0.0) continue;  // (a prescribed vertex's share never moves anything)
      EXPECT_NEAR(one.ds[i][0], expected(i), 1e-10 * scale) << trial << " " << i;
      EXPECT_NEAR(lanes.ds[i][3], one.ds[i][0], 1e-13 * scale) << trial << " " << i;
      EXPECT_NEAR(general[i], expected(i), 1e-10 * scale) << trial << " " << i;
    }
  }
}

TEST(PbdBlock, BackwardEulerPointIsAFixedPoint) {
  std::mt19937 rng(17);
  BlockCase b = block_case(rng, false);
  std::fill(b.res, b.res + 12, 0.0);
  BlockBatch<1> one = one_lane(b, 1e3);
  block_step_one(one);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(one.ds[i][0], 0.0) << i;
  EXPECT_EQ(one.change[0], 0.0);
}

/// A trbs triangle's block step against the dense Newton step: H = the finite-difference Hessian of the kernel with
/// its geometric term V (alpha S alpha^T) (x) I_3 replaced by V diag(gamma_a) (x) I_3, gamma_a = |S| sum_b |alpha_a .
/// alpha_b|; any inverse masses per dof (one prescribed dof); stretched and compressed; r = 0 gives ds = 0.
TEST(PbdBlock, TriangleStepIsTheDenseNewtonStep) {
  using Mat9 = Eigen::Matrix<double, 9, 9>;
  using Vec9 = Eigen::Matrix<double, 9, 1>;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const MembraneMaterial material{100.0, 0.3, 0.7, 0.0};
  const double lambda = material.young * material.poisson / (1.0 - material.poisson * material.poisson);
  const double mu = material.young / (2.0 * (1.0 + material.poisson)), a = lambda + 2.0 * mu;
  const double D[9] = {a, lambda, 0, lambda, a, 0, 0, 0, mu};
  const double det = a * a - lambda * lambda;
  const double Dinv[9] = {a / det, -lambda / det, 0, -lambda / det, a / det, 0, 0, 0, 1.0 / mu};
  for (const double strain : {0.3, -0.25, 0.05}) {
    for (int trial = 0; trial < 4; ++trial) {
      double X[9] = {0, 0, 0, 1, 0.1, 0.2, 0.3, 0.9, -0.1}, x[9];
      for (double& v : X) v += 0.1 * u(rng);
      for (int i = 0; i < 9; ++i) x[i] = X[i] * (1.0 + strain) + 0.05 * u(rng);
      const TriRest rest = tri_rest(X, 0);
      const double al[3][2] = {{-rest.alpha[0][0] - rest.alpha[1][0], -rest.alpha[0][1] - rest.alpha[1][1]},
                               {rest.alpha[0][0], rest.alpha[0][1]},
                               {rest.alpha[1][0], rest.alpha[1][1]}};
      double F[6];
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 2; ++j) F[2 * r + j] = (x[3 + r] - x[r]) * al[1][j] + (x[6 + r] - x[r]) * al[2][j];
      // The Hessian by central differences of the kernel's gradient.
      Mat9 H = fd_hessian<9>(x,
                             [&](const double* xt, double* g) { trbs_element_energy_gradient(rest, xt, material, g); });
      // The geometric term out, the bound in.
      const double e[3] = {0.5 * (F[0] * F[0] + F[2] * F[2] + F[4] * F[4] - 1.0),
                           0.5 * (F[1] * F[1] + F[3] * F[3] + F[5] * F[5] - 1.0),
                           F[0] * F[1] + F[2] * F[3] + F[4] * F[5]};
      Eigen::Matrix2d S;
      S(0, 0) = a * e[0] + lambda * e[1], S(1, 1) = lambda * e[0] + a * e[1], S(0, 1) = S(1, 0) = mu * e[2];
      const double norm_s = S.eigenvalues().cwiseAbs().maxCoeff();
      const double V = rest.area * material.thickness;
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
          const Eigen::Vector2d ap(al[p][0], al[p][1]), aq(al[q][0], al[q][1]);
          double gamma = 0.0;
          for (int b = 0; b < 3; ++b) gamma += std::abs(al[p][0] * al[b][0] + al[p][1] * al[b][1]);
          const double shift = V * ((p == q ? norm_s * gamma : 0.0) - ap.dot(S * aq));
          for (int r = 0; r < 3; ++r) H(3 * p + r, 3 * q + r) += shift;
        }
      double w[9], res[9];
      for (int i = 0; i < 9; ++i) w[i] = 1.0 + 0.5 * u(rng), res[i] = u(rng);
      w[4] = 0.0;  // a prescribed dof
      const double dt2 = 0.01;
      Vec9 r, expected;
      Mat9 N = Mat9::Identity();
      for (int i = 0; i < 9; ++i) r(i) = res[i];
      for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 9; ++j) N(i, j) += dt2 * H(i, j) * w[j];
      expected = -N.lu().solve(r);
      double ds[9];
      tri_block_step(al, F, w, res, Dinv, D, V, dt2, ds);
      double scale = 0.0, diff = 0.0;
      for (int i = 0; i < 9; ++i) {
        if (w[i] == 0.0) continue;  // (a prescribed dof's share moves nothing)
        scale = std::max(scale, std::abs(expected(i)));
        diff = std::max(diff, std::abs(ds[i] - expected(i)));
      }
      EXPECT_LT(diff, 1e-7 * scale) << "strain " << strain << " trial " << trial;
      const double zero[9] = {};
      tri_block_step(al, F, w, zero, Dinv, D, V, dt2, ds);
      for (const double d : ds) EXPECT_EQ(d, 0.0);
    }
  }
}

}  // namespace
}  // namespace edgefem
