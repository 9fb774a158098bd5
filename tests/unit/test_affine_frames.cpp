// SPDX-License-Identifier: BSD-3-Clause
// Affine frame kernels (materials/affine_frames.*): the sample's StVK energy, gradient and Hessian in the 12 dofs
// per frame against central differences on random, stretched and rotated states; the sums over samples with loads;
// an affine field is reproduced exactly (F = A everywhere, zero energy and force for a rotation); voxel samples
// carry the exact mean F of their tets.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "materials/affine_frames.hpp"
#include "materials/frame_model.hpp"
#include "mesh/mesh.hpp"
#include "tests/support/meshes.hpp"

namespace edgefem::frames {
namespace {

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (const double x : v) m = std::max(m, std::abs(x));
  return m;
}

/// Rotation matrix (row-major) of angle `angle` about the unit axis (1, 2, 2) / 3.
std::array<double, 9> rotation(double angle) {
  const double n[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3}, c = std::cos(angle), s = std::sin(angle);
  std::array<double, 9> R{};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      R[3 * a + b] = (1 - c) * n[a] * n[b] + (a == b ? c : 0.0);
      const int k = 3 - a - b;
      if (a != b) R[3 * a + b] += ((b == (a + 1) % 3) ? -1.0 : 1.0) * s * n[k];
    }
  return R;
}

/// A state of n frames: A_i = base (I, a stretch or a rotation) + `noise`, t_i random.
std::vector<double> state(int n, const std::array<double, 9>& base, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> q(kAffineDofs * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) {
      for (int m = 0; m < 3; ++m) q[kAffineDofs * i + 4 * a + m] = base[3 * a + m] + noise * u(rng);
      q[kAffineDofs * i + 4 * a + 3] = u(rng);
    }
  return q;
}

/// One sample influenced by frames 2, 0, 1 (out of order: the Hessian blocks land below and above the diagonal).
AffinePoints one_sample(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  AffinePoints s;
  s.point.push_back({0.1, 0.2, 0.3});
  s.volume.push_back(0.7);
  s.lambda.push_back(1.3);
  s.mu.push_back(0.8);
  for (const int f : {2, 0, 1}) {
    AffineInfluence in;
    in.frame = f;
    for (auto& row : in.B)
      for (double& x : row) x = u(rng);
    s.influences.push_back(in);
  }
  s.offsets.push_back(3);
  return s;
}

/// Energy, gradient and full Hessian of sample 0 of `s` at q.
struct Local {
  double energy = 0.0;
  std::vector<double> g, h;
};
Local local(const AffinePoints& s, const std::vector<double>& q) {
  Local l;
  const std::size_t n = q.size();
  l.g.assign(n, 0.0);
  l.h.assign(n * n, 0.0);
  l.energy = add_affine_sample(s, 0, q, l.g.data(), l.h.data(), n);
  mirror_upper(l.h, n);
  return l;
}

TEST(AffineFrames, SampleGradientAndHessianMatchFiniteDifferences) {
  const std::array<double, 9> identity{1, 0, 0, 0, 1, 0, 0, 0, 1}, stretch{1.6, 0, 0, 0, 0.6, 0, 0, 0, 1.3};
  const std::array<std::pair<std::string, std::array<double, 9>>, 3> bases{
      {{"random", identity}, {"stretched", stretch}, {"rotated", rotation(2.1)}}};
  unsigned seed = 1;
  for (const auto& [name, base] : bases) {
    const AffinePoints s = one_sample(seed);
    const std::vector<double> q = state(3, base, 0.3, ++seed);
    const Local at = local(s, q);
    const std::size_t n = q.size();
    const double gscale = max_abs(at.g), hscale = max_abs(at.h), h = 1e-6;
    ASSERT_GT(gscale, 1e-2) << name;
    for (std::size_t a = 0; a < n; ++a) {
      std::vector<double> qp = q, qm = q;
      qp[a] += h;
      qm[a] -= h;
      const Local p = local(s, qp), m = local(s, qm);
      EXPECT_LT(std::abs((p.energy - m.energy) / (2 * h) - at.g[a]), 1e-7 * gscale) << name << " dof " << a;
      for (std::size_t b = 0; b < n; ++b) {
        EXPECT_LT(std::abs((p.g[b] - m.g[b]) / (2 * h) - at.h[b * n + a]), 1e-6 * hscale)
            << name << " H(" << b << ", " << a << ")";
        EXPECT_EQ(at.h[a * n + b], at.h[b * n + a]);
      }
    }
  }
}

