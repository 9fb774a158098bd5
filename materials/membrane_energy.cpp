// SPDX-License-Identifier: BSD-3-Clause
/// \file membrane_energy.cpp
/// Per-triangle plane-stress StVK energy and gradient (membrane_energy.hpp).
#include "materials/membrane_energy.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace edgefem {

TriRest tri_rest(const double* X, std::int64_t which) {
  double d1[3], d2[3];
  for (int c = 0; c < 3; ++c) d1[c] = X[3 + c] - X[c], d2[c] = X[6 + c] - X[c];
  const double n[3] = {d1[1] * d2[2] - d1[2] * d2[1], d1[2] * d2[0] - d1[0] * d2[2], d1[0] * d2[1] - d1[1] * d2[0]};
  const double twice_area = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  const double l1 = std::sqrt(d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]);
  if (!(twice_area > 1e-300) || !(l1 > 0.0))
    throw std::invalid_argument("triangle " + std::to_string(which) + " is degenerate (zero area)");
  // Rest plane basis e1 = d1/|d1|, e2 = n x e1 / |n|: D_m = [[|d1|, d2.e1], [0, d2.e2]], d2.e2 = 2A/|d1|.
  const double d2e1 = (d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]) / l1;
  const double d2e2 = twice_area / l1;
  TriRest rest{};
  rest.alpha[0][0] = 1.0 / l1;
  rest.alpha[0][1] = -d2e1 / (l1 * d2e2);
  rest.alpha[1][0] = 0.0;
  rest.alpha[1][1] = 1.0 / d2e2;
  rest.area = 0.5 * twice_area;
  return rest;
}

double trbs_element_energy_gradient(const TriRest& rest, const double* x, const MembraneMaterial& material,
                                    double* gradient) {
  // F (3x2, row-major) = sum_a (x_a - x_0) alpha_a^T.
  double d[2][3];
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 3; ++c) d[a][c] = x[3 * (a + 1) + c] - x[c];
  double F[3][2];
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 2; ++j) F[r][j] = d[0][r] * rest.alpha[0][j] + d[1][r] * rest.alpha[1][j];
  const double e00 = 0.5 * (F[0][0] * F[0][0] + F[1][0] * F[1][0] + F[2][0] * F[2][0] - 1.0);
  const double e11 = 0.5 * (F[0][1] * F[0][1] + F[1][1] * F[1][1] + F[2][1] * F[2][1] - 1.0);
  const double e01 = 0.5 * (F[0][0] * F[0][1] + F[1][0] * F[1][1] + F[2][0] * F[2][1]);
  const double nu = material.poisson;
  const double lambda = material.young * nu / (1.0 - nu * nu), mu = material.young / (2.0 * (1.0 + nu));
  const double tr = e00 + e11;
  const double psi = 0.5 * lambda * tr * tr + mu * (e00 * e00 + e11 * e11 + 2.0 * e01 * e01);
  const double S[2][2] = {{lambda * tr + 2.0 * mu * e00, 2.0 * mu * e01}, {2.0 * mu * e01, lambda * tr + 2.0 * mu * e11}};
  const double ha = material.thickness * rest.area;
  double g0[3] = {0.0, 0.0, 0.0};
  for (int r = 0; r < 3; ++r) {
    const double P0 = F[r][0] * S[0][0] + F[r][1] * S[1][0], P1 = F[r][0] * S[0][1] + F[r][1] * S[1][1];
    for (int a = 0; a < 2; ++a) {
      const double g = ha * (P0 * rest.alpha[a][0] + P1 * rest.alpha[a][1]);
      gradient[3 * (a + 1) + r] = g;
      g0[r] -= g;
    }
  }
  gradient[0] = g0[0], gradient[1] = g0[1], gradient[2] = g0[2];
  return ha * psi;
}

}  // namespace edgefem
