// SPDX-License-Identifier: BSD-3-Clause
// Plasticity of the position-based integrator (materials/plasticity.hpp):
//  - with zero plastic strain the energy and gradient are the plain StVK element energy's (round-off);
//  - with a nonzero plastic strain the gradient is that of the energy (central differences), with and without the
//    volumetric penalty, over random deformations;
//  - a plastic strain equal to the Green strain leaves no elastic energy (only the penalty's);
//  - the flow rule: nothing below the yield strain, dt * creep * (deviatoric elastic strain) above it (trace-free),
//    then the clamp |E_p| <= max.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "materials/element_energy.hpp"
#include "materials/plasticity.hpp"

namespace edgefem {
namespace {

constexpr double kRest[12] = {0.1, -0.2, 0.05, 1.3, 0.1, -0.1, 0.2, 0.9, 0.15, -0.1, 0.25, 1.1};

std::array<double, 12> deformed(std::mt19937& rng, double amplitude) {
  std::uniform_real_distribution<double> u(-amplitude, amplitude);
  std::array<double, 12> x{};
  for (int k = 0; k < 12; ++k) x[k] = kRest[k] + u(rng);
  return x;
}

TEST(Plasticity, ZeroPlasticStrainIsPlainStvk) {
  std::mt19937 rng(7);
  const TetRest rest = tet_rest(kRest, 0);
  for (VolumetricPenalty pen : {VolumetricPenalty::none, VolumetricPenalty::cubic, VolumetricPenalty::quadratic}) {
    const TetMaterial mat = TetMaterial::isotropic_material(2.0e5, 0.3, pen);
    for (int trial = 0; trial < 20; ++trial) {
      const auto x = deformed(rng, 0.25);
      const double zero[6] = {0, 0, 0, 0, 0, 0};
      double g_plain[12], g_plastic[12];
      const double e_plain = stvk_element_energy_gradient(rest, x.data(), mat, g_plain);
      const double e_plastic = stvk_plastic_energy_gradient(rest, x.data(), mat, zero, g_plastic);
      EXPECT_NEAR(e_plastic, e_plain, 1e-13 * std::abs(e_plain));
      double scale = 0.0;
      for (double g : g_plain) scale = std::max(scale, std::abs(g));
      for (int k = 0; k < 12; ++k) EXPECT_NEAR(g_plastic[k], g_plain[k], 1e-13 * scale);
    }
  }
}

TEST(Plasticity, GradientMatchesFiniteDifferences) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.08, 0.08);
  const TetRest rest = tet_rest(kRest, 0);
  double worst = 0.0;
  for (VolumetricPenalty pen : {VolumetricPenalty::none, VolumetricPenalty::cubic, VolumetricPenalty::quadratic}) {
    const TetMaterial mat = TetMaterial::isotropic_material(1.0, 0.35, pen);
    for (int trial = 0; trial < 30; ++trial) {
      auto x = deformed(rng, trial < 15 ? 0.1 : 0.3);
      double plastic[6];
      for (double& p : plastic) p = u(rng);
      double g[12];
      (void)stvk_plastic_energy_gradient(rest, x.data(), mat, plastic, g);
      double scale = 0.0;
      for (double v : g) scale = std::max(scale, std::abs(v));
      const double h = 1e-6;
      for (int k = 0; k < 12; ++k) {
        double scratch[12];
        const double keep = x[k];
        x[k] = keep + h;
        const double up = stvk_plastic_energy_gradient(rest, x.data(), mat, plastic, scratch);
        x[k] = keep - h;
        const double down = stvk_plastic_energy_gradient(rest, x.data(), mat, plastic, scratch);
        x[k] = keep;
        const double fd = (up - down) / (2.0 * h);
        worst = std::max(worst, std::abs(fd - g[k]) / scale);
        EXPECT_NEAR(fd, g[k], 1e-7 * scale) << "dof " << k << " trial " << trial;
      }
    }
  }
  std::printf("plasticity FD: worst relative gradient error %.2e\n", worst);
}

