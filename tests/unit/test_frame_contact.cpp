// SPDX-License-Identifier: BSD-3-Clause
// Contact of the frame-based models (frames/frames_contact.hpp): IPC's barrier and lagged friction of skinned points
// against a sphere and a plane (contact::ContactPotential's per-point terms), taken to the frames through the points' Jacobian (materials/frame_model.hpp add_point_potential for
// rigid frames, materials/affine_frames.hpp add_affine_point_potential for affine ones): the gradient and the exact
// Hessian against central differences, and an infinite energy once a point is inside an obstacle.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/shapes.hpp"
#include "contact/vertex_contact.hpp"
#include "materials/affine_frames.hpp"
#include "materials/frame_kinematics.hpp"
#include "materials/frame_model.hpp"
#include "tests/support/finite_differences.hpp"
#include "tests/support/meshes.hpp"

namespace edgefem::frames {
namespace {

/// The vertices of a jittered 2 x 1 x 1 box as contact points of n frames along x (smooth positive weights), and
/// the barrier (activation distance 0.25, stiffness 3) against a sphere below the box and a plane beside it.
struct ContactModel {
  int n = 3;
  std::vector<Vec3> rest;
  FramePoints points;
  std::shared_ptr<std::vector<std::unique_ptr<contact::Obstacle>>> obstacles;
  std::shared_ptr<contact::ContactPotential> terms;  ///< the frames' per-point terms (frames_contact.hpp)
  PointPotential phi;
  int active = 0;  ///< (counted by count_active)
};

ContactModel contact_model(int n) {
  ContactModel m;
  m.n = n;
  const auto box = testing::kuhn_box(4, 2, 2, 0.5, 0.05, 4);
  for (int i = 0; i < n; ++i) m.rest.push_back({2.0 * i / std::max(1, n - 1), 0.5, 0.5});
  for (std::size_t v = 0; 3 * v < box.coords.size(); ++v) {
    const Vec3 X{box.coords[3 * v], box.coords[3 * v + 1], box.coords[3 * v + 2]};
    m.points.point.push_back(X);
    for (int i = 0; i < n; ++i) {
      Influence in;
      in.frame = i;
      in.c[0] = std::exp(-(X[0] - m.rest[i][0]) * (X[0] - m.rest[i][0])) * (1.0 + 0.1 * X[1]);
      m.points.influences.push_back(in);
    }
    m.points.offsets.push_back(static_cast<int>(m.points.influences.size()));
  }
  m.obstacles = std::make_shared<std::vector<std::unique_ptr<contact::Obstacle>>>();
  m.obstacles->push_back(std::make_unique<contact::SphereObstacle>("ball", 0.4, contact::Vec3{1.0, 0.5, -1.06}, 1.0));
  m.obstacles->push_back(
      std::make_unique<contact::PlaneObstacle>("wall", 0.3, contact::Vec3{0, -0.08, 0}, contact::Vec3{0, 1, 0}));
  // The frames' per-point terms: barrier (activation distance 0.25, stiffness 3) and friction lagged at the rest
  // positions (slip 0.05), the Hessian exact.
  std::vector<std::int32_t> indices(m.points.size());
  std::vector<double> rest_positions;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    indices[k] = static_cast<std::int32_t>(k);
    rest_positions.insert(rest_positions.end(), m.points.point[k].begin(), m.points.point[k].end());
  }
  m.terms = std::make_shared<contact::ContactPotential>(*m.obstacles, std::move(indices));
  m.terms->set_activation_distance(0.25);
  m.terms->set_stiffness(3.0);
  m.terms->set_slip(0.05);
  m.terms->lag_friction(rest_positions, std::vector<double>(6, 0.0));
  m.phi = [terms = m.terms, obstacles = m.obstacles](std::size_t k, const Vec3& p, double* g, double* h) {
    contact::Vec3 gradient{};
    contact::Mat3 hessian{};
    const double e = terms->point_terms(k, p, &gradient, h ? &hessian : nullptr);
    for (int c = 0; c < 3; ++c) g[c] += gradient[c];
    if (h)
      for (int c = 0; c < 9; ++c) h[c] += hessian[c];
    return e;
  };
  return m;
}

using edgefem::testing::rel_err;

/// The largest |entry| of the gradient and of the Hessian (checked symmetric).
std::array<double, 2> scales(const FrameSystem& sys) {
  const std::size_t n = sys.gradient.size();
  double g = 0.0, k = 0.0;
  for (std::size_t a = 0; a < n; ++a) {
    g = std::max(g, std::abs(sys.gradient[a]));
    for (std::size_t b = 0; b < n; ++b) k = std::max(k, std::abs(sys.hessian[a * n + b]));
  }
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) EXPECT_NEAR(sys.hessian[a * n + b], sys.hessian[b * n + a], 1e-12 * k);
  return {g, k};
}

