// SPDX-License-Identifier: BSD-3-Clause
// Tests of the position-based integrator's material route and colouring: the per-element energy and gradient
// (ModelInfo::element_energy) equal the Newton formulations' energy() and force() to round-off, element by element
// and summed (isotropic and transversely isotropic, every volumetric penalty, compressed and stretched); the
// global greedy colouring never gives two cells sharing a vertex the same colour and does not depend on anything
// but the cell list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "materials/element_energy.hpp"
#include "materials/registry.hpp"
#include "partition/coloring.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

using testing::iota_ids;
using testing::kuhn_box;
using testing::make_formulation;
using testing::random_materials;

std::vector<double> deformed(const testing::TetMesh& m, double scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double A[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) A[r][c] = scale * ((r == c) + 0.25 * u(rng));
  std::vector<double> x(m.coords.size());
  for (std::size_t v = 0; v < m.coords.size() / 3; ++v)
    for (int r = 0; r < 3; ++r)
      x[3 * v + r] = A[r][0] * m.coords[3 * v] + A[r][1] * m.coords[3 * v + 1] + A[r][2] * m.coords[3 * v + 2] +
                     0.05 * u(rng);
  return x;
}

struct RouteCase {
  VolumetricPenalty penalty;
  bool anisotropic;
  double scale;  // < 1: compressed (cubic penalty active)
};

class ElementEnergyRoute : public ::testing::TestWithParam<RouteCase> {};

