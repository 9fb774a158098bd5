// SPDX-License-Identifier: BSD-3-Clause
// Equivalences of Volino's membrane (materials/volino.hpp): the isotropic law = trbs (energy, f, K) and = a long
// double plane-stress StVK (tests/support/membrane_testing.hpp); orthotropic with equal moduli = isotropic;
// orthotropic turned by 90 degrees with swapped moduli = the same material.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
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
#include "tests/support/membrane_testing.hpp"
#include "tests/support/volino_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;          // tests/support: meshes, finite differences
using namespace testing::volino;  // tests/support/volino_testing.hpp
using testing::membrane::stvk_mesh;

// ---------------------------------------------------------------------------------------------------------
// 4. Equivalences

TEST(VolinoTrbs, IsotropicLawEqualsTrbs) {
  // Energy, f, K against trbs (edge form) to 1e-10, and the energy against a long double F-based StVK to 1e-12
  // (the trbs edge form itself loses up to ~4e-17 kappa, kappa ~ 1e6 on the stretched sliver: test_membranes.cpp).
  double worst_w = 0.0, worst_f = 0.0, worst_k = 0.0, worst_ld = 0.0, worst_ld_trbs = 0.0;
  for (const std::string mesh_name : {"tri", "obtuse", "sliver", "patch"})
    for (const std::string def : {"random", "stretched", "compressed", "rotated", "collapsed"}) {
      const TriMesh m = triangle_mesh_by_name(mesh_name);
      std::mt19937 rng(31);
      std::uniform_real_distribution<double> E(1.0, 5.0), nu(-0.3, 0.9), h(0.01, 0.2);
      std::vector<MembraneMaterial> mm(m.n_tris());
      std::vector<VolinoMaterial> vm(m.n_tris());
      for (std::size_t t = 0; t < m.n_tris(); ++t) {
        mm[t] = {E(rng), nu(rng), h(rng)};
        vm[t].thickness = mm[t].thickness;
        vm[t].law = VolinoLaw::isotropic(mm[t].young, mm[t].poisson);
        vm[t].warp = random_warp(rng);  // isotropic: the frame must not matter
      }
      const auto trbs = make_membrane("trbs", m.coords, m.tris, mm, testing::iota_ids(m.n_tris()));
      const auto vol = make(m, vm);
      ASSERT_EQ(trbs->block_pattern(), vol->block_pattern());
      const auto x = deform_triangles(m, def, 9);
      std::vector<double> f_t, f_v;
      const auto K_t = testing::dense_stiffness(*trbs, x, &f_t);
      const auto K_v = testing::dense_stiffness(*vol, x, &f_v);
      const double W_t = trbs->energy(x), W_v = vol->energy(x);
      const double ew = std::abs(W_v - W_t) / W_t, ef = testing::rel_max_diff(f_v, f_t),
                   ek = testing::rel_max_diff(K_v, K_t);
      EXPECT_LT(ew, 1e-10) << mesh_name << " " << def;
      const long double W_ld = stvk_mesh<long double>(m, mm, x, nullptr, nullptr);
      const double eld = static_cast<double>(std::abs(W_v - W_ld) / W_ld);
      EXPECT_LT(eld, 1e-12) << mesh_name << " " << def;
      worst_ld = std::max(worst_ld, eld);
      worst_ld_trbs = std::max(worst_ld_trbs, static_cast<double>(std::abs(W_t - W_ld) / W_ld));
      EXPECT_LT(ef, 1e-10) << mesh_name << " " << def;
      EXPECT_LT(ek, 1e-10) << mesh_name << " " << def;
      worst_w = std::max(worst_w, ew), worst_f = std::max(worst_f, ef), worst_k = std::max(worst_k, ek);
    }
  std::printf(
      "[ volino ] isotropic Volino vs trbs: max rel diff W %.2e, f %.2e, K %.2e; W vs long double StVK: "
      "volino %.2e, trbs %.2e\n",
      worst_w, worst_f, worst_k, worst_ld, worst_ld_trbs);
}

TEST(VolinoOrthotropic, EqualModuliEqualIsotropicAndTurningSwapsAxes) {
  const TriMesh m = triangle_patch(5, 4, 0.3, 12);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> E(1.0, 5.0), nu(-0.3, 0.9), h(0.01, 0.2);
  std::vector<VolinoMaterial> iso(m.n_tris()), ort(m.n_tris());
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    const double e = E(rng), n = nu(rng);
    iso[t].thickness = ort[t].thickness = h(rng);
    iso[t].warp = ort[t].warp = random_warp(rng);
    iso[t].law = VolinoLaw::isotropic(e, n);
    ort[t].law = VolinoLaw::orthotropic(e, e, e / (2 * (1 + n)), n);
  }
  const auto x = deform_triangles(m, "random", 3);
  std::vector<double> fi, fo;
  const auto Ki = testing::dense_stiffness(*make(m, iso), x, &fi);
  const auto Ko = testing::dense_stiffness(*make(m, ort), x, &fo);
  EXPECT_NEAR(make(m, ort)->energy(x), make(m, iso)->energy(x), 1e-13 * make(m, iso)->energy(x));
  EXPECT_LT(testing::rel_max_diff(fo, fi), 1e-13);
  EXPECT_LT(testing::rel_max_diff(Ko, Ki), 1e-13);
  // Orthotropic (E1, E2, G, nu12) with warp turned by 90 degrees = (E2, E1, G, nu21 = nu12 E2/E1) unturned:
  // the weft becomes the old warp.
  std::vector<VolinoMaterial> a(m.n_tris()), b(m.n_tris());
  for (std::size_t t = 0; t < m.n_tris(); ++t) {
    a[t].thickness = b[t].thickness = 0.1;
    a[t].law = VolinoLaw::orthotropic(4.0, 1.0, 0.3, 0.4);
    b[t].law = VolinoLaw::orthotropic(1.0, 4.0, 0.3, 0.1);
    a[t].warp = {{0.3, 0.8, 0.1}, 0.0, {0.2, 0.1, 1.0}};
    b[t].warp = a[t].warp;
    b[t].warp.angle = M_PI / 2;
  }
  std::vector<double> fa, fb;
  const auto Ka = testing::dense_stiffness(*make(m, a), x, &fa);
  const auto Kb = testing::dense_stiffness(*make(m, b), x, &fb);
  EXPECT_LT(testing::rel_max_diff(fb, fa), 1e-12);
  EXPECT_LT(testing::rel_max_diff(Kb, Ka), 1e-12);
  // ... and the anisotropy matters: not turning gives a different answer.
  for (auto& mt : b) mt.warp.angle = 0.0;
  std::vector<double> fc;
  testing::dense_stiffness(*make(m, b), x, &fc);
  EXPECT_GT(testing::rel_max_diff(fc, fa), 1e-2);
}

}  // namespace
}  // namespace edgefem
