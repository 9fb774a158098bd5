// Tests of Delingette's membranes (materials/membrane.hpp, materials/trbs.cpp): "trbs", "trqs", "springs",
// "linear-membrane" on triangles in 3D.
// - finite differences: f = dW/dx and K = df/dx for every model on single triangles (generic, obtuse, sliver) and
//   on a curved, shuffled multi-triangle patch, deformed randomly, stretched, compressed, rotated and nearly
//   collapsed;
// - trbs = the plane-stress StVK membrane A h (lambda/2 tr(E)^2 + mu tr(E^2)) (energy to 1e-12, f and K of a
//   direct per-triangle StVK implementation written here, to 1e-10);
// - the spring constants against Delingette's printed E, nu forms; rigid motions; the common tangent at rest
//   (= Delingette's linear stiffness B^L); springs = trqs without angular springs; TRQS -> TRBS for small
//   strains; energy additivity over triangles; thread-count independence (bitwise); input checks.
// - Delingette's damping (§V-C): f + f_v = the springs at the damped elongations (per-triangle zeta), f_v = D v,
//   D = df_v/dv = c zeta (K - K_geometric), symmetric PSD, zero on rigid velocities, linear in zeta, threads.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include "materials/formulation.hpp"
#include "tests/support/formulation_testing.hpp"
#include "materials/membrane.hpp"

