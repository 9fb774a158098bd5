// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file per_tet_formulation.hpp
/// What the per-tet formulations (stvk-tl, stvk_tl.cpp; neo-hookean, neo_hookean.cpp) share, written once: the
/// precomputed per-tet data (alpha_1..3, V0, ascending vertices, material id), the block pattern (vertex diagonal
/// blocks, then both orientations of every edge), the gather lists and the fused, race-free OpenMP sweep
/// (edge_assembly::VertexSweep): per tet its 12 forces and its 6 edge blocks K_ab (a < b) into scratch, per edge
/// the sum of its tets' blocks, per vertex its force and K(v, v) = -sum_w K(v, w) (translation invariance).
/// Only the per-tet kernel (and the energy) differ. Private to materials/.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "materials/edge_assembly.hpp"
#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"
#include "mesh/topology.hpp"

namespace edgefem::edge_assembly {

/// Precomputed data of one tet (104 bytes): alpha_1..3 (alpha_0 = -sum), V0, vertices (ascending), material id.
struct AscendingTet {
  double alpha[3][3];
  double v0;
  std::array<LocalIndex, 4> v;
  std::int32_t mat;
};

/// Base of a per-tet formulation. Derived (final, a friend of this class) supplies
///   static constexpr const char* kName, kFactory: its name() and its factory's name (in the input checks);
///   static void check_materials(materials, material_of_tet): its own input checks (optional);
///   void add_tet_energy(const AscendingTet& T, const double* x, double& w) const: adds tet T's energy to w;
///   template <bool kStiffness> void tet_terms(std::int64_t t, const double* x) const: pass 1 of the sweep for tet
///     t (tet_[t]): its 4 forces into ft_[12 t ...] and (kStiffness) its 6 edge blocks, in tetgeo::kEdgeLocal
///     order, into kt_[54 t ...].
/// Scratch buffers are members (mutable): one object must not be evaluated from two threads at once.
template <class Derived>
class PerTetFormulation : public EdgeFormulation<> {
 public:
  /// Checks the inputs (tetgeo::check_inputs, then Derived::check_materials) and sets up the tets (set_up).
  PerTetFormulation(std::span<const double> coords, std::span<const LocalIndex> tets,
                    std::span<const TetMaterial> materials, std::span<const std::int32_t> material_of_tet)
      : EdgeFormulation(coords), mat_(materials.begin(), materials.end()) {
    tetgeo::check_inputs(coords.size(), tets, materials.size(), material_of_tet, Derived::kFactory);
    Derived::check_materials(materials, material_of_tet);
    set_up(coords, tets, material_of_tet);
  }

  [[nodiscard]] std::string_view name() const override { return Derived::kName; }
  [[nodiscard]] double energy(std::span<const double> x) const override {
    if (x.size() != 3 * static_cast<std::size_t>(n_vertices_))
      throw std::invalid_argument(std::string(Derived::kName) + ": x has the wrong size");
    const Derived& self = static_cast<const Derived&>(*this);
    const std::int64_t nt = static_cast<std::int64_t>(tet_.size());
    const double* xd = x.data();
    double w = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : w)
    for (std::int64_t t = 0; t < nt; ++t) self.add_tet_energy(tet_[t], xd, w);
    return w;
  }
  void force(std::span<const double> x, std::span<double> f) const override {
    check(x, f);
    evaluate<false>(x.data(), f.data(), nullptr);
  }
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override {
    check(x, f);
    edges_.check_blocks(blocks, Derived::kName);
    if (kt_.size() != 54 * tet_.size()) kt_.resize(54 * tet_.size());
    evaluate<true>(x.data(), f.data(), blocks.data());
  }
  [[nodiscard]] std::size_t bytes() const override {
    return vector_bytes(tet_) + vector_bytes(mat_) + sweep_.bytes() + e_list_.bytes() + vt_list_.bytes() +
           edges_.bytes() + vector_bytes(ft_) + vector_bytes(kt_);
  }

 protected:
  /// No checks of the materials beyond tetgeo::check_inputs (Derived may hide this one).
  static void check_materials(std::span<const TetMaterial>, std::span<const std::int32_t>) {}

  std::vector<AscendingTet> tet_;   ///< sorted by first (smallest) vertex
  std::vector<TetMaterial> mat_;    ///< the material table
  mutable std::vector<double> ft_;  ///< scratch: 12 force values per tet
  mutable std::vector<double> kt_;  ///< scratch: 6 edge blocks (54 values) per tet, allocated on first use

