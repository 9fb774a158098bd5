// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file plasticity.hpp
/// Plasticity of the position-based integrator (Bender, Koschier, Charrier, Weber 2014 §4.1 "Plasticity", after
/// Mueller & Gross 2004): an additive split of the Green strain E = (F^T F - I)/2 into an elastic and a plastic
/// part, E_elastic = E - E_plastic, with E_plastic a per-tet state (6 numbers, PlasticStrain) that changes once per
/// time step (plastic_update). The element energy is StVK on the elastic strain,
///   E_e = V0 (Psi(E - E_p) + k_vol psi(J - 1)),   Psi(e) = mu e:e + lambda tr(e)^2 / 2,
///   g_a = V0 P alpha_a,  P = F S + k_vol psi'(J - 1) cof F,  S = 2 mu (E - E_p) + lambda tr(E - E_p) I
/// (dE/dF = sym(F^T dF), E_p constant within a step). The volumetric penalty acts on the total J: the plastic flow
/// below is deviatoric (trace-free), so it does not change the rest volume to first order.
/// Isotropic StVK only (the job reader refuses other models and anisotropy). No PETSc or MPI.
#include "materials/element_energy.hpp"
#include "materials/formulation.hpp"

namespace edgefem {

/// The material constants of the plastic flow (job key `plasticity: {yield, creep, max}`).
struct PlasticLaw {
  double yield = 0.0;  ///< gamma_yield: the Frobenius norm of the deviatoric elastic strain at which flow starts
  double creep = 0.0;  ///< gamma_creep (1/time): the flow rate
  double max = 0.0;    ///< gamma_max: the largest Frobenius norm of the plastic strain
};

/// A symmetric 3x3 strain as 6 tensor components (not engineering shear): xx, yy, zz, xy, yz, zx.
using PlasticStrain = double[6];

/// The Green strain E of the tet (x: its 4 current positions) as 6 tensor components (xx, yy, zz, xy, yz, zx).
void green_strain(const TetRest& rest, const double* x, double* strain);

/// Frobenius norm of a symmetric tensor given by 6 components (off-diagonals counted twice).
[[nodiscard]] double strain_norm(const double* strain);

/// E_e(x) and its gradient (12 doubles) with the plastic strain `plastic` (6 components). An isotropic material
/// (material.isotropic) is required. plastic = 0 gives stvk_element_energy_gradient to round-off.
double stvk_plastic_energy_gradient(const TetRest& rest, const double* x, const TetMaterial& material,
                                    const double* plastic, double* gradient);

/// One plastic update of a tet from its positions x at the end of a time step dt (Mueller & Gross's rule):
///   e' = dev(E - E_p) = (E - E_p) - tr(E - E_p)/3 I;
///   if |e'|_F > yield: E_p += dt creep e';
///   then if |E_p|_F > max: E_p *= max / |E_p|_F.
/// (The paper's second case rescales E_p without adding the creep when |e'| >= max, which compares an elastic
/// strain with a bound on the plastic one: a typo for this rule, see docs/theory/design.md.) Returns true if E_p changed.
bool plastic_update(const TetRest& rest, const double* x, const PlasticLaw& law, double dt, double* plastic);

}  // namespace edgefem
