// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_friction.hpp
/// Lagged, smoothed Coulomb friction between two parts of the body's surface: a self-contact pair (IPC, Li et al.
/// 2020, section 5), the obstacles' friction (friction.hpp) applied to the pair's relative motion.
///
/// At the start of a step the pair's closest points are frozen as weights w of its four vertices, so that
/// r(x) = sum_i w_i x_i is the closest point of the first primitive relative to the second's (point-triangle:
/// w = (1, -b0, -b1, -b2), b the triangle's barycentric coordinates of the point's closest point; edge-edge:
/// w = (1 - s, s, -(1 - t), -t), s and t the closest points' parameters on the two edges), together with the
/// tangent basis T normal to r there, the normal force lambda (the barrier's force on the first primitive) and r's
/// value r_0. During the step the slip is u = T^T (r(x) - r_0) and friction the potential D = mu lambda f0(|u|)
/// (friction.hpp's f0, slip eps). Its gradient is w_i T (mu lambda f1/|u|) u on vertex i and its Hessian the 3 x 3
/// Hessian H of D in r times w_i w_j for the block (i, j): positive semi-definite as H is (w w^T is), so no
/// projection. No MPI, no PETSc.
#include <array>

#include "contact/friction.hpp"
#include "contact/vec3.hpp"

namespace edgefem::contact {

/// What a step freezes of one self-contact pair.
struct SelfFrictionLag {
  std::array<int, 4> vertices{};     ///< the pair's surface vertices (point and triangle, or edge a and edge b)
  std::array<double, 4> weights{};   ///< r = sum_i w_i x_i
  FrictionLag lag;                   ///< T, mu lambda, r_0 (no obstacle move)
};

/// The closest points' weights of a pair at y (point, triangle's three vertices; or a0, a1, b0, b1).
std::array<double, 4> closest_point_weights(const std::array<Vec3, 4>& y, bool edge_edge);

/// The lag of a pair at y with normal force lambda and coefficient mu; false (nothing frozen) when the closest points
/// coincide (no normal).
bool lag_self_friction(const std::array<Vec3, 4>& y, bool edge_edge, double lambda, double mu, SelfFrictionLag& out);

/// D at y; adds the gradient (12) and the Hessian (12 x 12, row-major) when not null.
double self_friction_terms(const SelfFrictionLag& lag, const std::array<Vec3, 4>& y, double eps, double* gradient,
                           double* hessian);

}  // namespace edgefem::contact
