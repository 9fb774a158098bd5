// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frames_setup.hpp
/// Set-up of the frame-based model on the distributed mesh (issue 14; docs/theory/design.md "Frame-based models"):
/// per-vertex weights (hat; harmonic or diffused from PETSc solves per frame) and the held frames; the placement is
/// frame_placement.hpp's.
/// Every function is collective and gives the same frames on every rank, independent of the rank count.
#include <mpi.h>

#include <string>
#include <vector>

#include "frames/frame_placement.hpp"
#include "frames/voxel_grid.hpp"
#include "io/job.hpp"
#include "materials/frame_kinematics.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// Per local vertex (owned and ghost), `n_frames` weights: weights[v * n + i].
/// Hat: the path through the frames (in `positions` order, or sorted along the longest bounding-box axis when
/// placed by count); a vertex projects onto the nearest point of the path (the first segment on ties); the two
/// ends of that segment share it linearly (1 at a frame, 0 at the next), every other frame 0.
/// Harmonic (a Laplace solve per frame; laplace_weights.hpp) and diffused (Voronoi cells diffused by heat steps on
/// `grid`; diffused_weights.hpp). Both hold
/// every fixed region at 1 for its anchor frame, are checked to sum to one (1e-8), and are then truncated:
/// w <- max(w - kWeightCutoff, 0), renormalised, so that a sample sees only the frames that matter there.
inline constexpr double kWeightCutoff = 1e-3;
std::vector<double> frame_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                  const DiscretizationSpec& spec, const FramePlacement& frames, const VoxelGrid& grid);

/// The held frames (1 = held in all 6 dofs): at every vertex selected by a boundary entry that fixes x, y and z,
/// the frame of the largest weight there (ties: the lowest frame index) is held.
std::vector<int> held_frames(MPI_Comm comm, const LocalMesh& mesh, const Model& model, const Job& job,
                             const std::vector<double>& weights, int n_frames);

}  // namespace edgefem