namespace edgefem {
namespace {

struct TriMesh {
  std::vector<double> coords;
  std::vector<LocalIndex> tris;
  [[nodiscard]] LocalIndex n_vertices() const { return static_cast<LocalIndex>(coords.size() / 3); }
  [[nodiscard]] std::size_t n_tris() const { return tris.size() / 3; }
};

const Eigen::Matrix3d& generic_rotation() {
  static const Eigen::Matrix3d R =
      Eigen::AngleAxisd(0.7, Eigen::Vector3d(0.2, -0.6, 0.9).normalized()).toRotationMatrix();
  return R;
}

/// One triangle: "tri" generic, "obtuse" (a 120+ degree angle: negative cotangent, negative c), "sliver"
/// (height 1 % of the base: cot ~ 1e2, near-degenerate), all in a generic orientation in 3D.
TriMesh single_triangle(const std::string& kind) {
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

/// nx x ny grid on [0, 1]^2 split into triangles (alternating diagonals), interior vertices jittered by up to
/// jitter / n, lifted onto a curved surface, rotated, vertices renumbered randomly (both edge orientations occur)
/// unless shuffle = false (row-major numbering).
TriMesh patch(int nx, int ny, double jitter, unsigned seed, bool shuffle = true) {
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
      const double x = (i + (interior ? jitter * u(rng) : 0.0)) / nx, y = (j + (interior ? jitter * u(rng) : 0.0)) / ny;
      const Eigen::Vector3d p(x, y, 0.15 * std::sin(3.0 * x) * std::cos(2.0 * y) + 0.1 * x * y);
      const Eigen::Vector3d q = generic_rotation() * p;
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

TriMesh mesh_by_name(const std::string& name) {
  if (name == "patch") return patch(4, 3, 0.25, 7);  // 24 triangles, curved, shuffled numbering
  return single_triangle(name);
}

/// Deformations x = c + A (X - c) + t + noise (c the centroid of X).
std::vector<double> deform(const TriMesh& m, const std::string& kind, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::Matrix3d A = Eigen::Matrix3d::Identity();
  Eigen::Vector3d shift = Eigen::Vector3d::Zero();
  double noise = 0.0;
  if (kind == "random") {
    noise = 0.15;
  } else if (kind == "stretched") {
    A << 1.4, 0.1, 0.0, 0.05, 0.8, 0.1, 0.0, -0.1, 1.15;
    noise = 0.02;
  } else if (kind == "compressed") {  // trbs past its compression peak (s < 1/sqrt 2) for some edges
    A = 0.6 * Eigen::Matrix3d::Identity();
    noise = 0.03;
  } else if (kind == "rotated") {
    Eigen::Matrix3d S;
    S << 1.3, 0.1, 0.0, 0.0, 0.9, 0.05, 0.1, 0.0, 1.1;
    A = Eigen::AngleAxisd(2.1, Eigen::Vector3d(-0.4, 0.5, 0.7).normalized()).toRotationMatrix() * S;
    shift << 3.0, -1.0, 2.0;
    noise = 0.02;
  } else if (kind == "collapsed") {  // nearly flattened onto a line: deformed areas ~ 1e-2 of the reference
    A = generic_rotation() * Eigen::Vector3d(1.0, 0.02, 0.02).asDiagonal() * generic_rotation().transpose();
    noise = 0.002;
  }
  const LocalIndex nv = m.n_vertices();
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (LocalIndex v = 0; v < nv; ++v) c += Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
  c /= nv;
  std::vector<double> x(m.coords.size());
  for (LocalIndex v = 0; v < nv; ++v) {
    const Eigen::Vector3d X(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    const Eigen::Vector3d y = c + A * (X - c) + shift;
    for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k] + noise * u(rng);
  }
  return x;
}

/// One random material per triangle: E in [1, 5], nu in [-0.3, 0.9], h in [0.01, 0.2].
std::vector<MembraneMaterial> random_materials(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> E(1.0, 5.0), nu(-0.3, 0.9), h(0.01, 0.2);
  std::vector<MembraneMaterial> out(n);
  for (auto& m : out) m = {E(rng), nu(rng), h(rng)};
  return out;
}

std::unique_ptr<TetFormulation> make(const std::string& model, const TriMesh& m,
                                     std::span<const MembraneMaterial> mat) {
  return make_membrane(model, m.coords, m.tris, mat, testing::iota_ids(mat.size()));
}

double max_abs(std::span<const double> a) {
  double s = 0.0;
  for (double v : a) s = std::max(s, std::abs(v));
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// A direct per-triangle plane-stress StVK membrane (deformation gradient in the triangle's own plane).

template <class T>
struct StvkTriT {
  T W = 0;
  std::array<T, 9> f{};   ///< dW/dx
  std::array<T, 81> K{};  ///< df/dx, row-major 9 x 9
};
using StvkTri = StvkTriT<double>;

/// Plane-stress StVK membrane of one triangle in scalar type T (double, or long double for a reference).
template <class T>
StvkTriT<T> stvk_triangle_t(const double* Xd, const double* xd, const MembraneMaterial& mat) {
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

StvkTri stvk_triangle(const double* X, const double* x, const MembraneMaterial& mat) {
  return stvk_triangle_t<double>(X, x, mat);
}

/// The StVK reference summed over a mesh in scalar type T: energy, dense f and K (summed in T, rounded to double).
template <class T = double>
T stvk_mesh(const TriMesh& m, std::span<const MembraneMaterial> mat, const std::vector<double>& x,
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

/// Condition number of the trbs spring sum: (sum of |spring terms|) / W, the factor by which the edge form
/// amplifies the round-off of the elongations l^2 - L^2 (large on slivers: the constants grow like cot^2 / A).
double spring_condition(const TriMesh& m, std::span<const MembraneMaterial> mat, const std::vector<double>& x) {
  double sum_abs = 0.0, W = 0.0;
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    std::array<double, 9> X;
    double d2[3];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tris[3 * t + i] + c];
    for (int i = 0; i < 3; ++i) {
      const LocalIndex a = m.tris[3 * t + (i + 1) % 3], b = m.tris[3 * t + (i + 2) % 3];
      double l2 = 0.0, L2 = 0.0;
      for (int c = 0; c < 3; ++c) {
        l2 += (x[3 * a + c] - x[3 * b + c]) * (x[3 * a + c] - x[3 * b + c]);
        L2 += (m.coords[3 * a + c] - m.coords[3 * b + c]) * (m.coords[3 * a + c] - m.coords[3 * b + c]);
      }
      d2[i] = l2 - L2;
    }
    const TriangleSprings s = trbs_springs(X, mat[t]);
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3, k = (i + 2) % 3;
      const double tk = s.tensile[i] / 4 * d2[i] * d2[i], tc = s.angular[k] / 2 * d2[i] * d2[j];
      sum_abs += std::abs(tk) + std::abs(tc);
      W += tk + tc;
    }
  }
  return sum_abs / W;
}

// ---------------------------------------------------------------------------------------------------------
// 1. Finite differences for every model.

using FdParam = std::tuple<std::string, std::string, std::string>;  // model, mesh, deformation
class MembraneFd : public ::testing::TestWithParam<FdParam> {};

TEST_P(MembraneFd, ForceAndStiffnessMatchFiniteDifferences) {
  const auto& [model, mesh_name, def] = GetParam();
  const TriMesh m = mesh_by_name(mesh_name);
  const auto mat = random_materials(m.n_tris(), 11);
  const auto form = make(model, m, mat);
  EXPECT_EQ(form->name(), model);
  const auto x = deform(m, def, 5);

  std::vector<double> f;
  const auto K = testing::dense_stiffness(*form, x, &f);
  const double h = 1e-6;
  const auto f_fd = testing::fd_force(*form, x, h);
  const auto K_fd = testing::fd_stiffness(*form, x, h);
  const double ef = testing::rel_max_diff(f, f_fd), eK = testing::rel_max_diff(K, K_fd);
  EXPECT_LT(ef, 1e-6) << "f vs dW/dx";
  EXPECT_LT(eK, 1e-6) << "K vs df/dx";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e %.3e", ef, eK);
  RecordProperty("fd_rel_err_f_K", buf);
  EXPECT_GT(max_abs(f), 0.0);

  std::vector<double> f_only(f.size());
  form->force(x, f_only);
  EXPECT_EQ(f_only, f) << "force() and force_and_stiffness() agree";

  const std::size_t n = f.size();
  double asym = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) asym = std::max(asym, std::abs(K[i * n + j] - K[j * n + i]));
  EXPECT_EQ(asym, 0.0) << "K exactly symmetric (edge blocks stored with their transposes, diagonal blocks "
                          "symmetrised), max |K| "
                       << max_abs(K);
}

INSTANTIATE_TEST_SUITE_P(
    MembraneAllModels, MembraneFd,
    ::testing::Combine(::testing::Values("trbs", "trqs", "springs", "linear-membrane"),
                       ::testing::Values("tri", "obtuse", "sliver", "patch"),
                       ::testing::Values("random", "stretched", "compressed", "rotated", "collapsed")),
    [](const auto& info) {
      std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::get<2>(info.param);
      for (char& c : s)
        if (c == '-') c = '_';
      return s;
    });

// ---------------------------------------------------------------------------------------------------------
// 2. TRBS = plane-stress StVK membrane.

/// A random 3D triangle with all angles above 5 degrees.
std::array<double, 9> random_triangle(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (;;) {
    std::array<double, 9> X;
    for (double& v : X) v = u(rng);
    double min_sin = 1.0;
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector3d p(X[3 * i], X[3 * i + 1], X[3 * i + 2]);
      const Eigen::Vector3d a = Eigen::Vector3d(X[3 * ((i + 1) % 3)], X[3 * ((i + 1) % 3) + 1], X[3 * ((i + 1) % 3) + 2]) - p;
      const Eigen::Vector3d b = Eigen::Vector3d(X[3 * ((i + 2) % 3)], X[3 * ((i + 2) % 3) + 1], X[3 * ((i + 2) % 3) + 2]) - p;
      min_sin = std::min(min_sin, a.cross(b).norm() / (a.norm() * b.norm()));
    }
    if (min_sin > std::sin(5.0 * M_PI / 180.0)) return X;
  }
}

TEST(MembraneTrbs, EnergyEqualsPlaneStressStvkOnRandomTriangles) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0), E(0.5, 10.0), nu(-0.9, 0.95), h(1e-3, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 500; ++trial) {
    TriMesh m;
    const auto X = random_triangle(rng);
    m.coords.assign(X.begin(), X.end());
    m.tris = {0, 1, 2};
    const std::vector<MembraneMaterial> mat = {{E(rng), nu(rng), h(rng)}};
    const auto form = make("trbs", m, mat);
    const double amp = std::pow(10.0, -2.0 + 2.0 * (trial % 5) / 4.0);  // 1e-2 .. 1 displacement amplitude
    std::vector<double> x(9);
    for (int i = 0; i < 9; ++i) x[i] = X[i] + amp * u(rng);
    const double W = form->energy(x);
    const double W_ref = stvk_triangle(X.data(), x.data(), mat[0]).W;
    ASSERT_GT(W_ref, 0.0);
    worst = std::max(worst, std::abs(W - W_ref) / W_ref);
    EXPECT_NEAR(W, W_ref, 1e-12 * W_ref) << "trial " << trial;
  }
  std::printf("[ membrane ] trbs energy vs plane-stress StVK, 500 random triangles: max rel err %.2e\n", worst);
}

