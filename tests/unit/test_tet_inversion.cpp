// SPDX-License-Identifier: BSD-3-Clause
// Inversion handling of the per-element energies (materials/tet_inversion.hpp, Bender et al. 2014 §4.2):
//  - the signed SVD has proper rotations and puts the sign of det F into the smallest singular value;
//  - the energies with inversion handling (ModelInfo::inverted_element_energy of stvk and neo-hookean, with and
//    without the volumetric penalty) have the gradient of their energy: central finite differences, swept over
//    inverted, flattened, strongly compressed, partly clamped and mildly deformed tets;
//  - where no singular value is below the clamp and det F > 0 they equal the plain element energy (bit for bit on
//    the fast route, to round-off on the principal route);
//  - a clamped direction carries the paper's clamped stress (StVK: the uniaxial maximum (lambda + 2 mu)/(3 sqrt 3));
//  - a mirrored or flattened tet has a positive energy and PBD projections restore it (plain StVK: zero energy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "materials/element_energy.hpp"
#include "materials/registry.hpp"
#include "materials/tet_inversion.hpp"

namespace edgefem {
namespace {

// An irregular rest tet.
constexpr double kInvertedRest[12] = {0.1, -0.2, 0.05, 1.3, 0.1, -0.1, 0.2, 0.9, 0.15, -0.1, 0.25, 1.1};

void rotation(std::mt19937& rng, double* R) {
  std::normal_distribution<double> n(0.0, 1.0);
  double q[4], s = 0.0;
  for (double& c : q) c = n(rng), s += c * c;
  for (double& c : q) c /= std::sqrt(s);
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                       2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                       2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  std::copy(r, r + 9, R);
}

/// F = R1 diag(sigma) R2^T for random rotations.
std::vector<double> gradient_with_singular_values(std::mt19937& rng, const double* sigma) {
  double A[9], B[9];
  rotation(rng, A), rotation(rng, B);
  std::vector<double> F(9, 0.0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) F[3 * r + c] += A[3 * r + k] * sigma[k] * B[3 * c + k];
  return F;
}

/// Positions x_a = F X_a + t of the rest tet.
std::vector<double> positions(const std::vector<double>& F) {
  std::vector<double> x(12);
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r)
      x[3 * a + r] = 0.3 * r + F[3 * r] * kInvertedRest[3 * a] + F[3 * r + 1] * kInvertedRest[3 * a + 1] +
                     F[3 * r + 2] * kInvertedRest[3 * a + 2];
  return x;
}

TEST(TetInversion, SignedSvdHasProperRotationsAndTheSignOfDetF) {
  std::mt19937 rng(3);
  const double cases[][3] = {{1.2, 0.8, 0.5}, {1.0, 1.0, -1.0}, {1.5, 0.7, -0.2}, {0.9, 0.4, 0.0}, {2.0, 1.0, -1e-9}};
  for (const auto& sigma : cases) {
    const std::vector<double> F = gradient_with_singular_values(rng, sigma);
    const SignedSvd s = signed_svd(F.data());
    auto det = [](const double* M) {
      return M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) +
             M[2] * (M[3] * M[7] - M[4] * M[6]);
    };
    EXPECT_NEAR(det(s.U), 1.0, 1e-12);
    EXPECT_NEAR(det(s.V), 1.0, 1e-12);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(s.sigma[j], sigma[j], 1e-12) << j;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        double f = 0.0;
        for (int k = 0; k < 3; ++k) f += s.U[3 * r + k] * s.sigma[k] * s.V[3 * c + k];
        EXPECT_NEAR(f, F[3 * r + c], 1e-12);
      }
  }
}

struct FdCase {
  const char* model;
  VolumetricPenalty penalty;
  double sigma[3];
};

class InvertedEnergyGradient : public ::testing::TestWithParam<FdCase> {};

