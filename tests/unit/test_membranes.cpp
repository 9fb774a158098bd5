// SPDX-License-Identifier: BSD-3-Clause
// Tests of Delingette's membranes (materials/membrane.hpp, materials/trbs.cpp): "trbs", "trqs", "springs",
// "linear-membrane" on triangles in 3D: rigid motions; the common tangent at rest (= Delingette's linear stiffness
// B^L); springs = trqs without angular springs; TRQS -> TRBS for small strains; energy additivity over triangles;
// the block pattern; thread-count independence (bitwise); input checks. The cost per triangle is a benchmark:
// bench/bench_membranes.cpp.
// Finite differences: test_membrane_fd.cpp; trbs = StVK: test_membrane_trbs.cpp; damping: test_membrane_damping.cpp.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
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
// 3. Rigid motions, tangent at rest, springs vs trqs, small strains, additivity.

TEST(MembraneRigid, RigidMotionsGiveZeroForce) {
  const TriMesh m = triangle_patch(5, 4, 0.25, 3);
  const auto mat = random_materials(m.n_tris(), 4);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(2.5, Eigen::Vector3d(0.3, 0.9, -0.2).normalized()).toRotationMatrix();
  const Eigen::Vector3d t(1.5, -2.0, 0.7);
  std::vector<double> x_tr(m.coords.size()), x_rot(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d X(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    const Eigen::Vector3d a = X + t, b = R * X + t;
    for (int c = 0; c < 3; ++c) x_tr[3 * v + c] = a[c], x_rot[3 * v + c] = b[c];
  }
  const auto x_str = deform_triangles(m, "stretched", 1);  // force and energy scales
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
  const TriMesh m = triangle_patch(4, 4, 0.3, 8);
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
  const TriMesh m = triangle_patch(5, 5, 0.3, 2);
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
    const auto x = deform_triangles(m, def, 4);
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
  const auto x = deform_triangles(reg, "random", 8);
  std::vector<double> fa, fb;
  const auto Ka = testing::dense_stiffness(*make("springs", reg, third), x, &fa);
  const auto Kb = testing::dense_stiffness(*make("trqs", reg, third), x, &fb);
  EXPECT_LT(testing::rel_max_diff(fa, fb), 1e-14);
  EXPECT_LT(testing::rel_max_diff(Ka, Kb), 1e-14);
}

TEST(MembraneTrqs, ApproachesTrbsForSmallStrains) {
  // Delingette §IV-B: TRQS is TRBS with D2 l ~ 2 L dl, so W_trqs / W_trbs - 1 = O(strain).
  const TriMesh m = triangle_patch(4, 4, 0.3, 5);
  const auto mat = random_materials(m.n_tris(), 7);
  const auto trbs = make("trbs", m, mat), trqs = make("trqs", m, mat);
  const auto dir = deform_triangles(m, "random", 3);
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
  const TriMesh m = triangle_patch(3, 3, 0.3, 9);
  const auto mat = random_materials(m.n_tris(), 8);
  const auto x = deform_triangles(m, "stretched", 6);
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
  TriMesh m = triangle_patch(3, 2, 0.2, 4);
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
    form->force(deform_triangles(m, "random", 2), f);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(f[3 * nt + c], 0.0) << "untouched vertex";
    EXPECT_GT(form->bytes(), 0u);
  }
}

TEST(MembraneOpenMp, ThreadCountDoesNotChangeResults) {
  const int saved = omp_get_max_threads();
  const TriMesh m = triangle_patch(40, 30, 0.3, 11);  // 2400 triangles, > 2048 edges (two energy chunks)
  const auto mat = random_materials(m.n_tris(), 12);
  const auto x = deform_triangles(m, "random", 13);
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

}  // namespace
}  // namespace edgefem
