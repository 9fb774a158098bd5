// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frame_kinematics.hpp
/// Kinematics and StVK kernel of the frame-based elastic model (Gilles, Bousquet, Faure, Pai, "Frame-based elastic
/// models", ACM TOG 30(2), 2011; corrected formulas in the digest 001_frame_based.md). No MPI, no PETSc.
///
/// Conventions (the paper's): a quaternion is (x, y, z, w), scalar last; a dual quaternion is 8 numbers, real part
/// then dual part. A twist is 6 numbers, angular first: (dtheta, dt), both in world axes. Every frame has the
/// identity orientation at rest, so its rest pose is its rest origin alone.
///
/// Blending (Eqs. 1-2): b(X) = sum_i w_i(X) d_i with d_i the unit dual quaternion of frame i's transform from
/// rest, x = R_i (X - rest_i) + t_i. The normalised blend b' = b / |b| (dual-quaternion norm, App. A) moves X to
///   p(b, X) = R(b') X + t(b') = [M(b0) X + 2 vec(be o conj(b0))] / (b0 . b0),
/// with M(b0) the homogeneous rotation matrix (M(q) v = q o v o conj(q)). Written this way p is a rational
/// function of the unnormalised b, so dp/db = Q N of the paper (Eq. 7) comes out of one formula.
/// Deformation gradient (Eq. 8): F = R(b) + (dp/db) W, W = db/dX = sum_i d_i grad(w_i)^T (8x3).
#include <array>

namespace edgefem::frames {

using Vec3 = std::array<double, 3>;

/// The squared distance between the point `a` (three coordinates) and `b`.
inline double distance2(const double* a, const Vec3& b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}
using DualQuat = std::array<double, 8>;  ///< real (x, y, z, w) then dual (x, y, z, w)

/// The current pose of one frame.
struct FramePose {
  std::array<double, 4> rotation{0, 0, 0, 1};  ///< unit quaternion (x, y, z, w): rotation from rest, w >= 0
  Vec3 origin{};                               ///< current origin
};

/// The increment on SE(3) used by every Newton step: rotation <- exp(dtheta / 2) o rotation (about the frame's own
/// origin, world axes), origin <- origin + dt. The quaternion is renormalised and kept on the w >= 0 hemisphere.
[[nodiscard]] FramePose retract(const FramePose& pose, const double* twist);

/// Rotation matrix (row-major) of a unit quaternion.
[[nodiscard]] std::array<double, 9> rotation_matrix(const std::array<double, 4>& q);

/// Frame i's transform from rest as a unit dual quaternion, d = (r, (1/2) tau o r), tau = t - R rest_origin,
/// with its derivatives with respect to the twist of `retract` at zero: first[k][a] = d d_k / d twist_a,
/// second[k][a][b] = d^2 d_k / d twist_a d twist_b (symmetric).
struct RelativeTransform {
  DualQuat d{};
  double first[8][6]{};
  double second[8][6][6]{};
};
[[nodiscard]] RelativeTransform relative_transform(const FramePose& pose, const Vec3& rest_origin);

/// Skinned position p(b, X) (see the file comment), with dp/db (3x8) and d^2 p / db^2 (3x8x8).
struct SkinnedPoint {
  Vec3 p{};
  double grad[3][8]{};
  double hess[3][8][8]{};
};
[[nodiscard]] Vec3 skin(const DualQuat& b, const Vec3& X);
[[nodiscard]] SkinnedPoint skin_derivatives(const DualQuat& b, const Vec3& X);

/// The deformation gradient F = R(b) + (dp/db) W (Eq. 8), row-major 3x3.
[[nodiscard]] std::array<double, 9> deformation_gradient(const DualQuat& b, const double W[8][3], const Vec3& X);

/// Number of sample variables z = (b, W column 0, W column 1, W column 2): z[8 a + l] is b_l (a = 0) or W[l][a-1].
inline constexpr int kSampleVars = 32;

/// St Venant-Kirchhoff at one sample: e = volume psi(F(z)), psi = lambda/2 (tr E)^2 + mu E:E, E = (F^T F - I)/2,
/// with its exact gradient and Hessian in z. The Hessian holds the material term (dF^T C dF) and the geometric term
/// (P : d^2 F), so a Newton iteration on the frames is a full Newton step (the paper drops the latter, Eq. 12).
struct SampleEnergy {
  double energy = 0.0;
  std::array<double, 9> F{};  ///< deformation gradient at the sample
  double grad[kSampleVars]{};
  double hess[kSampleVars][kSampleVars]{};
};
void stvk_sample(const DualQuat& b, const double W[8][3], const Vec3& X, double lambda, double mu, double volume,
                 SampleEnergy& out);

/// The energy of stvk_sample alone, in plain doubles (line searches): volume psi(F).
[[nodiscard]] double stvk_sample_energy(const DualQuat& b, const double W[8][3], const Vec3& X, double lambda,
                                        double mu, double volume);

/// StVK energy density of a deformation gradient (row-major 3x3).
[[nodiscard]] double stvk_density(const std::array<double, 9>& F, double lambda, double mu);

}  // namespace edgefem::frames
