// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file registry.hpp
/// The model registry: one table that maps a model name (the job file's `materials[i].model`) to everything the
/// rest of the code needs to know about it: its cell kind, the material keys it takes, its factory, its FLOP
/// formula and its strain/stress output. The job reader, build_model, `edgefem bench`, the kernel benchmark and
/// the output ask the table; nothing else spells a model's name. Adding a model = one row in registry.cpp plus the
/// model's own file (its kernels and factory). No PETSc or MPI here.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "materials/element_energy.hpp"
#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "materials/volino.hpp"

namespace edgefem {

/// The cells a model works on: tetrahedra (solids) or triangles (membranes).
enum class CellKind : std::uint8_t { tetrahedron, triangle };

[[nodiscard]] constexpr int nodes_per_cell(CellKind kind) { return kind == CellKind::tetrahedron ? 4 : 3; }

/// Material keys of the job file beyond those every model takes (region, model, young, poisson, density,
/// thickness, volumetric, volumetric_penalty).
struct MaterialKeys {
  bool anisotropy = false;      ///< `anisotropy:` (transversely isotropic law instead of young/poisson)
  bool spring_damping = false;  ///< `spring_damping:` (Delingette's damped springs)
  /// Volino's keys `warp`, `orthotropic`, `curves`, `stabilization`, `viscosity` (with `orthotropic` or `curves`
  /// the law needs no young/poisson).
  bool volino = false;
};

/// The material tables of one job: entry m belongs to job.materials[m]. A table a model does not use may be empty
/// (solids fill `tet`, membranes fill `membrane` and `volino`).
struct MaterialTables {
  std::vector<TetMaterial> tet;
  std::vector<MembraneMaterial> membrane;
  std::vector<VolinoMaterial> volino;
  VolinoStabilization volino_stabilization = VolinoStabilization::none;  ///< one for every volino material
};

/// What a factory gets: one rank's cells of one model (nodes_per_cell(kind) local vertex ids each), the reference
/// positions (3 per local vertex) and, per cell, its index into the tables.
struct FormulationInput {
  std::span<const double> coords;
  std::span<const LocalIndex> cells;
  std::span<const std::int32_t> material_of_cell;
  const MaterialTables& tables;
};

/// Whole-mesh counts a FLOP formula uses (doubles: they enter ratios).
struct MeshCounts {
  double vertices = 0, edges = 0, faces = 0, tets = 0;
};

/// FLOPs (multiplications + additions) per tetrahedron of f and of f + K.
struct FlopCounts {
  double f = 0, f_and_K = 0;
};

/// One cell's output: Green strain and (2nd Piola-Kirchhoff, or the model's own) stress as row-major 3x3 tensors,
/// and the von Mises value returned. X, x: reference and current positions of its nodes (3 per node); `material`:
/// the cell's index into the tables.
using CellStrainStress = double (*)(const double* X, const double* x, const MaterialTables& tables,
                                    std::int32_t material, double* strain, double* stress);

struct ModelInfo {
  std::string_view name;  ///< the job file's spelling
  CellKind cell = CellKind::tetrahedron;
  MaterialKeys keys;
  /// Throws std::invalid_argument on inconsistent input (sizes, ids, degenerate cells, invalid materials).
  std::unique_ptr<TetFormulation> (*make)(const FormulationInput& input) = nullptr;
  /// Kikuuwe's per-tet counts; nullptr when the model has no formula (then `edgefem bench` reports 0).
  FlopCounts (*flops)(const MeshCounts& counts) = nullptr;
  CellStrainStress strain_stress = nullptr;
  /// Per-element energy and gradient (tetrahedra: E_e = V0 Psi), for the position-based integrator; nullptr when
  /// the model has none (that integrator then refuses it). Must be the energy `make` builds, element by element.
  ElementEnergyGradient element_energy = nullptr;
  /// The same energy with inversion handling (materials/tet_inversion.hpp: signed SVD, clamped principal stretches;
  /// equal to element_energy on tets that are neither inverted nor compressed below the clamp); nullptr: none.
  ElementEnergyGradient inverted_element_energy = nullptr;
};

/// Every model, tetrahedral ones first, in the order messages list them.
[[nodiscard]] std::span<const ModelInfo> models();

/// The model called `name`, or nullptr.
[[nodiscard]] const ModelInfo* find_model(std::string_view name);

/// The model called `name`. Throws std::invalid_argument "unknown model 'NAME' (expected one of: ...)", with the
/// nearest spelling suggested when one is close.
[[nodiscard]] const ModelInfo& model_named(std::string_view name);

/// Whether the position-based integrator can take the model's cells as energy constraints: tets with an
/// element_energy, the trbs triangle (its plane-stress StVK energy, materials/membrane_energy.hpp) and Volino's
/// triangle (materials/volino.hpp, its energy W).
[[nodiscard]] bool position_based_constraint(const ModelInfo& info);

/// The known names as "stvk, stvk-nsn, stvk-tl, linear (tetrahedra), trbs, ..., volino (triangles)".
[[nodiscard]] std::string model_list();

/// Names of the models for which `has(model)` holds, as "a", "a and b" or "a, b and c" (`last`: " and ").
template <class Predicate>
[[nodiscard]] std::string model_names_where(Predicate has, std::string_view last = " and ") {
  std::vector<std::string_view> names;
  for (const ModelInfo& m : models())
    if (has(m)) names.push_back(m.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out.append(i == 0 ? "" : i + 1 == names.size() ? last : ", ").append(names[i]);
  return out;
}

/// The choice nearest to `word` (case-insensitive, edit distance with transpositions), or "" when none is close
/// enough to be a plausible misspelling.
[[nodiscard]] std::string_view nearest_spelling(std::string_view word, std::span<const std::string_view> choices);

}  // namespace edgefem
