// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frame_placement.hpp
/// Where the frames of the frame-based model go (docs/theory/design.md "Frame-based models"): at given positions, or
/// `frames: N` placed by farthest-point sampling over the vertices or by k-means over the tets, each starting with
/// one frame on every fixed region (the anchors). Collective; the same frames on every rank, whatever the rank
/// count: every choice is agreed with MPI_Allreduce (largest/smallest value, ties to the lowest file index).
#include <mpi.h>

#include <array>
#include <vector>

#include "frames/voxel_grid.hpp"
#include "io/job.hpp"
#include "materials/frame_kinematics.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// The frames: each at a mesh vertex (its rest origin = the vertex's coordinates).
struct FramePlacement {
  std::vector<frames::Vec3> origins;       ///< rest origins (= the vertices' coordinates)
  std::vector<GlobalIndex> file_vertices;  ///< the vertices' file (original) indices
  /// Per job.boundary entry: the frame anchored on that fixed region (-1 when the entry is not a fix of x, y and z,
  /// or selects no vertex). Harmonic weights are 1 for it on the whole region and 0 for the other frames there.
  std::vector<int> anchors;
};

/// Anchors: for each boundary entry fixing x, y and z, the vertex of the region nearest to the mean of its vertices.
/// `positions` (spec): each snapped to its nearest vertex (ties: the lowest file index); the anchor of a region is
/// the frame nearest to that vertex. `frames: N`: the anchors' vertices first (a vertex shared by two regions is one
/// frame), then the rest by `placement`:
///   farthest: each next frame at the vertex farthest from those chosen (with no anchor, the first one at the vertex
///             farthest from the bounding-box centre);
///   kmeans:   Lloyd iterations over the cells of `grid` (their tets' centroids, weighted by volume) from the
///             farthest placement, the anchors held, then each free centre snapped to its nearest vertex not taken
///             (in frame order).
/// Throws InputError (naming the job key) when two positions snap to one vertex, N exceeds the vertex count, or N
/// is smaller than the number of anchors.
FramePlacement place_frames(MPI_Comm comm, const LocalMesh& mesh, const Job& job, const Model& model,
                            const VoxelGrid& grid);

/// `frames: N` (or the number of `positions`) against the mesh's vertex count: InputError naming the key when there
/// are more frames than vertices (every frame sits at its own vertex). Not collective; the same on every rank. Called
/// by place_frames, and by the run before its memory estimate (which a huge count would fail less clearly).
void check_frame_count(const Job& job, GlobalIndex n_global_vertices);

/// The bounding box of the mesh over all ranks: lo x, y, z then hi x, y, z.
std::array<double, 6> global_bounding_box(MPI_Comm comm, const LocalMesh& mesh);

}  // namespace edgefem
