// SPDX-License-Identifier: BSD-3-Clause
// The batched StVK kernel of the position-based sweep (materials/element_energy_batch.hpp) against the scalar one
// it vectorises (stvk_energy_gradient_inline, element_energy_inline.hpp), lane by lane: random irregular tets with
// random deformations (stretched, compressed into the cubic penalty's range, sheared, inverted), isotropic materials
// with each volumetric penalty, different per lane. The portable build has no fused multiply-add, so the two are
// equal bit for bit; a build for a CPU with FMA (-march=native) may contract differently: there the comparison is
// to 1e-13 relative. The flagged lanes are exactly those the scalar kernel sends down the principal route; the
// multi-versioned stvk_isotropic_batch gives the inline kernel's results bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "materials/element_energy_batch.hpp"
#include "materials/element_energy_inline.hpp"

namespace edgefem {
namespace {

// Scale of a difference: 0 when equal, else relative to the larger magnitude of the two sets' entries.
double relative_difference(const double* a, const double* b, int n) {
  double diff = 0.0, scale = 0.0;
  for (int i = 0; i < n; ++i) diff = std::max(diff, std::abs(a[i] - b[i])), scale = std::max(scale, std::abs(b[i]));
  return scale > 0.0 ? diff / scale : diff;
}

#if defined(__FMA__)
constexpr double kTolerance = 1e-13;
#else
constexpr double kTolerance = 0.0;
#endif

template <bool kInversion>
void compare_batches(int seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const VolumetricPenalty penalties[3] = {VolumetricPenalty::none, VolumetricPenalty::cubic,
                                          VolumetricPenalty::quadratic};
  int principal_lanes = 0, plain_lanes = 0;
  for (int batch = 0; batch < 200; ++batch) {
    TetLanes in;
    TetRest rest[kLanes];
    TetMaterial material[kLanes];
    double x[kLanes][12];
    for (int l = 0; l < kLanes; ++l) {
      double X[12];
      for (int a = 0; a < 4; ++a)
        for (int k = 0; k < 3; ++k) X[3 * a + k] = (a == k + 1 ? 1.0 : 0.0) + 0.25 * u(rng);
      rest[l] = tet_rest(X, l);
      material[l] = TetMaterial::isotropic_material(1.0 + 3.0 * (u(rng) + 1.0), 0.45 * u(rng),
                                                    penalties[(batch + l) % 3]);
      // Deformation: identity + a random matrix of a size that ranges from mild to inverting, plus a translation.
      const double size = 0.02 + 0.3 * (batch % 5);
      double F[9];
      for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0 ? 1.0 : 0.0) + size * u(rng);
      const double t[3] = {u(rng), u(rng), u(rng)};
      for (int a = 0; a < 4; ++a)
        for (int r = 0; r < 3; ++r)
          x[l][3 * a + r] =
              t[r] + F[3 * r] * X[3 * a] + F[3 * r + 1] * X[3 * a + 1] + F[3 * r + 2] * X[3 * a + 2];
      for (int i = 0; i < 12; ++i) in.x[i][l] = x[l][i];
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) in.alpha[3 * a + c][l] = rest[l].alpha[a][c];
      in.v0[l] = rest[l].v0;
      in.mu[l] = material[l].mu, in.lambda[l] = material[l].lambda;
      in.k_vol[l] = material[l].volumetric == VolumetricPenalty::none ? 0.0 : material[l].k_vol;
      in.cubic[l] = material[l].volumetric == VolumetricPenalty::cubic ? 1.0 : 0.0;
    }
    double gradient[12][kLanes], energy[kLanes];
    std::int64_t principal[kLanes];
    stvk_isotropic_lanes<kInversion>(in, gradient, energy, principal);
    {  // the out-of-line, multi-versioned copy the sweep calls (the AVX2 clone where the CPU has AVX2): the same
      double gradient_clone[12][kLanes], energy_clone[kLanes];
      std::int64_t principal_clone[kLanes];
      stvk_isotropic_batch(in, kInversion, gradient_clone, energy_clone, principal_clone);
      for (int l = 0; l < kLanes; ++l) {
        ASSERT_EQ(principal_clone[l], principal[l]);
        if (principal[l] != 0) continue;
        double a[13], b[13];
        for (int i = 0; i < 12; ++i) a[i] = gradient_clone[i][l], b[i] = gradient[i][l];
        a[12] = energy_clone[l], b[12] = energy[l];
        EXPECT_LE(relative_difference(a, b, 12), kTolerance);
        EXPECT_LE(relative_difference(a + 12, b + 12, 1), kTolerance);
      }
    }
    for (int l = 0; l < kLanes; ++l) {
      // The scalar route decision, reproduced from F (stvk_energy_gradient_inline<true>).
      double F[9], E[9];
      deformation_gradient(rest[l], x[l], F);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          E[3 * i + j] = 0.5 * (F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j] - (i == j ? 1.0 : 0.0));
      const double lower = std::min({E[0] - std::abs(E[1]) - std::abs(E[2]), E[4] - std::abs(E[3]) - std::abs(E[5]),
                                     E[8] - std::abs(E[6]) - std::abs(E[7])});
      const double det =
          F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) + F[2] * (F[3] * F[7] - F[4] * F[6]);
      const bool scalar_principal = kInversion && (det <= 0.0 || lower < 0.5 * (1.0 / 3.0 - 1.0));
      ASSERT_EQ(principal[l] != 0, scalar_principal) << "batch " << batch << " lane " << l << " det " << det;
      if (scalar_principal) {
        ++principal_lanes;
        continue;
      }
      ++plain_lanes;
      double g_scalar[12], g_batch[12];
      const double e_scalar = stvk_energy_gradient_inline<false>(rest[l], x[l], material[l], g_scalar);
      for (int i = 0; i < 12; ++i) g_batch[i] = gradient[i][l];
      EXPECT_LE(relative_difference(&energy[l], &e_scalar, 1), kTolerance) << "batch " << batch << " lane " << l;
      EXPECT_LE(relative_difference(g_batch, g_scalar, 12), kTolerance) << "batch " << batch << " lane " << l;
    }
  }
  // The sweep reaches both routes (and, with inversion, both kinds of lane).
  EXPECT_GT(plain_lanes, 400);  // (549 with inversion, of 1600)
  if (kInversion) {
    EXPECT_GT(principal_lanes, 500);  // (1051)
  }
}

TEST(ElementEnergyBatch, LanesEqualTheScalarKernel) { compare_batches<false>(1); }
TEST(ElementEnergyBatch, LanesEqualTheScalarKernelAndFlagThePrincipalRoute) { compare_batches<true>(2); }

}  // namespace
}  // namespace edgefem
