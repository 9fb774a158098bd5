// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file bending.hpp
/// Isometric bending of membranes (Bergou et al. 2006, as in Bender et al. §4.3): the material key
/// `bending: {stiffness: kb}` of any triangle model. One stencil per interior edge (an edge shared by exactly two
/// triangles of the same region): vertices x0, x1 (the edge) and x2, x3 (the opposite vertices of its two
/// triangles). With c_jk = cot of the angle between stencil edges e_j and e_k (e = [x0x1, x1x2, x2x0, x0x3,
/// x3x1]), K = (c01 + c04, c02 + c03, -c01 - c02, -c03 - c04) (the paper's numbering; here computed as the cotangents
/// of the triangles' interior angles at x0 and x1) and A0, A1 the triangles' areas, all of the REST shape:
///   Q = 3 / (A0 + A1) K K^T,   W = kb/2 sum_ij Q_ij x_i . x_j = 1/2 |sum_i k_i x_i|^2,  k = sqrt(3 kb/(A0+A1)) K,
///   f_i = dW/dx_i = k_i sum_j k_j x_j,   K_ij = k_i k_j I (constant).
/// sum_i K_i = 0 and sum_i K_i X_i = 0 for a flat stencil, so W is zero on a flat rest state and invariant under
/// rigid motions; the model assumes a flat rest shape (a curved rest shape is driven towards flat). On a sheet of
/// n x n squares (either diagonal pattern) rolled isometrically into a cylinder of radius R about an axis parallel
/// to its sides, W = (3/2) kb (A / R^2) (1 - 1/n) (1 + O(1/n^2)): the hinges along the two sides parallel to the
/// axis are boundary edges (checked in tests/unit/test_bending.cpp). The constant is the discrete energy's on this
/// structured mesh, found numerically, not a continuum one: the edge-based energy depends on the mesh (interior
/// vertices jittered by 0.2 h: 1.76 instead of 3/2 as n grows). No PETSc or MPI.
#include <array>
#include <memory>
#include <span>

#include "materials/formulation.hpp"

namespace edgefem {

/// The stencil weights k (4) of one rest stencil X (12 doubles: x0, x1 the edge, x2, x3 the opposite vertices)
/// for stiffness kb. Throws std::invalid_argument for a degenerate triangle (zero area).
std::array<double, 4> bending_weights(const double* X, double kb);

/// One stencil, for a position-based solver (constraint C = W): returns W and writes dW/dx (12 doubles) at x.
double bending_energy_gradient(const std::array<double, 4>& k, const double* x, double* gradient);

/// The formulation "bending" over `stencils` (4 local vertex ids each, as above) with stiffness[s] per stencil
/// (rest positions from coords, 3 per vertex). Block pattern: the diagonal block of every touched vertex, then,
/// per stencil, the 12 off-diagonal (i, j) pairs (repeated pairs are summed by the assembler). Throws
/// std::invalid_argument on inconsistent sizes, ids out of range, negative stiffness or degenerate triangles.
std::unique_ptr<TetFormulation> make_bending(std::span<const double> coords, std::span<const LocalIndex> stencils,
                                             std::span<const double> stiffness);

}  // namespace edgefem
