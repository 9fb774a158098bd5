#pragma once
/// \file laplace_weights.hpp
/// The frame weights that come from PETSc solves on the tet mesh (frames_setup.hpp, docs/design.md "Frame-based
/// models"): harmonic (one Laplace solve per frame) and diffused (three implicit heat steps per frame). Both hold
/// the vertices of each fixed region at 1 for its anchor frame and 0 for the others, so a held anchor clamps its
/// region exactly, and both sum to one (checked). Per local vertex (owned and ghost), n_frames weights:
/// w[v * n + i]. Collective.
#include <mpi.h>

#include <vector>

#include "frames/frame_placement.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// -lap w_i = 0 (P1), w_i = 1 on the Dirichlet set of frame i, 0 on those of the others, natural boundary
/// elsewhere. Dirichlet set: the frame's ball (the vertices within a quarter of the distance to its nearest other
/// frame, at least its own vertex) and the fixed regions anchored to it (they take precedence).
std::vector<double> harmonic_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                     const FramePlacement& frames);

/// Heat-diffused Voronoi cells: w_i starts as the indicator of the vertices nearest to frame i's site (its point,
/// and the fixed regions anchored to it: a fixed vertex belongs to its anchor) and takes kDiffusionSteps implicit
/// Euler steps of the heat equation, (M + tau K) w^(s+1) = M w^(s) (M: lumped P1 mass, K: P1 Laplacian, natural
/// boundary), tau = h^2 / kDiffusionSteps with h the mean distance from a frame to its nearest other frame, the
/// fixed vertices held. The steps keep the sum of the indicators, 1, so the weights sum to one.
inline constexpr int kDiffusionSteps = 3;
std::vector<double> diffused_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                     const FramePlacement& frames);

}  // namespace edgefem
