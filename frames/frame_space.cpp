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
  [[nodiscard]] std::vector<double> voxel_sums(const frames::FramePoints& tet_samples, const Vec3& lo, const Vec3& hi,
                                               const std::array<int, 3>& grid) const override {
    return frames::voxel_sums(tet_samples, lo, hi, grid, static_cast<int>(rest_.size()));
  }
  void use_voxels(std::span<const double> sums, const std::array<int, 3>& grid, int first, int stride) override {
    samples_ = frames::voxel_samples(sums, grid, static_cast<int>(rest_.size()), first, stride);
  }
  [[nodiscard]] std::size_t n_samples() const override { return samples_.size(); }
  [[nodiscard]] std::size_t voxel_width() const override { return frames::kVoxelFields + 4 * rest_.size(); }

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
  [[nodiscard]] std::vector<double> voxel_sums(const frames::FramePoints& tet_samples, const Vec3& lo, const Vec3& hi,
                                               const std::array<int, 3>& grid) const override {
    return frames::affine_voxel_sums(tet_samples, rest_, lo, hi, grid);
  }
  void use_voxels(std::span<const double> sums, const std::array<int, 3>& grid, int first, int stride) override {
    samples_ = frames::affine_voxel_samples(sums, grid, static_cast<int>(rest_.size()), first, stride);
  }
  [[nodiscard]] std::size_t n_samples() const override { return samples_.size(); }
  [[nodiscard]] std::size_t voxel_width() const override {
    return frames::kVoxelFields + frames::kAffineDofs * rest_.size();
  }

 private:
  frames::AffinePoints samples_;
  std::vector<Vec3> rest_;
};

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
