// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file vertex_rotations.hpp
/// The rotation of each vertex's neighbourhood from the reference to the current positions. GAMG's rebuilds turn the
/// finest interpolation's rows by them (linalg/multigrid_products.hpp; docs/theory/solver.md, "Preconditioner reuse"), so
/// that the coarse levels see the bent body's rigid-body modes instead of those of the rest state.
#include <span>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// For the vertices [0, n_vertices): the rotation R_v (9 values, row-major) nearest to A_v = sum over the edges
/// (a, b) of the tets at v of (x_a - x_b)(X_a - X_b)^T, i.e. A_v's orthogonal polar factor with det +1: the rotation
/// that best maps the reference edge vectors at v onto the current ones (orthogonal Procrustes). A rigid motion
/// x = R X + t gives R at every vertex, and so does a uniform scaling after it. The identity where no tet touches v.
/// `reference` and `current`: 3 values per vertex (tets may reach vertices at or beyond n_vertices: they only
/// contribute to the vertices below it). OpenMP-parallel over the vertices.
std::vector<double> vertex_rotations(std::span<const double> reference, std::span<const double> current,
                                     std::span<const LocalIndex> tets, LocalIndex n_vertices);

}  // namespace edgefem