TEST(FrameContact, RigidFramesGradientAndHessianMatchFiniteDifferences) {
  const ContactModel m = contact_model(3);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<FramePose> poses;
  for (int i = 0; i < m.n; ++i) {
    FramePose p;
    p.origin = m.rest[i];
    const double tw[6] = {0.04 * u(rng), 0.04 * u(rng), 0.04 * u(rng), 0.01 * u(rng), 0.01 * u(rng), 0.01 * u(rng)};
    poses.push_back(retract(p, tw));
  }
  auto energy = [&](const std::vector<FramePose>& p) {
    FrameSystem out;
    add_point_potential(m.points, m.rest, p, m.phi, false, out);
    return out.energy;
  };
  FrameSystem sys;
  add_point_potential(m.points, m.rest, poses, m.phi, true, sys);
  ASSERT_TRUE(std::isfinite(sys.energy));
  ASSERT_GT(sys.energy, 0.0);  // some points within reach
  ASSERT_GT(m.terms->n_lagged(), 3u);  // and friction on some
  const auto [gscale, kscale] = scales(sys);
  const int n6 = 6 * m.n;
  const double h = 1e-6;
  for (int a = 0; a < n6; ++a) {
    auto moved = [&](double s) {
      std::vector<FramePose> p = poses;
      double tw[6] = {};
      tw[a % 6] = s;
      p[a / 6] = retract(p[a / 6], tw);
      return energy(p);
    };
    EXPECT_LT(rel_err((moved(h) - moved(-h)) / (2 * h), sys.gradient[a], gscale), 1e-6) << "dof " << a;
  }
  for (int a = 0; a < n6; ++a)
    for (int b = a; b < n6; ++b) {
      auto at = [&](double sa, double sb) {  // one combined increment per frame, as in the Hessian
        std::vector<FramePose> p = poses;
        std::vector<std::array<double, 6>> tw(m.n);
        tw[a / 6][a % 6] += sa;
        tw[b / 6][b % 6] += sb;
        for (int i = 0; i < m.n; ++i) p[i] = retract(p[i], tw[i].data());
        return energy(p);
      };
      const double g = 1e-4;
      const double fd = (at(g, g) - at(g, -g) - at(-g, g) + at(-g, -g)) / (4 * g * g);
      EXPECT_LT(rel_err(fd, sys.hessian[a * n6 + b], kscale), 1e-5) << "K(" << a << ", " << b << ")";
    }
  // A frame moved down into the sphere: the energy is infinite.
  std::vector<FramePose> sunk = poses;
  for (FramePose& p : sunk) p.origin[2] -= 0.3;
  EXPECT_TRUE(std::isinf(energy(sunk)));
}

TEST(FrameContact, AffineFramesGradientAndHessianMatchFiniteDifferences) {
  const ContactModel m = contact_model(3);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> q = affine_rest_state(m.rest);
  for (double& v : q) v += 0.01 * u(rng);
  auto evaluate = [&](const std::vector<double>& state, bool hessian) {
    FrameSystem out;
    add_affine_point_potential(m.points, m.rest, state, m.phi, hessian, out);
    return out;
  };
  const FrameSystem sys = evaluate(q, true);
  ASSERT_TRUE(std::isfinite(sys.energy));
  ASSERT_GT(sys.energy, 0.0);
  const auto [gscale, kscale] = scales(sys);
  const std::size_t n = q.size();
  const double h = 1e-6;
  for (std::size_t a = 0; a < n; ++a) {
    std::vector<double> qp = q, qm = q;
    qp[a] += h, qm[a] -= h;
    const FrameSystem p = evaluate(qp, false), mm = evaluate(qm, false);
    EXPECT_LT(rel_err((p.energy - mm.energy) / (2 * h), sys.gradient[a], gscale), 1e-6) << "dof " << a;
    for (std::size_t b = 0; b < n; ++b)  // the map is linear in q: the Hessian is d(gradient)/dq
      EXPECT_LT(rel_err((p.gradient[b] - mm.gradient[b]) / (2 * h), sys.hessian[b * n + a], kscale), 1e-6)
          << "K(" << b << ", " << a << ")";
  }
  std::vector<double> sunk = q;
  for (std::size_t i = 0; i < static_cast<std::size_t>(m.n); ++i) sunk[kAffineDofs * i + 11] -= 0.3;  // t_z
  EXPECT_TRUE(std::isinf(evaluate(sunk, false).energy));
}

}  // namespace
}  // namespace edgefem::frames
