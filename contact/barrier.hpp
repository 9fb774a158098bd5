// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file barrier.hpp
/// IPC's clamped log barrier of a distance d (Li et al. 2020, eq. 6) and the penalty alternative, with their
/// derivatives in d. The barrier b(d) = -(d - dh)^2 ln(d / dh) for 0 < d < dh (dh: the activation distance),
/// 0 from dh on, +infinity at d <= 0: C2 at dh, infinite as d -> 0, so an energy with it never lets a vertex
/// reach an obstacle. Units: b ~ length^2, b' ~ length, b'' dimensionless; a stiffness kappa (force / length)
/// makes kappa b an energy.
///   b'(d)  = -2 (d - dh) ln(d / dh) - (d - dh)^2 / d                      (< 0 on (0, dh))
///   b''(d) = -2 ln(d / dh) + (dh - d) (3 d + dh) / d^2                    (> 0 on (0, dh))
/// Penalty: p(d) = d^2 / 2 for d < 0, 0 from 0 on: p' = d, p'' = 1 (a vertex may penetrate; the stiffness k
/// bounds how far).
namespace edgefem::contact {

/// b(d), b'(d), b''(d) for activation distance dh > 0: 0 for d >= dh, +infinity (b' = -infinity, b'' = +infinity)
/// for d <= 0.
double barrier(double d, double dh);
double barrier_first_derivative(double d, double dh);
double barrier_second_derivative(double d, double dh);

/// p(d), p'(d), p''(d) (0 for d >= 0).
inline double penalty(double d) { return d < 0.0 ? 0.5 * d * d : 0.0; }
inline double penalty_first_derivative(double d) { return d < 0.0 ? d : 0.0; }
inline double penalty_second_derivative(double d) { return d < 0.0 ? 1.0 : 0.0; }

}  // namespace edgefem::contact
