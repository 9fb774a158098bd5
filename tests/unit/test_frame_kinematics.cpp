// SPDX-License-Identifier: BSD-3-Clause
// Frame-based model kernels (materials/frame_kinematics.*, materials/frame_model.*): every derivative against
// central differences, rigid motions give zero strain and force exactly, and the blend normalisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "materials/frame_kinematics.hpp"
#include "materials/frame_model.hpp"
#include "mesh/mesh.hpp"
#include "tests/support/finite_differences.hpp"
#include "tests/support/meshes.hpp"

namespace edgefem::frames {
namespace {

FramePose random_pose(std::mt19937& rng, const Vec3& rest, double rot, double move) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  FramePose p;
  p.origin = rest;
  const double tw[6] = {rot * u(rng), rot * u(rng), rot * u(rng), move * u(rng), move * u(rng), move * u(rng)};
  return retract(p, tw);
}

using edgefem::testing::rel_err;

TEST(FrameKinematics, RelativeTransformDerivativesMatchRetraction) {
  std::mt19937 rng(3);
  const Vec3 rest{0.3, -0.2, 0.7};
  const FramePose pose = random_pose(rng, {1.0, 0.5, -0.4}, 0.8, 0.5);
  const RelativeTransform rt = relative_transform(pose, rest);
  const double h = 1e-5;
  double scale = 0.0;
  for (int k = 0; k < 8; ++k)
    for (int a = 0; a < 6; ++a) scale = std::max(scale, std::abs(rt.first[k][a]));
  for (int a = 0; a < 6; ++a) {
    double tp[6] = {}, tm[6] = {};
    tp[a] = h;
    tm[a] = -h;
    const RelativeTransform p = relative_transform(retract(pose, tp), rest);
    const RelativeTransform m = relative_transform(retract(pose, tm), rest);
    for (int k = 0; k < 8; ++k) {
      EXPECT_LT(rel_err((p.d[k] - m.d[k]) / (2 * h), rt.first[k][a], scale), 1e-8) << "k " << k << " a " << a;
      EXPECT_LT(rel_err((p.d[k] - 2 * rt.d[k] + m.d[k]) / (h * h), rt.second[k][a][a], scale), 1e-4);
    }
  }
  // Mixed second derivatives: d2/da db via the 4-point stencil.
  for (int a = 0; a < 6; ++a)
    for (int b = a + 1; b < 6; ++b) {
      auto at = [&](double sa, double sb) {
        double t[6] = {};
        t[a] = sa;
        t[b] = sb;
        return relative_transform(retract(pose, t), rest).d;
      };
      const double g = 1e-4;
      const auto pp = at(g, g), pm = at(g, -g), mp = at(-g, g), mm = at(-g, -g);
      for (int k = 0; k < 8; ++k)
        EXPECT_LT(rel_err((pp[k] - pm[k] - mp[k] + mm[k]) / (4 * g * g), rt.second[k][a][b], scale), 1e-5);
    }
  // The transform itself: x = R (X - rest) + t for a unit blend of one frame.
  const Vec3 X{0.9, 1.1, -0.3};
  const Vec3 p = skin(rt.d, X);
  const auto R = rotation_matrix(pose.rotation);
  for (int a = 0; a < 3; ++a) {
    double expect = pose.origin[a];
    for (int c = 0; c < 3; ++c) expect += R[3 * a + c] * (X[c] - rest[c]);
    EXPECT_NEAR(p[a], expect, 1e-14);
  }
}

TEST(FrameKinematics, SkinUsesTheDualQuaternionNorm) {
  // Scaling b (any positive factor, also on the dual part alone together with the real one) does not move a point,
  // and a blend of two translations with weights summing to one is the linear blend of the translations.
  std::mt19937 rng(5);
  const FramePose a = random_pose(rng, {0, 0, 0}, 0.0, 1.0), b = random_pose(rng, {0, 0, 0}, 0.0, 1.0);
  const auto da = relative_transform(a, {0, 0, 0}).d, db = relative_transform(b, {0, 0, 0}).d;
  DualQuat blend{};
  for (int l = 0; l < 8; ++l) blend[l] = 0.3 * da[l] + 0.7 * db[l];
  const Vec3 X{0.2, 0.4, 0.6};
  const Vec3 p = skin(blend, X);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(p[c], X[c] + 0.3 * a.origin[c] + 0.7 * b.origin[c], 1e-14);
  DualQuat scaled = blend;
  for (double& v : scaled) v *= 3.7;
  const Vec3 q = skin(scaled, X);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(q[c], p[c], 1e-14);
  // With the 8-D Euclidean norm instead, a rotated blend would shrink or grow: check one rotated case directly.
  const FramePose r = random_pose(rng, {0, 0, 0}, 1.0, 1.0);
  const auto dr = relative_transform(r, {0, 0, 0}).d;
  const Vec3 pr = skin(dr, X);
  const auto R = rotation_matrix(r.rotation);
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(pr[c], r.origin[c] + R[3 * c] * X[0] + R[3 * c + 1] * X[1] + R[3 * c + 2] * X[2], 1e-14);
}

TEST(FrameKinematics, SkinDerivativesMatchFiniteDifferences) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  DualQuat b;
  for (int l = 0; l < 8; ++l) b[l] = u(rng);
  b[3] += 2.0;
  const Vec3 X{0.4, -0.8, 1.3};
  const SkinnedPoint sp = skin_derivatives(b, X);
  const double h = 1e-5;
  for (int k = 0; k < 8; ++k) {
    DualQuat bp = b, bm = b;
    bp[k] += h;
    bm[k] -= h;
    const SkinnedPoint p = skin_derivatives(bp, X), m = skin_derivatives(bm, X);
    for (int a = 0; a < 3; ++a) {
      EXPECT_NEAR((p.p[a] - m.p[a]) / (2 * h), sp.grad[a][k], 1e-8);
      for (int l = 0; l < 8; ++l) EXPECT_NEAR((p.grad[a][l] - m.grad[a][l]) / (2 * h), sp.hess[a][l][k], 1e-7);
    }
  }
}

