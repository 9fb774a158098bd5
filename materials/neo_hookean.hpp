// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file neo_hookean.hpp
/// Compressible neo-Hookean tetrahedra (`model: neo-hookean`). Per tet, with F = sum_i x_i alpha_i^T (alpha_1..3
/// the rows of Dm^-1, alpha_0 = -sum), J = det F and the Lame constants of the material (from young and poisson,
/// as for StVK):
///   W = V0 [mu/2 (tr(F^T F) - 3) - mu ln J + lambda/2 (ln J)^2] + V0 k_vol psi(J - 1)
/// (the optional volumetric penalty is stvk's, formulation.hpp). First Piola-Kirchhoff stress
/// P = mu (F - F^-T) + lambda ln J F^-T; f_a = V0 P alpha_a. Exact Hessian, with g_a = F^-T alpha_a and
/// G_ab = alpha_a . alpha_b:
///   K_ab = V0 [mu G_ab I + lambda g_a g_b^T + (mu - lambda ln J) g_b g_a^T]   (+ the penalty's blocks).
/// At rest (F = I) this is the linear-elastic (and StVK) tangent. Inverted tets (J <= 0): the energy is +infinity
/// (the law's limit as J -> 0+), and force()/force_and_stiffness() write +infinity into the forces of that tet's
/// vertices, so the residual is not finite and the Newton driver halves the step (solver/newton.cpp, full_step;
/// a load or time step whose Newton solve fails is cut). Isotropic only (the registry row takes no anisotropy).
/// No PETSc or MPI.
#include <array>
#include <memory>
#include <span>

#include "materials/formulation.hpp"

namespace edgefem {

/// The formulation (block pattern as stvk: vertex diagonal blocks, then both orientations of every edge).
/// Throws std::invalid_argument on inconsistent input, degenerate tets or an anisotropic material.
std::unique_ptr<TetFormulation> make_neo_hookean(std::span<const double> coords, std::span<const LocalIndex> tets,
                                                 std::span<const TetMaterial> materials,
                                                 std::span<const std::int32_t> material_of_tet);

/// Rest data of one tet for the per-element functions: Dm^-1 (row-major, Dm = [X1-X0, X2-X0, X3-X0] as columns)
/// and the rest volume V0.
struct NeoHookeanRest {
  std::array<double, 9> dm_inv{};
  double v0 = 0.0;
};

/// From the reference positions X (12 doubles, 4 vertices). Throws std::invalid_argument for a degenerate tet.
NeoHookeanRest neo_hookean_rest(const double* X);

/// One tet, for a position-based solver (energy constraint C = W): returns W = V0 Psi(F) and writes its gradient
/// dW/dx (12 doubles, vertex-major) for the current positions x (12 doubles). No volumetric penalty. J <= 0:
/// returns +infinity and writes a zero gradient (the caller must handle inversion itself).
double neo_hookean_energy_gradient(const NeoHookeanRest& rest, double mu, double lambda, const double* x,
                                   double* gradient);

/// As neo_hookean_energy_gradient, plus the exact 12x12 Hessian (row-major, dof 3 a + c) when hessian != nullptr.
double neo_hookean_energy_gradient_hessian(const NeoHookeanRest& rest, double mu, double lambda, const double* x,
                                           double* gradient, double* hessian);

/// Output: Green strain E and 2nd Piola-Kirchhoff stress S = mu (I - C^-1) + lambda ln J C^-1 (+ the penalty's
/// k_vol psi'(J-1) J C^-1), row-major 3x3; returns the von Mises value of the Cauchy stress P F^T / J. X, x: 12
/// doubles. J <= 0: S and the returned value are NaN (an inverted cell in the output is visible as such).
double neo_hookean_strain_stress(const double* X, const double* x, const TetMaterial& material, double* E, double* S);

}  // namespace edgefem
