// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file formulation_testing.hpp
/// Header-only helpers for the unit tests of TetFormulation implementations: a formulation by name, random
/// material tables; with the meshes (meshes.hpp) and the finite-difference checks (finite_differences.hpp).
/// Not used by the library itself.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "materials/formulation.hpp"
#include "materials/registry.hpp"
#include "tests/support/finite_differences.hpp"
#include "tests/support/meshes.hpp"

namespace edgefem::testing {

/// The tetrahedral model called `name` in the registry ("stvk", "stvk-nsn", "stvk-tl", "linear", ...) on mesh m with
/// a material table and per-tet material ids, built by the registry's factory (as build_model does).
inline std::unique_ptr<TetFormulation> make_formulation(std::string_view name, const TetMesh& m,
                                                        std::span<const TetMaterial> table,
                                                        std::span<const std::int32_t> material_of_tet) {
  const ModelInfo& model = model_named(name);
  if (model.cell != CellKind::tetrahedron)
    throw std::invalid_argument("make_formulation: '" + std::string(name) + "' is not a tetrahedral model");
  MaterialTables tables;
  tables.tet.assign(table.begin(), table.end());
  return model.make(FormulationInput{m.coords, m.tets, material_of_tet, tables});
}

/// The formulation called `name` on mesh m with one table entry per tet (material ids 0, 1, ..., n-1).
inline std::unique_ptr<TetFormulation> make_formulation(std::string_view name, const TetMesh& m,
                                                        std::span<const TetMaterial> table) {
  std::vector<std::int32_t> ids(table.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i);
  return make_formulation(name, m, table, ids);
}

/// The name of a volumetric penalty ("none", "cubic", "quadratic"), for parameterised test names.
inline const char* penalty_name(VolumetricPenalty p) {
  switch (p) {
    case VolumetricPenalty::none: return "none";
    case VolumetricPenalty::cubic: return "cubic";
    case VolumetricPenalty::quadratic: return "quadratic";
  }
  return "?";
}

/// Identity material ids 0, 1, ..., n-1 (one table entry per tet).
inline std::vector<std::int32_t> iota_ids(std::size_t n) {
  std::vector<std::int32_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>(i);
  return ids;
}

/// A random transversely isotropic material (positive definite by construction) with fibre direction `fibre`.
template <class Rng>
TetMaterial random_transverse(Rng& rng, std::array<double, 3> fibre, VolumetricPenalty penalty) {
  std::uniform_real_distribution<double> Ef(2.0, 10.0), Et(0.5, 3.0), G(0.3, 2.0), nft(0.1, 0.4), ntt(0.1, 0.45);
  const double ef = Ef(rng), et = Et(rng), g = G(rng), a = nft(rng), b = ntt(rng);
  return TetMaterial::transversely_isotropic(fibre, ef, et, g, a, b, penalty);
}

/// Heterogeneous table with one entry per tet (use iota_ids): tets with t % 3 != 2 get `penalty`, the others
/// none; with `anisotropic`, even tets are transversely isotropic (random fibre and constants), odd tets
/// isotropic (E in [1, 5], nu in [0.2, 0.45]).
inline std::vector<TetMaterial> random_materials(LocalIndex n_tets, VolumetricPenalty penalty, bool anisotropic,
                                                 unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> young(1.0, 5.0), nu(0.2, 0.45), u(-1.0, 1.0);
  std::vector<TetMaterial> mat;
  for (LocalIndex t = 0; t < n_tets; ++t) {
    const VolumetricPenalty p = t % 3 != 2 ? penalty : VolumetricPenalty::none;
    if (anisotropic && t % 2 == 0) {
      mat.push_back(random_transverse(rng, {u(rng), u(rng), u(rng) + 0.1}, p));
    } else {
      const double E = young(rng), n = nu(rng);
      mat.push_back(TetMaterial::isotropic_material(E, n, p));
    }
  }
  return mat;
}

}  // namespace edgefem::testing