TEST(MembraneTrbs, ForceAndStiffnessEqualDirectStvk) {
  // Energy against the StVK reference in long double, to 1e-12 relative, or 1e-15 kappa on slivers, kappa the
  // condition number of the spring sum (spring_condition: ~1e6 for the 1 % sliver stretched, where the edge form
  // loses ~4e-17 kappa while the F-based form does not); f and K against the double StVK reference to 1e-10.
  double worst_w = 0.0, worst_f = 0.0, worst_k = 0.0, worst_w_wellcond = 0.0;
  for (const std::string mesh_name : {"tri", "obtuse", "sliver", "patch"})
    for (const std::string def : {"random", "stretched", "compressed", "rotated", "collapsed"}) {
      const TriMesh m = mesh_by_name(mesh_name);
      const auto mat = random_materials(m.n_tris(), 23);
      const auto form = make("trbs", m, mat);
      const auto x = deform(m, def, 9);
      std::vector<double> f, f_ref, K_ref;
      const auto K = testing::dense_stiffness(*form, x, &f);
      stvk_mesh(m, mat, x, &f_ref, &K_ref);
      const long double W_ld = stvk_mesh<long double>(m, mat, x, nullptr, nullptr);
      const double kappa = spring_condition(m, mat, x);
      const double ew = static_cast<double>(std::abs(form->energy(x) - W_ld) / W_ld);
      const double ef = testing::rel_max_diff(f, f_ref), ek = testing::rel_max_diff(K, K_ref);
      EXPECT_LT(ew, std::max(1e-12, 1e-15 * kappa)) << mesh_name << " " << def << ", kappa " << kappa;
      EXPECT_LT(ef, 1e-10) << mesh_name << " " << def;
      EXPECT_LT(ek, 1e-10) << mesh_name << " " << def;
      worst_w = std::max(worst_w, ew), worst_f = std::max(worst_f, ef), worst_k = std::max(worst_k, ek);
      if (kappa < 1e3) worst_w_wellcond = std::max(worst_w_wellcond, ew);
    }
  std::printf("[ membrane ] trbs vs direct StVK: max rel err W %.2e (%.2e for kappa < 1e3), f %.2e, K %.2e\n",
              worst_w, worst_w_wellcond, worst_f, worst_k);
}

TEST(MembraneTrbs, SpringConstantsMatchDelingettesFormulas) {
  // k_i = h E (2 cot^2 a_i + 1 - nu) / (16 (1 - nu^2) A), c_k = h E (2 cot a_i cot a_j + nu - 1) / (16 (1 - nu^2) A)
  // with the angles from acos (independent of the code's cross/dot form), kappa = 2 L^2 k, gamma = 2 L_i L_j c.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> E(0.5, 10.0), nu(-0.9, 0.95), h(1e-3, 1.0);
  for (int trial = 0; trial < 100; ++trial) {
    const auto X = random_triangle(rng);
    const MembraneMaterial mat{E(rng), nu(rng), h(rng)};
    Eigen::Vector3d P[3];
    for (int i = 0; i < 3; ++i) P[i] = Eigen::Vector3d(X[3 * i], X[3 * i + 1], X[3 * i + 2]);
    double cot[3], L[3];
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector3d a = P[(i + 1) % 3] - P[i], b = P[(i + 2) % 3] - P[i];
      cot[i] = 1.0 / std::tan(std::acos(a.dot(b) / (a.norm() * b.norm())));
      L[i] = (P[(i + 2) % 3] - P[(i + 1) % 3]).norm();
    }
    const double A = 0.5 * (P[1] - P[0]).cross(P[2] - P[0]).norm();
    const double q = mat.thickness * mat.young / (16.0 * (1.0 - mat.poisson * mat.poisson) * A);
    const TriangleSprings b = trbs_springs(X, mat), t = trqs_springs(X, mat);
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3, k = (i + 2) % 3;
      const double ki = q * (2.0 * cot[i] * cot[i] + 1.0 - mat.poisson);
      const double ck = q * (2.0 * cot[i] * cot[j] + mat.poisson - 1.0);
      const double scale = q * (2.0 * (cot[i] * cot[i] + std::abs(cot[i] * cot[j])) + 2.0);
      EXPECT_NEAR(b.tensile[i], ki, 1e-12 * scale) << trial;
      EXPECT_NEAR(b.angular[k], ck, 1e-12 * scale) << trial;
      EXPECT_NEAR(t.tensile[i], 2.0 * L[i] * L[i] * ki, 1e-12 * scale * L[i] * L[i]) << trial;
      EXPECT_NEAR(t.angular[k], 2.0 * L[i] * L[j] * ck, 1e-12 * scale * L[i] * L[j]) << trial;
      EXPECT_GT(b.tensile[i], 0.0) << "tensile stiffness is always positive";
    }
  }
  // Delingette's Fig. 7: on a regular triangle the angular stiffness vanishes for nu = 1/3 and is negative below.
  const std::array<double, 9> reg = {0, 0, 0, 1, 0, 0, 0.5, std::sqrt(3.0) / 2, 0};
  const auto third = trbs_springs(reg, {1.0, 1.0 / 3.0, 1.0});
  for (double c : third.angular) EXPECT_NEAR(c, 0.0, 1e-15);
  for (double c : trbs_springs(reg, {1.0, 0.2, 1.0}).angular) EXPECT_LT(c, 0.0);
  for (double c : trbs_springs(reg, {1.0, 0.45, 1.0}).angular) EXPECT_GT(c, 0.0);
}

// ---------------------------------------------------------------------------------------------------------
// 3. Rigid motions, tangent at rest, springs vs trqs, small strains, additivity.

TEST(MembraneRigid, RigidMotionsGiveZeroForce) {
  const TriMesh m = patch(5, 4, 0.25, 3);
  const auto mat = random_materials(m.n_tris(), 4);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(2.5, Eigen::Vector3d(0.3, 0.9, -0.2).normalized()).toRotationMatrix();
  const Eigen::Vector3d t(1.5, -2.0, 0.7);
  std::vector<double> x_tr(m.coords.size()), x_rot(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d X(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    const Eigen::Vector3d a = X + t, b = R * X + t;
    for (int c = 0; c < 3; ++c) x_tr[3 * v + c] = a[c], x_rot[3 * v + c] = b[c];
  }
  const auto x_str = deform(m, "stretched", 1);  // force and energy scales
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    const auto form = make(model, m, mat);
    std::vector<double> f(x_tr.size());
    form->force(x_str, f);
    const double f_scale = max_abs(f), w_scale = form->energy(x_str);
    ASSERT_GT(f_scale, 0.0);
    form->force(x_tr, f);
    EXPECT_LT(max_abs(f), 1e-12 * f_scale) << model << ": translation";
    EXPECT_LT(std::abs(form->energy(x_tr)), 1e-12 * w_scale) << model << ": translation";
    form->force(x_rot, f);
    if (std::string(model) == "linear-membrane") {
      // Small-strain model: a finite rotation is not force-free (the known limitation of linear elasticity).
      EXPECT_GT(max_abs(f), 1e-2 * f_scale) << model << ": rotation";
    } else {
      EXPECT_LT(max_abs(f), 1e-12 * f_scale) << model << ": rotation";
      EXPECT_LT(std::abs(form->energy(x_rot)), 1e-12 * w_scale) << model << ": rotation";
    }
  }
}