/// Weights linear in X for three frames: w_i(X) = a_i + g_i . X; b(X) = sum w_i d_i, W = sum d_i g_i^T.
struct LinearBlend {
  std::array<DualQuat, 3> d;
  std::array<double, 3> a;
  std::array<Vec3, 3> g;
  [[nodiscard]] DualQuat b_at(const Vec3& X) const {
    DualQuat b{};
    for (int i = 0; i < 3; ++i) {
      const double w = a[i] + g[i][0] * X[0] + g[i][1] * X[1] + g[i][2] * X[2];
      for (int l = 0; l < 8; ++l) b[l] += w * d[i][l];
    }
    return b;
  }
  void W(double out[8][3]) const {
    for (int l = 0; l < 8; ++l)
      for (int c = 0; c < 3; ++c) {
        out[l][c] = 0.0;
        for (int i = 0; i < 3; ++i) out[l][c] += d[i][l] * g[i][c];
      }
  }
};

LinearBlend random_blend(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  LinearBlend lb;
  for (int i = 0; i < 3; ++i) {
    const Vec3 rest{u(rng), u(rng), u(rng)};
    lb.d[i] = relative_transform(random_pose(rng, rest, 0.6, 0.3), rest).d;
    lb.a[i] = 0.5 + 0.2 * u(rng);
    lb.g[i] = {0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)};
  }
  return lb;
}

TEST(FrameKinematics, DeformationGradientIsDpDX) {
  // Eq. (8) against central differences of the skinning map X -> p(b(X), X).
  std::mt19937 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    const LinearBlend lb = random_blend(rng);
    double W[8][3];
    lb.W(W);
    const Vec3 X{0.1 * trial, -0.2, 0.3};
    const auto F = deformation_gradient(lb.b_at(X), W, X);
    const double h = 1e-6;
    for (int c = 0; c < 3; ++c) {
      Vec3 Xp = X, Xm = X;
      Xp[c] += h;
      Xm[c] -= h;
      const Vec3 pp = skin(lb.b_at(Xp), Xp), pm = skin(lb.b_at(Xm), Xm);
      for (int a = 0; a < 3; ++a) EXPECT_NEAR((pp[a] - pm[a]) / (2 * h), F[3 * a + c], 1e-8);
    }
  }
}

