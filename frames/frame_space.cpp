// SPDX-License-Identifier: BSD-3-Clause
/// \file frame_space.cpp
/// Rigid and affine frame spaces (frame_space.hpp).
#include "frames/frame_space.hpp"

#include <Eigen/Dense>

#include "materials/affine_frames.hpp"

namespace edgefem {
namespace {

using frames::FramePose;
using frames::Vec3;

/// Rigid frames: the state holds the poses (quaternion, origin), the samples the weights and their gradients.
class RigidSpace final : public FrameSpace {
 public:
  explicit RigidSpace(std::vector<Vec3> rest) : rest_(std::move(rest)) {}

  [[nodiscard]] int dofs_per_frame() const override { return 6; }
  [[nodiscard]] int state_per_frame() const override { return 7; }
  [[nodiscard]] std::vector<double> rest_state() const override {
    std::vector<FramePose> p(rest_.size());
    for (std::size_t i = 0; i < rest_.size(); ++i) p[i].origin = rest_[i];
    return flat(p);
  }
  [[nodiscard]] std::vector<double> moved(std::span<const double> state, std::span<const double> step) const override {
    std::vector<FramePose> p = poses(state);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = frames::retract(p[i], &step[6 * i]);
    return flat(p);
  }
  void evaluate(std::span<const double> state, const frames::FramePoints& loads, bool want_hessian,
                frames::FrameSystem& out) const override {
    frames::evaluate_frames(samples_, loads, rest_, poses(state), want_hessian, out);
  }
  void add_point_potential(std::span<const double> state, const frames::FramePoints& points,
                           const frames::PointPotential& phi, bool want_hessian,
                           frames::FrameSystem& out) const override {
    frames::add_point_potential(points, rest_, poses(state), phi, want_hessian, out);
  }
  [[nodiscard]] double energy(std::span<const double> state, const frames::FramePoints& loads) const override {
    return frames::frames_energy(samples_, loads, rest_, poses(state));
  }
  [[nodiscard]] std::vector<double> skin(std::span<const double> state, std::span<const double> reference,
                                         std::span<const double> weights) const override {
    return frames::skin_points(reference, weights, rest_, poses(state));
  }
  [[nodiscard]] std::vector<FramePose> poses(std::span<const double> state) const override {
    std::vector<FramePose> p(state.size() / 7);
    for (std::size_t i = 0; i < p.size(); ++i) {
      for (int c = 0; c < 4; ++c) p[i].rotation[c] = state[7 * i + c];
      for (int c = 0; c < 3; ++c) p[i].origin[c] = state[7 * i + 4 + c];
    }
    return p;
  }
  [[nodiscard]] std::vector<std::array<double, 9>> linear_maps(std::span<const double> state) const override {
    std::vector<std::array<double, 9>> maps;
    for (const FramePose& p : poses(state)) maps.push_back(frames::rotation_matrix(p.rotation));
    return maps;
  }
  void use_tet_samples(frames::FramePoints tet_samples) override { samples_ = std::move(tet_samples); }
  void add_voxel_sums(const frames::FramePoints& tet_samples, const Vec3& lo, const Vec3& hi,
                      const std::array<int, 3>& grid, std::span<double> sums) const override {
    frames::add_voxel_sums(tet_samples, lo, hi, grid, static_cast<int>(rest_.size()), sums);
  }
  void use_voxels(std::span<const double> sums, const std::array<int, 3>& grid, int first, int stride) override {
    samples_ = frames::voxel_samples(sums, grid, static_cast<int>(rest_.size()), first, stride);
  }
  [[nodiscard]] std::size_t n_samples() const override { return samples_.size(); }
  [[nodiscard]] std::size_t voxel_width() const override { return frames::kVoxelFields + 4 * rest_.size(); }
  [[nodiscard]] std::vector<double> rest_masses(const frames::FramePoints& tet_samples,
                                                std::span<const double> cell_mass, bool weighted) const override;
  [[nodiscard]] std::vector<double> masses(std::span<const double> state,
                                           std::span<const double> rest_masses) const override;
  [[nodiscard]] std::vector<double> translation_velocity(const Vec3& v) const override {
    std::vector<double> out(6 * rest_.size(), 0.0);
    for (std::size_t i = 0; i < rest_.size(); ++i)
      for (int c = 0; c < 3; ++c) out[6 * i + 3 + c] = v[c];
    return out;
  }

 private:
  static std::vector<double> flat(const std::vector<FramePose>& p) {
    std::vector<double> s(7 * p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      for (int c = 0; c < 4; ++c) s[7 * i + c] = p[i].rotation[c];
      for (int c = 0; c < 3; ++c) s[7 * i + 4 + c] = p[i].origin[c];
    }
    return s;
  }

