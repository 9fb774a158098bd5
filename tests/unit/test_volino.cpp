// SPDX-License-Identifier: BSD-3-Clause
// Tests of Volino's weft/warp membrane (materials/volino.hpp): viscous force and damping; rigid motions; block
// pattern; 1 vs 2 vs 3 threads bitwise; the virtual tensile test at kernel level; input checks. The cost per
// triangle is a benchmark: bench/bench_membranes.cpp.
// Curves: test_volino_curve.cpp; laws and frame: test_volino_law.cpp; finite differences: test_volino_fd.cpp;
// isotropic = trbs and orthotropic symmetries: test_volino_equivalence.cpp; stabilisation:
// test_volino_stabilization.cpp.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include <unistd.h>

#include "materials/curve.hpp"
#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "materials/volino.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/volino_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;          // tests/support: meshes, finite differences
using namespace testing::volino;  // tests/support/volino_testing.hpp

// ---------------------------------------------------------------------------------------------------------
// 6. Viscosity, rigid motions, pattern, threads

TEST(VolinoViscous, DampingIsTheExactVelocityDerivative) {
  const TriMesh m = triangle_patch(4, 3, 0.3, 4);
  auto mat = random_volino("curves", m.n_tris(), 3);
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& mt : mat) {  // E' = L L^T, a random PSD matrix
    Eigen::Matrix3d L;
    for (int a = 0; a < 9; ++a) L(a / 3, a % 3) = u(rng);
    const Eigen::Matrix3d Ev = L * L.transpose();
    for (int a = 0; a < 9; ++a) mt.viscosity[a] = Ev(a / 3, a % 3);
  }
  const auto form = make(m, mat);
  EXPECT_TRUE(form->viscous());
  const auto x = deform_triangles(m, "random", 1);
  std::vector<double> v(x.size());
  for (double& c : v) c = u(rng);
  const std::size_t n = x.size();
  std::vector<double> f(n), blocks(9 * form->block_pattern().size());
  form->viscous_force_and_damping(x, v, f, blocks);
  std::vector<double> D(n * n, 0.0);
  const auto& pat = form->block_pattern();
  for (std::size_t b = 0; b < pat.size(); ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) D[(3 * pat[b][0] + r) * n + 3 * pat[b][1] + c] += blocks[9 * b + 3 * r + c];
  // f' is linear in v: f' = D v, and central differences in v are exact up to round-off.
  std::vector<double> Dv(n, 0.0), fp(n), fm(n), Dfd(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) Dv[i] += D[i * n + j] * v[j];
  EXPECT_LT(testing::rel_max_diff(Dv, f), 1e-13);
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> vp = v, vm = v;
    vp[j] += 1e-3, vm[j] -= 1e-3;
    form->viscous_force_and_damping(x, vp, fp, {});
    form->viscous_force_and_damping(x, vm, fm, {});
    for (std::size_t i = 0; i < n; ++i) Dfd[i * n + j] = (fp[i] - fm[i]) / 2e-3;
  }
  EXPECT_LT(testing::rel_max_diff(D, Dfd), 1e-11);
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(as_matrix(D, n)).eigenvalues();
  EXPECT_GE(ev.minCoeff(), -1e-12 * ev.maxCoeff()) << "damping PSD";
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(D[i * n + j], D[j * n + i]);
  // Rigid velocities (v = w x x + c) dissipate nothing.
  const Eigen::Vector3d w(0.3, -1.2, 0.7), c(1.0, 2.0, -0.5);
  for (LocalIndex a = 0; a < m.n_vertices(); ++a) {
    const Eigen::Vector3d r = w.cross(Eigen::Vector3d(x[3 * a], x[3 * a + 1], x[3 * a + 2])) + c;
    for (int k = 0; k < 3; ++k) v[3 * a + k] = r[k];
  }
  const double scale = max_abs(f);
  form->viscous_force_and_damping(x, v, f, {});
  EXPECT_LT(max_abs(f), 1e-13 * scale * 10);
  // No viscosity: zero force, and viscous() says so.
  const auto dry = make(m, random_volino("iso", m.n_tris(), 3));
  EXPECT_FALSE(dry->viscous());
  dry->viscous_force_and_damping(x, v, f, blocks);
  EXPECT_EQ(max_abs(f), 0.0);
  EXPECT_EQ(max_abs(blocks), 0.0);
}