TEST(Plasticity, PlasticStrainEqualToGreenStrainLeavesNoElasticEnergy) {
  std::mt19937 rng(3);
  const TetRest rest = tet_rest(kRest, 0);
  const TetMaterial mat = TetMaterial::isotropic_material(1.0, 0.3, VolumetricPenalty::none);
  const auto x = deformed(rng, 0.2);
  double strain[6], g[12];
  green_strain(rest, x.data(), strain);
  EXPECT_GT(strain_norm(strain), 0.01);
  EXPECT_NEAR(stvk_plastic_energy_gradient(rest, x.data(), mat, strain, g), 0.0, 1e-30);
  for (double v : g) EXPECT_NEAR(v, 0.0, 1e-15);
}

/// Positions of the rest tet under x = F X.
std::array<double, 12> under(const double* F) {
  std::array<double, 12> x{};
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r)
      x[3 * a + r] = F[3 * r] * kRest[3 * a] + F[3 * r + 1] * kRest[3 * a + 1] + F[3 * r + 2] * kRest[3 * a + 2];
  return x;
}

TEST(Plasticity, FlowRuleYieldCreepAndClamp) {
  const TetRest rest = tet_rest(kRest, 0);
  // Simple shear F = I + s e_x e_y^T: E = [[0, s/2, 0], [s/2, s^2/2, 0], [0, 0, 0]].
  const double s = 0.2;
  const double F[9] = {1, s, 0, 0, 1, 0, 0, 0, 1};
  const auto x = under(F);
  double E[6];
  green_strain(rest, x.data(), E);
  EXPECT_NEAR(E[3], 0.5 * s, 1e-14);
  EXPECT_NEAR(E[1], 0.5 * s * s, 1e-14);
  const double mean = (E[0] + E[1] + E[2]) / 3.0;
  const double dev[6] = {E[0] - mean, E[1] - mean, E[2] - mean, E[3], E[4], E[5]};
  const double dev_norm = strain_norm(dev);  // sqrt(2 (s/2)^2 + (s^2/2)^2 * 2/3)
  EXPECT_NEAR(dev_norm, std::sqrt(0.5 * s * s + s * s * s * s / 6.0), 1e-14);

  // Below the yield strain: nothing changes.
  double p[6] = {0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(plastic_update(rest, x.data(), PlasticLaw{dev_norm * 1.01, 5.0, 1.0}, 0.01, p));
  for (double v : p) EXPECT_EQ(v, 0.0);
  // Above: E_p = dt creep e' (trace-free).
  EXPECT_TRUE(plastic_update(rest, x.data(), PlasticLaw{dev_norm * 0.99, 5.0, 1.0}, 0.01, p));
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(p[k], 0.05 * dev[k], 1e-15);
  EXPECT_NEAR(p[0] + p[1] + p[2], 0.0, 1e-16);
  // The second update flows on the remaining deviator (E - E_p)' = 0.95 e'.
  EXPECT_TRUE(plastic_update(rest, x.data(), PlasticLaw{0.0, 5.0, 1.0}, 0.01, p));
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(p[k], (0.05 + 0.05 * 0.95) * dev[k], 1e-15);
  // The clamp: creep adds dt creep e' (here 10 e'), then |E_p| is scaled to max.
  double q[6] = {0, 0, 0, 0, 0, 0};
  const double max = 0.3 * dev_norm;
  EXPECT_TRUE(plastic_update(rest, x.data(), PlasticLaw{0.0, 1000.0, max}, 0.01, q));
  EXPECT_NEAR(strain_norm(q), max, 1e-15);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(q[k], 0.3 * dev[k], 1e-15);
  // A plastic strain above max (e.g. max lowered) is clamped even below the yield strain.
  double r[6] = {0.1, -0.1, 0, 0.2, 0, 0};
  EXPECT_TRUE(plastic_update(rest, x.data(), PlasticLaw{10.0, 1.0, 0.1}, 0.01, r));
  EXPECT_NEAR(strain_norm(r), 0.1, 1e-15);
}

}  // namespace
}  // namespace edgefem
