// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file element_energy_inline.hpp
/// The body of stvk_element_energy_gradient (element_energy.hpp), inline so that the position-based sweep
/// (pbd/pbd_sweep.cpp) can call it without a function-pointer call per tet when a material's registry entry
/// points at it. Same arithmetic, same results. kInversion = true: stvk_inversion_energy_gradient
/// (tet_inversion.hpp): isotropic tets that may be inverted or compressed below the clamp stretch 1/sqrt(3) (det F
/// <= 0, or the Gershgorin bound of the Green strain's eigenvalues below -1/3) take the principal route; all others
/// the plain arithmetic, bit for bit.
#include <algorithm>
#include <cmath>

#include "materials/element_energy.hpp"
#include "materials/tet_geometry.hpp"
#include "materials/tet_inversion.hpp"

namespace edgefem {

/// The element gradient from the first Piola stress P (row-major 3x3): g_a = V0 P alpha_a (a = 1..3), g_0 = -sum.
[[gnu::always_inline]] inline void nodal_gradient(const TetRest& rest, const double* P, double* gradient) {
  const double v0 = rest.v0;
  double g0[3] = {0.0, 0.0, 0.0};
  for (int a = 0; a < 3; ++a)
    for (int r = 0; r < 3; ++r) {
      const double g = v0 * (P[3 * r] * rest.alpha[a][0] + P[3 * r + 1] * rest.alpha[a][1] +
                             P[3 * r + 2] * rest.alpha[a][2]);
      gradient[3 * (a + 1) + r] = g;
      g0[r] -= g;
    }
  gradient[0] = g0[0], gradient[1] = g0[1], gradient[2] = g0[2];
}

/// Isotropic StVK at Green strain E (full symmetric 3x3, row-major): S = 2 mu E + lambda tr(E) I into S, returns
/// psi = mu E:E + lambda tr(E)^2 / 2.
[[gnu::always_inline]] inline double stvk_isotropic_stress(const TetMaterial& material, const double* E, double* S) {
  const double tr = E[0] + E[4] + E[8];
  const double lt = material.lambda * tr;
  const double two_mu = 2.0 * material.mu;
  for (int k = 0; k < 9; ++k) S[k] = two_mu * E[k];
  S[0] += lt, S[4] += lt, S[8] += lt;
  double ee = 0.0;
  for (int k = 0; k < 9; ++k) ee += E[k] * E[k];
  return material.mu * ee + 0.5 * material.lambda * tr * tr;
}

/// The element energy V0 (psi + k_vol psi_vol(J - 1)) and its gradient from F and the second Piola stress S of the
/// strain energy density psi: P = F S (+ the volumetric penalty's k_vol psi'(J - 1) cof F), then nodal_gradient.
[[gnu::always_inline]] inline double stvk_energy_from_stress(const TetRest& rest, const TetMaterial& material,
                                                             const double* F, const double* S, double psi,
                                                             double* gradient) {
  double P[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) P[3 * r + c] = F[3 * r] * S[c] + F[3 * r + 1] * S[3 + c] + F[3 * r + 2] * S[6 + c];
  if (material.volumetric != VolumetricPenalty::none) {
    double cof[9];
    const double J = tetgeo::cofactor(F, cof);
    const tetgeo::Penalty pen = tetgeo::vol_penalty(J - 1.0, material.volumetric);
    if (pen.d1 != 0.0 || pen.psi != 0.0) {
      psi += material.k_vol * pen.psi;
      for (int k = 0; k < 9; ++k) P[k] += material.k_vol * pen.d1 * cof[k];
    }
  }
  nodal_gradient(rest, P, gradient);
  return rest.v0 * psi;
}

template <bool kInversion = false>
[[gnu::always_inline]] inline double stvk_energy_gradient_inline(const TetRest& rest, const double* x,
                                                                 const TetMaterial& material, double* gradient) {
  // F = sum_{a=1..3} (x_a - x_0) alpha_a^T (row-major).
  double d[3][3];
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) d[a][c] = x[3 * (a + 1) + c] - x[c];
  double F[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      F[3 * r + c] = d[0][r] * rest.alpha[0][c] + d[1][r] * rest.alpha[1][c] + d[2][r] * rest.alpha[2][c];
  // Green strain E = (F^T F - I) / 2 (symmetric).
  double E[9];
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j) {
      const double s = F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j];
      E[3 * i + j] = E[3 * j + i] = 0.5 * (s - (i == j ? 1.0 : 0.0));
    }
  if constexpr (kInversion) {
    if (material.isotropic) {
      // sigma_min^2 = 1 + 2 lambda_min(E) >= 1 + 2 * (Gershgorin bound): below 1/3 the clamp may act.
      const double lower = std::min({E[0] - std::abs(E[1]) - std::abs(E[2]), E[4] - std::abs(E[3]) - std::abs(E[5]),
                                     E[8] - std::abs(E[6]) - std::abs(E[7])});
      const double det =
          F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) + F[2] * (F[3] * F[7] - F[4] * F[6]);
      constexpr double kLowerStrain = 0.5 * (kStvkClampStretch * kStvkClampStretch - 1.0);
      if (det <= 0.0 || lower < kLowerStrain)
        return principal_element_energy_gradient(InvertibleLaw::stvk, rest, F, material, gradient);
    }
  }
  double S[9];
  double psi;
  if (material.isotropic) {
    psi = stvk_isotropic_stress(material, E, S);
  } else {
    const double eps[6] = {E[0], E[4], E[8], 2.0 * E[1], 2.0 * E[5], 2.0 * E[2]};
    double s[6];
    psi = 0.0;
    for (int p = 0; p < 6; ++p) {
      double v = 0.0;
      for (int q = 0; q < 6; ++q) v += material.D[6 * p + q] * eps[q];
      s[p] = v;
      psi += 0.5 * v * eps[p];
    }
    S[0] = s[0], S[4] = s[1], S[8] = s[2];
    S[1] = S[3] = s[3], S[5] = S[7] = s[4], S[2] = S[6] = s[5];
  }
  return stvk_energy_from_stress(rest, material, F, S, psi, gradient);
}

}  // namespace edgefem