  frames::FramePoints samples_;
  std::vector<Vec3> rest_;
};

/// Affine frames: the state is [A | t] per frame, the samples carry B per influence.
class AffineSpace final : public FrameSpace {
 public:
  explicit AffineSpace(std::vector<Vec3> rest) : rest_(std::move(rest)) {}

  [[nodiscard]] int dofs_per_frame() const override { return frames::kAffineDofs; }
  [[nodiscard]] int state_per_frame() const override { return frames::kAffineDofs; }
  [[nodiscard]] std::vector<double> rest_state() const override { return frames::affine_rest_state(rest_); }
  [[nodiscard]] std::vector<double> moved(std::span<const double> state, std::span<const double> step) const override {
    std::vector<double> s(state.begin(), state.end());
    for (std::size_t k = 0; k < s.size(); ++k) s[k] += step[k];
    return s;
  }
  void evaluate(std::span<const double> state, const frames::FramePoints& loads, bool want_hessian,
                frames::FrameSystem& out) const override {
    frames::evaluate_affine(samples_, loads, rest_, state, want_hessian, out);
  }
  void add_point_potential(std::span<const double> state, const frames::FramePoints& points,
                           const frames::PointPotential& phi, bool want_hessian,
                           frames::FrameSystem& out) const override {
    frames::add_affine_point_potential(points, rest_, state, phi, want_hessian, out);
  }
  [[nodiscard]] double energy(std::span<const double> state, const frames::FramePoints& loads) const override {
    return frames::affine_energy(samples_, loads, rest_, state);
  }
  [[nodiscard]] std::vector<double> skin(std::span<const double> state, std::span<const double> reference,
                                         std::span<const double> weights) const override {
    return frames::affine_skin(reference, weights, rest_, state);
  }
  [[nodiscard]] std::vector<FramePose> poses(std::span<const double> state) const override;
  [[nodiscard]] std::vector<std::array<double, 9>> linear_maps(std::span<const double> state) const override {
    std::vector<std::array<double, 9>> maps(rest_.size());
    for (std::size_t i = 0; i < maps.size(); ++i)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) maps[i][3 * a + b] = state[frames::kAffineDofs * i + 4 * a + b];
    return maps;
  }
  void use_tet_samples(frames::FramePoints tet_samples) override {
    samples_ = frames::affine_samples(tet_samples, rest_);
  }
  void add_voxel_sums(const frames::FramePoints& tet_samples, const Vec3& lo, const Vec3& hi,
                      const std::array<int, 3>& grid, std::span<double> sums) const override {
    frames::add_affine_voxel_sums(tet_samples, rest_, lo, hi, grid, sums);
  }
  void use_voxels(std::span<const double> sums, const std::array<int, 3>& grid, int first, int stride) override {
    samples_ = frames::affine_voxel_samples(sums, grid, static_cast<int>(rest_.size()), first, stride);
  }
  [[nodiscard]] std::size_t n_samples() const override { return samples_.size(); }
  [[nodiscard]] std::size_t voxel_width() const override {
    return frames::kVoxelFields + frames::kAffineDofs * rest_.size();
  }
  [[nodiscard]] std::vector<double> rest_masses(const frames::FramePoints& tet_samples,
                                                std::span<const double> cell_mass, bool weighted) const override;
  [[nodiscard]] std::vector<double> masses(std::span<const double>,
                                           std::span<const double> rest_masses) const override {
    return {rest_masses.begin(), rest_masses.end()};
  }
  [[nodiscard]] std::vector<double> translation_velocity(const Vec3& v) const override {
    std::vector<double> out(frames::kAffineDofs * rest_.size(), 0.0);
    for (std::size_t i = 0; i < rest_.size(); ++i)
      for (int a = 0; a < 3; ++a) out[frames::kAffineDofs * i + 4 * a + 3] = v[a];
    return out;
  }

