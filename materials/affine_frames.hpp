// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file affine_frames.hpp
/// Affine frames (Faure, Gilles, Bousquet, Pai, "Sparse meshless models of complex deformable solids", TOG 2011):
/// 12 unknowns per frame, an affine map x = A_i (X - rest_i) + t_i, blended linearly (linear blend skinning):
///   x(X) = sum_i w_i(X) (A_i (X - rest_i) + t_i),   at rest A_i = I, t_i = rest_i (x = X when sum_i w_i = 1).
/// No MPI, no PETSc; the sums over ranks are the caller's (frames/frame_space.cpp).
///
/// Unknowns of frame i: q_i = [A_i | t_i] as a 3x4 matrix, row-major: q[12 i + 4 a + m] = A_i[a][m] (m < 3) or
/// t_i[a] (m = 3). The deformation gradient is linear in q:
///   F = sum_i Q_i B_i,   B_i[m][b] = w_i delta_mb + (X - rest_i)_m dw_i/dX_b (m < 3),   B_i[3][b] = dw_i/dX_b,
/// so a sample needs only its B_i (4x3 per influencing frame). St Venant-Kirchhoff psi(F) = lambda/2 (tr E)^2 +
/// mu E:E, E = (F^T F - I)/2, S = lambda tr E I + 2 mu E, P = F S. Exact derivatives, per sample of volume V:
///   dW/dQ_i = V P B_i^T,
///   d2W/dQ_i[a][m] dQ_j[c][n] = V (delta_ac (B_i S B_j^T)_mn + mu (F F^T)_ac (B_i B_j^T)_mn
///                                   + lambda u_ia[m] u_jc[n] + mu u_ic[m] u_ja[n]),   u_ia = B_i F_a (F_a: row a).
/// The energy is a quartic polynomial in q: Newton needs no retraction, the increments are added.
#include <array>
#include <span>
#include <vector>

#include "materials/frame_kinematics.hpp"
#include "materials/frame_model.hpp"

namespace edgefem::frames {

inline constexpr int kAffineDofs = 12;  ///< unknowns per affine frame

/// One affine frame's influence on a sample: B (see the file comment).
struct AffineInfluence {
  int frame = 0;
  double B[4][3]{};
};

/// Integration samples of the affine model, with the frames that influence each, in CSR form.
struct AffinePoints {
  std::vector<Vec3> point;  ///< reference position (the tet centroid or the voxel's volume-weighted centroid)
  std::vector<double> volume, lambda, mu;
  std::vector<int> offsets{0};
  std::vector<AffineInfluence> influences;
  [[nodiscard]] std::size_t size() const { return volume.size(); }
};

/// The affine samples of per-tet samples (make_samples: weight and gradient at each tet's centroid).
AffinePoints affine_samples(const FramePoints& tet_samples, std::span<const Vec3> rest_origins);

/// The rest state: A_i = I, t_i = rest_i.
std::vector<double> affine_rest_state(std::span<const Vec3> rest_origins);

/// The deformation gradient (row-major) of sample k at state q (12 per frame).
std::array<double, 9> affine_deformation_gradient(const AffinePoints& s, std::size_t k, std::span<const double> q);

/// Adds sample k's energy V psi(F) to the return value, V P B_i^T to `gradient` (12 n_frames, may be null) and,
/// when `hessian` is not null, its Hessian blocks to the row-major n_dofs x n_dofs `hessian`: only the blocks
/// (frame i, frame j) with i <= j (the caller mirrors the upper triangle; `mirror_upper`).
double add_affine_sample(const AffinePoints& s, std::size_t k, std::span<const double> q, double* gradient,
                         double* hessian, std::size_t n_dofs);

/// Copies the upper triangle of a row-major square matrix onto its lower triangle.
void mirror_upper(std::vector<double>& h, std::size_t n);

/// This rank's partial energy, gradient and Hessian (12 n_frames square, row-major) of the affine model: the samples'
/// StVK energy minus the loads' work sum_k f_k . x(X_k) (`loads`: load points, c[0] = w). Deterministic: fixed
/// chunks of samples, summed in order, whatever the thread count.
void evaluate_affine(const AffinePoints& samples, const FramePoints& loads, std::span<const Vec3> rest_origins,
                     std::span<const double> q, bool want_hessian, FrameSystem& out);

/// The energy of evaluate_affine alone (line searches).
[[nodiscard]] double affine_energy(const AffinePoints& samples, const FramePoints& loads,
                                   std::span<const Vec3> rest_origins, std::span<const double> q);

/// Skinned positions of points with per-point weights (`weights[v * n_frames + i]`), 3 per point.
std::vector<double> affine_skin(std::span<const double> reference, std::span<const double> weights,
                                std::span<const Vec3> rest_origins, std::span<const double> q);

/// Voxel sampling of affine samples (as add_voxel_sums / voxel_samples of frame_model.hpp): per voxel kVoxelFields +
/// 12 n_frames sums (V, V X, V lambda, V mu, V B_i) of the per-tet samples `s` (make_samples: B_i from their weights
/// and gradients, frames at `rest_origins`) added to `sums`, then one sample per non-empty voxel k with
/// k % stride == first, with the volume-averaged B_i: its F is the exact mean of F over the voxel's tets.
void add_affine_voxel_sums(const FramePoints& s, std::span<const Vec3> rest_origins, const Vec3& lo, const Vec3& hi,
                           const std::array<int, 3>& n, std::span<double> sums);
AffinePoints affine_voxel_samples(std::span<const double> sums, const std::array<int, 3>& n, int n_frames, int first,
                                  int stride);

}  // namespace edgefem::frames
