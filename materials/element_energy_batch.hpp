// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file element_energy_batch.hpp
/// Isotropic St. Venant-Kirchhoff energy and gradient (stvk_energy_gradient_inline, element_energy_inline.hpp) of
/// kLanes tetrahedra at once, in structure-of-arrays form: every quantity is an array over the lanes, so the
/// compiler evaluates the lanes in SIMD registers (the position-based sweep projects the tets of one colour, which
/// are independent, kLanes at a time). Per lane the same operations in the same order as the scalar kernel: without
/// contraction into fused multiply-adds (the portable build) the results are equal bit for bit.
/// Isotropic materials only (any volumetric penalty); with kInversion the lanes that the scalar kernel sends down
/// the principal (SVD) route are flagged, not evaluated.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "materials/tet_inversion.hpp"

namespace edgefem {

/// Tets per batch: one AVX-512 register of doubles, two AVX2, four SSE2.
inline constexpr int kLanes = 8;
/// One value per lane.
using Lanes = double[kLanes];

/// Inputs of one batch. Unused lanes (a short last batch) must hold finite values (e.g. a copy of lane 0).
struct TetLanes {
  double x[12][kLanes];     ///< current positions: x[3 a + k] = coordinate k of vertex a
  double alpha[9][kLanes];  ///< TetRest::alpha[a][c] at [3 a + c]
  double v0[kLanes];
  double mu[kLanes], lambda[kLanes];
  double k_vol[kLanes];  ///< TetMaterial::k_vol, 0 for VolumetricPenalty::none
  double cubic[kLanes];  ///< 1: the penalty is VolumetricPenalty::cubic, 0: quadratic (or none, with k_vol = 0)
};

/// The steps of stvk_isotropic_lanes. Every statement is a loop over the lanes (innermost, unit stride): the
/// compiler's vector loops.
namespace stvk_lanes {

using Tensors = double[9][kLanes];  ///< a 3x3 matrix (row-major) per lane

/// F = sum_{a=1..3} (x_a - x_0) alpha_a^T (row-major).
[[gnu::always_inline]] inline void deformation_gradient(const TetLanes& in, Tensors& F) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int l = 0; l < kLanes; ++l)
        F[3 * r + c][l] = (in.x[3 + r][l] - in.x[r][l]) * in.alpha[c][l] +
                          (in.x[6 + r][l] - in.x[r][l]) * in.alpha[3 + c][l] +
                          (in.x[9 + r][l] - in.x[r][l]) * in.alpha[6 + c][l];
}

/// Green strain E = (F^T F - I) / 2.
[[gnu::always_inline]] inline void green_strain(const Tensors& F, Tensors& E) {
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j) {
      const double delta = i == j ? 1.0 : 0.0;
      for (int l = 0; l < kLanes; ++l) {
        const double s = F[i][l] * F[j][l] + F[3 + i][l] * F[3 + j][l] + F[6 + i][l] * F[6 + j][l];
        E[3 * i + j][l] = E[3 * j + i][l] = 0.5 * (s - delta);
      }
    }
}

/// kInversion: principal[lane] = the lane takes the principal route (det F <= 0 or the Gershgorin bound of E below
/// the clamp); else 0.
template <bool kInversion>
[[gnu::always_inline]] inline void principal_route(const Tensors& F, const Tensors& E,
                                                   std::int64_t (&principal)[kLanes]) {
  for (int l = 0; l < kLanes; ++l) {
    if constexpr (kInversion) {
      const double r0 = E[0][l] - std::abs(E[1][l]) - std::abs(E[2][l]);
      const double r1 = E[4][l] - std::abs(E[3][l]) - std::abs(E[5][l]);
      const double r2 = E[8][l] - std::abs(E[6][l]) - std::abs(E[7][l]);
      const double det = F[0][l] * (F[4][l] * F[8][l] - F[5][l] * F[7][l]) -
                         F[1][l] * (F[3][l] * F[8][l] - F[5][l] * F[6][l]) +
                         F[2][l] * (F[3][l] * F[7][l] - F[4][l] * F[6][l]);
      constexpr double kLowerStrain = 0.5 * (kStvkClampStretch * kStvkClampStretch - 1.0);
      // (no short circuit: a vector loop)
      principal[l] = (det <= 0.0) | (r0 < kLowerStrain) | (r1 < kLowerStrain) | (r2 < kLowerStrain);
    } else {
      principal[l] = 0;
    }
  }
}

