// SPDX-License-Identifier: BSD-3-Clause
/// \file registry.cpp
/// The model table (registry.hpp). A row per model: name, cell kind, extra material keys, factory, FLOP formula,
/// strain/stress output. To add a model, write its kernels and factory in its own file and add its row here.
#include "materials/registry.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "materials/cell_output.hpp"
#include "materials/neo_hookean.hpp"
#include "materials/tet_geometry.hpp"
#include "materials/tet_inversion.hpp"

namespace edgefem {
namespace {

// ---- factories ----------------------------------------------------------------------------------------------

template <bool nsn>
std::unique_ptr<TetFormulation> stvk_tsep(const FormulationInput& in) {
  return make_stvk_tsep(in.coords, in.cells, in.tables.tet, in.material_of_cell, nsn);
}
std::unique_ptr<TetFormulation> stvk_tl(const FormulationInput& in) {
  return make_stvk_tl(in.coords, in.cells, in.tables.tet, in.material_of_cell);
}
std::unique_ptr<TetFormulation> neo_hookean(const FormulationInput& in) {
  return make_neo_hookean(in.coords, in.cells, in.tables.tet, in.material_of_cell);
}
std::unique_ptr<TetFormulation> linear(const FormulationInput& in) {
  return make_linear(in.coords, in.cells, in.tables.tet, in.material_of_cell);
}
/// The spring membranes of membrane.hpp, by their own name (trbs.cpp's make_membrane).
template <const char* name>
std::unique_ptr<TetFormulation> membrane(const FormulationInput& in) {
  return make_membrane(name, in.coords, in.cells, in.tables.membrane, in.material_of_cell);
}
constexpr char trbs_name[] = "trbs", trqs_name[] = "trqs", springs_name[] = "springs",
               linear_membrane_name[] = "linear-membrane";
std::unique_ptr<TetFormulation> volino(const FormulationInput& in) {
  return make_volino(in.coords, in.cells, in.tables.volino, in.material_of_cell, in.tables.volino_stabilization);
}

// ---- FLOP formulas (per tet; the volumetric term, algB, not included) ---------------------------------------

/// Kikuuwe eq. (35); stvk-nsn drops the TSEP terms.
template <bool tseps>
FlopCounts stvk_flops(const MeshCounts& n) {
  const double f_mult = 7 * n.edges + (tseps ? 6 * n.faces + 6 * n.tets : 0);
  const double f_add = 12 * n.edges + (tseps ? 6 * n.faces + 6 * n.tets : 0);
  const double k_mult = 9 * n.edges + (tseps ? 36 * n.faces + 36 * n.tets : 0);
  const double k_add = 15 * n.edges + (tseps ? 81 * n.faces + 108 * n.tets : 0);
  return {(f_mult + f_add) / n.tets, (f_mult + f_add + k_mult + k_add) / n.tets};
}
/// Kikuuwe appendix B: 387 for f, 1747 for f + K.
FlopCounts stvk_tl_flops(const MeshCounts&) { return {214 + 173, 934 + 813}; }
/// Kikuuwe section 3.6: 15 N_V + 36 N_E for f = K u; K is constant.
FlopCounts linear_flops(const MeshCounts& n) {
  const double f = (15 * n.vertices + 36 * n.edges) / n.tets;
  return {f, f};
}

// ---- strain/stress output -------------------------------------------------------------------------------------

double tet_output(const double* X, const double* x, const MaterialTables& t, std::int32_t m, double* E, double* S) {
  return tet_cell_strain_stress(X, x, t.tet[static_cast<std::size_t>(m)], E, S);
}
double neo_hookean_output(const double* X, const double* x, const MaterialTables& t, std::int32_t m, double* E,
                          double* S) {
  return neo_hookean_strain_stress(X, x, t.tet[static_cast<std::size_t>(m)], E, S);
}
double membrane_output(const double* X, const double* x, const MaterialTables& t, std::int32_t m, double* E,
                       double* S) {
  return membrane_strain_stress(X, x, t.membrane[static_cast<std::size_t>(m)], E, S);
}
double volino_output(const double* X, const double* x, const MaterialTables& t, std::int32_t m, double* E, double* S) {
  return volino_strain_stress(X, x, t.volino[static_cast<std::size_t>(m)], E, S);
}

// ---- per-element energy (the position-based integrator) ----------------------------------------------------------

/// neo-hookean through the element interface: TetRest's alpha rows are the rows of D_m^-1. The volumetric penalty
/// the formulation adds (V0 k_vol psi(J - 1), gradient V0 k_vol psi'(J - 1) cof(F) alpha_a) is added here too, so
/// the element energy is the formulation's, element by element. Inverted tets (J <= 0) give +infinity and a zero
/// gradient (neo_hookean.hpp).
double neo_hookean_element(const TetRest& rest, const double* x, const TetMaterial& material, double* gradient) {
  NeoHookeanRest r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.dm_inv[static_cast<std::size_t>(3 * i + j)] = rest.alpha[i][j];
  r.v0 = rest.v0;
  double w = neo_hookean_energy_gradient(r, material.mu, material.lambda, x, gradient);
  if (material.volumetric == VolumetricPenalty::none || !std::isfinite(w)) return w;
  double F[9];
  for (int row = 0; row < 3; ++row)
    for (int c = 0; c < 3; ++c) {
      F[3 * row + c] = 0.0;
      for (int a = 0; a < 3; ++a) F[3 * row + c] += (x[3 * (a + 1) + row] - x[row]) * rest.alpha[a][c];
    }
  double cof[9];
  const double J = tetgeo::cofactor(F, cof);
  const tetgeo::Penalty pen = tetgeo::vol_penalty(J - 1.0, material.volumetric);
  w += rest.v0 * material.k_vol * pen.psi;
  const double scale = rest.v0 * material.k_vol * pen.d1;
  for (int a = 0; a < 3; ++a)
    for (int row = 0; row < 3; ++row) {
      const double g = scale * (cof[3 * row] * rest.alpha[a][0] + cof[3 * row + 1] * rest.alpha[a][1] +
                                cof[3 * row + 2] * rest.alpha[a][2]);
      gradient[3 * (a + 1) + row] += g;
      gradient[row] -= g;
    }
  return w;
}

/// neo-hookean with inversion handling (tet_inversion.hpp): the plain element where it is not needed.
double neo_hookean_inverted_element(const TetRest& rest, const double* x, const TetMaterial& material,
                                    double* gradient) {
  return with_inversion_handling(InvertibleLaw::neo_hookean, neo_hookean_element, rest, x, material, gradient);
}

constexpr MaterialKeys solid_keys{.anisotropy = true};
constexpr MaterialKeys spring_keys{.spring_damping = true};
constexpr MaterialKeys volino_keys{.volino = true};
constexpr CellKind tet = CellKind::tetrahedron, triangle = CellKind::triangle;

/// The table. Tetrahedral models first (messages list them in this order).
constexpr std::array<ModelInfo, 10> table = {{
    {"stvk", tet, solid_keys, stvk_tsep<false>, stvk_flops<true>, tet_output, stvk_element_energy_gradient,
     stvk_inversion_energy_gradient},
    {"stvk-nsn", tet, solid_keys, stvk_tsep<true>, stvk_flops<false>, tet_output},
    {"stvk-tl", tet, solid_keys, stvk_tl, stvk_tl_flops, tet_output, stvk_element_energy_gradient,
     stvk_inversion_energy_gradient},
    {"linear", tet, solid_keys, linear, linear_flops, tet_output},
    {"neo-hookean", tet, {}, neo_hookean, nullptr, neo_hookean_output, neo_hookean_element,
     neo_hookean_inverted_element},
    {"trbs", triangle, spring_keys, membrane<trbs_name>, nullptr, membrane_output},
    {"trqs", triangle, spring_keys, membrane<trqs_name>, nullptr, membrane_output},
    {"springs", triangle, spring_keys, membrane<springs_name>, nullptr, membrane_output},
    {"linear-membrane", triangle, {}, membrane<linear_membrane_name>, nullptr, membrane_output},
    {"volino", triangle, volino_keys, volino, nullptr, volino_output},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours cost 1.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> d((n + 1) * (m + 1));
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
  for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
    }
  return at(n, m);
}

}  // namespace

std::span<const ModelInfo> models() { return table; }

const ModelInfo* find_model(std::string_view name) {
  for (const ModelInfo& m : table)
    if (m.name == name) return &m;
  return nullptr;
}

std::string model_list() {
  std::string out;
  for (std::size_t i = 0; i < table.size(); ++i) {
    out.append(i == 0 ? "" : ", ").append(table[i].name);
    if (i + 1 == table.size() || table[i + 1].cell != table[i].cell)
      out.append(table[i].cell == CellKind::tetrahedron ? " (tetrahedra)" : " (triangles)");
  }
  return out;
}

bool position_based_constraint(const ModelInfo& info) {
  return info.element_energy != nullptr || info.name == std::string_view("trbs") ||
         info.name == std::string_view("volino");
}

const ModelInfo& model_named(std::string_view name) {
  if (const ModelInfo* m = find_model(name)) return *m;
  std::vector<std::string_view> names;
  for (const ModelInfo& m : table) names.push_back(m.name);
  const std::string_view near = nearest_spelling(name, names);
  throw std::invalid_argument("unknown model '" + std::string(name) + "' (expected one of: " + model_list() + ")" +
                              (near.empty() ? "" : "; did you mean '" + std::string(near) + "'?"));
}

std::string_view nearest_spelling(std::string_view word, std::span<const std::string_view> choices) {
  const std::string w = lower(word);
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string_view choice : choices) {
    const std::size_t d = edit_distance(w, lower(choice));
    // Close enough to be a slip: one edit per three letters of the choice, rounded (at least one, at most three).
    const std::size_t allowed = std::clamp<std::size_t>((choice.size() + 1) / 3, 1, 3);
    if (d <= allowed && d < best_distance) best = choice, best_distance = d;
  }
  return best;
}

}  // namespace edgefem
