// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file meshes.hpp
/// Small meshes and deformations for the kernel tests: a Kuhn-split tetrahedral box (independent of
/// mesh/box.cpp), single triangles and curved, shuffled triangle patches in a generic 3D orientation, and the
/// named affine deformations (stretched, compressed, rotated, nearly collapsed, ...) applied to them.
/// Test-only, header-only; not used by the library.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "materials/formulation.hpp"

namespace edgefem::testing {

/// A bare tetrahedral mesh: 3 coordinates per vertex, 4 vertex ids per tet.
struct TetMesh {
  std::vector<double> coords;
  std::vector<LocalIndex> tets;
  [[nodiscard]] LocalIndex n_vertices() const { return static_cast<LocalIndex>(coords.size() / 3); }
  [[nodiscard]] LocalIndex n_tets() const { return static_cast<LocalIndex>(tets.size() / 4); }
};

/// Box of nx x ny x nz cubes of edge `h`, each split into the 6 Kuhn (Freudenthal) tets around its main
/// diagonal (conforming), every tet positively oriented. Interior vertices are moved by up to `jitter` * h per
/// coordinate (random, seeded), which keeps every tet valid for jitter < ~0.15.
inline TetMesh kuhn_box(int nx, int ny, int nz, double h = 1.0, double jitter = 0.0, unsigned seed = 1) {
  TetMesh m;
  auto id = [&](int i, int j, int k) { return static_cast<LocalIndex>((k * (ny + 1) + j) * (nx + 1) + i); };
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i) {
        const bool interior = i > 0 && i < nx && j > 0 && j < ny && k > 0 && k < nz;
        const int ijk[3] = {i, j, k};
        for (int c = 0; c < 3; ++c) m.coords.push_back(h * ijk[c] + (interior ? jitter * h * u(rng) : 0.0));
      }
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        for (const auto& p : perms) {
          int c[3] = {i, j, k};
          LocalIndex v[4];
          v[0] = id(c[0], c[1], c[2]);
          for (int s = 0; s < 3; ++s) {
            ++c[p[s]];
            v[s + 1] = id(c[0], c[1], c[2]);
          }
          double d[3][3];
          for (int s = 0; s < 3; ++s)
            for (int q = 0; q < 3; ++q) d[s][q] = m.coords[3 * v[s + 1] + q] - m.coords[3 * v[0] + q];
          const double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                             d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                             d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
          if (det < 0) std::swap(v[2], v[3]);
          m.tets.insert(m.tets.end(), v, v + 4);
        }
  return m;
}

/// A bare triangle mesh in 3D: 3 coordinates per vertex, 3 vertex ids per triangle.
struct TriMesh {
  std::vector<double> coords;
  std::vector<LocalIndex> tris;
  [[nodiscard]] LocalIndex n_vertices() const { return static_cast<LocalIndex>(coords.size() / 3); }
  [[nodiscard]] std::size_t n_tris() const { return tris.size() / 3; }
};

/// A fixed rotation about a generic axis (no coordinate plane or axis stays special).
inline const Eigen::Matrix3d& generic_rotation() {
  static const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.7, Eigen::Vector3d(0.2, -0.6, 0.9).normalized()).toRotationMatrix();
  return R;
}

/// One triangle: "tri" generic, "obtuse" (a 120+ degree angle: negative cotangent, negative c), "sliver"
/// (height 1 % of the base: cot ~ 1e2, near-degenerate), all in a generic orientation in 3D.
inline TriMesh single_triangle(const std::string& kind) {
  std::vector<Eigen::Vector3d> P;
  if (kind == "obtuse")
    P = {{0, 0, 0}, {1, 0, 0}, {1.6, 0.45, 0}};
  else if (kind == "sliver")
    P = {{0, 0, 0}, {1, 0, 0}, {0.37, 0.01, 0}};
  else
    P = {{0.1, -0.05, 0.02}, {1.0, 0.1, -0.1}, {0.2, 0.9, 0.35}};
  TriMesh m;
  for (const auto& p : P) {
    const Eigen::Vector3d q = generic_rotation() * p + Eigen::Vector3d(0.3, -0.2, 0.5);
    m.coords.insert(m.coords.end(), {q[0], q[1], q[2]});
  }
  m.tris = {0, 1, 2};
  return m;
}

