// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frame_space.hpp
/// The kinematics of one frame type on this rank's samples (docs/theory/design.md "Frame-based models"), behind one
/// interface for FrameSolver: rigid frames (6 dofs, a pose on SE(3), dual-quaternion blend; frame_model.hpp) or
/// affine frames (12 dofs, linear blend; affine_frames.hpp). A state is a flat vector: rigid 7 numbers per frame
/// (rotation quaternion x, y, z, w, then the origin), affine 12 ([A | t] row-major). No MPI here: the sums over
/// ranks are FrameSolver's.
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "io/job.hpp"
#include "materials/frame_kinematics.hpp"
#include "materials/frame_model.hpp"

namespace edgefem {

class FrameSpace {
 public:
  virtual ~FrameSpace() = default;
  /// Unknowns per frame: 6 (a twist, angular first) or 12.
  [[nodiscard]] virtual int dofs_per_frame() const = 0;
  /// Numbers per frame in a state: 7 or 12.
  [[nodiscard]] virtual int state_per_frame() const = 0;
  [[nodiscard]] virtual std::vector<double> rest_state() const = 0;
  /// The state moved by `step` (dofs_per_frame per frame): the retraction on SE(3) of each twist, or the sum.
  [[nodiscard]] virtual std::vector<double> moved(std::span<const double> state,
                                                  std::span<const double> step) const = 0;
  /// This rank's partial energy, gradient and (when wanted) Hessian at `state`, with the loads `loads`.
  virtual void evaluate(std::span<const double> state, const frames::FramePoints& loads, bool want_hessian,
                        frames::FrameSystem& out) const = 0;
  /// Adds a potential of points (contact: frames/frames_contact.hpp) at `state` to out: energy, gradient and (when
  /// wanted) the exact Hessian through the points' Jacobian to the frames (rigid: with the blend's second
  /// derivatives). out's gradient and Hessian: as evaluate leaves them, or empty.
  virtual void add_point_potential(std::span<const double> state, const frames::FramePoints& points,
                                   const frames::PointPotential& phi, bool want_hessian,
                                   frames::FrameSystem& out) const = 0;
  /// The energy of evaluate alone (line searches).
  [[nodiscard]] virtual double energy(std::span<const double> state, const frames::FramePoints& loads) const = 0;
  /// Skinned positions of points (3 per point) with per-point weights (`weights[v * n_frames + i]`).
  [[nodiscard]] virtual std::vector<double> skin(std::span<const double> state, std::span<const double> reference,
                                                 std::span<const double> weights) const = 0;
  /// Per frame its current origin and the rotation of its linear map (rigid: its own; affine: the polar factor of
  /// A), and the linear map itself (row-major: R or A).
  [[nodiscard]] virtual std::vector<frames::FramePose> poses(std::span<const double> state) const = 0;
  [[nodiscard]] virtual std::vector<std::array<double, 9>> linear_maps(std::span<const double> state) const = 0;

  /// Integrate at the per-tet samples of make_samples (weights and their gradients at the tets' centroids).
  virtual void use_tet_samples(frames::FramePoints tet_samples) = 0;
  /// Voxel sampling: adds the voxel sums of the per-tet samples `tet_samples` (frame_model.hpp, affine_frames.hpp)
  /// to `sums` (voxel_width per voxel), and then takes the samples of the summed voxels k with k % stride == first.
  virtual void add_voxel_sums(const frames::FramePoints& tet_samples, const frames::Vec3& lo, const frames::Vec3& hi,
                              const std::array<int, 3>& grid, std::span<double> sums) const = 0;
  virtual void use_voxels(std::span<const double> sums, const std::array<int, 3>& grid, int first, int stride) = 0;
  [[nodiscard]] virtual std::size_t n_samples() const = 0;

  /// Dynamics. The lumped rest masses (Eq. 6 with the cross terms between frames dropped): per frame a
  /// dofs_per_frame-square block (row-major) M_i = sum_tets m J_i^T J_i at the tets' centroids (J_i = dx/d(dofs of
  /// frame i) at rest), this rank's partial sums; `cell_mass` per tet of `tet_samples`. `weighted`
  /// (discretization.frame_mass): M_i = sum_tets m w_i (J_i / w_i)^T (J_i / w_i) instead (the weights' row sum).
  [[nodiscard]] virtual std::vector<double> rest_masses(const frames::FramePoints& tet_samples,
                                                        std::span<const double> cell_mass, bool weighted = false) const = 0;
  /// The mass blocks at `state` from the rest blocks: rigid frames rotate them, diag(R, R) M_i diag(R, R)^T (Eq. 15);
  /// affine masses are constant.
  [[nodiscard]] virtual std::vector<double> masses(std::span<const double> state,
                                                   std::span<const double> rest_masses) const = 0;
  /// The velocity (dofs_per_frame per frame) of every frame moving at the uniform translational velocity `v`.
  [[nodiscard]] virtual std::vector<double> translation_velocity(const frames::Vec3& v) const = 0;
  /// Numbers per voxel in voxel_sums.
  [[nodiscard]] virtual std::size_t voxel_width() const = 0;
};

/// The space of `type` for frames at `rest_origins`, without samples yet (use_tet_samples or use_voxels).
std::unique_ptr<FrameSpace> make_frame_space(FrameType type, std::vector<frames::Vec3> rest_origins);

}  // namespace edgefem