TEST(MembraneRestTangent, TrbsTrqsAndLinearShareTheTangentAtRest) {
  const TriMesh m = patch(4, 4, 0.3, 8);
  const auto mat = random_materials(m.n_tris(), 6);
  const auto K_trbs = testing::dense_stiffness(*make("trbs", m, mat), m.coords);
  const auto K_trqs = testing::dense_stiffness(*make("trqs", m, mat), m.coords);
  const auto K_lin = testing::dense_stiffness(*make("linear-membrane", m, mat), m.coords);
  const auto K_spr = testing::dense_stiffness(*make("springs", m, mat), m.coords);
  const double e_trqs = testing::rel_max_diff(K_trqs, K_trbs), e_lin = testing::rel_max_diff(K_lin, K_trbs);
  EXPECT_LT(e_trqs, 1e-12);
  EXPECT_EQ(K_lin, K_trbs) << "linear-membrane stores the trbs tangent at rest";
  EXPECT_GT(testing::rel_max_diff(K_spr, K_trbs), 1e-2) << "springs alone are not the membrane (random nu)";
  std::printf("[ membrane ] tangent at rest: trqs vs trbs rel diff %.2e, linear vs trbs %.2e\n", e_trqs, e_lin);
  std::vector<double> f(m.coords.size());
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    make(model, m, mat)->force(m.coords, f);
    EXPECT_EQ(max_abs(f), 0.0) << model << ": the reference state is exactly force-free";
  }
}

TEST(MembraneRestTangent, EqualsDelingettesLinearStiffnessOnPlanarTriangles) {
  // Delingette §IV-A: B^L_ij = A [lambda D_i (x) D_j + mu'/2 D_j (x) D_i + mu'/2 (D_i . D_j) I] with his mu' = 2 mu,
  // times h; D_i the barycentric gradients (eq. 8). For a membrane in 3D, I is the in-plane identity: at rest the
  // membrane has no out-of-plane stiffness (checked on triangles in the z = 0 plane).
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0), E(0.5, 5.0), nu(-0.5, 0.9), h(0.01, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    TriMesh m;
    for (int i = 0; i < 3; ++i) m.coords.insert(m.coords.end(), {u(rng), u(rng), 0.0});
    m.tris = {0, 1, 2};
    const std::vector<MembraneMaterial> mat = {{E(rng), nu(rng), h(rng)}};
    const auto K = testing::dense_stiffness(*make("trbs", m, mat), m.coords);
    Eigen::Matrix3d P;
    for (int i = 0; i < 3; ++i) P.col(i) << m.coords[3 * i], m.coords[3 * i + 1], 1.0;
    const Eigen::Matrix3d D = P.inverse();  // row i = (D_ix, D_iy, eta_i^0)
    const double A = 0.5 * std::abs(P.determinant());
    const double lam = mat[0].young * mat[0].poisson / (1 - mat[0].poisson * mat[0].poisson);
    const double mu = mat[0].young / (2 * (1 + mat[0].poisson));
    std::vector<double> B(81, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const Eigen::Vector2d Di = D.row(i).head<2>(), Dj = D.row(j).head<2>();
        const Eigen::Matrix2d b = mat[0].thickness * A *
                                  (lam * Di * Dj.transpose() + mu * Dj * Di.transpose() +
                                   mu * Di.dot(Dj) * Eigen::Matrix2d::Identity());
        for (int r = 0; r < 2; ++r)
          for (int c = 0; c < 2; ++c) B[9 * (3 * i + r) + 3 * j + c] = b(r, c);
      }
    EXPECT_LT(testing::rel_max_diff(K, B), 1e-12) << trial;
  }
}

TEST(MembraneSprings, EqualTrqsWithoutAngularSprings) {
  const TriMesh m = patch(5, 5, 0.3, 2);
  const auto mat = random_materials(m.n_tris(), 3);
  std::vector<TriangleSprings> sp(m.n_tris());
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    std::array<double, 9> X;
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tris[3 * t + i] + c];
    sp[t] = trqs_springs(X, mat[t]);
    sp[t].angular = {0.0, 0.0, 0.0};
  }
  // The generic engine with zero angular constants runs the angular code path; "springs" skips it.
  const auto zero = make_triangle_springs("trqs-no-angular", SpringStrain::length, m.coords, m.tris, sp, true);
  const auto springs = make("springs", m, mat);
  const auto trqs = make("trqs", m, mat);
  EXPECT_EQ(zero->block_pattern(), springs->block_pattern());
  for (const std::string def : {"random", "stretched", "rotated"}) {
    const auto x = deform(m, def, 4);
    std::vector<double> f0, f1, f2;
    const auto K0 = testing::dense_stiffness(*zero, x, &f0);
    const auto K1 = testing::dense_stiffness(*springs, x, &f1);
    const auto K2 = testing::dense_stiffness(*trqs, x, &f2);
    EXPECT_EQ(zero->energy(x), springs->energy(x)) << def;
    EXPECT_EQ(f0, f1) << def;
    EXPECT_EQ(K0, K1) << def;
    EXPECT_GT(testing::rel_max_diff(f2, f1), 1e-3) << def << ": the angular springs do matter in trqs";
  }
  // Delingette: on regular triangles with nu = 1/3 the angular springs vanish, so springs = trqs.
  TriMesh reg;
  reg.coords = {0, 0, 0, 1, 0, 0, 0.5, std::sqrt(3.0) / 2, 0, 1.5, std::sqrt(3.0) / 2, 0};
  reg.tris = {0, 1, 2, 1, 3, 2};
  const std::vector<MembraneMaterial> third(2, MembraneMaterial{2.0, 1.0 / 3.0, 0.1});
  const auto x = deform(reg, "random", 8);
  std::vector<double> fa, fb;
  const auto Ka = testing::dense_stiffness(*make("springs", reg, third), x, &fa);
  const auto Kb = testing::dense_stiffness(*make("trqs", reg, third), x, &fb);
  EXPECT_LT(testing::rel_max_diff(fa, fb), 1e-14);
  EXPECT_LT(testing::rel_max_diff(Ka, Kb), 1e-14);
}

TEST(MembraneTrqs, ApproachesTrbsForSmallStrains) {
  // Delingette §IV-B: TRQS is TRBS with D2 l ~ 2 L dl, so W_trqs / W_trbs - 1 = O(strain).
  const TriMesh m = patch(4, 4, 0.3, 5);
  const auto mat = random_materials(m.n_tris(), 7);
  const auto trbs = make("trbs", m, mat), trqs = make("trqs", m, mat);
  const auto dir = deform(m, "random", 3);
  double prev = 0.0;
  for (double eps : {1e-2, 1e-3, 1e-4}) {
    std::vector<double> x(m.coords.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = m.coords[i] + eps * (dir[i] - m.coords[i]);
    const double rel = std::abs(trqs->energy(x) / trbs->energy(x) - 1.0);
    EXPECT_LT(rel, 10 * eps) << eps;
    if (prev > 0.0) {
      EXPECT_NEAR(prev / rel, 10.0, 3.0) << "first order in the strain";
    }
    prev = rel;
  }
}

TEST(MembranePatch, EnergyIsTheSumOfTriangleEnergies) {
  // Checks the per-edge accumulation of the tensile constants and the angular gathers across triangles.
  const TriMesh m = patch(3, 3, 0.3, 9);
  const auto mat = random_materials(m.n_tris(), 8);
  const auto x = deform(m, "stretched", 6);
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    double sum = 0.0;
    for (std::size_t t = 0; t < m.n_tris(); ++t) {
      const std::vector<LocalIndex> one(m.tris.begin() + 3 * t, m.tris.begin() + 3 * t + 3);
      const std::vector<std::int32_t> id = {static_cast<std::int32_t>(t)};
      sum += make_membrane(model, m.coords, one, mat, id)->energy(x);
    }
    const double W = make(model, m, mat)->energy(x);
    EXPECT_NEAR(W, sum, 1e-12 * std::abs(sum)) << model;
  }
}