/// S = 2 mu E + lambda tr(E) I and the energy density psi = mu E:E + lambda tr(E)^2 / 2.
[[gnu::always_inline]] inline void stress(const TetLanes& in, const Tensors& E, Tensors& S, Lanes& psi) {
  for (int l = 0; l < kLanes; ++l) {
    const double tr = E[0][l] + E[4][l] + E[8][l];
    const double lt = in.lambda[l] * tr;
    const double two_mu = 2.0 * in.mu[l];
    double ee = 0.0;
    for (int k = 0; k < 9; ++k) {
      S[k][l] = two_mu * E[k][l];
      ee += E[k][l] * E[k][l];
    }
    S[0][l] += lt, S[4][l] += lt, S[8][l] += lt;
    psi[l] = in.mu[l] * ee + 0.5 * in.lambda[l] * tr * tr;
  }
}

/// The volumetric penalty: P += k_vol psi'(J - 1) cof F and psi += k_vol psi(J - 1) (adds exact zeros where it is
/// inactive); factor = k_vol psi'(J - 1), J = det F.
[[gnu::always_inline]] inline void add_volumetric(const TetLanes& in, const Tensors& F, Tensors& P, Lanes& psi,
                                                  Lanes& factor, Lanes& J) {
  double cof[9][kLanes];
  for (int l = 0; l < kLanes; ++l) {
    cof[0][l] = F[4][l] * F[8][l] - F[5][l] * F[7][l];
    cof[1][l] = F[5][l] * F[6][l] - F[3][l] * F[8][l];
    cof[2][l] = F[3][l] * F[7][l] - F[4][l] * F[6][l];
    cof[3][l] = F[2][l] * F[7][l] - F[1][l] * F[8][l];
    cof[4][l] = F[0][l] * F[8][l] - F[2][l] * F[6][l];
    cof[5][l] = F[1][l] * F[6][l] - F[0][l] * F[7][l];
    cof[6][l] = F[1][l] * F[5][l] - F[2][l] * F[4][l];
    cof[7][l] = F[2][l] * F[3][l] - F[0][l] * F[5][l];
    cof[8][l] = F[0][l] * F[4][l] - F[1][l] * F[3][l];
    J[l] = F[0][l] * cof[0][l] + F[1][l] * cof[1][l] + F[2][l] * cof[2][l];
    const double theta = J[l] - 1.0;
    // cubic (tetgeo::vol_penalty): -t^3/3 and -t^2 with t = min(J - 1, 0); quadratic: t^2/2 and t. The weights
    // 0 and 1 select exactly (x * 0 + y * 1 == y).
    const double t = 0.5 * (theta - std::abs(theta));  // min(theta, 0), exactly
    const double cubic = in.cubic[l], quadratic = 1.0 - cubic;
    const double pen_psi = cubic * (-t * t * t / 3.0) + quadratic * (0.5 * theta * theta);
    const double pen_d1 = cubic * (-t * t) + quadratic * theta;
    psi[l] += in.k_vol[l] * pen_psi;
    factor[l] = in.k_vol[l] * pen_d1;
  }
  for (int k = 0; k < 9; ++k)
    for (int l = 0; l < kLanes; ++l) P[k][l] += factor[l] * cof[k][l];
}