// Central differences (h = 1e-6) of E_e against the returned gradient, relative to the gradient's largest entry.
// The singular values have distinct magnitudes: where the two smallest |sigma| of an inverted tet are equal, the
// negative sign may sit on either and Psi~ has a kink (as in Irving et al.'s construction).
TEST_P(InvertedEnergyGradient, MatchesCentralDifferences) {
  const FdCase p = GetParam();
  const ModelInfo& info = model_named(p.model);
  ASSERT_NE(info.inverted_element_energy, nullptr);
  const TetMaterial material = TetMaterial::isotropic_material(200.0, 0.3, p.penalty);
  const TetRest rest = tet_rest(kInvertedRest, 0);
  std::mt19937 rng(17);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<double> x = positions(gradient_with_singular_values(rng, p.sigma));
    double g[12], scratch[12];
    const double e = info.inverted_element_energy(rest, x.data(), material, g);
    ASSERT_TRUE(std::isfinite(e));
    EXPECT_GT(e, 0.0);
    double gmax = 0.0;
    for (double v : g) gmax = std::max(gmax, std::abs(v));
    ASSERT_GT(gmax, 0.0);
    const double h = 1e-6;
    for (int i = 0; i < 12; ++i) {
      const double keep = x[i];
      x[i] = keep + h;
      const double ep = info.inverted_element_energy(rest, x.data(), material, scratch);
      x[i] = keep - h;
      const double em = info.inverted_element_energy(rest, x.data(), material, scratch);
      x[i] = keep;
      EXPECT_NEAR((ep - em) / (2 * h), g[i], 1e-6 * gmax) << p.model << " dof " << i << " trial " << trial;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    TetInversion, InvertedEnergyGradient,
    ::testing::Values(FdCase{"stvk", VolumetricPenalty::none, {1.1, 1.0, -0.9}},      // mirrored
                      FdCase{"stvk", VolumetricPenalty::none, {1.1, 0.95, -0.03}},    // flattened, just inverted
                      FdCase{"stvk", VolumetricPenalty::none, {1.3, 0.9, 0.3}},       // compressed past the clamp
                      FdCase{"stvk", VolumetricPenalty::none, {0.45, 0.35, -0.25}},   // every direction clamped
                      FdCase{"stvk", VolumetricPenalty::none, {1.2, 0.9, 0.7}},       // no clamp
                      FdCase{"stvk", VolumetricPenalty::cubic, {1.0, 0.8, -0.6}},     // with the penalty
                      FdCase{"stvk-tl", VolumetricPenalty::quadratic, {1.4, 0.5, -0.9}},
                      FdCase{"neo-hookean", VolumetricPenalty::none, {1.1, 1.0, -0.9}},
                      FdCase{"neo-hookean", VolumetricPenalty::none, {1.2, 0.8, 0.02}},   // clamped, not inverted
                      FdCase{"neo-hookean", VolumetricPenalty::none, {1.05, 0.9, -0.04}},
                      FdCase{"neo-hookean", VolumetricPenalty::none, {0.9, 0.6, 0.3}},    // no clamp
                      FdCase{"neo-hookean", VolumetricPenalty::cubic, {0.08, 0.06, -0.05}}));

// Not inverted and not compressed below the clamp: the plain element energy, bit for bit on the fast route, and
// the principal route (forced) gives the same to round-off.
TEST(TetInversion, NonInvertedTetsKeepThePlainEnergy) {
  const TetRest rest = tet_rest(kInvertedRest, 0);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.65, 1.6);
  int fast = 0, principal = 0;
  for (const char* name : {"stvk", "stvk-tl", "neo-hookean"}) {
    const ModelInfo& info = model_named(name);
    const bool neo = std::string(name) == "neo-hookean";
    const InvertibleLaw law = neo ? InvertibleLaw::neo_hookean : InvertibleLaw::stvk;
    for (VolumetricPenalty penalty : {VolumetricPenalty::none, VolumetricPenalty::cubic}) {
      const TetMaterial material = TetMaterial::isotropic_material(1000.0, 0.35, penalty);
      for (int trial = 0; trial < 50; ++trial) {
        const double sigma[3] = {u(rng), u(rng), u(rng)};
        const std::vector<double> F = gradient_with_singular_values(rng, sigma);
        const std::vector<double> x = positions(F);
        double g_plain[12], g_inv[12], g_principal[12], Fx[9];
        const double e_plain = info.element_energy(rest, x.data(), material, g_plain);
        const double e_inv = info.inverted_element_energy(rest, x.data(), material, g_inv);
        deformation_gradient(rest, x.data(), Fx);
        const double e_principal = principal_element_energy_gradient(law, rest, Fx, material, g_principal);
        double gmax = 0.0;
        for (double v : g_plain) gmax = std::max(gmax, std::abs(v));
        EXPECT_NEAR(e_principal, e_plain, 1e-12 * std::max(1.0, std::abs(e_plain))) << name;
        for (int i = 0; i < 12; ++i) EXPECT_NEAR(g_principal[i], g_plain[i], 1e-11 * gmax) << name << " " << i;
        if (needs_principal_route(Fx, clamp_stretch(law))) {
          ++principal;
          EXPECT_NEAR(e_inv, e_plain, 1e-12 * std::max(1.0, std::abs(e_plain))) << name;
          for (int i = 0; i < 12; ++i) EXPECT_NEAR(g_inv[i], g_plain[i], 1e-11 * gmax) << name << " " << i;
        } else {
          ++fast;
          EXPECT_EQ(e_inv, e_plain) << name;
          for (int i = 0; i < 12; ++i) EXPECT_EQ(g_inv[i], g_plain[i]) << name << " " << i;
        }
      }
    }
  }
  EXPECT_GT(fast, 50);       // both routes were exercised
  EXPECT_GT(principal, 10);
}