// ---------------------------------------------------------------------------------------------------------
// 4. Structure, threads, input checks.

TEST(MembranePattern, DiagonalBlocksThenBothOrientationsOfEveryEdge) {
  TriMesh m = patch(3, 2, 0.2, 4);
  m.coords.insert(m.coords.end(), {5.0, 5.0, 5.0});  // an untouched vertex
  const auto mat = random_materials(m.n_tris(), 1);
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    const auto form = make(model, m, mat);
    EXPECT_EQ(form->n_vertices(), m.n_vertices());
    const auto& pat = form->block_pattern();
    const LocalIndex nt = m.n_vertices() - 1;
    ASSERT_GE(pat.size(), static_cast<std::size_t>(nt));
    for (LocalIndex v = 0; v < nt; ++v) EXPECT_EQ(pat[v], (std::array<LocalIndex, 2>{v, v}));
    std::vector<std::array<LocalIndex, 2>> edges;
    for (std::size_t t = 0; t < m.n_tris(); ++t)
      for (int i = 0; i < 3; ++i) {
        const LocalIndex a = m.tris[3 * t + i], b = m.tris[3 * t + (i + 1) % 3];
        edges.push_back({std::min(a, b), std::max(a, b)});
      }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    ASSERT_EQ(pat.size(), nt + 2 * edges.size());
    for (std::size_t e = 0; e < edges.size(); ++e) {
      EXPECT_EQ(pat[nt + 2 * e], edges[e]);
      EXPECT_EQ(pat[nt + 2 * e + 1], (std::array<LocalIndex, 2>{edges[e][1], edges[e][0]}));
    }
    std::vector<double> f(m.coords.size());
    form->force(deform(m, "random", 2), f);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(f[3 * nt + c], 0.0) << "untouched vertex";
    EXPECT_GT(form->bytes(), 0u);
  }
}

TEST(MembraneOpenMp, ThreadCountDoesNotChangeResults) {
  const int saved = omp_get_max_threads();
  const TriMesh m = patch(40, 30, 0.3, 11);  // 2400 triangles, > 2048 edges (two energy chunks)
  const auto mat = random_materials(m.n_tris(), 12);
  const auto x = deform(m, "random", 13);
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    const auto form = make(model, m, mat);
    std::vector<double> f1(x.size()), f2(x.size()), b1(9 * form->block_pattern().size()), b2(b1.size());
    omp_set_num_threads(1);
    form->force_and_stiffness(x, f1, b1);
    const double w1 = form->energy(x);
    for (int threads : {2, 3}) {
      omp_set_num_threads(threads);
      form->force_and_stiffness(x, f2, b2);
      EXPECT_EQ(f1, f2) << model << ", " << threads << " threads";
      EXPECT_EQ(b1, b2) << model << ", " << threads << " threads";
      form->force(x, f2);
      EXPECT_EQ(f1, f2) << model << ", " << threads << " threads, force()";
      EXPECT_EQ(w1, form->energy(x)) << model << ", " << threads << " threads, energy()";
    }
  }
  omp_set_num_threads(saved);
}

TEST(MembraneInput, RejectsBadInput) {
  const TriMesh m = single_triangle("tri");
  const std::vector<MembraneMaterial> ok = {{1.0, 0.3, 0.1}};
  const std::vector<std::int32_t> id0 = {0}, id1 = {1}, none;
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    EXPECT_NO_THROW(make_membrane(model, m.coords, m.tris, ok, id0));
    const std::vector<double> flat = {0, 0, 0, 1, 1, 1, 2, 2, 2};  // collinear
    EXPECT_THROW(make_membrane(model, flat, m.tris, ok, id0), std::invalid_argument) << model;
    EXPECT_THROW(make_membrane(model, m.coords, m.tris, ok, id1), std::invalid_argument) << model;
    EXPECT_THROW(make_membrane(model, m.coords, m.tris, ok, none), std::invalid_argument) << model;
    for (const MembraneMaterial bad : {MembraneMaterial{0.0, 0.3, 0.1}, MembraneMaterial{1.0, 1.0, 0.1},
                                       MembraneMaterial{1.0, -1.0, 0.1}, MembraneMaterial{1.0, 0.3, 0.0}}) {
      const std::vector<MembraneMaterial> t = {bad};
      EXPECT_THROW(make_membrane(model, m.coords, m.tris, t, id0), std::invalid_argument) << model;
    }
    const std::vector<LocalIndex> rep = {0, 1, 1}, out = {0, 1, 3};
    EXPECT_THROW(make_membrane(model, m.coords, rep, ok, id0), std::invalid_argument) << model;
    EXPECT_THROW(make_membrane(model, m.coords, out, ok, id0), std::invalid_argument) << model;
    const auto form = make_membrane(model, m.coords, m.tris, ok, id0);
    std::vector<double> x(6), f(6);
    EXPECT_THROW(form->force(x, f), std::invalid_argument) << model;
  }
  EXPECT_THROW(make_membrane("stvk", m.coords, m.tris, ok, id0), std::invalid_argument);
  try {
    make_membrane("trbs", m.coords, m.tris, std::vector<MembraneMaterial>{{1.0, 1.2, 0.1}}, id0);
    ADD_FAILURE() << "nu = 1.2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Poisson"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Cost per triangle (not run by default: --gtest_also_run_disabled_tests --gtest_filter='*MembraneTiming*').

TEST(MembraneTiming, DISABLED_CostPerTriangle) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  for (bool shuffled : {false, true}) {
    const TriMesh m = patch(224, 224, 0.3, 1, shuffled);  // 100352 triangles
    const auto mat = random_materials(1, 2);
    const std::vector<std::int32_t> ids(m.n_tris(), 0);
    const auto x = deform(m, "random", 1);
    for (const char* model : {"springs", "trqs", "trbs", "linear-membrane"}) {
      const auto form = make_membrane(model, m.coords, m.tris, mat, ids);
      std::vector<double> f(x.size()), b(9 * form->block_pattern().size());
      auto best = [&](auto&& fn) {
        // Best of 15 in thread CPU time (1 thread: the calls run on this thread), robust to a loaded machine.
        auto now = [] {
          timespec ts{};
          clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
          return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
        };
        double t_best = 1e30;
        for (int rep = 0; rep < 15; ++rep) {
          const double t0 = now();
          fn();
          t_best = std::min(t_best, now() - t0);
        }
        return 1e9 * t_best / static_cast<double>(m.n_tris());
      };
      const double t_fk = best([&] { form->force_and_stiffness(x, f, b); });
      const double t_f = best([&] { form->force(x, f); });
      const double t_w = best([&] { (void)form->energy(x); });
      std::printf("[ membrane ] %-16s f+K %6.1f, f %6.1f, W %6.1f ns/triangle (1 thread, %zu triangles, %s)\n", model,
                  t_fk, t_f, t_w, m.n_tris(), shuffled ? "shuffled numbering" : "row-major numbering");
    }
  }
  omp_set_num_threads(saved);
}