TEST(FrameKinematics, SampleGradientAndHessianMatchFiniteDifferences) {
  std::mt19937 rng(13);
  const double lambda = 1.3, mu = 0.8, volume = 0.37;
  for (int trial = 0; trial < 4; ++trial) {
    const LinearBlend lb = random_blend(rng);
    double W[8][3];
    lb.W(W);
    const Vec3 X{0.2, 0.1 * trial, -0.4};
    const DualQuat b = lb.b_at(X);
    SampleEnergy e;
    stvk_sample(b, W, X, lambda, mu, volume, e);
    EXPECT_NEAR(e.energy, volume * stvk_density(e.F, lambda, mu), 1e-14 * std::max(1.0, e.energy));
    EXPECT_NEAR(stvk_sample_energy(b, W, X, lambda, mu, volume), e.energy, 1e-14 * std::max(1.0, e.energy));
    auto at = [&](int z, double hz) {
      DualQuat bb = b;
      double WW[8][3];
      std::copy(&W[0][0], &W[0][0] + 24, &WW[0][0]);
      if (z < 8)
        bb[z] += hz;
      else
        WW[(z - 8) % 8][(z - 8) / 8] += hz;
      SampleEnergy s;
      stvk_sample(bb, WW, X, lambda, mu, volume, s);
      return s;
    };
    double gscale = 0.0, hscale = 0.0;
    for (int z = 0; z < kSampleVars; ++z) {
      gscale = std::max(gscale, std::abs(e.grad[z]));
      for (int y = 0; y < kSampleVars; ++y) hscale = std::max(hscale, std::abs(e.hess[z][y]));
    }
    ASSERT_GT(gscale, 1e-3);
    const double h = 1e-6;
    for (int z = 0; z < kSampleVars; ++z) {
      const SampleEnergy p = at(z, h), m = at(z, -h);
      EXPECT_LT(rel_err((p.energy - m.energy) / (2 * h), e.grad[z], gscale), 1e-7) << "z " << z;
      for (int y = 0; y < kSampleVars; ++y)
        EXPECT_LT(rel_err((p.grad[y] - m.grad[y]) / (2 * h), e.hess[y][z], hscale), 1e-6) << "z " << z << " y " << y;
    }
  }
}

/// A jittered box of tets with smooth positive per-vertex weights for n frames (no partition of unity).
struct KinematicsModel {
  Mesh mesh;
  std::vector<double> weights;
  std::vector<Vec3> rest;
  FramePoints samples, loads;
  int n = 3;
};

KinematicsModel small_model(int n, bool with_loads) {
  KinematicsModel m;
  m.n = n;
  const auto box = testing::kuhn_box(2, 1, 1, 1.0, 0.1, 4);
  m.mesh.coords = box.coords;
  m.mesh.tets.assign(box.tets.begin(), box.tets.end());
  const LocalIndex nv = m.mesh.n_vertices();
  for (int i = 0; i < n; ++i) m.rest.push_back({2.0 * i / std::max(1, n - 1), 0.5, 0.5});
  m.weights.resize(static_cast<std::size_t>(nv) * n);
  for (LocalIndex v = 0; v < nv; ++v)
    for (int i = 0; i < n; ++i) {
      const double dx = m.mesh.coords[3 * v] - m.rest[i][0];
      m.weights[v * n + i] = std::exp(-dx * dx) * (1.0 + 0.1 * m.mesh.coords[3 * v + 1]);
    }
  std::vector<LocalIndex> cells(m.mesh.n_tets());
  for (std::size_t t = 0; t < cells.size(); ++t) cells[t] = static_cast<LocalIndex>(t);
  const std::vector<double> lambda(cells.size(), 1.2), mu(cells.size(), 0.9);
  m.samples = make_samples(m.mesh, cells, lambda, mu, m.weights, n);
  if (with_loads) {
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
  }
  return m;
}

