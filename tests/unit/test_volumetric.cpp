// SPDX-License-Identifier: BSD-3-Clause
// Tests of the volumetric penalties (cubic, Kikuuwe §4, and quadratic) in the edge/TSEP and TL formulations and
// in tet_strain_stress: exact energies and stresses under uniform scaling, the cubic one inactive in tension
// (bitwise identical to no penalty), the quadratic one active for every J.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

using testing::TetMesh;

/// Sum over tets of V0 and of V0 * sum_{i,j<3} D_ij / 2 (the StVK energy per e^2 under x = s X).
std::pair<double, double> volume_and_normal_stiffness(const TetMesh& m, const std::vector<TetMaterial>& mat,
                                                      const std::vector<std::int32_t>& ids) {
  double vol = 0.0, stiff = 0.0;
  for (LocalIndex t = 0; t < m.n_tets(); ++t) {
    double X[12];
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tets[4 * t + i] + c];
    const double v0 = tetgeo::reference_tet(X, t).v0;
    double sum = 0.0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) sum += mat[ids[t]].D[6 * i + j];
    vol += v0;
    stiff += 0.5 * v0 * sum;
  }
  return {vol, stiff};
}

TEST(Volumetric, UniformScalingGivesExactEnergies) {
  // x = s X: J = s^3, e = (s^2 - 1)/2. W = stiff e^2 + V0 k psi(s^3 - 1), one material for all tets.
  const TetMesh m = testing::kuhn_box(2, 2, 2, 0.5, 0.1, 3);
  const std::vector<std::int32_t> ids(m.n_tets(), 0);
  for (bool aniso : {false, true})
    for (VolumetricPenalty pen : {VolumetricPenalty::none, VolumetricPenalty::cubic, VolumetricPenalty::quadratic}) {
      const std::vector<TetMaterial> table = {
          aniso ? TetMaterial::transversely_isotropic({1, 2, 3}, 8.0, 2.0, 1.1, 0.3, 0.35, pen)
                : TetMaterial::isotropic_material(3.0, 0.35, pen)};
      const auto [vol, stiff] = volume_and_normal_stiffness(m, table, ids);
      for (double s : {0.7, 0.95, 1.0, 1.25}) {
        std::vector<double> x(m.coords);
        for (double& v : x) v *= s;
        const double e = (s * s - 1) / 2, th = s * s * s - 1;
        double psi = 0.0;
        if (pen == VolumetricPenalty::cubic && th < 0) psi = -th * th * th / 3;
        if (pen == VolumetricPenalty::quadratic) psi = th * th / 2;
        const double expected = stiff * e * e + vol * table[0].k_vol * psi;
        for (const char* name : {"stvk", "stvk-tl"}) {
          const double w = testing::make_formulation(name, m, table, ids)->energy(x);
          EXPECT_NEAR(w, expected, 1e-12 * std::max(expected, 1e-2 * stiff)) << name << " s=" << s;  // s = 1: W = 0
        }
      }
    }
}

TEST(Volumetric, CubicIsInactiveInTensionQuadraticIsNot) {
  const TetMesh m = testing::kuhn_box(2, 2, 2, 0.5, 0.1, 3);
  const auto ids = testing::iota_ids(m.n_tets());
  std::vector<double> x(m.coords);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] *= 1.0 + 0.1 * (i % 3) + 0.05;  // J > 1 everywhere
  const auto none = testing::random_materials(m.n_tets(), VolumetricPenalty::none, true, 5);
  const auto cubic = testing::random_materials(m.n_tets(), VolumetricPenalty::cubic, true, 5);
  const auto quad = testing::random_materials(m.n_tets(), VolumetricPenalty::quadratic, true, 5);
  for (const char* name : {"stvk", "stvk-nsn", "stvk-tl"}) {
    const auto a = testing::make_formulation(name, m, none, ids), b = testing::make_formulation(name, m, cubic, ids),
               c = testing::make_formulation(name, m, quad, ids);
    std::vector<double> fa, fb, fc;
    const auto Ka = testing::dense_stiffness(*a, x, &fa), Kb = testing::dense_stiffness(*b, x, &fb),
               Kc = testing::dense_stiffness(*c, x, &fc);
    EXPECT_EQ(a->energy(x), b->energy(x)) << name;
    EXPECT_EQ(fa, fb) << name;
    EXPECT_EQ(Ka, Kb) << name;
    EXPECT_GT(c->energy(x), a->energy(x) * (1 + 1e-3)) << name;
    EXPECT_GT(testing::rel_max_diff(fc, fa), 1e-3) << name;
    EXPECT_GT(testing::rel_max_diff(Kc, Ka), 1e-3) << name;
  }
}

TEST(Volumetric, StrainStressOfUniformScaling) {
  // S_vol = k psi'(J - 1) J C^-1 = k psi'(s^3 - 1) s I for x = s X.
  const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (VolumetricPenalty pen : {VolumetricPenalty::cubic, VolumetricPenalty::quadratic})
    for (double s : {0.8, 1.2}) {
      const auto mat = TetMaterial::isotropic_material(3.0, 0.3, pen);
      const auto plain = TetMaterial::isotropic_material(3.0, 0.3, VolumetricPenalty::none);
      double x[12];
      for (int q = 0; q < 12; ++q) x[q] = s * X[q];
      std::array<double, 9> E, S, E0, S0;
      tet_strain_stress(X, x, mat, E, S);
      tet_strain_stress(X, x, plain, E0, S0);
      const double th = s * s * s - 1;
      const double d1 = pen == VolumetricPenalty::quadratic ? th : (th < 0 ? -th * th : 0.0);
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          EXPECT_NEAR(S[3 * a + b] - S0[3 * a + b], a == b ? mat.k_vol * d1 * s : 0.0, 1e-14 * 10) << s;
    }
}

}  // namespace
}  // namespace edgefem
