// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file cell_output.hpp
/// Per-cell strain and stress for the output (ParaView cell data), one function per material law; the model
/// registry (registry.cpp) says which one a model uses. No PETSc or MPI.
#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "materials/volino.hpp"

namespace edgefem {

/// Tetrahedron (X, x: 12 doubles): Green strain E and 2nd Piola-Kirchhoff stress S (tet_strain_stress, row-major
/// 3x3); returns the von Mises value of the Cauchy stress F S F^T / J.
double tet_cell_strain_stress(const double* X, const double* x, const TetMaterial& material, double* E, double* S);

/// Membrane triangle (X, x: 9 doubles): Green strain and plane-stress StVK 2nd Piola-Kirchhoff stress of the
/// in-plane deformation, as 3x3 tensors in the reference basis (zero normal components); returns the von Mises
/// value of the Cauchy stress F S F^T / J with J the area ratio (the thickness change is not modelled).
double membrane_strain_stress(const double* X, const double* x, const MembraneMaterial& m, double* E3, double* S3);

/// Volino triangle: strain (8) and stress sigma(eps) in the weft/warp frame, as 3x3 tensors in the reference
/// basis (engineering shear halved for the tensor); returns the von Mises value of that in-plane stress.
double volino_strain_stress(const double* X, const double* x, const VolinoMaterial& m, double* E3, double* S3);

}  // namespace edgefem
