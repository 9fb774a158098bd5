// SPDX-License-Identifier: BSD-3-Clause
/// \file tet_inversion.cpp
/// Inversion handling of isotropic tet energies (tet_inversion.hpp): signed SVD, clamped principal energies.
#include "materials/tet_inversion.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "materials/element_energy_inline.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

// GCC reports a false -Wmaybe-uninitialized inside Eigen's 3x3 JacobiSVD (its singular values are always set).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
SignedSvd signed_svd(const double* F) {
  Eigen::Matrix3d f;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) f(r, c) = F[3 * r + c];
  // Square input: no QR preconditioner needed.
  const Eigen::JacobiSVD<Eigen::Matrix3d, Eigen::NoQRPreconditioner> svd(f, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d U = svd.matrixU(), V = svd.matrixV();
  Eigen::Vector3d sigma = svd.singularValues();  // non-negative, decreasing
  // Proper rotations (Irving et al. 2004): a reflection in U or V moves into the smallest singular value.
  if (U.determinant() < 0.0) U.col(2) *= -1.0, sigma(2) *= -1.0;
  if (V.determinant() < 0.0) V.col(2) *= -1.0, sigma(2) *= -1.0;
  SignedSvd out{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out.U[3 * r + c] = U(r, c), out.V[3 * r + c] = V(r, c);
  for (int j = 0; j < 3; ++j) out.sigma[j] = sigma(j);
  return out;
}
#pragma GCC diagnostic pop

double principal_energy(InvertibleLaw law, double mu, double lambda, const double* sigma, double* stress) {
  const double s = clamp_stretch(law);
  double c[3], g[3], H[3][3];
  bool clamped[3];
  for (int j = 0; j < 3; ++j) clamped[j] = sigma[j] < s, c[j] = clamped[j] ? s : sigma[j];
  double psi = 0.0;
  if (law == InvertibleLaw::stvk) {
    // Psi = mu sum e_j^2 + lambda/2 (sum e_j)^2, e_j = (c_j^2 - 1)/2; g_j = c_j (2 mu e_j + lambda tr e);
    // H_jk = delta_jk (2 mu e_j + lambda tr e + 2 mu c_j^2) + lambda c_j c_k.
    double e[3];
    for (int j = 0; j < 3; ++j) e[j] = 0.5 * (c[j] * c[j] - 1.0);
    const double tr = e[0] + e[1] + e[2];
    psi = mu * (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]) + 0.5 * lambda * tr * tr;
    for (int j = 0; j < 3; ++j) {
      g[j] = c[j] * (2.0 * mu * e[j] + lambda * tr);
      for (int k = 0; k < 3; ++k)
        H[j][k] = lambda * c[j] * c[k] + (j == k ? 2.0 * mu * e[j] + lambda * tr + 2.0 * mu * c[j] * c[j] : 0.0);
    }
  } else {
    // Psi = mu/2 (sum c_j^2 - 3) - mu L + lambda/2 L^2, L = sum ln c_j (= ln J); g_j = mu c_j + (lambda L - mu)/c_j;
    // H_jk = delta_jk (mu + (mu - lambda L)/c_j^2) + lambda/(c_j c_k).
    const double L = std::log(c[0]) + std::log(c[1]) + std::log(c[2]);
    psi = 0.5 * mu * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] - 3.0) - mu * L + 0.5 * lambda * L * L;
    for (int j = 0; j < 3; ++j) {
      g[j] = mu * c[j] + (lambda * L - mu) / c[j];
      for (int k = 0; k < 3; ++k)
        H[j][k] = lambda / (c[j] * c[k]) + (j == k ? mu + (mu - lambda * L) / (c[j] * c[j]) : 0.0);
    }
  }
  // Linear continuation beyond the clamp: Psi~ = Psi(c) + g(c) . (sigma - c).
  for (int j = 0; j < 3; ++j) psi += g[j] * (sigma[j] - c[j]);
  for (int k = 0; k < 3; ++k) {
    stress[k] = g[k];
    if (!clamped[k])
      for (int j = 0; j < 3; ++j) stress[k] += H[j][k] * (sigma[j] - c[j]);
  }
  return psi;
}

double principal_element_energy_gradient(InvertibleLaw law, const TetRest& rest, const double* F,
                                         const TetMaterial& material, double* gradient) {
  const SignedSvd svd = signed_svd(F);
  double p[3];
  double psi = principal_energy(law, material.mu, material.lambda, svd.sigma, p);
  // P = U diag(p) V^T.
  double P[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      P[3 * r + c] = svd.U[3 * r] * p[0] * svd.V[3 * c] + svd.U[3 * r + 1] * p[1] * svd.V[3 * c + 1] +
                     svd.U[3 * r + 2] * p[2] * svd.V[3 * c + 2];
  if (material.volumetric != VolumetricPenalty::none) {
    double cof[9];
    const double J = tetgeo::cofactor(F, cof);
    const tetgeo::Penalty pen = tetgeo::vol_penalty(J - 1.0, material.volumetric);
    psi += material.k_vol * pen.psi;
    for (int k = 0; k < 9; ++k) P[k] += material.k_vol * pen.d1 * cof[k];
  }
  nodal_gradient(rest, P, gradient);
  return rest.v0 * psi;
}

bool needs_principal_route(const double* F, double clamp) {
  double C[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j];
  const double lower = std::min({C[0] - std::abs(C[1]) - std::abs(C[2]), C[4] - std::abs(C[3]) - std::abs(C[5]),
                                 C[8] - std::abs(C[6]) - std::abs(C[7])});
  const double det =
      F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) + F[2] * (F[3] * F[7] - F[4] * F[6]);
  return det <= 0.0 || lower < clamp * clamp;
}

void deformation_gradient(const TetRest& rest, const double* x, double* F) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      F[3 * r + c] = 0.0;
      for (int a = 0; a < 3; ++a) F[3 * r + c] += (x[3 * (a + 1) + r] - x[r]) * rest.alpha[a][c];
    }
}

double with_inversion_handling(InvertibleLaw law, ElementEnergyGradient plain, const TetRest& rest, const double* x,
                               const TetMaterial& material, double* gradient) {
  if (!material.isotropic) return plain(rest, x, material, gradient);
  double F[9];
  deformation_gradient(rest, x, F);
  if (!needs_principal_route(F, clamp_stretch(law))) return plain(rest, x, material, gradient);
  return principal_element_energy_gradient(law, rest, F, material, gradient);
}

double stvk_inversion_energy_gradient(const TetRest& rest, const double* x, const TetMaterial& material,
                                      double* gradient) {
  return stvk_energy_gradient_inline<true>(rest, x, material, gradient);
}

}  // namespace edgefem