/// nx x ny grid on [0, lx] x [0, ly] split into triangles (alternating diagonals), interior vertices jittered by up
/// to jitter cells; curved: lifted onto a curved surface and rotated; shuffle: vertices renumbered randomly (both
/// edge orientations occur), else row-major numbering.
inline TriMesh triangle_patch(int nx, int ny, double jitter, unsigned seed, bool shuffle = true, bool curved = true,
                              double lx = 1.0, double ly = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TriMesh m;
  const int nv = (nx + 1) * (ny + 1);
  std::vector<LocalIndex> perm(nv);
  std::iota(perm.begin(), perm.end(), 0);
  if (shuffle) std::shuffle(perm.begin(), perm.end(), rng);
  m.coords.resize(3 * nv);
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      const bool interior = i > 0 && i < nx && j > 0 && j < ny;
      const double x = lx * (i + (interior ? jitter * u(rng) : 0.0)) / nx;
      const double y = ly * (j + (interior ? jitter * u(rng) : 0.0)) / ny;
      Eigen::Vector3d q(x, y, 0.0);
      if (curved)
        q = generic_rotation() * Eigen::Vector3d(x, y, 0.15 * std::sin(3.0 * x) * std::cos(2.0 * y) + 0.1 * x * y);
      for (int c = 0; c < 3; ++c) m.coords[3 * perm[j * (nx + 1) + i] + c] = q[c];
    }
  auto id = [&](int i, int j) { return perm[j * (nx + 1) + i]; };
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const LocalIndex a = id(i, j), b = id(i + 1, j), c = id(i + 1, j + 1), d = id(i, j + 1);
      if ((i + j) % 2 == 0)
        m.tris.insert(m.tris.end(), {a, b, c, a, c, d});
      else
        m.tris.insert(m.tris.end(), {a, b, d, b, c, d});
    }
  return m;
}

/// "patch": 24 triangles, curved, shuffled numbering; otherwise single_triangle(name).
inline TriMesh triangle_mesh_by_name(const std::string& name) {
  if (name == "patch") return triangle_patch(4, 3, 0.25, 7);
  return single_triangle(name);
}

/// x = c + A (X - c) + shift + noise * U(-1, 1) per coordinate, c the centroid of the reference X (3 per vertex);
/// the noise is drawn from std::mt19937(seed), vertex by vertex.
inline std::vector<double> affine_deformation(std::span<const double> coords, const Eigen::Matrix3d& A,
                                              const Eigen::Vector3d& shift, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto nv = static_cast<LocalIndex>(coords.size() / 3);
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (LocalIndex v = 0; v < nv; ++v) c += Eigen::Vector3d(coords[3 * v], coords[3 * v + 1], coords[3 * v + 2]);
  c /= nv;
  std::vector<double> x(coords.size());
  for (LocalIndex v = 0; v < nv; ++v) {
    const Eigen::Vector3d X(coords[3 * v], coords[3 * v + 1], coords[3 * v + 2]);
    const Eigen::Vector3d y = c + A * (X - c) + shift;
    for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k] + noise * u(rng);
  }
  return x;
}

/// The named deformations of the membrane tests: "random" (noise only), "stretched", "compressed" (0.6: trbs past
/// its compression peak s < 1/sqrt 2 for some edges), "rotated" (stretch, rotation and shift), "collapsed" (nearly
/// flattened onto a line: deformed areas ~ 1e-2 of the reference), "uniform-stretch" (1.25).
inline std::vector<double> deform_triangles(const TriMesh& m, const std::string& kind, unsigned seed) {
  Eigen::Matrix3d A = Eigen::Matrix3d::Identity();
  Eigen::Vector3d shift = Eigen::Vector3d::Zero();
  double noise = 0.0;
  if (kind == "random") {
    noise = 0.15;
  } else if (kind == "stretched") {
    A << 1.4, 0.1, 0.0, 0.05, 0.8, 0.1, 0.0, -0.1, 1.15;
    noise = 0.02;
  } else if (kind == "compressed") {
    A = 0.6 * Eigen::Matrix3d::Identity();
    noise = 0.03;
  } else if (kind == "rotated") {
    Eigen::Matrix3d S;
    S << 1.3, 0.1, 0.0, 0.0, 0.9, 0.05, 0.1, 0.0, 1.1;
    A = Eigen::AngleAxisd(2.1, Eigen::Vector3d(-0.4, 0.5, 0.7).normalized()).toRotationMatrix() * S;
    shift << 3.0, -1.0, 2.0;
    noise = 0.02;
  } else if (kind == "collapsed") {
    A = generic_rotation() * Eigen::Vector3d(1.0, 0.02, 0.02).asDiagonal() * generic_rotation().transpose();
    noise = 0.002;
  } else if (kind == "uniform-stretch") {
    A = 1.25 * Eigen::Matrix3d::Identity();
    noise = 0.005;
  }
  return affine_deformation(m.coords, A, shift, noise, seed);
}

}  // namespace edgefem::testing