TEST(VolinoRigid, RigidMotionsGiveZeroForce) {
  const TriMesh m = triangle_patch(5, 4, 0.25, 3);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(2.5, Eigen::Vector3d(0.3, 0.9, -0.2).normalized()).toRotationMatrix();
  const Eigen::Vector3d t(1.5, -2.0, 0.7);
  std::vector<double> x_rot(m.coords.size());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d b = R * Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]) + t;
    for (int c = 0; c < 3; ++c) x_rot[3 * v + c] = b[c];
  }
  for (const char* law : {"iso", "ortho", "curves"}) {
    const auto form = make(m, random_volino(law, m.n_tris(), 4));
    const auto x = deform_triangles(m, "stretched", 1);
    std::vector<double> f(x.size()), fr(x.size());
    form->force(x, f);
    form->force(x_rot, fr);
    EXPECT_LT(max_abs(fr), 1e-12 * max_abs(f)) << law;
    EXPECT_LT(std::abs(form->energy(x_rot)), 1e-12 * form->energy(x)) << law;
    // Rotating a deformed state rotates the forces and keeps the energy.
    std::vector<double> xr(x.size()), f2(x.size());
    for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
      const Eigen::Vector3d b = R * Eigen::Vector3d(x[3 * v], x[3 * v + 1], x[3 * v + 2]) + t;
      for (int c = 0; c < 3; ++c) xr[3 * v + c] = b[c];
    }
    form->force(xr, f2);
    double err = 0.0;
    for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
      const Eigen::Vector3d b = R * Eigen::Vector3d(f[3 * v], f[3 * v + 1], f[3 * v + 2]);
      for (int c = 0; c < 3; ++c) err = std::max(err, std::abs(b[c] - f2[3 * v + c]));
    }
    EXPECT_LT(err, 1e-12 * max_abs(f)) << law;
    EXPECT_NEAR(form->energy(xr), form->energy(x), 1e-12 * form->energy(x)) << law;
  }
}

TEST(VolinoPattern, SameAsTrbsAndUntouchedVerticesAreZero) {
  TriMesh m = triangle_patch(3, 2, 0.2, 4);
  m.coords.insert(m.coords.end(), {5.0, 5.0, 5.0});  // an untouched vertex
  const auto mat = random_volino("ortho", m.n_tris(), 1);
  const auto form = make(m, mat);
  std::vector<MembraneMaterial> mm(m.n_tris(), MembraneMaterial{1.0, 0.3, 0.1});
  EXPECT_EQ(form->block_pattern(),
            make_membrane("trbs", m.coords, m.tris, mm, testing::iota_ids(m.n_tris()))->block_pattern());
  EXPECT_EQ(form->n_vertices(), m.n_vertices());
  EXPECT_EQ(form->n_triangles(), m.n_tris());
  std::vector<double> f(m.coords.size(), 7.0), b(9 * form->block_pattern().size(), 7.0);
  form->force_and_stiffness(deform_triangles(m, "random", 2), f, b);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(f[3 * (m.n_vertices() - 1) + c], 0.0);
  EXPECT_GT(form->bytes(), 0u);
  // Energy additivity over triangles (the gathers see every triangle once).
  const auto x = deform_triangles(m, "stretched", 6);
  double sum = 0.0;
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    const std::vector<LocalIndex> one(m.tris.begin() + 3 * t, m.tris.begin() + 3 * t + 3);
    const std::vector<std::int32_t> id = {static_cast<std::int32_t>(t)};
    sum += make_volino(m.coords, one, mat, id)->energy(x);
  }
  EXPECT_NEAR(form->energy(x), sum, 1e-12 * sum);
}

