// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file membrane_testing.hpp
/// Fixtures of the membrane tests (test_membrane*.cpp, test_volino*.cpp): random membrane materials, a membrane
/// model on a TriMesh, and a direct per-triangle plane-stress St. Venant-Kirchhoff membrane (deformation gradient
/// in each triangle's own plane) as the reference for trbs and Volino's isotropic law, in double or long double.
/// Test-only, header-only; not used by the library.
#include <Eigen/Dense>

#include <array>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "materials/membrane.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/meshes.hpp"

namespace edgefem::testing::membrane {

/// One random material per triangle: E in [1, 5], nu in [-0.3, 0.9], h in [0.01, 0.2].
inline std::vector<MembraneMaterial> random_materials(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> E(1.0, 5.0), nu(-0.3, 0.9), h(0.01, 0.2);
  std::vector<MembraneMaterial> out(n);
  for (auto& m : out) m = {E(rng), nu(rng), h(rng)};
  return out;
}

/// The membrane `model` ("trbs", "trqs", "springs", "linear-membrane") on m, one material per triangle.
inline std::unique_ptr<TetFormulation> make(const std::string& model, const TriMesh& m,
                                            std::span<const MembraneMaterial> mat) {
  return make_membrane(model, m.coords, m.tris, mat, iota_ids(mat.size()));
}

template <class T>
struct StvkTriT {
  T W = 0;
  std::array<T, 9> f{};   ///< dW/dx
  std::array<T, 81> K{};  ///< df/dx, row-major 9 x 9
};
using StvkTri = StvkTriT<double>;

/// Plane-stress StVK membrane of one triangle in scalar type T (double, or long double for a reference).
template <class T>
inline StvkTriT<T> stvk_triangle_t(const double* Xd, const double* xd, const MembraneMaterial& mat) {
  using V3 = Eigen::Matrix<T, 3, 1>;
  using M2 = Eigen::Matrix<T, 2, 2>;
  using M32 = Eigen::Matrix<T, 3, 2>;
  T X[9], x[9];
  for (int i = 0; i < 9; ++i) X[i] = Xd[i], x[i] = xd[i];
  const V3 X0(X[0], X[1], X[2]), X1(X[3], X[4], X[5]), X2(X[6], X[7], X[8]);
  const V3 e1 = X1 - X0, e2 = X2 - X0, n = e1.cross(e2);
  const T A = n.norm() / 2, h = mat.thickness;
  const V3 t1 = e1.normalized(), t2 = n.normalized().cross(t1);
  M2 Dm;
  Dm << t1.dot(e1), t1.dot(e2), t2.dot(e1), t2.dot(e2);
  const M2 Bm = Dm.inverse();
  M32 Ds;
  for (int c = 0; c < 3; ++c) Ds(c, 0) = x[3 + c] - x[c], Ds(c, 1) = x[6 + c] - x[c];
  const M32 F = Ds * Bm;
  const T Y = mat.young, nu = mat.poisson;
  const T lam = Y * nu / (1 - nu * nu), mu = Y / (2 * (1 + nu));
  const M2 I = M2::Identity();
  const M2 E = (F.transpose() * F - I) / 2;
  const M2 S = lam * E.trace() * I + 2 * mu * E;
  StvkTriT<T> r;
  r.W = A * h * (lam / 2 * E.trace() * E.trace() + mu * (E * E).trace());
  const M32 H = A * h * F * S * Bm.transpose();  // dW/dDs
  for (int c = 0; c < 3; ++c) {
    r.f[3 + c] = H(c, 0);
    r.f[6 + c] = H(c, 1);
    r.f[c] = -H(c, 0) - H(c, 1);
  }
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      M32 dDs = M32::Zero();
      if (a == 0) dDs(c, 0) = dDs(c, 1) = -1;
      if (a == 1) dDs(c, 0) = 1;
      if (a == 2) dDs(c, 1) = 1;
      const M32 dF = dDs * Bm;
      const M2 dE = (dF.transpose() * F + F.transpose() * dF) / 2;
      const M2 dS = lam * dE.trace() * I + 2 * mu * dE;
      const M32 dH = A * h * (dF * S + F * dS) * Bm.transpose();
      const int col = 3 * a + c;
      for (int q = 0; q < 3; ++q) {
        r.K[9 * (3 + q) + col] = dH(q, 0);
        r.K[9 * (6 + q) + col] = dH(q, 1);
        r.K[9 * q + col] = -dH(q, 0) - dH(q, 1);
      }
    }
  return r;
}

inline StvkTri stvk_triangle(const double* X, const double* x, const MembraneMaterial& mat) {
  return stvk_triangle_t<double>(X, x, mat);
}

/// The StVK reference summed over a mesh in scalar type T: energy, dense f and K (summed in T, rounded to double).
template <class T = double>
inline T stvk_mesh(const TriMesh& m, std::span<const MembraneMaterial> mat, const std::vector<double>& x,
                   std::vector<double>* f, std::vector<double>* K) {
  const std::size_t n = x.size();
  std::vector<T> fT(f ? n : 0, T(0)), KT(K ? n * n : 0, T(0));
  T W = 0;
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    double Xt[9], xt[9];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) {
        Xt[3 * i + c] = m.coords[3 * m.tris[3 * t + i] + c];
        xt[3 * i + c] = x[3 * m.tris[3 * t + i] + c];
      }
    const StvkTriT<T> r = stvk_triangle_t<T>(Xt, xt, mat[t]);
    W += r.W;
    for (int i = 0; i < 3; ++i)
      for (int a = 0; a < 3; ++a) {
        const std::size_t row = 3 * m.tris[3 * t + i] + a;
        if (f) fT[row] += r.f[3 * i + a];
        if (K)
          for (int j = 0; j < 3; ++j)
            for (int b = 0; b < 3; ++b) KT[row * n + 3 * m.tris[3 * t + j] + b] += r.K[9 * (3 * i + a) + 3 * j + b];
      }
  }
  if (f) f->assign(fT.begin(), fT.end());
  if (K) K->assign(KT.begin(), KT.end());
  return W;
}

}  // namespace edgefem::testing::membrane