 private:
  /// The tets, edges, gather lists and sweep, from checked inputs: the vertices of each tet in ascending order,
  /// the tets sorted (stably) by their smallest vertex. Throws for a degenerate tet.
  void set_up(std::span<const double> coords, std::span<const LocalIndex> tets,
              std::span<const std::int32_t> material_of_tet) {
    const std::int64_t nt = static_cast<std::int64_t>(material_of_tet.size());
    check_packable(nt, 29, "tetrahedra");  // 6 t + 5 < 2^32 and t << 2 fit in 32 bits
    // Vertices of each tet in ascending order, tets sorted (stably) by their smallest vertex.
    std::vector<LocalIndex> sorted(tets.begin(), tets.end());
    for (std::int64_t t = 0; t < nt; ++t) std::sort(sorted.begin() + 4 * t, sorted.begin() + 4 * t + 4);
    std::vector<std::int64_t> order;  // internal position -> input tet
    std::vector<std::int64_t> tet_first = sort_cells(
        n_vertices_, nt, [&](std::int64_t t) { return sorted[4 * t]; }, order);
    tet_.resize(nt);
    std::vector<LocalIndex> internal(static_cast<std::size_t>(4 * nt));  // ascending tets in internal order
    for (std::int64_t k = 0; k < nt; ++k) {
      const std::int64_t t = order[k];
      double X[12];
      for (int i = 0; i < 4; ++i) {
        const LocalIndex v = sorted[4 * t + i];
        internal[4 * k + i] = tet_[k].v[i] = v;
        for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * std::int64_t{v} + c];
      }
      const tetgeo::RefTet r = tetgeo::reference_tet(X, t);
      for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 3; ++c) tet_[k].alpha[i][c] = r.alpha[i + 1][c];
      tet_[k].v0 = r.v0;
      tet_[k].mat = material_of_tet[t];
    }
    // Edges (sorted, v0 < v1) of the ascending tets: local slot (a, b), a < b, is the edge (v_a, v_b).
    const Topology topo = build_topology(n_vertices_, internal, /*edges_only=*/true);
    edges_ = EdgeBlocks(n_vertices_, topo.edges, {.edge_vertices = false, .vertex_gather = true});
    e_list_ = build_csr<std::uint32_t>(edges_.n_edges(), [&](auto&& sink) {
      for (std::int64_t t = 0; t < nt; ++t)
        for (int s = 0; s < 6; ++s) sink(topo.tet_edges[t][s], static_cast<std::uint32_t>(6 * t + s));
    });
    vt_list_ = build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
      for (std::int64_t t = 0; t < nt; ++t)
        for (int i = 0; i < 4; ++i) sink(tet_[t].v[i], static_cast<std::uint32_t>(t << 2 | i));
    });
    sweep_ = VertexSweep(
        n_vertices_, topo.edges, std::move(tet_first),
        [&](std::int64_t t, auto&& sink) {
          for (int i = 0; i < 4; ++i) sink(tet_[t].v[i]);
        },
        [&](std::int64_t t, auto&& sink) {
          for (int s = 0; s < 6; ++s) sink(topo.tet_edges[t][s]);
        });
    ft_.resize(12 * nt);
  }

  void check(std::span<const double> x, std::span<double> f) const {
    if (x.size() != 3 * static_cast<std::size_t>(n_vertices_) || f.size() != x.size())
      throw std::invalid_argument(std::string(Derived::kName) + ": x/f hold " + std::to_string(x.size()) + "/" +
                                  std::to_string(f.size()) + " values, expected " +
                                  std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
  }

  /// Pass 2 for edge e: K(E) and K(E)^T into the output blocks.
  [[gnu::always_inline]] inline void edge_terms(std::int64_t e, double* kedge) const {
    double K[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (std::int64_t k = e_list_.ptr[e]; k < e_list_.ptr[e + 1]; ++k) {
      const double* src = &kt_[9 * std::int64_t{e_list_.codes[k]}];
      for (int q = 0; q < 9; ++q) K[q] += src[q];
    }
    write_edge_block(kedge, e, K);
  }

  /// Pass 3 for vertex v: f(v) and (kStiffness) K(v, v).
  template <bool kStiffness>
  [[gnu::always_inline]] inline void vertex_terms(LocalIndex v, double* f, double* blocks, const double* kedge) const {
    double fv[3] = {0.0, 0.0, 0.0};
    for (std::int64_t k = vt_list_.ptr[v]; k < vt_list_.ptr[v + 1]; ++k) {
      const double* src = &ft_[3 * std::int64_t{vt_list_.codes[k]}];  // 12 t + 3 slot = 3 (t << 2 | slot)
      fv[0] += src[0];
      fv[1] += src[1];
      fv[2] += src[2];
    }
    f[3 * std::int64_t{v}] = fv[0];
    f[3 * std::int64_t{v} + 1] = fv[1];
    f[3 * std::int64_t{v} + 2] = fv[2];
    if constexpr (kStiffness)
      edges_.gather_vertex(v, kedge, blocks, [](std::int64_t, bool) EDGEFEM_INLINE {});  // K(v, v) only
  }

  /// The fused sweep (edge_assembly.hpp): per-tet scratch, then the edges' K(E), then f(v) and K(v, v), consumed
  /// while the scratch is still in cache.
  template <bool kStiffness>
  void evaluate(const double* x, double* f, double* blocks) const {
    const Derived& self = static_cast<const Derived&>(*this);
    double* kedge = kStiffness ? edges_.edge_blocks(blocks) : nullptr;  // K(E) at 18 e, K(E)^T at 18 e + 9
    sweep_.run<kStiffness>([&](std::int64_t t) EDGEFEM_INLINE { self.template tet_terms<kStiffness>(t, x); },
                           [&](std::int64_t e) EDGEFEM_INLINE { edge_terms(e, kedge); },
                           [&](LocalIndex v) EDGEFEM_INLINE { vertex_terms<kStiffness>(v, f, blocks, kedge); });
  }

  VertexSweep sweep_;           ///< cells: the tets
  Csr<std::uint32_t> e_list_;   ///< edge -> 6 t + slot (the tets' blocks K(E))
  Csr<std::uint32_t> vt_list_;  ///< vertex -> t << 2 | local vertex (forces)
};

}  // namespace edgefem::edge_assembly