 private:
  frames::AffinePoints samples_;
  std::vector<Vec3> rest_;
};

std::vector<double> RigidSpace::rest_masses(const frames::FramePoints& samples, std::span<const double> cell_mass,
                                            bool weighted) const {
  // J_i = dp/dtwist_i = (dp/db) w_i (dd_i/dtwist) at the sample (the tet's centroid), at rest.
  const std::size_t n = rest_.size();
  std::vector<double> M(36 * n, 0.0);
  std::vector<frames::RelativeTransform> rel(n);
  for (std::size_t i = 0; i < n; ++i) rel[i] = frames::relative_transform(FramePose{{0, 0, 0, 1}, rest_[i]}, rest_[i]);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    frames::DualQuat b{};
    for (int q = samples.offsets[k]; q < samples.offsets[k + 1]; ++q)
      for (int l = 0; l < 8; ++l) b[l] += samples.influences[q].c[0] * rel[samples.influences[q].frame].d[l];
    const frames::SkinnedPoint sp = frames::skin_derivatives(b, samples.point[k]);
    for (int q = samples.offsets[k]; q < samples.offsets[k + 1]; ++q) {
      const frames::Influence& in = samples.influences[q];
      double J[3][6];
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 6; ++c) {
          double v = 0.0;
          for (int l = 0; l < 8; ++l) v += sp.grad[a][l] * rel[in.frame].first[l][c];
          J[a][c] = v;  // (J_i / w_i)
        }
      const double mw = cell_mass[k] * (weighted ? in.c[0] : in.c[0] * in.c[0]);
      double* Mi = &M[36 * static_cast<std::size_t>(in.frame)];
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) Mi[6 * r + c] += mw * (J[0][r] * J[0][c] + J[1][r] * J[1][c] + J[2][r] * J[2][c]);
    }
  }
  return M;
}

std::vector<double> RigidSpace::masses(std::span<const double> state, std::span<const double> rest_masses) const {
  std::vector<double> out(rest_masses.size());
  const std::vector<FramePose> p = poses(state);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto r = frames::rotation_matrix(p[i].rotation);
    Eigen::Matrix<double, 6, 6> rot = Eigen::Matrix<double, 6, 6>::Zero();
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 3; ++c) rot(a, c) = rot(3 + a, 3 + c) = r[3 * a + c];
    const Eigen::Map<const Eigen::Matrix<double, 6, 6, Eigen::RowMajor>> rest(&rest_masses[36 * i]);
    Eigen::Map<Eigen::Matrix<double, 6, 6, Eigen::RowMajor>> block(&out[36 * i]);
    block = rot * rest * rot.transpose();
  }
  return out;
}

std::vector<double> AffineSpace::rest_masses(const frames::FramePoints& samples, std::span<const double> cell_mass,
                                             bool weighted) const {
  // x = sum_i w_i (A_i (X - rest_i) + t_i): J_i = w_i [phi^T (x) I3], phi = (X - rest_i, 1), so
  // M_i[(4a + m), (4c + n)] = delta_ac sum m w_i^2 phi_m phi_n.
  constexpr int d = frames::kAffineDofs;
  std::vector<double> M(d * d * rest_.size(), 0.0);
  for (std::size_t k = 0; k < samples.size(); ++k)
    for (int q = samples.offsets[k]; q < samples.offsets[k + 1]; ++q) {
      const frames::Influence& in = samples.influences[q];
      const Vec3& rest = rest_[static_cast<std::size_t>(in.frame)];
      const double phi[4] = {samples.point[k][0] - rest[0], samples.point[k][1] - rest[1],
                             samples.point[k][2] - rest[2], 1.0};
      const double mw2 = cell_mass[k] * (weighted ? in.c[0] : in.c[0] * in.c[0]);
      double* Mi = &M[d * d * static_cast<std::size_t>(in.frame)];
      for (int a = 0; a < 3; ++a)
        for (int m = 0; m < 4; ++m)
          for (int n = 0; n < 4; ++n) Mi[(4 * a + m) * d + 4 * a + n] += mw2 * phi[m] * phi[n];
    }
  return M;
}

std::vector<FramePose> AffineSpace::poses(std::span<const double> state) const {
  std::vector<FramePose> p(rest_.size());
  const auto maps = linear_maps(state);
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (int a = 0; a < 3; ++a) p[i].origin[a] = state[frames::kAffineDofs * i + 4 * a + 3];
    const Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>> A(maps[i].data());
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
    Eigen::Matrix3d D = Eigen::Matrix3d::Identity();
    D(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1.0 : 1.0;
    Eigen::Quaterniond q(Eigen::Matrix3d(svd.matrixU() * D * svd.matrixV().transpose()));
    if (q.w() < 0) q.coeffs() *= -1.0;
    p[i].rotation = {q.x(), q.y(), q.z(), q.w()};
  }
  return p;
}

}  // namespace

std::unique_ptr<FrameSpace> make_frame_space(FrameType type, std::vector<Vec3> rest_origins) {
  if (type == FrameType::affine) return std::make_unique<AffineSpace>(std::move(rest_origins));
  return std::make_unique<RigidSpace>(std::move(rest_origins));
}

}  // namespace edgefem