// ---------------------------------------------------------------------------------------------------------
// 6. Delingette's damping (§V-C): damped elongations, f_v = G^T A_v G v and D = df_v/dv.

/// Dense D (row-major 3n x 3n) and f_v from viscous_force_and_damping().
std::vector<double> dense_damping(const TetFormulation& form, std::span<const double> x, std::span<const double> v,
                                  std::vector<double>* fv = nullptr) {
  const std::size_t n = x.size();
  const auto& pattern = form.block_pattern();
  std::vector<double> f(n), blocks(9 * pattern.size()), D(n * n, 0.0);
  form.viscous_force_and_damping(x, v, f, blocks);
  for (std::size_t b = 0; b < pattern.size(); ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) D[(3 * pattern[b][0] + r) * n + 3 * pattern[b][1] + c] += blocks[9 * b + 3 * r + c];
  if (fv) *fv = f;
  return D;
}

/// Materials of random_materials with a random damping zeta in [0.05, 2] per triangle.
std::vector<MembraneMaterial> damped_materials(std::size_t n, unsigned seed) {
  auto mat = random_materials(n, seed);
  std::mt19937 rng(seed + 1000);
  std::uniform_real_distribution<double> z(0.05, 2.0);
  for (auto& m : mat) m.damping = z(rng);
  return mat;
}

std::vector<double> random_vector(std::size_t n, unsigned seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(n);
  for (double& c : v) c = u(rng);
  return v;
}

/// Test-local damped triangle springs, straight from Delingette's per-triangle formulas: for each triangle, the
/// elongations are replaced by their damped values (trbs D2_i + zeta (v_j - v_k).(x_j - x_k), trqs/springs
/// dl_i + zeta (v_j - v_k).(x_j - x_k)/|x_j - x_k|), sigma_i = dW_T/dphi_i is evaluated there and
/// f += sigma_i dphi_i/dx (f = +dW/dx). With geo != nullptr (dense 3n x 3n, zeta ignored) it also accumulates the
/// geometric stiffness sum sigma_i d2phi_i/dx2 at the undamped elongations.
std::vector<double> damped_reference_force(const std::string& model, const TriMesh& m,
                                           std::span<const MembraneMaterial> mat, const std::vector<double>& x,
                                           const std::vector<double>& v, std::vector<double>* geo = nullptr) {
  const bool sq = model == "trbs", ang = model != "springs";
  const std::size_t n = x.size();
  std::vector<double> f(n, 0.0);
  if (geo) geo->assign(n * n, 0.0);
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    std::array<double, 9> X;
    const LocalIndex* tv = m.tris.data() + 3 * t;
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * tv[i] + c];
    const TriangleSprings sp = sq ? trbs_springs(X, mat[t]) : trqs_springs(X, mat[t]);
    EXPECT_EQ(sp.damping, mat[t].damping);
    const double zeta = geo ? 0.0 : mat[t].damping;
    double phi[3], grad[3][3];  // damped elongation and dphi/dx(j) (= -dphi/dx(k)) of edge i = (j, k)
    for (int i = 0; i < 3; ++i) {
      const LocalIndex j = tv[(i + 1) % 3], k = tv[(i + 2) % 3];
      double p[3], dv = 0.0, l2 = 0.0, L2 = 0.0;
      for (int c = 0; c < 3; ++c) {
        p[c] = x[3 * j + c] - x[3 * k + c];
        l2 += p[c] * p[c];
        L2 += (m.coords[3 * j + c] - m.coords[3 * k + c]) * (m.coords[3 * j + c] - m.coords[3 * k + c]);
        dv += (v[3 * j + c] - v[3 * k + c]) * p[c];
      }
      const double l = std::sqrt(l2);
      phi[i] = sq ? l2 - L2 + zeta * dv : l - std::sqrt(L2) + zeta * dv / l;
      for (int c = 0; c < 3; ++c) grad[i][c] = sq ? 2.0 * p[c] : p[c] / l;
    }
    for (int i = 0; i < 3; ++i) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
      // W_T = sum k_i/4 phi_i^2 + sum c_k/2 phi_i phi_j (trbs), sum kappa_i/2 phi_i^2 + sum gamma_k phi_i phi_j (trqs);
      // the angular spring at vertex i1 couples edges i2 and i, the one at i2 couples edges i and i1.
      const double w = sq ? 0.5 : 1.0;
      double sigma = w * sp.tensile[i] * phi[i];
      if (ang) sigma += w * (sp.angular[i1] * phi[i2] + sp.angular[i2] * phi[i1]);
      const LocalIndex j = tv[i1], k = tv[i2];
      for (int c = 0; c < 3; ++c) {
        f[3 * j + c] += sigma * grad[i][c];
        f[3 * k + c] -= sigma * grad[i][c];
      }
      if (geo) {  // sigma d2phi/dp2 on (j, j), (k, k), minus on (j, k), (k, j)
        double H[9];
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) {
            if (sq) {
              H[3 * r + c] = r == c ? 2.0 * sigma : 0.0;
            } else {
              double l2 = 0.0;
              for (int q = 0; q < 3; ++q) l2 += (x[3 * j + q] - x[3 * k + q]) * (x[3 * j + q] - x[3 * k + q]);
              H[3 * r + c] = sigma / std::sqrt(l2) * ((r == c ? 1.0 : 0.0) - grad[i][r] * grad[i][c]);
            }
          }
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) {
            (*geo)[(3 * j + r) * n + 3 * j + c] += H[3 * r + c];
            (*geo)[(3 * k + r) * n + 3 * k + c] += H[3 * r + c];
            (*geo)[(3 * j + r) * n + 3 * k + c] -= H[3 * r + c];
            (*geo)[(3 * k + r) * n + 3 * j + c] -= H[3 * r + c];
          }
      }
    }
  }
  return f;
}

