// SPDX-License-Identifier: BSD-3-Clause
// Delingette's damping of the membranes (§V-C; materials/trbs.cpp): f + f_v = the springs at the damped
// elongations (per-triangle zeta), f_v = D v, D = df_v/dv = c zeta (K - K_geometric), symmetric PSD, zero on rigid
// velocities, linear in zeta, thread-count independent; bad damping and sizes rejected.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/membrane_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;            // tests/support: meshes, finite differences
using namespace testing::membrane;  // tests/support/membrane_testing.hpp

// ---------------------------------------------------------------------------------------------------------
// 6. Delingette's damping (§V-C): damped elongations, f_v = G^T A_v G v and D = df_v/dv.

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
        const TriMesh m = triangle_mesh_by_name(mesh_name);
        const auto mat = damped_materials(m.n_tris(), 21);
        const auto form = make(model, m, mat);
        ASSERT_TRUE(form->viscous()) << model;
        const auto x = deform_triangles(m, def, 22);
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
  const TriMesh m = triangle_patch(4, 3, 0.25, 7);
  for (const char* model : {"trbs", "trqs", "springs"}) {
    const auto x = deform_triangles(m, "random", 31);
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
  const TriMesh m = triangle_patch(5, 4, 0.25, 3);
  const auto mat = damped_materials(m.n_tris(), 41);
  const Eigen::Vector3d t(0.7, -1.3, 0.4), w(0.5, 1.1, -0.8);
  for (const char* def : {"stretched", "rotated", "random"}) {
    const auto x = deform_triangles(m, def, 42);
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
  const TriMesh m = triangle_patch(3, 3, 0.2, 5);
  const auto x = deform_triangles(m, "random", 51);
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
  const TriMesh m = triangle_patch(4, 4, 0.3, 9);
  const auto x = deform_triangles(m, "stretched", 61);
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
  const TriMesh m = triangle_patch(40, 30, 0.3, 11);
  const auto mat = damped_materials(m.n_tris(), 71);
  const auto x = deform_triangles(m, "random", 72);
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
