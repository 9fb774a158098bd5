// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_ccd.hpp
/// Continuous collision detection of a self-contact pair moving linearly, x(t) = x + t dx for t in [0, 1]: additive
/// CCD (Li, Kaufman and Jiang 2021, "Codimensional incremental potential contact", algorithm 1, with minimum
/// separation 0). It is conservative by construction: the pair's distance is 1-Lipschitz in the relative motion of
/// its vertices, whose speed is at most l = max |dp| + max |dq| (the two primitives' largest vertex moves after the
/// mean move is taken out), so an advance by tau < d / l cannot close a gap d; it advances by 0.9 d / l (the first
/// time (1 - s) d0 / l) until the gap falls below s d0 and returns the time before that advance.
///
/// Guarantee (what the solvers rely on): for every t' in [0, t] the pair's distance is > 0, and at the returned t it
/// is >= s d0 (s = 0.1 by default: the stated minimum separation is a tenth of the pair's gap at the step's start);
/// t = 1 when the whole motion keeps that. Capped at `max_iterations` advances (then the time reached so far, still
/// safe). No MPI, no PETSc.
#include <array>

#include "contact/vec3.hpp"

namespace edgefem::contact {

/// The largest safe t in [0, 1] (see above) for the point-triangle pair x = {p, t0, t1, t2} (edge_edge = false) or
/// the edge-edge pair {a0, a1, b0, b1} moving by dx.
double additive_ccd(const std::array<Vec3, 4>& x, const std::array<Vec3, 4>& dx, bool edge_edge, double s = 0.1,
                    int max_iterations = 100000);

}  // namespace edgefem::contact