/// A jittered box of tets with smooth per-vertex weights for n frames summing to one, its tet samples and loads.
struct SmallModel {
  Mesh mesh;
  std::vector<double> weights;
  std::vector<Vec3> rest;
  FramePoints tet_samples, loads;
  AffinePoints samples;
  int n = 3;
};

SmallModel small_model(int n) {
  SmallModel m;
  m.n = n;
  const auto box = testing::kuhn_box(3, 2, 2, 0.5, 0.1, 4);
  m.mesh.coords = box.coords;
  m.mesh.tets.assign(box.tets.begin(), box.tets.end());
  const LocalIndex nv = m.mesh.n_vertices();
  for (int i = 0; i < n; ++i) m.rest.push_back({1.5 * i / std::max(1, n - 1), 0.5, 0.5});
  m.weights.resize(static_cast<std::size_t>(nv) * n);
  for (LocalIndex v = 0; v < nv; ++v) {
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      const double dx = m.mesh.coords[3 * v] - m.rest[i][0];
      sum += m.weights[v * n + i] = std::exp(-2 * dx * dx) * (1.0 + 0.2 * m.mesh.coords[3 * v + 1] * i);
    }
    for (int i = 0; i < n; ++i) m.weights[v * n + i] /= sum;
  }
  std::vector<LocalIndex> cells(m.mesh.n_tets());
  for (std::size_t t = 0; t < cells.size(); ++t) cells[t] = static_cast<LocalIndex>(t);
  const std::vector<double> lambda(cells.size(), 1.2), mu(cells.size(), 0.9);
  m.tet_samples = make_samples(m.mesh, cells, lambda, mu, m.weights, n);
  m.samples = affine_samples(m.tet_samples, m.rest);
  for (LocalIndex v = 0; v < nv; v += 3) {
    m.loads.point.push_back({m.mesh.coords[3 * v], m.mesh.coords[3 * v + 1], m.mesh.coords[3 * v + 2]});
    m.loads.force.push_back({0.1, -0.3 * v / nv, 0.2});
    for (int i = 0; i < n; ++i) {
      Influence in;
      in.frame = i;
      in.c[0] = m.weights[v * n + i];
      m.loads.influences.push_back(in);
    }
    m.loads.offsets.push_back(static_cast<int>(m.loads.influences.size()));
  }
  return m;
}

TEST(AffineFrames, SumsWithLoadsMatchFiniteDifferences) {
  const SmallModel m = small_model(4);
  const std::vector<double> q = state(m.n, rotation(0.7), 0.2, 9);
  FrameSystem sys;
  evaluate_affine(m.samples, m.loads, m.rest, q, true, sys);
  EXPECT_NEAR(affine_energy(m.samples, m.loads, m.rest, q), sys.energy, 1e-13 * std::abs(sys.energy));
  const std::size_t n = q.size();
  const double gscale = max_abs(sys.gradient), hscale = max_abs(sys.hessian), h = 1e-6;
  ASSERT_GT(gscale, 1e-3);
  for (std::size_t a = 0; a < n; ++a) {
    std::vector<double> qp = q, qm = q;
    qp[a] += h;
    qm[a] -= h;
    FrameSystem p, mm;
    evaluate_affine(m.samples, m.loads, m.rest, qp, false, p);
    evaluate_affine(m.samples, m.loads, m.rest, qm, false, mm);
    EXPECT_LT(std::abs((p.energy - mm.energy) / (2 * h) - sys.gradient[a]), 1e-7 * gscale) << "dof " << a;
    for (std::size_t b = 0; b < n; ++b)
      EXPECT_LT(std::abs((p.gradient[b] - mm.gradient[b]) / (2 * h) - sys.hessian[b * n + a]), 1e-6 * hscale)
          << "H(" << b << ", " << a << ")";
  }
}