/// bound = Gershgorin's bound of |S_total|'s largest eigenvalue, S_total = S + factor J C^-1 = S + factor adj(C) / J
/// the second Piola stress with the volumetric penalty's (factor = k_vol psi'(J - 1); where J <= 0, S alone).
[[gnu::always_inline]] inline void stress_bound(const Tensors& E, const Tensors& S, const Lanes& factor, const Lanes& J,
                                                Lanes& bound) {
  for (int l = 0; l < kLanes; ++l) {
    const double c00 = 2.0 * E[0][l] + 1.0, c11 = 2.0 * E[4][l] + 1.0, c22 = 2.0 * E[8][l] + 1.0;
    const double c01 = 2.0 * E[1][l], c12 = 2.0 * E[5][l], c02 = 2.0 * E[2][l];
    const double k = J[l] > 0.0 ? factor[l] / (J[l] > 0.0 ? J[l] : 1.0) : 0.0;
    const double s00 = S[0][l] + k * (c11 * c22 - c12 * c12), s11 = S[4][l] + k * (c00 * c22 - c02 * c02);
    const double s22 = S[8][l] + k * (c00 * c11 - c01 * c01), s01 = S[1][l] + k * (c12 * c02 - c01 * c22);
    const double s12 = S[5][l] + k * (c01 * c02 - c00 * c12), s02 = S[2][l] + k * (c01 * c12 - c11 * c02);
    const double r0 = std::abs(s00) + std::abs(s01) + std::abs(s02);
    const double r1 = std::abs(s01) + std::abs(s11) + std::abs(s12);
    const double r2 = std::abs(s02) + std::abs(s12) + std::abs(s22);
    bound[l] = std::max(r0, std::max(r1, r2));
  }
}

/// g_a = V0 P alpha_a (a = 1..3), g_0 = -sum.
[[gnu::always_inline]] inline void gradient(const TetLanes& in, const Tensors& P, Lanes (&g)[12]) {
  for (int r = 0; r < 3; ++r)
    for (int l = 0; l < kLanes; ++l) g[r][l] = 0.0;
  for (int a = 0; a < 3; ++a)
    for (int r = 0; r < 3; ++r)
      for (int l = 0; l < kLanes; ++l) {
        const double ga = in.v0[l] * (P[3 * r][l] * in.alpha[3 * a][l] + P[3 * r + 1][l] * in.alpha[3 * a + 1][l] +
                                      P[3 * r + 2][l] * in.alpha[3 * a + 2][l]);
        g[3 * (a + 1) + r][l] = ga;
        g[r][l] -= ga;
      }
}

}  // namespace stvk_lanes

/// Energy and gradient of every lane: gradient[3 a + k][lane], energy[lane]. kInversion: principal[lane] = true
/// where stvk_energy_gradient_inline<true> takes the principal route (det F <= 0 or the Gershgorin bound of the Green
/// strain below the clamp); those lanes' outputs are the plain energy's and must be replaced by the caller. With
/// `bound`: also stress_bound (for the position-based sweep's block projection, pbd/pbd_block.hpp).
template <bool kInversion>
[[gnu::always_inline]] inline void stvk_isotropic_lanes(const TetLanes& in, Lanes (&gradient)[12], Lanes& energy,
                                                        std::int64_t (&principal)[kLanes], Lanes* bound = nullptr) {
  using namespace stvk_lanes;
  double F[9][kLanes], E[9][kLanes];
  deformation_gradient(in, F);
  green_strain(F, E);
  principal_route<kInversion>(F, E, principal);
  double S[9][kLanes], psi[kLanes];
  stress(in, E, S, psi);
  double P[9][kLanes];  // P = F S
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int l = 0; l < kLanes; ++l)
        P[3 * r + c][l] = F[3 * r][l] * S[c][l] + F[3 * r + 1][l] * S[3 + c][l] + F[3 * r + 2][l] * S[6 + c][l];
  double factor[kLanes], J[kLanes];
  add_volumetric(in, F, P, psi, factor, J);
  if (bound) stress_bound(E, S, factor, J, *bound);
  stvk_lanes::gradient(in, P, gradient);
  for (int l = 0; l < kLanes; ++l) energy[l] = in.v0[l] * psi[l];
}

/// stvk_isotropic_lanes<inversion> compiled for the widest vector instruction set the CPU has (AVX2 or the
/// baseline), the same results on each. bound: nullptr, or where the stress bound goes.
void stvk_isotropic_batch(const TetLanes& in, bool inversion, Lanes (&gradient)[12], Lanes& energy,
                          std::int64_t (&principal)[kLanes], Lanes* bound = nullptr);

}  // namespace edgefem