TEST(VolinoOpenMp, ThreadCountDoesNotChangeResults) {
  const int saved = omp_get_max_threads();
  const TriMesh m = triangle_patch(60, 50, 0.3, 11);  // 6000 triangles: three energy chunks
  auto mat = random_volino("curves", m.n_tris(), 12);
  for (auto& mt : mat) mt.viscosity = {0.3, 0.1, 0.0, 0.1, 0.2, 0.0, 0.0, 0.0, 0.05};
  const auto x = deform_triangles(m, "random", 13);
  std::vector<double> vel = deform_triangles(m, "stretched", 14);
  for (auto stab : {VolinoStabilization::none, VolinoStabilization::eigen_clamp}) {
    const auto form = make(m, mat, stab);
    std::vector<double> f1(x.size()), f2(x.size()), b1(9 * form->block_pattern().size()), b2(b1.size());
    std::vector<double> g1(x.size()), g2(x.size()), d1(b1.size()), d2(b1.size());
    omp_set_num_threads(1);
    form->force_and_stiffness(x, f1, b1);
    form->viscous_force_and_damping(x, vel, g1, d1);
    const double w1 = form->energy(x);
    for (int threads : {2, 3}) {
      omp_set_num_threads(threads);
      form->force_and_stiffness(x, f2, b2);
      EXPECT_EQ(f1, f2) << threads;
      EXPECT_EQ(b1, b2) << threads;
      form->force(x, f2);
      EXPECT_EQ(f1, f2) << threads << " force()";
      EXPECT_EQ(w1, form->energy(x)) << threads;
      form->viscous_force_and_damping(x, vel, g2, d2);
      EXPECT_EQ(g1, g2) << threads;
      EXPECT_EQ(d1, d2) << threads;
    }
  }
  omp_set_num_threads(saved);
}

// ---------------------------------------------------------------------------------------------------------
// 7. Virtual tensile test at kernel level

TEST(VolinoTensile, StripStretchedAlongWarpReproducesTheCurve) {
  // A strip of width w = 0.05 (weft) and length L = 0.2 (warp) in a tilted plane of 3D, irregular mesh, warp given
  // as the sheet's x axis turned by 90 degrees. Homogeneous stretch lambda along the warp with the weft free:
  // with decoupled curves (sigma_weft(0) = sigma_shear(0) = 0) this state is in equilibrium, every vertex but the
  // clamped ends is force-free, and the end reaction is h w lambda sigma_warp(eps) (Volino eq. 16, P = F S),
  // eps = (lambda^2 - 1)/2. At the knot strains the stress must be the input data point. Same with the isotropic
  // linear law with nu = 0 (sigma = E eps).
  const double w = 0.05, L = 0.2, h = 0.7;
  const TriMesh flat = triangle_patch(3, 16, 0.3, 21, true, false, w, L);
  const Eigen::Vector3d a = Eigen::Vector3d(1.0, 0.2, -0.3).normalized();
  const Eigen::Vector3d b = (Eigen::Vector3d(0.1, 1.0, 0.4) - Eigen::Vector3d(0.1, 1.0, 0.4).dot(a) * a).normalized();
  const Eigen::Vector3d origin(0.3, -0.1, 0.2);
  TriMesh m = flat;
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
    const Eigen::Vector3d p = origin + flat.coords[3 * v] * a + flat.coords[3 * v + 1] * b;
    for (int c = 0; c < 3; ++c) m.coords[3 * v + c] = p[c];
  }
  VolinoMaterial mat;
  mat.thickness = h;
  mat.warp = {{a[0], a[1], a[2]}, M_PI / 2, {0, 0, 0}};
  const Eigen::Vector3d n = a.cross(b);
  mat.warp.up = {n[0], n[1], n[2]};
  const StressCurve warp = warp_curve();
  const double E = 150.0;
  for (const bool curves : {true, false}) {
    mat.law = curves ? VolinoLaw::curves(weft_curve(), warp, shear_curve()) : VolinoLaw::isotropic(E, 0.0);
    const std::vector<VolinoMaterial> table = {mat};
    const std::vector<std::int32_t> ids(m.n_tris(), 0);
    const auto form = make_volino(m.coords, m.tris, table, ids);
    for (std::size_t t = 0; t < m.n_tris(); ++t)
      for (int c = 0; c < 3; ++c) ASSERT_NEAR(form->reference(t).warp[c], b[c], 1e-14);
    std::vector<double> strains;
    for (std::size_t k = 1; k < warp.knot_strains().size(); ++k) strains.push_back(warp.knot_strains()[k]);
    strains.push_back(0.45);  // extrapolation
    strains.push_back(-0.1);  // compression (odd extension)
    double worst = 0.0;
    for (std::size_t s = 0; s < strains.size(); ++s) {
      const double eps = strains[s], lambda = std::sqrt(1.0 + 2.0 * eps);
      std::vector<double> x(m.coords.size());
      for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
        const Eigen::Vector3d p = origin + flat.coords[3 * v] * a + lambda * flat.coords[3 * v + 1] * b;
        for (int c = 0; c < 3; ++c) x[3 * v + c] = p[c];
      }
      std::vector<double> f(x.size());
      form->force(x, f);
      Eigen::Vector3d top = Eigen::Vector3d::Zero(), bottom = Eigen::Vector3d::Zero();
      double interior = 0.0;
      for (LocalIndex v = 0; v < m.n_vertices(); ++v) {
        const Eigen::Vector3d fv(f[3 * v], f[3 * v + 1], f[3 * v + 2]);
        const double y = flat.coords[3 * v + 1];
        if (y > L - 1e-12)
          top += fv;
        else if (y < 1e-12)
          bottom += fv;
        else
          interior = std::max(interior, fv.norm());
      }
      double expected_sigma;
      if (!curves)
        expected_sigma = E * eps;
      else if (s + 2 < strains.size())
        expected_sigma = warp.knot_stresses()[s + 1];  // the input data point itself
      else
        expected_sigma = warp.stress(eps);
      const double expected = h * w * lambda * expected_sigma;
      // f = +dW/dx is the internal force: at the top end it points along +b (the strip pulls back on the clamp
      // when it is stretched); the reaction the clamp must supply is its opposite.
      const double err = std::abs(top.dot(b) - expected) / std::abs(expected);
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-10) << (curves ? "curves" : "linear") << " eps " << eps;
      EXPECT_LT((top + bottom).norm(), 1e-12 * std::abs(expected));
      EXPECT_LT((top - top.dot(b) * b).norm(), 1e-12 * std::abs(expected)) << "reaction along the warp";
      EXPECT_LT(interior, 1e-12 * std::abs(expected)) << "interior and free sides in equilibrium";
    }
    std::printf("[ volino ] tensile strip (%s): max rel err of the end reaction vs the curve %.2e\n",
                curves ? "curves" : "linear nu = 0", worst);
  }
}

