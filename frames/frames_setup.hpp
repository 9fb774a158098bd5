#pragma once
/// \file frames_setup.hpp
/// Set-up of the frame-based model on the distributed mesh (issue 14; docs/design.md "Frame-based models"):
/// frame placement, per-vertex weights (hat, or harmonic from a PETSc Laplace solve) and the held frames.
/// Every function is collective and gives the same frames on every rank, independent of the rank count.
#include <mpi.h>

#include <string>
#include <vector>

#include "io/job.hpp"
#include "materials/frame_kinematics.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// Frames at mesh vertices: `positions` snapped to their nearest vertex (ties: the lowest file index), or `frames: N`
/// placed by farthest-point sampling over all vertices (first the vertex farthest from the bounding-box centre, then
/// each next one the vertex farthest from those chosen; ties to the lowest file index). Throws InputError when two
/// positions snap to the same vertex or N exceeds the vertex count.
struct FramePlacement {
  std::vector<frames::Vec3> origins;       ///< rest origins (= the vertices' coordinates)
  std::vector<GlobalIndex> file_vertices;  ///< the vertices' file (original) indices
};
FramePlacement place_frames(MPI_Comm comm, const LocalMesh& mesh, const DiscretizationSpec& spec,
                            const std::string& job_file);

/// Per local vertex (owned and ghost), `n_frames` weights: weights[v * n + i].
/// Hat: the path through the frames (in `positions` order, or sorted along the longest bounding-box axis when
/// placed by count); a vertex projects onto the nearest point of the path (the first segment on ties); the two
/// ends of that segment share it linearly (1 at a frame, 0 at the next), every other frame 0.
/// Harmonic: -lap w_i = 0 with linear tets (PETSc CG, `frames_weights_` options prefix), w_i = 1 on the ball of
/// frame i and 0 on the balls of the others, natural boundary elsewhere. Ball of a frame: the vertices within a
/// quarter of the distance to its nearest other frame (at least its own vertex). The weights then sum to one
/// (checked to 1e-8; the sum is the harmonic function that is 1 on every ball).
std::vector<double> frame_weights(MPI_Comm comm, const LocalMesh& mesh, const DiscretizationSpec& spec,
                                  const FramePlacement& frames);

/// The held frames (1 = held in all 6 dofs): at every vertex selected by a boundary entry that fixes x, y and z,
/// the frame of the largest weight there (ties: the lowest frame index) is held.
std::vector<int> held_frames(MPI_Comm comm, const LocalMesh& mesh, const Model& model, const Job& job,
                             const std::vector<double>& weights, int n_frames);

}  // namespace edgefem