TEST(MembraneDamping, ForceEqualsSpringsAtTheDampedElongations) {
  // f(x) + f_v(x, v) = the per-triangle spring forces evaluated at Delingette's damped elongations, with a
  // different zeta on every triangle (shared edges mix two zetas), on single triangles and the curved patch.
  for (const std::string mesh_name : {"tri", "obtuse", "patch"})
    for (const char* def : {"stretched", "random", "rotated"})
      for (const char* model : {"trbs", "trqs", "springs"}) {
        const TriMesh m = mesh_by_name(mesh_name);
        const auto mat = damped_materials(m.n_tris(), 21);
        const auto form = make(model, m, mat);
        ASSERT_TRUE(form->viscous()) << model;
        const auto x = deform(m, def, 22);
        const auto v = random_vector(x.size(), 23, 0.3);
        std::vector<double> f(x.size()), fv(x.size());
        form->force(x, f);
        form->viscous_force_and_damping(x, v, fv, {});
        for (std::size_t i = 0; i < f.size(); ++i) f[i] += fv[i];
        const auto ref = damped_reference_force(model, m, mat, x, v);
        const double err = testing::rel_max_diff(f, ref);
        EXPECT_LT(err, 1e-12) << model << ", " << mesh_name << ", " << def;
        // The damping is not negligible in this check.
        EXPECT_GT(max_abs(fv), 1e-2 * max_abs(ref)) << model << ", " << mesh_name << ", " << def;
        if (mesh_name == "patch" && std::string(def) == "random")
          std::printf("[ membrane ] %-8s f + f_v vs damped-elongation springs: rel err %.2e\n", model, err);
      }
}

TEST(MembraneDamping, DampingMatrixIsTheDerivativeAndTheMaterialTangent) {
  const TriMesh m = patch(4, 3, 0.25, 7);
  for (const char* model : {"trbs", "trqs", "springs"}) {
    const auto x = deform(m, "random", 31);
    const auto v = random_vector(x.size(), 32, 0.5);
    const std::size_t n = x.size();
    // Per-triangle zeta: D against the derivative of f_v, f_v = D v, symmetry and PSD.
    {
      const auto mat = damped_materials(m.n_tris(), 33);
      const auto form = make(model, m, mat);
      std::vector<double> fv, fv_noblocks(n);
      const auto D = dense_damping(*form, x, v, &fv);
      form->viscous_force_and_damping(x, v, fv_noblocks, {});
      EXPECT_EQ(fv, fv_noblocks) << model << ": f_v does not depend on whether D is requested";
      std::vector<double> Dv(n, 0.0);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) Dv[i] += D[i * n + j] * v[j];
      const double e_lin = testing::rel_max_diff(fv, Dv);
      EXPECT_LT(e_lin, 1e-13) << model << ": f_v = D v";
      // Central differences in v (f_v is linear in v: only round-off), step 1e-3.
      std::vector<double> Dfd(n * n), fp(n), fm(n), vv = v;
      const double h = 1e-3;
      for (std::size_t j = 0; j < n; ++j) {
        vv[j] = v[j] + h;
        form->viscous_force_and_damping(x, vv, fp, {});
        vv[j] = v[j] - h;
        form->viscous_force_and_damping(x, vv, fm, {});
        vv[j] = v[j];
        for (std::size_t i = 0; i < n; ++i) Dfd[i * n + j] = (fp[i] - fm[i]) / (2 * h);
      }
      const double e_fd = testing::rel_max_diff(D, Dfd);
      EXPECT_LT(e_fd, 1e-10) << model << ": D = df_v/dv";
      double asym = 0.0;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) asym = std::max(asym, std::abs(D[i * n + j] - D[j * n + i]));
      EXPECT_EQ(asym, 0.0) << model << ": D exactly symmetric";
      Eigen::MatrixXd Dm(n, n);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) Dm(i, j) = D[i * n + j];
      const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(Dm).eigenvalues();
      EXPECT_GT(ev.minCoeff(), -1e-12 * ev.maxCoeff()) << model << ": D positive semi-definite";
      EXPECT_GT(ev.maxCoeff(), 0.0) << model;
      std::printf("[ membrane ] %-8s damping: |f_v - D v| %.2e, |D - FD| %.2e, eig(D) in [%.2e, %.2e] (rel)\n", model,
                  e_lin, e_fd, ev.minCoeff() / ev.maxCoeff(), 1.0);
    }
    // Uniform zeta: D = c zeta (K - K_geometric), c = 1/2 (trbs) or 1 (trqs, springs): Delingette's "stiffness
    // matrix with the terms proportional to the identity dropped", K_geometric = sum sigma d2phi/dx2.
    {
      auto mat = random_materials(m.n_tris(), 34);
      const double zeta = 0.37;
      for (auto& mm : mat) mm.damping = zeta;
      const auto form = make(model, m, mat);
      const auto D = dense_damping(*form, x, v);
      const auto K = testing::dense_stiffness(*form, x);
      std::vector<double> geo;
      (void)damped_reference_force(model, m, mat, x, v, &geo);
      const double c = std::string(model) == "trbs" ? 0.5 : 1.0;
      std::vector<double> expect(n * n);
      for (std::size_t i = 0; i < n * n; ++i) expect[i] = c * zeta * (K[i] - geo[i]);
      const double e_mat = testing::rel_max_diff(D, expect);
      EXPECT_LT(e_mat, 1e-11) << model << ": D = c zeta (K - K_geo)";
      EXPECT_GT(testing::rel_max_diff(geo, K), 1e-3) << model << ": the geometric term is not negligible here";
      std::printf("[ membrane ] %-8s damping: D vs c zeta (K - K_geo) rel diff %.2e\n", model, e_mat);
    }
  }
}

TEST(MembraneDamping, RigidVelocitiesAreNotDamped) {
  const TriMesh m = patch(5, 4, 0.25, 3);
  const auto mat = damped_materials(m.n_tris(), 41);
  const Eigen::Vector3d t(0.7, -1.3, 0.4), w(0.5, 1.1, -0.8);
  for (const char* def : {"stretched", "rotated", "random"}) {
    const auto x = deform(m, def, 42);
    std::vector<double> v_tr(x.size()), v_rot(x.size());
    for (LocalIndex a = 0; a < m.n_vertices(); ++a) {
      const Eigen::Vector3d p(x[3 * a], x[3 * a + 1], x[3 * a + 2]), r = w.cross(p);
      for (int c = 0; c < 3; ++c) v_tr[3 * a + c] = t[c], v_rot[3 * a + c] = r[c];
    }
    const auto v_gen = random_vector(x.size(), 43, max_abs(v_rot));  // a generic velocity of the same size
    for (const char* model : {"trbs", "trqs", "springs"}) {
      const auto form = make(model, m, mat);
      std::vector<double> f(x.size());
      form->viscous_force_and_damping(x, v_gen, f, {});
      const double scale = max_abs(f);
      ASSERT_GT(scale, 0.0);
      form->viscous_force_and_damping(x, v_tr, f, {});
      EXPECT_EQ(max_abs(f), 0.0) << model << ", " << def << ": translation";
      form->viscous_force_and_damping(x, v_rot, f, {});
      EXPECT_LT(max_abs(f), 1e-12 * scale) << model << ", " << def << ": rotation";
      // D annihilates rigid velocities too (D v = f_v).
      const std::size_t n = x.size();
      const auto D = dense_damping(*form, x, v_rot);
      double dv = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        double s = 0.0;
        for (std::size_t j = 0; j < n; ++j) s += D[i * n + j] * v_rot[j];
        dv = std::max(dv, std::abs(s));
      }
      EXPECT_LT(dv, 1e-12 * scale) << model << ", " << def << ": D (omega x x)";
    }
  }
}

