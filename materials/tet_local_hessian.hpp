// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file tet_local_hessian.hpp
/// The pieces of one St. Venant-Kirchhoff tetrahedron's Hessian that a local (per-element) Newton step needs (the
/// position-based sweep's block projection, pbd/pbd_block.hpp). With the Green strain in Voigt form with
/// engineering shear, eps = [Exx, Eyy, Ezz, 2Exy, 2Eyz, 2Ezx], and E_e = V0 eps^T D eps / 2,
///   d2E_e/dx2 = V0 J^T D J + V0 (A S A^T) (x) I_3
/// with J = d eps / dx (6 x 12, strain_jacobian), A the 4 x 3 matrix of rows alpha_0..3 (F = sum_a x_a alpha_a^T)
/// and S the second Piola-Kirchhoff stress (the geometric, or initial-stress, term: geometric_block). The
/// volumetric penalty V0 k_vol psi(J - 1) adds its stress to S and V0 J^T (k_vol (psi'' dJ/deps dJ/deps^T + psi'
/// d2J/deps2)) J to the first term. The geometric term is indefinite under compression; spectral_bound gives rho
/// >= |S|'s largest eigenvalue, so that V0 rho (A A^T) (x) I_3 bounds it from above for any stress.
/// tests/unit/test_tet_local_hessian.cpp checks the pieces against finite differences of the element gradient.
/// No PETSc or MPI.
#include <algorithm>
#include <cmath>

#include "materials/element_energy.hpp"

namespace edgefem {

/// alpha_0..3 of a tet (alpha_0 = -(alpha_1 + alpha_2 + alpha_3)), as rows.
void tet_alphas(const TetRest& rest, double al[4][3]);

/// J = d eps / dx at the deformation gradient F (row-major): row p, column 3 a + r, with Voigt pairs
/// (0,0) (1,1) (2,2) (0,1) (1,2) (2,0): J[p][3a+r] = alpha_ai F_rj + alpha_aj F_ri for p = (i, j), i != j, and
/// alpha_ai F_ri for p = (i, i).
void strain_jacobian(const double al[4][3], const double* F, double J[6][12]);

/// The second Piola-Kirchhoff stress of a StVK tet at F (row-major), Voigt order xx yy zz xy yz zx: S = D (eps -
/// eps_p) (eps_p: a plastic strain in tensor components xx yy zz xy yz zx, or nullptr) plus the volumetric
/// penalty's k_vol psi'(J - 1) J C^-1 where J = det F > 0 (inverted or flat tets: the first term only). P = F S is
/// the gradient the element kernels use (stvk_element_energy_gradient, stvk_plastic_energy_gradient).
void stvk_second_piola(const TetMaterial& material, const double* F, const double* plastic, double S[6]);

/// The second Piola-Kirchhoff stress S = F^-1 P (Voigt order, symmetrised) of any element energy from its gradient g
/// (12, g_a = V0 P alpha_a) at F (row-major, det F != 0): for kernels without a closed form here (neo-Hookean).
void second_piola_from_gradient(const TetRest& rest, const double* F, const double* g, double S[6]);

/// Gershgorin's bound of the largest |eigenvalue| of a symmetric 3 x 3 (Voigt order xx yy zz xy yz zx): the
/// largest absolute row sum.
[[nodiscard]] inline double spectral_bound(const double S[6]) {
  return std::max({std::abs(S[0]) + std::abs(S[3]) + std::abs(S[5]), std::abs(S[3]) + std::abs(S[1]) + std::abs(S[4]),
                   std::abs(S[5]) + std::abs(S[4]) + std::abs(S[2])});
}

/// L_ab = alpha_a^T S alpha_b (4 x 4, S in Voigt order xx yy zz xy yz zx): the geometric term is V0 L (x) I_3.
void geometric_block(const double al[4][3], const double S[6], double L[4][4]);

}  // namespace edgefem
