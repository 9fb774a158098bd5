// SPDX-License-Identifier: BSD-3-Clause
/// \file tet_local_hessian.cpp
/// Pieces of a StVK tet's Hessian for local Newton steps (tet_local_hessian.hpp).
#include "materials/tet_local_hessian.hpp"

#include <algorithm>
#include <cmath>

#include "materials/tet_geometry.hpp"

namespace edgefem {

namespace {

constexpr int kVoigtI[6] = {0, 1, 2, 0, 1, 2}, kVoigtJ[6] = {0, 1, 2, 1, 2, 0};

}  // namespace

void tet_alphas(const TetRest& rest, double al[4][3]) {
  for (int q = 0; q < 3; ++q) {
    al[1][q] = rest.alpha[0][q], al[2][q] = rest.alpha[1][q], al[3][q] = rest.alpha[2][q];
    al[0][q] = -(al[1][q] + al[2][q] + al[3][q]);
  }
}

void strain_jacobian(const double al[4][3], const double* F, double J[6][12]) {
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r)
      for (int p = 0; p < 6; ++p) {
        const int i = kVoigtI[p], j = kVoigtJ[p];
        J[p][3 * a + r] = p < 3 ? al[a][i] * F[3 * r + i] : al[a][i] * F[3 * r + j] + al[a][j] * F[3 * r + i];
      }
}

void stvk_second_piola(const TetMaterial& material, const double* F, const double* plastic, double S[6]) {
  double C[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j];
  double eps[6];  // engineering shear
  for (int p = 0; p < 6; ++p) {
    const int i = kVoigtI[p], j = kVoigtJ[p];
    const double e = 0.5 * (C[3 * i + j] - (i == j ? 1.0 : 0.0)) - (plastic ? plastic[p] : 0.0);
    eps[p] = p < 3 ? e : 2.0 * e;
  }
  for (int p = 0; p < 6; ++p) {
    double v = 0.0;
    for (int q = 0; q < 6; ++q) v += material.D[6 * p + q] * eps[q];
    S[p] = v;
  }
  if (material.volumetric == VolumetricPenalty::none) return;
  double cof[9];
  const double J = tetgeo::cofactor(F, cof);
  if (!(J > 0.0)) return;
  // k psi' J C^-1 = k psi' adj(C) / J (adj(C) = cof(C), C symmetric).
  double adj[9];
  tetgeo::cofactor(C, adj);
  const double k = material.k_vol * tetgeo::vol_penalty(J - 1.0, material.volumetric).d1 / J;
  for (int p = 0; p < 6; ++p) S[p] += k * adj[3 * kVoigtI[p] + kVoigtJ[p]];
}

void second_piola_from_gradient(const TetRest& rest, const double* F, const double* g, double S[6]) {
  // g_a = V0 P alpha_a (a = 1..3) with alpha_a the rows of D_m^-1: P = [g_1 g_2 g_3] D_m^T / V0, S = F^-1 P.
  double Dinv[9], Dm[9], Fcof[9], P[9];
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) Dinv[3 * a + c] = rest.alpha[a][c];
  double cof[9];
  const double det = tetgeo::cofactor(Dinv, cof);  // D_m = (D_m^-1)^-1 = cof^T / det
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Dm[3 * i + j] = cof[3 * j + i] / det;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)  // P_rc = sum_a g_{a,r} (D_m^T)_{a,c} / V0 = sum_a g_{a,r} D_m[c][a] / V0
      P[3 * r + c] = (g[3 + r] * Dm[3 * c] + g[6 + r] * Dm[3 * c + 1] + g[9 + r] * Dm[3 * c + 2]) / rest.v0;
  const double J = tetgeo::cofactor(F, Fcof);  // F^-1 = cof(F)^T / J
  double full[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      full[3 * i + j] = (Fcof[i] * P[j] + Fcof[3 + i] * P[3 + j] + Fcof[6 + i] * P[6 + j]) / J;
  for (int p = 0; p < 6; ++p) {
    const int i = kVoigtI[p], j = kVoigtJ[p];
    S[p] = 0.5 * (full[3 * i + j] + full[3 * j + i]);
  }
}

void geometric_block(const double al[4][3], const double S[6], double L[4][4]) {
  for (int b = 0; b < 4; ++b) {
    const double t[3] = {S[0] * al[b][0] + S[3] * al[b][1] + S[5] * al[b][2],
                         S[3] * al[b][0] + S[1] * al[b][1] + S[4] * al[b][2],
                         S[5] * al[b][0] + S[4] * al[b][1] + S[2] * al[b][2]};
    for (int a = 0; a <= b; ++a) L[a][b] = L[b][a] = al[a][0] * t[0] + al[a][1] * t[1] + al[a][2] * t[2];
  }
}

}  // namespace edgefem
