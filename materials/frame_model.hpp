// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frame_model.hpp
/// The frame-based model on one rank's tets (no MPI, no PETSc): one StVK sample per tet at its centroid (weight =
/// tet volume, the paper's Eq. 14 with our tets instead of voxels), frame weights interpolated linearly in each tet
/// from per-vertex values (so grad w_i is exact and constant per tet), and external vertex forces projected onto
/// the frames by power conservation (Eq. 13). `evaluate_frames` returns this rank's partial energy, twist gradient
/// (6 per frame, angular first) and dense twist Hessian (material + geometric terms); the sums over ranks are the
/// caller's (frames/frames_solver.cpp).
#include <array>
#include <span>
#include <vector>

#include "materials/frame_kinematics.hpp"
#include "mesh/mesh.hpp"

namespace edgefem::frames {

/// Frame j's weight at a point and its gradient: c = (w, dw/dx, dw/dy, dw/dz).
struct Influence {
  int frame = 0;
  double c[4]{};
};

/// Integration samples (one per tet) or load points (one per loaded vertex; only c[0] used), with the frames that
/// influence each (non-zero weight or gradient), in CSR form.
struct FramePoints {
  std::vector<Vec3> point;         ///< reference position
  std::vector<double> volume;      ///< samples: tet volume
  std::vector<double> lambda, mu;  ///< samples: Lame constants
  std::vector<Vec3> force;         ///< load points: force (already scaled by the load factor)
  std::vector<int> offsets{0};
  std::vector<Influence> influences;
  [[nodiscard]] std::size_t size() const { return point.size(); }
};

/// Samples of `cells` (local tets of `mesh`): centroid, volume, Lame constants (per cell), and the influences from
/// per-vertex weights (`weights[v * n_frames + i]`).
FramePoints make_samples(const Mesh& mesh, std::span<const LocalIndex> cells, std::span<const double> cell_lambda,
                         std::span<const double> cell_mu, std::span<const double> weights, int n_frames);

/// Voxel sampling (`discretization.sample_grid`, the paper's one sample per voxel): samples binned by their point
/// into the n[0] x n[1] x n[2] cells of the box [lo, hi]. add_voxel_sums adds, per voxel, kVoxelFields + 4 n_frames
/// values: V, V X (3), V lambda, V mu, then V c (4 per frame), summed over `s` (some of this rank's tet samples),
/// to `sums` (in voxel order, x fastest); the caller sums the arrays over ranks. voxel_samples makes the samples of the voxels k with k % stride == first that hold
/// volume: at the volume-weighted centroid, with the volume-averaged Lame constants and influences (weight and
/// gradient), weight = the voxel's volume.
inline constexpr int kVoxelFields = 6;
/// The voxel (x fastest) of the n[0] x n[1] x n[2] grid over [lo, hi] that holds `point` (clamped to the grid).
std::size_t voxel_of(const Vec3& point, const Vec3& lo, const Vec3& hi, const std::array<int, 3>& n);
void add_voxel_sums(const FramePoints& s, const Vec3& lo, const Vec3& hi, const std::array<int, 3>& n, int n_frames,
                    std::span<double> sums);
FramePoints voxel_samples(std::span<const double> sums, const std::array<int, 3>& n, int n_frames, int first,
                          int stride);

/// The loop voxel_samples and affine_voxel_samples share: for the voxels k with k % stride == first that hold volume
/// (`width` values each, the first kVoxelFields as add_voxel_sums writes them), one sample at the volume-weighted
/// centroid with the volume-averaged Lame constants; `add_influences(out, v, V)` appends the voxel's influences from
/// its values `v` (V = v[0]).
template <class Points, class AddInfluences>
Points voxel_sample_points(std::span<const double> sums, const std::array<int, 3>& n, std::size_t width, int first,
                           int stride, AddInfluences&& add_influences) {
  const std::size_t n_voxels = static_cast<std::size_t>(n[0]) * n[1] * n[2];
  Points out;
  for (std::size_t k = static_cast<std::size_t>(first); k < n_voxels; k += static_cast<std::size_t>(stride)) {
    const double* v = &sums[k * width];
    const double V = v[0];
    if (!(V > 0.0)) continue;
    out.point.push_back({v[1] / V, v[2] / V, v[3] / V});
    out.volume.push_back(V);
    out.lambda.push_back(v[4] / V);
    out.mu.push_back(v[5] / V);
    add_influences(out, v, V);
    out.offsets.push_back(static_cast<int>(out.influences.size()));
  }
  return out;
}

/// This rank's partial energy, gradient and Hessian with respect to the frames' twists (retract, frame_kinematics.hpp)
/// at `poses`: W = sum_samples V psi(F) - sum_loads f . p. Hessian row-major, 6 n_frames square.
struct FrameSystem {
  double energy = 0.0;
  double strain_energy = 0.0;
  std::vector<double> gradient;
  std::vector<double> hessian;
};
/// `want_hessian` false skips the Hessian (line searches). Deterministic: samples are summed in fixed chunks, in
/// order, whatever the thread count.
void evaluate_frames(const FramePoints& samples, const FramePoints& loads, std::span<const Vec3> rest_origins,
                     std::span<const FramePose> poses, bool want_hessian, FrameSystem& out);

/// The energy of evaluate_frames alone (plain doubles, no derivatives; for line searches).
[[nodiscard]] double frames_energy(const FramePoints& samples, const FramePoints& loads,
                                   std::span<const Vec3> rest_origins, std::span<const FramePose> poses);

/// Skinned positions of points with per-point weights (`weights[v * n_frames + i]`).
std::vector<double> skin_points(std::span<const double> reference, std::span<const double> weights,
                                std::span<const Vec3> rest_origins, std::span<const FramePose> poses);

}  // namespace edgefem::frames
