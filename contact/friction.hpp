// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file friction.hpp
/// Lagged, smoothed Coulomb friction of one vertex against an obstacle (IPC, Li et al. 2020, section 5).
///
/// At the start of a step (a time step, or a static load step) the contact's normal force lambda, its tangent
/// basis T = [t1 t2] (3 x 2, orthonormal, normal to the obstacle there) and the vertex's position x_0 are frozen
/// (lagged). During the step the vertex's tangential slip is u = T^T (x - x_0 - m), m the obstacle's own
/// displacement over the step (a moving obstacle drags what sticks to it), and friction is the potential
///   D(x) = mu lambda f0(|u|),   f0' = f1,
/// with IPC's mollifier f1(y) = 2 y / eps - y^2 / eps^2 below the slip eps (y < eps) and 1 above, eps = eps_v h
/// (eps_v a slip velocity, h the step: the time step, or the load increment of a static step), so
/// f0(y) = y^3 (-1 / (3 eps^2)) + y^2 / eps + eps / 3 below eps and y above. Force -grad D = -mu lambda f1(y) T u / y:
/// Coulomb's mu lambda opposing the slip once y > eps, a stiff spring mu lambda (2 / eps) below it (static friction
/// up to a creep of eps per step). Hessian
///   grad grad D = mu lambda T [ f1(y)/y I + (f1'(y) y - f1(y)) / y^3 u u^T ] T^T,
/// which is positive semidefinite everywhere: below eps its eigenvalues are mu lambda (2/eps - y/eps^2) across u
/// and mu lambda 2 (eps - y) / eps^2 along u, above eps 1/y across u and 0 along u. No projection is needed.
#include "contact/vec3.hpp"

namespace edgefem::contact {

/// What a step freezes of one vertex-obstacle contact.
struct FrictionLag {
  Vec3 t1{}, t2{};        ///< orthonormal tangent basis at the step's start
  double force = 0.0;     ///< mu lambda: the Coulomb limit of the friction force
  Vec3 start{};           ///< the vertex's position at the step's start
  Vec3 obstacle_move{};   ///< the obstacle's translation over the step
};

/// f0, f1 and f1(y) / y of the mollifier with slip eps (f1(y) / y is finite at y = 0: 2 / eps).
double friction_f0(double y, double eps);
double friction_f1(double y, double eps);
double friction_f1_over_y(double y, double eps);

/// D(x), its gradient (added to `gradient`) and Hessian (added to `hessian`, row-major 3 x 3) for the lagged
/// contact; either output may be null. Returns D.
double friction_terms(const FrictionLag& lag, const Vec3& x, double eps, Vec3* gradient, Mat3* hessian);

/// The tangential slip vector T T^T (x - start - move) (3-D, in the tangent plane).
Vec3 friction_slip(const FrictionLag& lag, const Vec3& x);

}  // namespace edgefem::contact
