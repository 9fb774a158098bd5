// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_block.hpp
/// The block projection of a tetrahedron in the coloured XPBD sweep (pbd_sweep.hpp, issue 47): one Newton step of
/// the tet's local backward-Euler problem. With the tet's share s of x - x* (12 numbers, the consistent form: the
/// other constraints' shares fixed, y = x - W s) the local problem is
///   s = -dt^2 g(y + W s)       (g = dE_e/dx; W the inverse masses, 0 on prescribed dofs),
/// the stationarity of the local objective  phi(s) = s^T W s / (2 dt^2) + E_e(y + W s). With r = s + dt^2 g(x) and a
/// model H of the tet's Hessian the step is ds = -(I + dt^2 H W)^-1 r, the positions move by u = W ds. The model
///   H = V0 J^T D~ J + V0 diag(gamma_a) (x) I_3,   gamma_a = rho sum_b |alpha_a . alpha_b|,
/// is the Gauss-Newton part with the material's small-strain tangent D~ (the 6 Green-strain components as one vector
/// constraint with compliance (V0 D~)^-1: block XPBD) plus a bound of the geometric (initial-stress) term
/// V0 (A S A^T) (x) I_3 of either sign (materials/tet_local_hessian.hpp; rho >= |S| the Gershgorin bound of the second
/// Piola stress, then Gershgorin's bound of rho A A^T by its absolute row sums): the tet's vertices weigh
/// m_a + dt^2 V0 gamma_a in its local step. Without it the step is explicit in the tet's rotations, which a stress
/// stiffens or (compression) softens: it overshoots once dt^2 w V0 |alpha|^2 |S| > 2 (a strongly stressed tet with a
/// light vertex), and the sweep diverged under large loads (issue 47: the sideways-loaded column). With it the step
/// is damped there; elsewhere gamma is negligible.
/// The solve, with the uniform weights of a tet whose vertices each weigh alike in x, y, z (W = diag(w_a) (x) I_3),
/// w~_a = w_a / (1 + c w_a gamma_a), c = dt^2 V0, W~ = diag(w~_a) (x) I_3 (Woodbury):
///   (D~^-1 / c + J W~ J^T) z = J W~ r   (6 x 6, LDL^T),   v = J^T z - r,   ds_a = v_a w~_a / w_a.
/// The fixed point (ds = 0) is r = 0 for any model H: the backward-Euler step. Every lane of a batch does the same
/// arithmetic (each statement a loop over the lanes: the compiler's vector loops). No PETSc or MPI.
#include "materials/element_energy_batch.hpp"

namespace edgefem {

/// One batch of L tets (L = kLanes, or 1 for a single tet) whose vertices each weigh alike in x, y, z.
template <int L>
struct BlockBatch {
  double x[12][L];     ///< positions x[3 a + r]
  double alpha[9][L];  ///< TetRest::alpha[a][q] at [3 a + q] (alpha_1..3)
  double w[4][L];      ///< inverse mass of each vertex (0: prescribed)
  double res[12][L];   ///< r = s + dt^2 g
  double bound[L];     ///< rho >= |S| (spectral_bound of the second Piola stress)
  double ci[21][L];    ///< D~^-1, lower triangle row by row
  double c[L];         ///< dt^2 V0
  double ds[12][L];    ///< out: the change of s
  double change[L];    ///< out: |dF|^2 (Frobenius), the change of F the step makes (u = W ds)
};

/// ds of every lane (the widest instruction set the CPU has: GCC function multi-versioning, no fused multiply-adds,
/// so every clone gives the same results).
void block_step_lanes(BlockBatch<kLanes>& batch);
/// ds of one tet (the same arithmetic as one lane of block_step_lanes).
void block_step_one(BlockBatch<1>& batch);

/// The same step for a tet with any inverse masses w (12, per dof): the 12 x 12 system (I + dt^2 W^1/2 H W^1/2) u~ =
/// -W^1/2 r, u = W^1/2 u~, ds = -r - dt^2 H u, with H assembled (Dt = D~, 36 row-major; J from
/// tet_local_hessian.hpp). For tets with a partly prescribed vertex.
void block_step_general(const double al[4][3], const double* F, const double* w, const double* res, double bound,
                        const double* Dt, double v0, double dt2, double ds[12]);

/// The block projection of a membrane triangle with the plane-stress St. Venant-Kirchhoff energy (trbs,
/// membrane_energy.hpp): E_e = V e^T D e / 2, e = (E00, E11, 2 E01) the Green strain in the rest plane, V = thickness x
/// area. The same local step as a tet's, with 9 dofs: H = V J^T D J + V diag(gamma_a) (x) I_3, gamma_a = rho sum_b
/// |alpha_a . alpha_b| (rho = |S|, the spectral norm of the 2 x 2 second Piola stress S = D e, exactly), solved as a
/// tet's through Woodbury's identity, a 3 x 3 system: with c = dt^2 V and w~_i = w_i / (1 + c w_i gamma_a) (any
/// inverse masses per dof, 0 on prescribed ones), (D^-1 / c + J W~ J^T) z = J W~ r, ds_i = (J^T z - r)_i w~_i / w_i.
/// al: alpha_0..2 (alpha_0 = -alpha_1 - alpha_2); F: the 3 x 2 deformation gradient, row-major; D and its inverse
/// Dinv: 3 x 3, row-major. Without the block form a triangle's scalar constraint sqrt(2 E_e / k) is
/// explicit in its other strain modes: with dt^2 w k >> 1 (a fine cloth: 4.5 mm triangles, 0.2 kg/m^2, 100 N/m, dt
/// 2 ms: about 100) the sweeps pumped energy into a cloth draped over an edge or a sphere.
void tri_block_step(const double al[3][2], const double* F, const double* w, const double* res, const double* Dinv,
                    const double* D, double volume, double dt2, double ds[9]);

}  // namespace edgefem