// For StVK on tets the edge/TSEP energy (Kikuuwe) of one tet is exactly V0 Psi(F): element by element, the
// per-element route equals the formulation evaluated on that tet alone, and the sums over a mesh agree.
TEST_P(ElementEnergyRoute, EqualsTheFormulationsEnergyAndForce) {
  const RouteCase p = GetParam();
  const testing::TetMesh m = kuhn_box(3, 2, 2, 0.5, 0.15, 3);
  const auto table = random_materials(m.n_tets(), p.penalty, p.anisotropic, 11);
  const auto ids = iota_ids(table.size());
  const std::vector<double> x = deformed(m, p.scale, 5);
  for (const char* name : {"stvk", "stvk-tl", "neo-hookean"}) {
    if (p.anisotropic && std::string_view(name) == "neo-hookean") continue;  // (isotropic only)
    const ModelInfo& info = model_named(name);
    ASSERT_NE(info.element_energy, nullptr) << name;
    const auto formulation = make_formulation(name, m, table, ids);
    std::vector<double> f(x.size()), f_sum(x.size(), 0.0);
    formulation->force(x, f);
    const double w = formulation->energy(x);
    double w_sum = 0.0, f_scale = 0.0;
    for (double fi : f) f_scale = std::max(f_scale, std::abs(fi));
    for (LocalIndex t = 0; t < m.n_tets(); ++t) {
      double X[12], xe[12], g[12];
      for (int a = 0; a < 4; ++a)
        for (int k = 0; k < 3; ++k) {
          X[3 * a + k] = m.coords[3 * m.tets[4 * t + a] + k];
          xe[3 * a + k] = x[3 * m.tets[4 * t + a] + k];
        }
      const TetRest rest = tet_rest(X, t);
      const double e = info.element_energy(rest, xe, table[t], g);
      // The same tet alone through the formulation.
      testing::TetMesh one;
      one.coords.assign(X, X + 12);
      one.tets = {0, 1, 2, 3};
      const std::vector<TetMaterial> single = {table[t]};
      const auto alone = make_formulation(name, one, single);
      std::vector<double> xv(xe, xe + 12), fe(12);
      alone->force(xv, fe);
      const double we = alone->energy(xv);
      EXPECT_NEAR(e, we, 1e-12 * std::abs(we) + 1e-300) << name << " tet " << t;
      double fe_scale = 0.0;
      for (double v : fe) fe_scale = std::max(fe_scale, std::abs(v));
      for (int i = 0; i < 12; ++i) EXPECT_NEAR(g[i], fe[i], 1e-12 * fe_scale) << name << " tet " << t << " dof " << i;
      w_sum += e;
      for (int a = 0; a < 4; ++a)
        for (int k = 0; k < 3; ++k) f_sum[3 * m.tets[4 * t + a] + k] += g[3 * a + k];
    }
    EXPECT_NEAR(w_sum, w, 1e-12 * std::abs(w)) << name;
    for (std::size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f_sum[i], f[i], 1e-12 * f_scale) << name << " dof " << i;
    EXPECT_GT(w, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Pbd, ElementEnergyRoute,
                         ::testing::Values(RouteCase{VolumetricPenalty::none, false, 1.1},
                                           RouteCase{VolumetricPenalty::cubic, false, 0.8},
                                           RouteCase{VolumetricPenalty::quadratic, false, 1.05},
                                           RouteCase{VolumetricPenalty::cubic, true, 0.85},
                                           RouteCase{VolumetricPenalty::quadratic, true, 1.2}),
                         [](const ::testing::TestParamInfo<RouteCase>& info) {
                           return std::string(testing::penalty_name(info.param.penalty)) +
                                  (info.param.anisotropic ? "_anisotropic" : "_isotropic") +
                                  (info.param.scale < 1.0 ? "_compressed" : "_stretched");
                         });

TEST(ElementEnergy, ModelsWithoutAnElementEnergyAreTheOnesThePositionBasedIntegratorRefuses) {
  EXPECT_NE(model_named("stvk").element_energy, nullptr);
  EXPECT_NE(model_named("stvk-tl").element_energy, nullptr);
  EXPECT_NE(model_named("neo-hookean").element_energy, nullptr);
  EXPECT_EQ(model_named("stvk-nsn").element_energy, nullptr);  // the spring network is not V0 Psi(F)
  EXPECT_EQ(model_named("trbs").element_energy, nullptr);
}

TEST(ElementEnergy, DegenerateTetIsRefused) {
  const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};  // flat
  EXPECT_THROW((void)tet_rest(X, 7), std::invalid_argument);
}

// The colouring: cells sharing a vertex differ; the count is close to the largest number of cells at a vertex
// (greedy is at most that bound times the cells' vertex count); the same cells give the same colours.
TEST(CellColoring, NeighboursDifferAndTheResultIsDeterministic) {
  const testing::TetMesh m = kuhn_box(6, 5, 4, 1.0, 0.1, 2);
  std::vector<std::int64_t> cells(m.tets.begin(), m.tets.end());
  const auto n_vertices = static_cast<std::int64_t>(m.coords.size() / 3);
  const std::vector<std::int32_t> color = greedy_cell_colors(cells, 4, n_vertices);
  ASSERT_EQ(color.size(), static_cast<std::size_t>(m.n_tets()));
  std::vector<std::set<std::int32_t>> at_vertex(n_vertices);
  std::vector<int> cells_at(n_vertices, 0);
  for (LocalIndex t = 0; t < m.n_tets(); ++t)
    for (int a = 0; a < 4; ++a) {
      const auto v = m.tets[4 * t + a];
      EXPECT_TRUE(at_vertex[v].insert(color[t]).second) << "two cells at vertex " << v << " share colour " << color[t];
      ++cells_at[v];
    }
  const int max_cells = *std::max_element(cells_at.begin(), cells_at.end());
  const int n_colors = *std::max_element(color.begin(), color.end()) + 1;
  EXPECT_GE(n_colors, max_cells);
  EXPECT_LE(n_colors, 4 * (max_cells - 1) + 1);
  EXPECT_EQ(greedy_cell_colors(cells, 4, n_vertices), color);
  cells[5] = n_vertices;  // out of range
  EXPECT_THROW((void)greedy_cell_colors(cells, 4, n_vertices), std::invalid_argument);
}

}  // namespace
}  // namespace edgefem
