// SPDX-License-Identifier: BSD-3-Clause
/// \file plasticity.cpp
/// StVK on the elastic part of the Green strain and the plastic flow rule (plasticity.hpp).
#include "materials/plasticity.hpp"

#include <cmath>

#include "materials/element_energy_inline.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

namespace {

void deformation(const TetRest& rest, const double* x, double* F) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double s = 0.0;
      for (int a = 0; a < 3; ++a) s += (x[3 * (a + 1) + r] - x[r]) * rest.alpha[a][c];
      F[3 * r + c] = s;
    }
}

/// The full symmetric 3x3 (row-major) of 6 components xx, yy, zz, xy, yz, zx.
void full(const double* s, double* M) {
  M[0] = s[0], M[4] = s[1], M[8] = s[2];
  M[1] = M[3] = s[3], M[5] = M[7] = s[4], M[2] = M[6] = s[5];
}

void green_of(const double* F, double* strain) {
  auto dot = [&](int i, int j) { return F[i] * F[j] + F[3 + i] * F[3 + j] + F[6 + i] * F[6 + j]; };
  strain[0] = 0.5 * (dot(0, 0) - 1.0), strain[1] = 0.5 * (dot(1, 1) - 1.0), strain[2] = 0.5 * (dot(2, 2) - 1.0);
  strain[3] = 0.5 * dot(0, 1), strain[4] = 0.5 * dot(1, 2), strain[5] = 0.5 * dot(2, 0);
}

}  // namespace

void green_strain(const TetRest& rest, const double* x, double* strain) {
  double F[9];
  deformation(rest, x, F);
  green_of(F, strain);
}

double strain_norm(const double* s) {
  return std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + 2.0 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]));
}

double stvk_plastic_energy_gradient(const TetRest& rest, const double* x, const TetMaterial& material,
                                    const double* plastic, double* gradient) {
  double F[9];
  deformation(rest, x, F);
  double strain[6];
  green_of(F, strain);
  for (int k = 0; k < 6; ++k) strain[k] -= plastic[k];  // the elastic strain
  double E[9];
  full(strain, E);
  double S[9];
  const double psi = stvk_isotropic_stress(material, E, S);
  return stvk_energy_from_stress(rest, material, F, S, psi, gradient);
}

bool plastic_update(const TetRest& rest, const double* x, const PlasticLaw& law, double dt, double* plastic) {
  double e[6];
  green_strain(rest, x, e);
  for (int k = 0; k < 6; ++k) e[k] -= plastic[k];
  const double mean = (e[0] + e[1] + e[2]) / 3.0;
  e[0] -= mean, e[1] -= mean, e[2] -= mean;  // the deviator e'
  bool changed = false;
  if (strain_norm(e) > law.yield) {
    for (int k = 0; k < 6; ++k) plastic[k] += dt * law.creep * e[k];
    changed = true;
  }
  const double norm = strain_norm(plastic);
  if (norm > law.max) {
    const double s = law.max / norm;
    for (int k = 0; k < 6; ++k) plastic[k] *= s;
    changed = true;
  }
  return changed;
}

}  // namespace edgefem
