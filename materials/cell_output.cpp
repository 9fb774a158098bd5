// SPDX-License-Identifier: BSD-3-Clause
/// \file cell_output.cpp
/// Per-cell strain and stress for the output (moved from run/output.cpp unchanged).
#include "materials/cell_output.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

namespace edgefem {
namespace {

/// von Mises equivalent of a (symmetric, row-major) stress.
double von_mises_of(const double* sigma) {
  const double dxy = sigma[0] - sigma[4], dyz = sigma[4] - sigma[8], dzx = sigma[8] - sigma[0];
  return std::sqrt(0.5 * (dxy * dxy + dyz * dyz + dzx * dzx) +
                   3.0 * (sigma[1] * sigma[1] + sigma[5] * sigma[5] + sigma[2] * sigma[2]));
}

/// von Mises equivalent of the Cauchy stress sigma = F S F^T / J.
double von_mises(const double* F, const std::array<double, 9>& S) {
  double FS[9] = {}, sigma[9] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) FS[3 * i + j] += F[3 * i + k] * S[3 * k + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) sigma[3 * i + j] += FS[3 * i + k] * F[3 * j + k];
  const double J = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                   F[2] * (F[3] * F[7] - F[4] * F[6]);
  for (double& x : sigma) x /= J;
  return von_mises_of(sigma);
}

}  // namespace

double membrane_strain_stress(const double* X, const double* x, const MembraneMaterial& m, double* E3, double* S3) {
  double e1[3], e2[3], d1[3], d2[3], n[3];
  for (int k = 0; k < 3; ++k)
    e1[k] = X[3 + k] - X[k], e2[k] = X[6 + k] - X[k], d1[k] = x[3 + k] - x[k], d2[k] = x[6 + k] - x[k];
  n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
  const double l1 = std::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
  const double ln = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double t1[3], t2[3];
  for (int k = 0; k < 3; ++k) t1[k] = e1[k] / l1, n[k] /= ln;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
  auto dot = [](const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  // D = [e1 e2] in the (t1, t2) basis; F = [d1 d2] D^-1 (3 x 2).
  const double D[4] = {dot(t1, e1), dot(t1, e2), dot(t2, e1), dot(t2, e2)};
  const double det = D[0] * D[3] - D[1] * D[2];
  const double Di[4] = {D[3] / det, -D[1] / det, -D[2] / det, D[0] / det};
  double F[3][2];
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 2; ++j) F[k][j] = d1[k] * Di[j] + d2[k] * Di[2 + j];
  double E[2][2], S[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) E[i][j] = 0.5 * (F[0][i] * F[0][j] + F[1][i] * F[1][j] + F[2][i] * F[2][j] - (i == j));
  const double lambda = m.young * m.poisson / (1.0 - m.poisson * m.poisson), mu = m.young / (2.0 * (1.0 + m.poisson));
  const double trace = E[0][0] + E[1][1];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) S[i][j] = lambda * trace * (i == j) + 2.0 * mu * E[i][j];
  const double* T[2] = {t1, t2};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      E3[3 * a + b] = S3[3 * a + b] = 0.0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          E3[3 * a + b] += T[i][a] * E[i][j] * T[j][b];
          S3[3 * a + b] += T[i][a] * S[i][j] * T[j][b];
        }
    }
  const double c[3] = {F[1][0] * F[2][1] - F[2][0] * F[1][1], F[2][0] * F[0][1] - F[0][0] * F[2][1],
                       F[0][0] * F[1][1] - F[1][0] * F[0][1]};
  const double J = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  double sigma[9];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      sigma[3 * a + b] = 0.0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) sigma[3 * a + b] += F[a][i] * S[i][j] * F[b][j];
      sigma[3 * a + b] /= J;
    }
  return von_mises_of(sigma);
}

double volino_strain_stress(const double* X, const double* x, const VolinoMaterial& m, double* E3, double* S3) {
  const VolinoTriangle ref = volino_reference(std::span<const double, 9>(X, 9), m.warp);
  VolinoElement element;
  volino_element(ref, m, std::span<const double, 9>(x, 9), VolinoStabilization::none, false, element);
  const auto& u = ref.weft;
  const auto& w = ref.warp;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double uu = u[a] * u[b], ww = w[a] * w[b], uw = u[a] * w[b] + w[a] * u[b];
      E3[3 * a + b] = element.strain[0] * uu + element.strain[1] * ww + 0.5 * element.strain[2] * uw;
      S3[3 * a + b] = element.stress[0] * uu + element.stress[1] * ww + element.stress[2] * uw;
    }
  return von_mises_of(S3);
}

double tet_cell_strain_stress(const double* X, const double* x, const TetMaterial& material, double* E, double* S) {
  std::array<double, 9> Et{}, St{};
  double F[9];
  tet_strain_stress(X, x, material, Et, St, F);
  std::copy(Et.begin(), Et.end(), E);
  std::copy(St.begin(), St.end(), S);
  return von_mises(F, St);
}

}  // namespace edgefem