TEST(FrameModel, ForcesAndFullStiffnessMatchFiniteDifferences) {
  const KinematicsModel m = small_model(3, true);
  std::mt19937 rng(17);
  std::vector<FramePose> poses;
  for (int i = 0; i < m.n; ++i) poses.push_back(random_pose(rng, m.rest[i], 0.4, 0.2));
  FrameSystem sys;
  evaluate_frames(m.samples, m.loads, m.rest, poses, true, sys);
  // The plain-double energy of the line searches is the same sum.
  EXPECT_NEAR(frames_energy(m.samples, m.loads, m.rest, poses), sys.energy, 1e-13 * std::abs(sys.energy));
  const int n6 = 6 * m.n;
  double gscale = 0.0, kscale = 0.0;
  for (int a = 0; a < n6; ++a) {
    gscale = std::max(gscale, std::abs(sys.gradient[a]));
    for (int b = 0; b < n6; ++b) {
      kscale = std::max(kscale, std::abs(sys.hessian[a * n6 + b]));
      EXPECT_NEAR(sys.hessian[a * n6 + b], sys.hessian[b * n6 + a], 1e-12 * kscale) << "symmetry";
    }
  }
  ASSERT_GT(gscale, 1e-3);
  const double h = 1e-6;
  for (int a = 0; a < n6; ++a) {
    auto moved = [&](double s) {
      std::vector<FramePose> p = poses;
      double tw[6] = {};
      tw[a % 6] = s;
      p[a / 6] = retract(p[a / 6], tw);
      FrameSystem out;
      evaluate_frames(m.samples, m.loads, m.rest, p, false, out);
      return out;
    };
    const FrameSystem p = moved(h), q = moved(-h);
    EXPECT_LT(rel_err((p.energy - q.energy) / (2 * h), sys.gradient[a], gscale), 1e-7) << "dof " << a;
    // d(gradient)/d(twist) equals the Hessian of the pulled-back energy only where the gradient's own dependence on
    // the base point cancels: compare against the second difference of the energy along each pair instead.
  }
  for (int a = 0; a < n6; ++a)
    for (int b = a; b < n6; ++b) {
      auto energy = [&](double sa, double sb) {
        std::vector<FramePose> p = poses;
        // One combined increment per frame (the retraction at the base pose, as in the Hessian).
        std::vector<std::array<double, 6>> tw(m.n);
        tw[a / 6][a % 6] += sa;
        tw[b / 6][b % 6] += sb;
        for (int i = 0; i < m.n; ++i) p[i] = retract(p[i], tw[i].data());
        FrameSystem out;
        evaluate_frames(m.samples, m.loads, m.rest, p, false, out);
        return out.energy;
      };
      const double g = 1e-4;
      const double fd = (energy(g, g) - energy(g, -g) - energy(-g, g) + energy(-g, -g)) / (4 * g * g);
      EXPECT_LT(rel_err(fd, sys.hessian[a * n6 + b], kscale), 1e-5) << "K(" << a << ", " << b << ")";
    }
}

TEST(FrameModel, RigidMotionGivesZeroStrainAndForce) {
  const KinematicsModel m = small_model(4, false);
  std::mt19937 rng(19);
  // The same rigid transform for every frame: a rotation by ~57 degrees about a generic axis and a translation.
  const double tw[6] = {0.6, -0.7, 0.4, 1.5, -2.0, 0.3};
  std::vector<FramePose> poses;
  for (int i = 0; i < m.n; ++i) {
    FramePose p;
    p.origin = m.rest[i];
    p = retract(p, tw);  // rotates about the frame's own origin, so move the origin along with the body:
    const auto R = rotation_matrix(p.rotation);
    for (int a = 0; a < 3; ++a) {
      double x = tw[3 + a];
      for (int c = 0; c < 3; ++c) x += R[3 * a + c] * m.rest[i][c];
      p.origin[a] = x;
    }
    poses.push_back(p);
  }
  FrameSystem sys;
  evaluate_frames(m.samples, m.loads, m.rest, poses, true, sys);
  EXPECT_LT(std::abs(sys.energy), 1e-28);
  EXPECT_LT(*std::max_element(sys.gradient.begin(), sys.gradient.end(),
                              [](double x, double y) { return std::abs(x) < std::abs(y); }),
            1e-14);
  // At rest too, and F = R at every sample of the rotated state.
  const auto R = rotation_matrix(poses[0].rotation);
  for (std::size_t k = 0; k < m.samples.size(); ++k) {
    DualQuat b{};
    double W[8][3] = {};
    for (int q = m.samples.offsets[k]; q < m.samples.offsets[k + 1]; ++q) {
      const Influence& in = m.samples.influences[q];
      const auto d = relative_transform(poses[in.frame], m.rest[in.frame]).d;
      for (int l = 0; l < 8; ++l) {
        b[l] += in.c[0] * d[l];
        for (int c = 0; c < 3; ++c) W[l][c] += in.c[1 + c] * d[l];
      }
    }
    const auto F = deformation_gradient(b, W, m.samples.point[k]);
    for (int e = 0; e < 9; ++e) EXPECT_NEAR(F[e], R[e], 1e-14) << "sample " << k;
  }
}

}  // namespace
}  // namespace edgefem::frames
