// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file tet_inversion.hpp
/// Inversion handling for the per-element energies of isotropic tetrahedra (Bender et al. 2014 §4.2, after
/// Irving, Teran, Fedkiw 2004), used by the position-based integrator (`analysis.position_based.inversion: svd`).
///
/// F = U diag(sigma) V^T with U, V proper rotations (det = +1); the smallest singular value carries the sign of
/// det F (negative for an inverted tet, 0 for a flattened one). An isotropic energy is a symmetric function
/// Psi(sigma) of these signed singular values and P = U diag(dPsi/dsigma) V^T. Each sigma_j is clamped from below,
/// c_j = max(sigma_j, s), and the energy continued linearly (first-order Taylor) beyond the clamp:
///   Psi~(sigma) = Psi(c) + sum_j g_j(c) (sigma_j - c_j),        g = dPsi/dsigma,
///   dPsi~/dsigma_k = g_k(c)                                    (k clamped: the paper's clamped stress),
///                  = g_k(c) + sum_j H_jk(c) (sigma_j - c_j)     (k not clamped; H = d2Psi/dsigma2).
/// Psi~ is a true energy, C^1 in F, equal to Psi wherever every sigma_j >= s and det F > 0, so the position-based
/// projection (which needs E and dE/dx) and finite-difference tests see one consistent pair. (The paper's purely
/// clamped P-hat is not the gradient of any energy: its cross derivatives are not symmetric.)
///  - StVK: s = 1/sqrt(3), the stretch at which the uniaxial restoring stress (lambda+2 mu) f (f^2-1)/2 peaks (the
///    "58 %" of the paper is this stretch ratio); without the clamp a flattened tet (sigma_3 = 0) has zero stress
///    and a mirrored one (sigma = (1, 1, -1)) zero energy: StVK cannot see either.
///  - neo-Hookean: s = 0.1 (the paper gives no value): the log terms stay finite for flattened and inverted tets,
///    the restoring stress in a clamped direction is about mu/s + lambda |ln J~|/s.
/// The volumetric penalty (a function of the signed J = det F) is added unchanged.
/// Anisotropic materials are not rotation-invariant in this sense: they keep the plain energy. No PETSc or MPI.
#include "materials/element_energy.hpp"
#include "materials/formulation.hpp"

namespace edgefem {

enum class InvertibleLaw : std::uint8_t { stvk, neo_hookean };

/// The clamp stretch s of each law.
constexpr double kStvkClampStretch = 0.57735026918962576;  // 1/sqrt(3)
constexpr double kNeoHookeanClampStretch = 0.1;
[[nodiscard]] constexpr double clamp_stretch(InvertibleLaw law) {
  return law == InvertibleLaw::stvk ? kStvkClampStretch : kNeoHookeanClampStretch;
}

/// F = U diag(sigma) V^T, row-major U and V with det U = det V = +1, |sigma_0| >= |sigma_1| >= |sigma_2|, sigma_2
/// has the sign of det F (sigma_0, sigma_1 >= 0).
struct SignedSvd {
  double U[9], sigma[3], V[9];
};
[[nodiscard]] SignedSvd signed_svd(const double* F);

/// The clamped, continued principal energy density Psi~(sigma) (returned) and dPsi~/dsigma (into `stress`).
double principal_energy(InvertibleLaw law, double mu, double lambda, const double* sigma, double* stress);

/// E_e = V0 (Psi~(sigma(F)) + k_vol psi(J - 1)) and its gradient (12 doubles) for the deformation gradient F
/// (row-major) of the positions the caller used; the principal route for any F.
double principal_element_energy_gradient(InvertibleLaw law, const TetRest& rest, const double* F,
                                         const TetMaterial& material, double* gradient);

/// True when the tet needs the principal route: det F <= 0, or the Gershgorin lower bound of the eigenvalues of
/// F^T F is below s^2 (some sigma may be below the clamp). False means Psi~ = Psi exactly.
[[nodiscard]] bool needs_principal_route(const double* F, double clamp);

/// F = sum_a (x_a - x_0) alpha_a^T (row-major) of one tet.
void deformation_gradient(const TetRest& rest, const double* x, double* F);

/// The element energy with inversion handling: `plain` (the law's own kernel, e.g. stvk_element_energy_gradient)
/// where the tet does not need the principal route (the same arithmetic, bit for bit), the principal route
/// otherwise. Anisotropic materials: `plain` always.
double with_inversion_handling(InvertibleLaw law, ElementEnergyGradient plain, const TetRest& rest, const double* x,
                               const TetMaterial& material, double* gradient);

/// StVK with inversion handling (the registry's inverted_element_energy of stvk and stvk-tl); its body is
/// stvk_energy_gradient_inline<true> (element_energy_inline.hpp), which the position-based sweep inlines.
double stvk_inversion_energy_gradient(const TetRest& rest, const double* x, const TetMaterial& material,
                                      double* gradient);

}  // namespace edgefem