TEST(MembraneDamping, ZeroDampingAndLinearMembraneHaveNoViscousForces) {
  const TriMesh m = patch(3, 3, 0.2, 5);
  const auto x = deform(m, "random", 51);
  const auto v = random_vector(x.size(), 52);
  const auto undamped = random_materials(m.n_tris(), 53);
  const auto damped = damped_materials(m.n_tris(), 53);
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"}) {
    for (const auto* mat : {&undamped, &damped}) {
      const auto form = make(model, m, *mat);
      const bool expect_viscous = mat == &damped && std::string(model) != "linear-membrane";
      EXPECT_EQ(form->viscous(), expect_viscous) << model;
      std::vector<double> f(x.size(), 1.0), b(9 * form->block_pattern().size(), 1.0);
      form->viscous_force_and_damping(x, v, f, b);
      if (!expect_viscous) {
        EXPECT_EQ(max_abs(f), 0.0) << model;
        EXPECT_EQ(max_abs(b), 0.0) << model;
      } else {
        EXPECT_GT(max_abs(f), 0.0) << model;
      }
      // Damping never changes the elastic part.
      std::vector<double> fe(x.size()), fu(x.size());
      form->force(x, fe);
      make(model, m, undamped)->force(x, fu);
      EXPECT_EQ(fe, fu) << model;
    }
  }
  // One damped triangle among undamped ones: viscous() and f_v touch only its vertices.
  auto one = undamped;
  one[4].damping = 0.5;
  const auto form = make("trbs", m, one);
  EXPECT_TRUE(form->viscous());
  std::vector<double> f(x.size());
  form->viscous_force_and_damping(x, v, f, {});
  for (LocalIndex a = 0; a < m.n_vertices(); ++a) {
    const bool in4 = m.tris[12] == a || m.tris[13] == a || m.tris[14] == a;
    const double fa = std::abs(f[3 * a]) + std::abs(f[3 * a + 1]) + std::abs(f[3 * a + 2]);
    if (in4)
      EXPECT_GT(fa, 0.0);
    else
      EXPECT_EQ(fa, 0.0);
  }
}

TEST(MembraneDamping, DampingScalesLinearlyPerTriangle) {
  // f_v is linear in zeta: zeta on two halves of the triangles sums to zeta everywhere (mixing on shared edges).
  const TriMesh m = patch(4, 4, 0.3, 9);
  const auto x = deform(m, "stretched", 61);
  const auto v = random_vector(x.size(), 62);
  for (const char* model : {"trbs", "trqs", "springs"}) {
    auto all = damped_materials(m.n_tris(), 63), even = all, odd = all;
    for (std::size_t t = 0; t < m.n_tris(); ++t) (t % 2 ? even : odd)[t].damping = 0.0;
    std::vector<double> fa(x.size()), fe(x.size()), fo(x.size());
    const auto Da = dense_damping(*make(model, m, all), x, v, &fa);
    const auto De = dense_damping(*make(model, m, even), x, v, &fe);
    const auto Do = dense_damping(*make(model, m, odd), x, v, &fo);
    for (std::size_t i = 0; i < fe.size(); ++i) fe[i] += fo[i];
    std::vector<double> Ds(Da.size());
    for (std::size_t i = 0; i < Da.size(); ++i) Ds[i] = De[i] + Do[i];
    EXPECT_LT(testing::rel_max_diff(fe, fa), 1e-13) << model;
    EXPECT_LT(testing::rel_max_diff(Ds, Da), 1e-13) << model;
  }
}

TEST(MembraneDamping, ThreadCountDoesNotChangeResults) {
  const int saved = omp_get_max_threads();
  const TriMesh m = patch(40, 30, 0.3, 11);
  const auto mat = damped_materials(m.n_tris(), 71);
  const auto x = deform(m, "random", 72);
  const auto v = random_vector(x.size(), 73);
  for (const char* model : {"trbs", "trqs", "springs"}) {
    const auto form = make(model, m, mat);
    std::vector<double> f1(x.size()), f2(x.size()), b1(9 * form->block_pattern().size()), b2(b1.size());
    omp_set_num_threads(1);
    form->viscous_force_and_damping(x, v, f1, b1);
    for (int threads : {2, 3}) {
      omp_set_num_threads(threads);
      form->viscous_force_and_damping(x, v, f2, b2);
      EXPECT_EQ(f1, f2) << model << ", " << threads << " threads";
      EXPECT_EQ(b1, b2) << model << ", " << threads << " threads";
      form->viscous_force_and_damping(x, v, f2, {});
      EXPECT_EQ(f1, f2) << model << ", " << threads << " threads, no blocks";
    }
  }
  omp_set_num_threads(saved);
}

TEST(MembraneDamping, RejectsBadDampingAndSizes) {
  const TriMesh m = single_triangle("tri");
  const std::vector<std::int32_t> id0 = {0};
  for (const char* model : {"trbs", "trqs", "springs", "linear-membrane"})
    for (double z : {-1e-3, std::nan(""), std::numeric_limits<double>::infinity()}) {
      const std::vector<MembraneMaterial> bad = {{1.0, 0.3, 0.1, z}};
      try {
        (void)make_membrane(model, m.coords, m.tris, bad, id0);
        ADD_FAILURE() << model << ": damping " << z << " accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("damping"), std::string::npos) << e.what();
      }
    }
  TriangleSprings sp = trbs_springs(std::span<const double, 9>(m.coords.data(), 9), {1.0, 0.3, 0.1, 0.2});
  EXPECT_EQ(sp.damping, 0.2);
  sp.damping = -1.0;
  EXPECT_THROW(make_triangle_springs("x", SpringStrain::squared_length, m.coords, m.tris,
                                     std::span<const TriangleSprings>(&sp, 1)),
               std::invalid_argument);
  const auto form = make_membrane("trbs", m.coords, m.tris, std::vector<MembraneMaterial>{{1.0, 0.3, 0.1, 0.2}}, id0);
  std::vector<double> x = m.coords, v(9), f(9), b(9 * form->block_pattern().size());
  std::vector<double> short_v(6), short_b(9);
  EXPECT_THROW(form->viscous_force_and_damping(x, short_v, f, b), std::invalid_argument);
  EXPECT_THROW(form->viscous_force_and_damping(x, v, f, short_b), std::invalid_argument);
  EXPECT_NO_THROW(form->viscous_force_and_damping(x, v, f, b));
}

}  // namespace
}  // namespace edgefem
