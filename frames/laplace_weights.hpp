// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file laplace_weights.hpp
/// The frame weights that come from PETSc solves on the tet mesh (frames_setup.hpp, docs/theory/design.md "Frame-based
/// models"): harmonic, one Laplace solve per frame. It holds the vertices of each fixed region at 1 for its anchor
/// frame and 0 for the others, so a held anchor clamps its region exactly. Per local vertex (owned and ghost),
/// n_frames weights: w[v * n + i]. Collective.
#include <mpi.h>

#include <vector>

#include "frames/frame_placement.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// Relative residual of the Laplace solves (CG + GAMG, options prefix frames_weights_): tight, so that the weights,
/// and the answer, do not depend on the rank count beyond rounding (their sum is checked to 1e-8, frames_setup.cpp).
inline constexpr double kWeightSolveRtol = 1e-12;

/// -lap w_i = 0 (P1), w_i = 1 on the Dirichlet set of frame i, 0 on those of the others, natural boundary
/// elsewhere. Dirichlet set: the frame's ball (the vertices within a quarter of the distance to its nearest other
/// frame, at least its own vertex) and the fixed regions anchored to it (they take precedence).
std::vector<double> harmonic_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                     const FramePlacement& frames);

/// Per local vertex (owned and ghost): the anchor frame of the fixed region holding it (-1: none); the ghosts get
/// their owners' values (a PETSc ghost update).
std::vector<int> vertex_anchors(MPI_Comm comm, const LocalMesh& mesh, const Model& model, const FramePlacement& frames);

}  // namespace edgefem