TEST(AffineFrames, AffineFieldIsReproducedExactly) {
  // Every frame carries the same affine map x = A X + c (A_i = A, t_i = A rest_i + c): with weights summing to one
  // the skinned field is that map and F = A at every sample; for a rotation the energy and force vanish.
  const SmallModel m = small_model(3);
  for (const auto& A : {std::array<double, 9>{1.3, 0.2, -0.1, 0.0, 0.8, 0.3, 0.1, -0.2, 1.1}, rotation(1.2)}) {
    const double c[3] = {0.4, -1.0, 2.0};
    std::vector<double> q(kAffineDofs * static_cast<std::size_t>(m.n));
    for (int i = 0; i < m.n; ++i)
      for (int a = 0; a < 3; ++a) {
        double t = c[a];
        for (int b = 0; b < 3; ++b) t += A[3 * a + b] * m.rest[i][b], q[kAffineDofs * i + 4 * a + b] = A[3 * a + b];
        q[kAffineDofs * i + 4 * a + 3] = t;
      }
    for (std::size_t k = 0; k < m.samples.size(); ++k) {
      const auto F = affine_deformation_gradient(m.samples, k, q);
      for (int e = 0; e < 9; ++e) EXPECT_NEAR(F[e], A[e], 1e-13) << "sample " << k;
    }
    const auto x = affine_skin(m.mesh.coords, m.weights, m.rest, q);
    for (std::size_t v = 0; 3 * v < x.size(); ++v)
      for (int a = 0; a < 3; ++a) {
        double expect = c[a];
        for (int b = 0; b < 3; ++b) expect += A[3 * a + b] * m.mesh.coords[3 * v + b];
        EXPECT_NEAR(x[3 * v + a], expect, 1e-13);
      }
  }
  FrameSystem sys;
  evaluate_affine(m.samples, FramePoints{}, m.rest, affine_rest_state(m.rest), false, sys);
  EXPECT_LT(std::abs(sys.energy), 1e-28);
  EXPECT_LT(max_abs(sys.gradient), 1e-15);
  std::vector<double> q(kAffineDofs * static_cast<std::size_t>(m.n));
  const auto R = rotation(1.2);
  for (int i = 0; i < m.n; ++i)
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) q[kAffineDofs * i + 4 * a + b] = R[3 * a + b];
      q[kAffineDofs * i + 4 * a + 3] = R[3 * a] * m.rest[i][0] + R[3 * a + 1] * m.rest[i][1] +
                                       R[3 * a + 2] * m.rest[i][2];
    }
  evaluate_affine(m.samples, FramePoints{}, m.rest, q, false, sys);
  EXPECT_LT(std::abs(sys.energy), 1e-26);
  EXPECT_LT(max_abs(sys.gradient), 1e-13);
}

TEST(AffineFrames, VoxelSamplesCarryTheMeanDeformationGradient) {
  // F is linear in the B of a sample, so a voxel's sample (volume-averaged B) has the volume-weighted mean F of the
  // tets binned into it, at any state.
  const SmallModel m = small_model(3);
  const std::array<int, 3> grid{2, 2, 1};
  const Vec3 lo{0, 0, 0}, hi{1.5, 1, 1};
  std::vector<double> sums(4 * (kVoxelFields + kAffineDofs * static_cast<std::size_t>(m.n)), 0.0);
  add_affine_voxel_sums(m.tet_samples, m.rest, lo, hi, grid, sums);
  const AffinePoints voxels = affine_voxel_samples(sums, grid, m.n, 0, 1);
  ASSERT_EQ(voxels.size(), 4u);
  const std::vector<double> q = state(m.n, rotation(0.5), 0.3, 21);
  std::vector<std::array<double, 10>> mean(4);  // V F (9), V
  for (std::size_t k = 0; k < m.samples.size(); ++k) {
    const std::size_t v = voxel_of(m.samples.point[k], lo, hi, grid);
    const auto F = affine_deformation_gradient(m.samples, k, q);
    for (int e = 0; e < 9; ++e) mean[v][e] += m.samples.volume[k] * F[e];
    mean[v][9] += m.samples.volume[k];
  }
  for (std::size_t v = 0; v < 4; ++v) {
    const auto F = affine_deformation_gradient(voxels, v, q);
    EXPECT_NEAR(voxels.volume[v], mean[v][9], 1e-14);
    for (int e = 0; e < 9; ++e) EXPECT_NEAR(F[e], mean[v][e] / mean[v][9], 1e-13) << "voxel " << v;
  }
}

}  // namespace
}  // namespace edgefem::frames
