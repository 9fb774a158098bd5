// SPDX-License-Identifier: BSD-3-Clause
// Tests of the small-strain linear formulation (materials/linear.cpp): its constant stiffness is the StVK tangent
// at rest (edge/TSEP and TL), f = K0 (x - X) and W = u^T K0 u / 2 exactly, translations give no force, and it
// agrees with StVK to first order in the displacement.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

#include "materials/formulation.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

using testing::TetMesh;

class Linear : public ::testing::TestWithParam<std::tuple<VolumetricPenalty, bool>> {
 protected:
  void SetUp() override {
    const auto [penalty, aniso] = GetParam();
    mesh = testing::kuhn_box(3, 2, 2, 0.5, 0.12, 4);
    table = testing::random_materials(mesh.n_tets(), penalty, aniso, 31);
    ids = testing::iota_ids(table.size());
  }
  std::vector<double> random_x(double amplitude, unsigned seed) const {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(mesh.coords);
    for (double& v : x) v += amplitude * u(rng);
    return x;
  }
  TetMesh mesh;
  std::vector<TetMaterial> table;
  std::vector<std::int32_t> ids;
};

TEST_P(Linear, StiffnessIsTheStvkTangentAtRestEverywhere) {
  const auto lin = testing::make_formulation("linear", mesh, table, ids);
  EXPECT_EQ(lin->name(), "linear");
  const auto K_stvk = testing::dense_stiffness(*testing::make_formulation("stvk", mesh, table, ids), mesh.coords);
  const auto K_tl = testing::dense_stiffness(*testing::make_formulation("stvk-tl", mesh, table, ids), mesh.coords);
  for (unsigned seed : {0u, 1u, 2u}) {  // constant: the same at rest and at large random displacements
    const auto x = seed == 0 ? mesh.coords : random_x(0.3, seed);
    const auto K = testing::dense_stiffness(*lin, x);
    // (stvk's K(E) TSEP terms in single precision, issue 56: float's rounding)
    EXPECT_LT(testing::rel_max_diff(K, K_stvk), 2e-7) << "vs stvk, seed " << seed;
    EXPECT_LT(testing::rel_max_diff(K, K_tl), 1e-12) << "vs stvk-tl, seed " << seed;
  }
}

TEST_P(Linear, ForceIsK0TimesDisplacementAndEnergyIsQuadratic) {
  const auto lin = testing::make_formulation("linear", mesh, table, ids);
  const auto x = random_x(0.3, 7);
  std::vector<double> f, f_only(x.size());
  const auto K0 = testing::dense_stiffness(*lin, x, &f);
  lin->force(x, f_only);
  const std::size_t n = x.size();
  std::vector<double> Ku(n, 0.0);
  double uKu = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) Ku[i] += K0[i * n + j] * (x[j] - mesh.coords[j]);
    uKu += (x[i] - mesh.coords[i]) * Ku[i];
  }
  EXPECT_LT(testing::rel_max_diff(f, Ku), 1e-13);
  EXPECT_EQ(f, f_only);
  EXPECT_NEAR(lin->energy(x), 0.5 * uKu, 1e-13 * std::abs(uKu));
  // At rest: exactly zero.
  std::vector<double> f0(n);
  lin->force(mesh.coords, f0);
  for (double v : f0) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(lin->energy(mesh.coords), 0.0);
}

TEST_P(Linear, TranslationGivesNoForce) {
  const auto lin = testing::make_formulation("linear", mesh, table, ids);
  std::vector<double> x(mesh.coords), f(x.size()), f_ref(x.size());
  lin->force(random_x(0.3, 9), f_ref);
  double scale = 0.0;
  for (double v : f_ref) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += (i % 3 == 0 ? 2.0 : i % 3 == 1 ? -1.0 : 0.5);
  lin->force(x, f);
  for (double v : f) EXPECT_LT(std::abs(v), 1e-12 * scale * 10);
}

TEST_P(Linear, AgreesWithStvkToFirstOrder) {
  // f_stvk(X + eps u) = eps K0 u + O(eps^2): the relative gap shrinks linearly with eps.
  const auto lin = testing::make_formulation("linear", mesh, table, ids);
  const auto stvk = testing::make_formulation("stvk", mesh, table, ids);
  const auto dir = random_x(1.0, 11);
  double prev = 0.0;
  for (double eps : {1e-3, 1e-4}) {
    std::vector<double> x(mesh.coords), fl(x.size()), fs(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += eps * (dir[i] - mesh.coords[i]);
    lin->force(x, fl);
    stvk->force(x, fs);
    const double gap = testing::rel_max_diff(fs, fl);
    EXPECT_LT(gap, 50 * eps) << eps;
    if (prev > 0) {
      EXPECT_LT(gap, 0.2 * prev) << "first order";
    }
    prev = gap;
  }
}

INSTANTIATE_TEST_SUITE_P(Materials, Linear,
                         ::testing::Combine(::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           const auto p = std::get<0>(info.param);
                           return std::string(p == VolumetricPenalty::none    ? "none"
                                              : p == VolumetricPenalty::cubic ? "cubic"
                                                                              : "quadratic") +
                                  (std::get<1>(info.param) ? "_aniso" : "_iso");
                         });

}  // namespace
}  // namespace edgefem
