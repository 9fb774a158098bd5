// SPDX-License-Identifier: BSD-3-Clause
/// \file strain_stress.cpp
/// Per-tet Green strain and 2nd Piola-Kirchhoff stress for output (cell data `green_strain`, `stress`).
#include "materials/formulation.hpp"

#include <algorithm>

#include "materials/tet_geometry.hpp"

namespace edgefem {

void tet_strain_stress(const double* x_ref, const double* x, const TetMaterial& material,
                       std::array<double, 9>& green_strain, std::array<double, 9>& stress,
                       double* deformation_gradient) {
  const tetgeo::RefTet r = tetgeo::reference_tet(x_ref, 0);
  // F = sum_{i=1..3} (x_i - x_0) alpha_i^T (row-major).
  double F[9] = {};
  for (int i = 1; i < 4; ++i)
    for (int rr = 0; rr < 3; ++rr)
      for (int c = 0; c < 3; ++c) F[3 * rr + c] += (x[3 * i + rr] - x[rr]) * r.alpha[i][c];
  if (deformation_gradient != nullptr) std::copy(F, F + 9, deformation_gradient);
  // E = (F^T F - I) / 2, S = D:E (isotropic: lambda tr(E) I + 2 mu E).
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      green_strain[3 * a + b] = 0.5 * (F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a == b ? 1.0 : 0.0));
  if (material.isotropic) {
    const double tr = green_strain[0] + green_strain[4] + green_strain[8];
    for (int q = 0; q < 9; ++q) stress[q] = 2.0 * material.mu * green_strain[q];
    for (int a = 0; a < 3; ++a) stress[4 * a] += material.lambda * tr;
  } else {
    // Voigt: eps = [Exx, Eyy, Ezz, 2Exy, 2Eyz, 2Ezx], [Sxx, Syy, Szz, Sxy, Syz, Szx] = D eps.
    const double eps[6] = {green_strain[0],     green_strain[4],     green_strain[8],
                           2 * green_strain[1], 2 * green_strain[5], 2 * green_strain[6]};
    double s[6];
    for (int p = 0; p < 6; ++p) {
      s[p] = 0.0;
      for (int q = 0; q < 6; ++q) s[p] += material.D[6 * p + q] * eps[q];
    }
    stress = {s[0], s[3], s[5], s[3], s[1], s[4], s[5], s[4], s[2]};
  }
  if (material.volumetric == VolumetricPenalty::none) return;
  // Volumetric penalty k psi(J - 1): S_vol = 2 d/dC = k psi'(J - 1) J C^-1, with J C^-1 = F^-1 cof(F) = adj(C) / J
  // where C = F^T F. For an exactly flat tet (J = 0) the stress is not finite.
  double cof[9];
  const double J = tetgeo::cofactor(F, cof);
  const tetgeo::Penalty pen = tetgeo::vol_penalty(J - 1.0, material.volumetric);
  if (pen.d1 == 0.0) return;
  // J C^-1 = J F^-1 F^-T = cof(F)^T cof(F) / J  (F^-1 = cof(F)^T / J).
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double jcinv = (cof[a] * cof[b] + cof[3 + a] * cof[3 + b] + cof[6 + a] * cof[6 + b]) / J;
      stress[3 * a + b] += material.k_vol * pen.d1 * jcinv;
    }
}

}  // namespace edgefem
