// SPDX-License-Identifier: BSD-3-Clause
// The model registry (materials/registry.hpp): one row per model, lookups, messages, FLOP formulas, factories.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "materials/registry.hpp"
#include "mesh/box.hpp"

namespace edgefem {
namespace {

TEST(Registry, EveryModelHasAUniqueNameAFactoryAndAnOutput) {
  std::set<std::string_view> names;
  for (const ModelInfo& m : models()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_NE(m.make, nullptr) << m.name;
    EXPECT_NE(m.strain_stress, nullptr) << m.name;
    EXPECT_EQ(find_model(m.name), &m);
    EXPECT_EQ(&model_named(m.name), &m);
    // Tetrahedral models have Kikuuwe's FLOP formulas (edgefem bench reports them), except neo-hookean (none).
    EXPECT_EQ(m.flops != nullptr, m.cell == CellKind::tetrahedron && m.name != "neo-hookean") << m.name;
  }
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(find_model("neo-hooke"), nullptr);
  EXPECT_EQ(model_list(),
            "stvk, stvk-nsn, stvk-tl, linear, neo-hookean (tetrahedra), trbs, trqs, springs, linear-membrane, volino "
            "(triangles)");
}

TEST(Registry, UnknownNameListsTheKnownOnesAndSuggestsTheNearest) {
  try {
    (void)model_named("stvk-nns");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown model 'stvk-nns' (expected one of: " + model_list() + "); did you mean 'stvk-nsn'?");
  }
  const std::string_view choices[] = {"backward-euler", "linearized-euler", "newmark"};
  EXPECT_EQ(nearest_spelling("backward_euler", choices), "backward-euler");
  EXPECT_EQ(nearest_spelling("Newmark", choices), "newmark");
  EXPECT_EQ(nearest_spelling("rk4", choices), "");
  EXPECT_EQ(model_names_where([](const ModelInfo& m) { return m.keys.spring_damping; }), "trbs, trqs and springs");
  EXPECT_EQ(model_names_where([](const ModelInfo& m) { return m.keys.volino; }), "volino");
}

TEST(Registry, FlopFormulasAreKikuuwes) {
  const MeshCounts n{100, 500, 700, 300};
  const FlopCounts tl = model_named("stvk-tl").flops(n);
  EXPECT_EQ(tl.f, 387);
  EXPECT_EQ(tl.f_and_K, 1747);
  const FlopCounts lin = model_named("linear").flops(n);
  EXPECT_DOUBLE_EQ(lin.f, (15 * 100 + 36 * 500) / 300.0);
  EXPECT_EQ(lin.f_and_K, lin.f);
  const FlopCounts nsn = model_named("stvk-nsn").flops(n);
  EXPECT_DOUBLE_EQ(nsn.f, 19 * 500 / 300.0);
  EXPECT_DOUBLE_EQ(nsn.f_and_K, (19 + 24) * 500 / 300.0);
  const FlopCounts full = model_named("stvk").flops(n);
  EXPECT_DOUBLE_EQ(full.f, (19 * 500 + 12 * 700 + 12 * 300) / 300.0);
  EXPECT_DOUBLE_EQ(full.f_and_K, (43 * 500 + 129 * 700 + 156 * 300) / 300.0);
}

TEST(Registry, FactoriesBuildTheirModelOnTheirCells) {
  const Mesh box = generate_box({1, 1, 1}, {2, 2, 2});
  const Mesh sheet = generate_sheet({1, 1}, {2, 2});
  MaterialTables tables;
  tables.tet = {TetMaterial::isotropic_material(1.0, 0.3, VolumetricPenalty::cubic)};
  tables.membrane = {MembraneMaterial{1.0, 0.3, 0.1}};
  VolinoMaterial volino;
  volino.law = VolinoLaw::isotropic(1.0, 0.3);
  tables.volino = {volino};
  for (const ModelInfo& m : models()) {
    const Mesh& mesh = m.cell == CellKind::tetrahedron ? box : sheet;
    const auto& cells = m.cell == CellKind::tetrahedron ? mesh.tets : mesh.triangles;
    const std::vector<std::int32_t> ids(cells.size() / static_cast<std::size_t>(nodes_per_cell(m.cell)), 0);
    const auto form = m.make({mesh.coords, cells, ids, tables});
    ASSERT_NE(form, nullptr) << m.name;
    EXPECT_EQ(form->name(), m.name);
    EXPECT_NEAR(form->energy(mesh.coords), 0.0, 1e-12) << m.name;  // at rest
  }
}

}  // namespace
}  // namespace edgefem
