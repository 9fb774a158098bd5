// SPDX-License-Identifier: BSD-3-Clause
/// \file element_energy.cpp
/// Per-element StVK energy and gradient (see element_energy.hpp). Written for the position-based sweep, where it
/// runs once per tet projection: straight-line code, no allocation, closed forms for isotropic materials.
#include "materials/element_energy.hpp"

#include "materials/element_energy_inline.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

TetRest tet_rest(const double* X, std::int64_t which) {
  const tetgeo::RefTet r = tetgeo::reference_tet(X, which);
  TetRest rest{};
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) rest.alpha[a][c] = r.alpha[a + 1][c];
  rest.v0 = r.v0;
  return rest;
}

double stvk_element_energy_gradient(const TetRest& rest, const double* x, const TetMaterial& material,
                                    double* gradient) {
  return stvk_energy_gradient_inline(rest, x, material, gradient);
}

}  // namespace edgefem