// A clamped direction gets the clamped stress: for StVK the uniaxial maximum -(lambda + 2 mu) / (3 sqrt 3) at
// sigma = (1, 1, s) and below; the energy keeps growing linearly with it.
TEST(TetInversion, StvkClampedDirectionCarriesTheUniaxialMaximum) {
  const double mu = 3.0, lambda = 5.0;
  const double peak = -(lambda + 2 * mu) / (3 * std::sqrt(3.0));
  double stress[3];
  const double at_clamp[3] = {1.0, 1.0, kStvkClampStretch};
  const double psi_clamp = principal_energy(InvertibleLaw::stvk, mu, lambda, at_clamp, stress);
  EXPECT_NEAR(stress[2], peak, 1e-14);
  for (double s3 : {0.3, 0.0, -0.5, -1.0}) {
    const double sigma[3] = {1.0, 1.0, s3};
    const double psi = principal_energy(InvertibleLaw::stvk, mu, lambda, sigma, stress);
    EXPECT_NEAR(stress[2], peak, 1e-14) << s3;
    EXPECT_NEAR(psi, psi_clamp + peak * (s3 - kStvkClampStretch), 1e-13) << s3;
    EXPECT_GT(psi, psi_clamp);
  }
  // Plain StVK just below the clamp has less stress than the peak (the stress maximum is at 1/sqrt(3)).
  const double f = 0.3;
  EXPECT_LT(std::abs((lambda + 2 * mu) * f * (f * f - 1) / 2), std::abs(peak));
}

// Bender et al. Fig. 6 on one free tet: a mirrored tet (F a reflection, F^T F = I) has zero plain StVK energy and
// plain neo-Hookean gives +infinity with a zero gradient, so neither can recover it; with inversion handling the
// energy is positive and the PBD projections x -= E g / |g|^2 (equal masses) bring det F back above 0 and the
// energy to its minimum. The same from a flattened tet (det F = 0). (The gradient alone need not raise det F: at a
// mirror, StVK's lambda term also pushes the unclamped directions outwards.)
TEST(TetInversion, MirroredAndFlattenedTetsRecoverUnderProjection) {
  const TetRest rest = tet_rest(kInvertedRest, 0);
  const TetMaterial material = TetMaterial::isotropic_material(100.0, 0.3, VolumetricPenalty::none);
  std::mt19937 rng(9);
  auto det_of = [&](const std::vector<double>& x) {
    double F[9];
    deformation_gradient(rest, x.data(), F);
    return F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
           F[2] * (F[3] * F[7] - F[4] * F[6]);
  };
  const double mirrored[3] = {1.0, 1.0, -1.0}, flattened[3] = {1.0, 1.0, 0.0};
  for (const double* sigma : {mirrored, flattened}) {
    const std::vector<double> x0 = positions(gradient_with_singular_values(rng, sigma));
    double g[12];
    if (sigma[2] < 0) {
      EXPECT_NEAR(model_named("stvk").element_energy(rest, x0.data(), material, g), 0.0, 1e-12);
      EXPECT_TRUE(std::isinf(model_named("neo-hookean").element_energy(rest, x0.data(), material, g)));
    }
    for (const char* name : {"stvk", "neo-hookean"}) {
      const ModelInfo& info = model_named(name);
      std::vector<double> x = x0;
      const double e0 = info.inverted_element_energy(rest, x.data(), material, g);
      EXPECT_GT(e0, 0.0) << name;
      double e = e0;
      int first_positive = -1;
      for (int it = 0; it < 200 && e > 1e-12 * e0; ++it) {
        double g2 = 0.0;
        for (double v : g) g2 += v * v;
        for (int i = 0; i < 12; ++i) x[i] -= e / g2 * g[i];
        e = info.inverted_element_energy(rest, x.data(), material, g);
        if (first_positive < 0 && det_of(x) > 0) first_positive = it + 1;
      }
      std::printf("tet_inversion: %s from %s: det F > 0 after %d projections, E/E0 = %.2e, det F = %.6f\n", name,
                  sigma[2] < 0 ? "mirrored" : "flattened", first_positive, e / e0, det_of(x));
      EXPECT_GT(first_positive, 0) << name;
      EXPECT_LT(e, 1e-8 * e0) << name;
      EXPECT_NEAR(det_of(x), 1.0, 1e-3) << name;  // the rest volume again
    }
  }
}

}  // namespace
}  // namespace edgefem
