// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file element_energy.hpp
/// Per-element energy and gradient of one tetrahedron, for integrators that work element by element (the
/// position-based solver, pbd/pbd_solver.hpp): E_e = V0 Psi(F) and g = dE_e/dx (12 doubles), from the same
/// TetMaterial the Newton formulations use. A model offers it through its registry row
/// (ModelInfo::element_energy); models without one cannot be used by those integrators.
///
/// F = sum_a x_a alpha_a^T with alpha_1..3 the rows of D_m^-1 (D_m = [X1-X0, X2-X0, X3-X0]) and
/// alpha_0 = -(alpha_1 + alpha_2 + alpha_3); the gradient is g_a = V0 P(F) alpha_a with P = dPsi/dF (so
/// g_0 = -(g_1 + g_2 + g_3)). No PETSc or MPI here.
#include <cstdint>

#include "materials/formulation.hpp"

namespace edgefem {

/// Precomputed rest data of one tetrahedron (80 bytes): alpha_1..3 (rows of D_m^-1) and the rest volume V0.
struct TetRest {
  double alpha[3][3];
  double v0;
};

/// The rest data from the 4 reference positions X (12 doubles). Throws std::invalid_argument for a degenerate
/// tet; `which` names it in the message.
TetRest tet_rest(const double* X, std::int64_t which);

/// E_e(x) of one tetrahedron (x: its 4 current positions, 12 doubles) and, into `gradient` (12 doubles),
/// dE_e/dx. Returns E_e.
using ElementEnergyGradient = double (*)(const TetRest& rest, const double* x, const TetMaterial& material,
                                         double* gradient);

/// St. Venant-Kirchhoff plus the volumetric penalty: E_e = V0 (eps^T D eps / 2 + k_vol psi(J - 1)), Green strain
/// E = (F^T F - I)/2 (eps its Voigt form, engineering shear), P = F S + k_vol psi'(J-1) cof(F), S = D:E. The same
/// energy as make_stvk_tsep / make_stvk_tl (Kikuuwe's edge/TSEP form is an exact rewrite of V0 Psi).
double stvk_element_energy_gradient(const TetRest& rest, const double* x, const TetMaterial& material,
                                    double* gradient);

}  // namespace edgefem