// ---------------------------------------------------------------------------------------------------------
// 8. Input checks

TEST(VolinoInput, RejectsBadInput) {
  const TriMesh m = single_triangle("tri");
  const std::vector<VolinoMaterial> ok(1);
  const std::vector<std::int32_t> id0 = {0}, id1 = {1}, none;
  EXPECT_NO_THROW(make_volino(m.coords, m.tris, ok, id0));
  auto msg = [&](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<double> flat = {0, 0, 0, 1, 1, 1, 2, 2, 2};
  EXPECT_NE(msg([&] { make_volino(flat, m.tris, ok, id0); }).find("zero reference area"), std::string::npos);
  EXPECT_NE(msg([&] { make_volino(m.coords, m.tris, ok, id1); }).find("material id 1"), std::string::npos);
  EXPECT_NE(msg([&] { make_volino(m.coords, m.tris, ok, none); }).find("material ids"), std::string::npos);
  const std::vector<LocalIndex> rep = {0, 1, 1}, out = {0, 1, 3}, two = {0, 1};
  EXPECT_NE(msg([&] { make_volino(m.coords, rep, ok, id0); }).find("repeats"), std::string::npos);
  EXPECT_NE(msg([&] { make_volino(m.coords, out, ok, id0); }).find("vertex id 3"), std::string::npos);
  EXPECT_THROW(make_volino(m.coords, two, ok, id0), std::invalid_argument);
  std::vector<VolinoMaterial> bad(1);
  bad[0].thickness = -1.0;
  EXPECT_NE(msg([&] { make_volino(m.coords, m.tris, bad, id0); }).find("material 0: Volino material: thickness"),
            std::string::npos);
  // Warp along the triangle's normal.
  bad[0].thickness = 1.0;
  const VolinoTriangle r = volino_reference(std::span<const double, 9>(m.coords.data(), 9), WarpDirection{});
  bad[0].warp.direction = r.normal;
  EXPECT_NE(msg([&] { make_volino(m.coords, m.tris, bad, id0); }).find("normal to the triangle"), std::string::npos);
  const auto form = make_volino(m.coords, m.tris, ok, id0);
  std::vector<double> x(6), f(6), x9(9), f9(9), blocks(3);
  EXPECT_THROW(form->force(x, f), std::invalid_argument);
  EXPECT_THROW(form->force_and_stiffness(x9, f9, blocks), std::invalid_argument);
  std::vector<double> s2(2);
  EXPECT_THROW(form->strain_stress(x9, s2, s2), std::invalid_argument);
}

}  // namespace
}  // namespace edgefem
