// SPDX-License-Identifier: BSD-3-Clause
// The per-triangle plane-stress StVK energy and gradient of the position-based solver (materials/membrane_energy.hpp)
// against Delingette's trbs formulation (membrane.hpp), which is the same energy: triangle by triangle and summed over
// a sheet, stretched, sheared and folded out of its plane; the gradient against central differences; zero energy
// and force under a rigid motion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "materials/membrane.hpp"
#include "materials/membrane_energy.hpp"
#include "mesh/box.hpp"

namespace edgefem {
namespace {

struct EnergySheet {
  std::vector<double> X, x;
  std::vector<LocalIndex> tris;
  std::vector<MembraneMaterial> materials;
  std::vector<std::int32_t> material_of;
};

/// A 5 x 3 sheet (30 triangles) tilted out of the xy plane, deformed by a random affine map, folded and jittered;
/// two materials.
EnergySheet make_sheet(unsigned seed) {
  const Mesh m = generate_sheet({2.0, 1.2}, {5, 3});
  EnergySheet s;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t nv = m.coords.size() / 3;
  s.X.resize(3 * nv);
  for (std::size_t v = 0; v < nv; ++v) {  // rest: the sheet tilted about x by 0.4 rad
    const double px = m.coords[3 * v], py = m.coords[3 * v + 1];
    s.X[3 * v] = px, s.X[3 * v + 1] = py * std::cos(0.4), s.X[3 * v + 2] = py * std::sin(0.4);
  }
  double A[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) A[r][c] = (r == c ? 1.1 : 0.0) + 0.2 * u(rng);
  s.x.resize(s.X.size());
  for (std::size_t v = 0; v < nv; ++v) {
    for (int r = 0; r < 3; ++r)
      s.x[3 * v + r] = A[r][0] * s.X[3 * v] + A[r][1] * s.X[3 * v + 1] + A[r][2] * s.X[3 * v + 2] + 0.05 * u(rng);
    s.x[3 * v + 2] += 0.3 * std::sin(2.0 * s.X[3 * v]);  // a fold
  }
  s.tris.assign(m.triangles.begin(), m.triangles.end());
  s.materials = {{3.0, 0.3, 0.1, 0.0}, {5.0, 0.45, 0.02, 0.0}};
  for (std::size_t t = 0; t < s.tris.size() / 3; ++t) s.material_of.push_back(static_cast<std::int32_t>(t % 2));
  return s;
}

void gather(const EnergySheet& s, std::size_t t, const std::vector<double>& pos, double* out) {
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) out[3 * a + c] = pos[3 * s.tris[3 * t + a] + c];
}

TEST(MembraneEnergy, EqualsTrbsTriangleByTriangleAndSummed) {
  const EnergySheet s = make_sheet(3);
  const std::size_t nt = s.tris.size() / 3;
  const auto trbs = make_membrane("trbs", s.X, s.tris, s.materials, s.material_of);
  std::vector<double> f(s.x.size()), g_sum(s.x.size(), 0.0);
  trbs->force(s.x, f);
  const double w = trbs->energy(s.x);
  double w_sum = 0.0, f_scale = 0.0;
  for (double v : f) f_scale = std::max(f_scale, std::abs(v));
  for (std::size_t t = 0; t < nt; ++t) {
    double X[9], xe[9], g[9];
    gather(s, t, s.X, X);
    gather(s, t, s.x, xe);
    const MembraneMaterial& mat = s.materials[static_cast<std::size_t>(s.material_of[t])];
    const double e = trbs_element_energy_gradient(tri_rest(X, static_cast<std::int64_t>(t)), xe, mat, g);
    const std::vector<double> one_X(X, X + 9), one_x(xe, xe + 9);
    const std::vector<LocalIndex> one_tri = {0, 1, 2};
    const std::vector<MembraneMaterial> one_mat = {mat};
    const std::vector<std::int32_t> one_id = {0};
    const auto alone = make_membrane("trbs", one_X, one_tri, one_mat, one_id);
    std::vector<double> fe(9);
    alone->force(one_x, fe);
    const double we = alone->energy(one_x);
    EXPECT_NEAR(e, we, 1e-12 * std::abs(we)) << "triangle " << t;
    double fe_scale = 0.0;
    for (double v : fe) fe_scale = std::max(fe_scale, std::abs(v));
    for (int i = 0; i < 9; ++i) EXPECT_NEAR(g[i], fe[i], 1e-11 * fe_scale) << "triangle " << t << " dof " << i;
    w_sum += e;
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 3; ++c) g_sum[3 * s.tris[3 * t + a] + c] += g[3 * a + c];
  }
  EXPECT_GT(w, 1e-3);
  EXPECT_NEAR(w_sum, w, 1e-12 * w);
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(g_sum[i], f[i], 1e-11 * f_scale) << "dof " << i;
}

TEST(MembraneEnergy, GradientMatchesCentralDifferences) {
  const EnergySheet s = make_sheet(7);
  for (std::size_t t : {0u, 7u, 19u}) {
    double X[9], xe[9], g[9], scratch[9];
    gather(s, t, s.X, X);
    gather(s, t, s.x, xe);
    const MembraneMaterial& mat = s.materials[static_cast<std::size_t>(s.material_of[t])];
    const TriRest rest = tri_rest(X, static_cast<std::int64_t>(t));
    trbs_element_energy_gradient(rest, xe, mat, g);
    double g_scale = 0.0;
    for (double v : g) g_scale = std::max(g_scale, std::abs(v));
    const double h = 1e-6;
    for (int i = 0; i < 9; ++i) {
      double xp[9], xm[9];
      std::copy(xe, xe + 9, xp);
      std::copy(xe, xe + 9, xm);
      xp[i] += h, xm[i] -= h;
      const double fd = (trbs_element_energy_gradient(rest, xp, mat, scratch) -
                         trbs_element_energy_gradient(rest, xm, mat, scratch)) / (2.0 * h);
      EXPECT_NEAR(g[i], fd, 1e-7 * g_scale) << "triangle " << t << " dof " << i;
    }
  }
}

TEST(MembraneEnergy, RigidMotionHasNoEnergyOrForce) {
  const EnergySheet s = make_sheet(11);
  const double c = std::cos(0.7), sn = std::sin(0.7);
  for (std::size_t t = 0; t < s.tris.size() / 3; ++t) {
    double X[9], xe[9], g[9];
    gather(s, t, s.X, X);
    for (int a = 0; a < 3; ++a) {  // rotation about z by 0.7 rad, then a translation
      const double* p = X + 3 * a;
      xe[3 * a] = c * p[0] - sn * p[1] + 0.3, xe[3 * a + 1] = sn * p[0] + c * p[1] - 1.0, xe[3 * a + 2] = p[2] + 2.0;
    }
    const MembraneMaterial& mat = s.materials[static_cast<std::size_t>(s.material_of[t])];
    const double e = trbs_element_energy_gradient(tri_rest(X, static_cast<std::int64_t>(t)), xe, mat, g);
    EXPECT_LT(std::abs(e), 1e-28) << "triangle " << t;
    for (double v : g) EXPECT_LT(std::abs(v), 1e-14) << "triangle " << t;
  }
}

TEST(MembraneEnergy, DegenerateTriangleIsNamed) {
  const double X[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
  try {
    (void)tri_rest(X, 42);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("triangle 42 is degenerate"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace edgefem
