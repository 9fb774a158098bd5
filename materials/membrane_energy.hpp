// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file membrane_energy.hpp
/// Per-element energy and gradient of one membrane triangle, for the position-based solver's energy constraints
/// (Bender et al. §4.3: a 3x2 deformation gradient from the rest triangle in its own plane): E_e = h A Psi(F) and
/// g = dE_e/dx (9 doubles), with the plane-stress St. Venant-Kirchhoff density of `trbs`
///   Psi = lambda/2 tr(E)^2 + mu tr(E^2),  E = (F^T F - I)/2 (2x2),  lambda = E nu/(1 - nu^2),  mu = E/(2 (1 + nu)),
/// which is exactly Delingette's TRBS energy (membrane.hpp): both routes agree to round-off
/// (tests/unit/test_membrane_energy.cpp). F = sum_{a=1,2} (x_a - x_0) alpha_a^T, alpha_a the rows of D_m^-1 with D_m
/// the rest edges X_1 - X_0, X_2 - X_0 in an orthonormal basis of the rest plane; g_a = h A P alpha_a (P = F S),
/// g_0 = -(g_1 + g_2). No PETSc or MPI.
#include <cstdint>

#include "materials/membrane.hpp"

namespace edgefem {

/// Rest data of one triangle (40 bytes): alpha_1, alpha_2 (rows of D_m^-1) and the rest area A.
struct TriRest {
  double alpha[2][2];
  double area;
};

/// The rest data from the 3 reference positions X (9 doubles). Throws std::invalid_argument for a degenerate
/// triangle; `which` names it in the message.
TriRest tri_rest(const double* X, std::int64_t which);

/// E_e(x) of one triangle (x: its 3 current positions, 9 doubles) with the trbs (plane-stress StVK) density of
/// `material` (young, poisson, thickness; damping is not an energy), and dE_e/dx into `gradient` (9 doubles).
double trbs_element_energy_gradient(const TriRest& rest, const double* x, const MembraneMaterial& material,
                                    double* gradient);

}  // namespace edgefem
