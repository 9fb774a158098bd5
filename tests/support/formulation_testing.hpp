#pragma once
/// \file formulation_testing.hpp
/// Header-only helpers for the unit tests and benchmarks of TetFormulation implementations: a Kuhn-split box
/// mesh (independent of mesh/box.cpp), dense assembly of the stiffness blocks and finite-difference checks.
/// Not used by the library itself.
#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "materials/formulation.hpp"

namespace edgefem::testing {

/// A bare tetrahedral mesh: 3 coordinates per vertex, 4 vertex ids per tet.
struct TetMesh {
  std::vector<double> coords;
  std::vector<LocalIndex> tets;
  [[nodiscard]] LocalIndex n_vertices() const { return static_cast<LocalIndex>(coords.size() / 3); }
  [[nodiscard]] LocalIndex n_tets() const { return static_cast<LocalIndex>(tets.size() / 4); }
};

/// Box of nx x ny x nz cubes of edge `h`, each split into the 6 Kuhn (Freudenthal) tets around its main
/// diagonal (conforming), every tet positively oriented. Interior vertices are moved by up to `jitter` * h per
/// coordinate (random, seeded), which keeps every tet valid for jitter < ~0.15.
inline TetMesh kuhn_box(int nx, int ny, int nz, double h = 1.0, double jitter = 0.0, unsigned seed = 1) {
  TetMesh m;
  auto id = [&](int i, int j, int k) { return static_cast<LocalIndex>((k * (ny + 1) + j) * (nx + 1) + i); };
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i) {
        const bool interior = i > 0 && i < nx && j > 0 && j < ny && k > 0 && k < nz;
        const int ijk[3] = {i, j, k};
        for (int c = 0; c < 3; ++c) m.coords.push_back(h * ijk[c] + (interior ? jitter * h * u(rng) : 0.0));
      }
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        for (const auto& p : perms) {
          int c[3] = {i, j, k};
          LocalIndex v[4];
          v[0] = id(c[0], c[1], c[2]);
          for (int s = 0; s < 3; ++s) {
            ++c[p[s]];
            v[s + 1] = id(c[0], c[1], c[2]);
          }
          double d[3][3];
          for (int s = 0; s < 3; ++s)
            for (int q = 0; q < 3; ++q) d[s][q] = m.coords[3 * v[s + 1] + q] - m.coords[3 * v[0] + q];
          const double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                             d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                             d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
          if (det < 0) std::swap(v[2], v[3]);
          m.tets.insert(m.tets.end(), v, v + 4);
        }
  return m;
}

/// The formulation called `name` ("stvk", "stvk-nsn", "stvk-tl", "linear") on mesh m with a material table and
/// per-tet material ids.
inline std::unique_ptr<TetFormulation> make_formulation(std::string_view name, const TetMesh& m,
                                                        std::span<const TetMaterial> table,
                                                        std::span<const std::int32_t> material_of_tet) {
  if (name == "stvk-tl") return make_stvk_tl(m.coords, m.tets, table, material_of_tet);
  if (name == "linear") return make_linear(m.coords, m.tets, table, material_of_tet);
  if (name == "stvk" || name == "stvk-nsn") return make_stvk_tsep(m.coords, m.tets, table, material_of_tet, name == "stvk-nsn");
  throw std::invalid_argument("make_formulation: unknown formulation '" + std::string(name) + "'");
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

/// Dense 3n x 3n stiffness (row-major) assembled from force_and_stiffness(), summing repeated pattern entries.
inline std::vector<double> dense_stiffness(const TetFormulation& form, std::span<const double> x,
                                           std::vector<double>* force = nullptr) {
  const std::size_t n = 3 * static_cast<std::size_t>(form.n_vertices());
  const auto& pattern = form.block_pattern();
  std::vector<double> f(n), blocks(9 * pattern.size()), K(n * n, 0.0);
  form.force_and_stiffness(x, f, blocks);
  for (std::size_t b = 0; b < pattern.size(); ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        K[(3 * pattern[b][0] + r) * n + 3 * pattern[b][1] + c] += blocks[9 * b + 3 * r + c];
  if (force) *force = f;
  return K;
}

/// max_i |a_i - b_i| / max(max_i |b_i|, floor).
inline double rel_max_diff(std::span<const double> a, std::span<const double> b, double floor = 1e-300) {
  double diff = 0.0, norm = floor;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    norm = std::max(norm, std::abs(b[i]));
  }
  return diff / norm;
}

/// Central-difference gradient of the energy (step h per coordinate).
inline std::vector<double> fd_force(const TetFormulation& form, std::vector<double> x, double h) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    x[i] = xi + h;
    const double wp = form.energy(x);
    x[i] = xi - h;
    const double wm = form.energy(x);
    x[i] = xi;
    g[i] = (wp - wm) / (2 * h);
  }
  return g;
}

/// Central-difference Jacobian of the force (row-major, 3n x 3n).
inline std::vector<double> fd_stiffness(const TetFormulation& form, std::vector<double> x, double h) {
  const std::size_t n = x.size();
  std::vector<double> K(n * n), fp(n), fm(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double xj = x[j];
    x[j] = xj + h;
    form.force(x, fp);
    x[j] = xj - h;
    form.force(x, fm);
    x[j] = xj;
    for (std::size_t i = 0; i < n; ++i) K[i * n + j] = (fp[i] - fm[i]) / (2 * h);
  }
  return K;
}

}  // namespace edgefem::testing
