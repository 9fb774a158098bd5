// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file elasticity.hpp
/// Voigt-notation helpers for the elasticity matrices of TetMaterial (materials/tet_material.cpp), exposed for
/// the unit tests. Voigt order [xx, yy, zz, xy, yz, zx] with engineering shear strains, so D_IJ = C_ijkl with
/// (ij) -> I, (kl) -> J and no factors of 2.
#include <array>

namespace edgefem::elasticity {

/// Isotropic D: lambda + 2 mu / lambda in the normal block, mu on the shear diagonal.
std::array<double, 36> isotropic_stiffness(double lambda, double mu);

/// D expressed in the global axes, given D_local in a frame whose axes are the COLUMNS of R (row-major,
/// orthonormal): C_ijkl = R_ip R_jq R_kr R_ls C^local_pqrs.
std::array<double, 36> rotate_stiffness(const std::array<double, 36>& D_local, const std::array<double, 9>& R);

/// Right-handed orthonormal frame whose first axis (first column of R) is `unit_axis` (assumed normalised).
std::array<double, 9> frame_from_axis(const std::array<double, 3>& unit_axis);

/// Cholesky test of a symmetric 6x6 matrix (relative pivot threshold 1e-12).
bool is_positive_definite(const std::array<double, 36>& D);

}  // namespace edgefem::elasticity
