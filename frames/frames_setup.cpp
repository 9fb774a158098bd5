// SPDX-License-Identifier: BSD-3-Clause
/// \file frames_setup.cpp
/// Frame weights and held frames (frames_setup.hpp).
#include "frames/frames_setup.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "frames/diffused_weights.hpp"
#include "frames/laplace_weights.hpp"

namespace edgefem {
namespace {

using frames::Vec3;

std::vector<double> hat_weights(MPI_Comm comm, const LocalMesh& mesh, const DiscretizationSpec& spec,
                                const FramePlacement& frames) {
  const int n = static_cast<int>(frames.origins.size());
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (spec.positions.empty()) {  // placed by count: sort along the longest bounding-box axis
    const auto box = global_bounding_box(comm, mesh);
    int axis = 0;
    for (int c = 1; c < 3; ++c)
      if (box[3 + c] - box[c] > box[3 + axis] - box[axis]) axis = c;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return frames.origins[a][axis] < frames.origins[b][axis]; });
  }
  const LocalIndex n_local = mesh.n_local();
  std::vector<double> w(static_cast<std::size_t>(n_local) * n, 0.0);
  for (LocalIndex v = 0; v < n_local; ++v) {
    const double* x = &mesh.mesh.coords[3 * static_cast<std::size_t>(v)];
    if (n == 1) {
      w[static_cast<std::size_t>(v)] = 1.0;
      continue;
    }
    double best = std::numeric_limits<double>::infinity(), best_s = 0.0;
    int best_seg = 0;
    for (int s = 0; s + 1 < n; ++s) {
      const Vec3& a = frames.origins[order[s]];
      const Vec3& b = frames.origins[order[s + 1]];
      double ab[3], ax[3], ab2 = 0.0, t = 0.0;
      for (int c = 0; c < 3; ++c) ab[c] = b[c] - a[c], ax[c] = x[c] - a[c], ab2 += ab[c] * ab[c], t += ab[c] * ax[c];
      t = std::clamp(t / ab2, 0.0, 1.0);
      double d2 = 0.0;
      for (int c = 0; c < 3; ++c) {
        const double r = ax[c] - t * ab[c];
        d2 += r * r;
      }
      if (d2 < best) best = d2, best_s = t, best_seg = s;
    }
    w[static_cast<std::size_t>(v) * n + order[best_seg]] = 1.0 - best_s;
    w[static_cast<std::size_t>(v) * n + order[best_seg + 1]] = best_s;
  }
  return w;
}

/// Partition of unity (the sum of the weights is 1 at every vertex, to 1e-8): a check of the solves, on every rank.
void check_partition_of_unity(MPI_Comm comm, const std::vector<double>& w, LocalIndex n_local, int n,
                              FrameWeights kind) {
  double worst = 0.0;
  for (LocalIndex v = 0; v < n_local; ++v) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += w[static_cast<std::size_t>(v) * n + i];
    worst = std::max(worst, std::abs(s - 1.0));
  }
  double global_worst = 0.0;
  MPI_Allreduce(&worst, &global_worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (!(global_worst < 1e-8))
    throw SolverError(std::string(to_string(kind)) + " frame weights: the weights do not sum to 1 (largest deviation " +
                      std::to_string(global_worst) + "; is every part of the mesh connected to a frame?)");
}

/// w <- max(w - kWeightCutoff, 0), renormalised to sum 1 at each vertex: continuous, and each vertex keeps only the
/// frames that matter there.
void truncate(std::vector<double>& w, LocalIndex n_local, int n) {
  for (LocalIndex v = 0; v < n_local; ++v) {
    double* wv = &w[static_cast<std::size_t>(v) * n];
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += std::max(wv[i] - kWeightCutoff, 0.0);
    if (!(sum > 0.0)) continue;
    for (int i = 0; i < n; ++i) wv[i] = std::max(wv[i] - kWeightCutoff, 0.0) / sum;
  }
}

}  // namespace

std::vector<double> frame_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                  const DiscretizationSpec& spec, const FramePlacement& frames, const VoxelGrid& grid) {
  if (spec.weights == FrameWeights::hat) return hat_weights(comm, mesh, spec, frames);
  const int n = static_cast<int>(frames.origins.size());
  std::vector<double> w = spec.weights == FrameWeights::harmonic
                              ? harmonic_weights(comm, mesh, model, frames)
                              : diffused_weights(comm, mesh, model, frames, grid,
                                                 vertex_anchors(comm, mesh, model, frames));
  check_partition_of_unity(comm, w, mesh.n_local(), n, spec.weights);
  truncate(w, mesh.n_local(), n);
  return w;
}

std::vector<int> held_frames(MPI_Comm comm, const LocalMesh& mesh, const Model& model, const Job& job,
                             const std::vector<double>& weights, int n_frames) {
  std::vector<int> held(static_cast<std::size_t>(n_frames), 0), out(held.size(), 0);
  for (std::size_t b = 0; b < job.boundary.size() && b < model.boundary_vertices.size(); ++b) {
    const auto& fix = job.boundary[b].fix;
    if (!(fix[0] && fix[1] && fix[2])) continue;
    for (const LocalIndex v : model.boundary_vertices[b]) {
      int best = 0;
      for (int i = 1; i < n_frames; ++i)
        if (weights[static_cast<std::size_t>(v) * n_frames + i] >
            weights[static_cast<std::size_t>(v) * n_frames + best])
          best = i;
      held[best] = 1;
    }
  }
  (void)mesh;
  MPI_Allreduce(held.data(), out.data(), n_frames, MPI_INT, MPI_MAX, comm);
  return out;
}

}  // namespace edgefem
