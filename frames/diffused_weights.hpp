// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file diffused_weights.hpp
/// `weights: diffused` (frames_setup.hpp, docs/theory/design.md "Frame-based models"): the Voronoi cells of the frames'
/// sites, diffused by implicit heat steps on the voxel grid (voxel_grid.hpp), then interpolated to the vertices.
/// Sites: each frame's point, and the fixed regions anchored to it (FramePlacement::anchors). On the cells of the
/// grid whose centre lies in the mesh, w_i starts as the indicator of the cells nearest to frame i's site and takes
/// kDiffusionSteps implicit Euler steps (M + tau K) w^(s+1) = M w^(s): M the cells' volumes, K the 7-point graph
/// Laplacian between face-adjacent cells (conductance: the cell edge), tau = h^2 / kDiffusionSteps with h the mean
/// distance from a frame to its nearest other frame; the cells holding a fixed vertex are held at 1 for its anchor
/// and 0 for the others. The steps keep the sum of the indicators, 1. A vertex takes the trilinear interpolation of
/// the cell centres around it (renormalised over the cells in the mesh), a fixed vertex exactly 1 for its
/// anchor (so a held anchor clamps its region exactly). Computed redundantly on every rank (conjugate gradients with
/// a diagonal preconditioner, to 1e-10): no PETSc, and the same weights on any rank count.
#include <mpi.h>

#include <vector>

#include "frames/frame_placement.hpp"
#include "frames/voxel_grid.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

inline constexpr int kDiffusionSteps = 3;

/// Per local vertex (owned and ghost), n_frames weights: w[v * n + i]. `anchor`: per local vertex the anchor frame
/// of the fixed region holding it (-1: none; vertex_anchors of laplace_weights.hpp). Collective.
std::vector<double> diffused_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                     const FramePlacement& frames, const VoxelGrid& grid,
                                     const std::vector<int>& anchor);

}  // namespace edgefem
