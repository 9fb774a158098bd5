// SPDX-License-Identifier: BSD-3-Clause
/// \file stvk_tsep.cpp
/// Edge/TSEP StVK of Kikuuwe et al. (eqs. 8-32, algF, algKE, algKV, volumetric algB) and, with the TSEP
/// loops skipped, the nonlinear spring network (NSN).
///
/// Materials only enter the precomputation: L(E), L(P) from L_T = (C_ini/12) Q^-T D Q^-1 (eq. 19) with the tet's D
/// (isotropic tets: closed form in lambda, mu; see tet_geometry.hpp), so anisotropy costs nothing per iteration.
/// The volumetric penalty (cubic: active for J < 1 only; quadratic: always) is algB per tet.
///
/// Notation: for edge E = (v0, v1), v0 < v1, p(E) = x(v0) - x(v1), zeta(E) = |p(E)|^2 - H(E). Energy (eq. 24)
///   W = sum_E L(E) zeta(E)^2 / 4 + sum_P L(P) zeta(a) zeta(b) / 2 + sum_T V0 k_vol psi(J_T - 1).
/// Gradient w.r.t. an edge vector: dW/dp(E) = g(E) p(E), g(E) = L(E) zeta(E) + sum_{P ∋ E} L(P) zeta(other),
/// so f(v) = sum_E t(v, E) g(E) p(E) (eq. 25). Hessian w.r.t. edge vectors:
///   d(g_a p_a)/dp_b = delta_ab g_a I + 2 L(a, b) p_a p_b^T,
/// and K(u, w) = sum_{a, b} t(u, a) t(w, b) d(g_a p_a)/dp_b. For the edge block K(E) = df(v0)/dx(v1) the
/// a = b = E term gives -g I - 2 L p p^T; a TSEP P = (a, b) adds (-1)^(i+j) 2 L(P) p_a p_b^T to the block
/// (V_e(a, i), V_e(b, j)) and its transpose to (V_e(b, j), V_e(a, i)) (eq. 31). Contributions landing on a
/// diagonal block (type-1 TSEPs, i.e. V_e(a, i) == V_e(b, j)) are never formed: translation invariance gives
/// sum_w K(v, w) = 0, hence K(v, v) = -sum of the off-diagonal blocks of row v (eq. 30, algKV), which already
/// contains them, and also the volumetric part.
///
/// Parallelisation (OpenMP, race-free, no atomics): every scatter of the paper is turned into a gather over a
/// CSR list built once: edge <- (other edge, L(P)) for g, edge <- (edge a, edge b, +-2 L(P)) for K(E) (the TSEP
/// coefficients are stored inline so the hot loops stream them instead of chasing TSEP ids), vertex <- (edge,
/// orientation) for f and K(v), vertex/edge <- (volumetric tet, slot) for algB.
///
/// Memory layout (the kernels are bound by cache misses, not flops):
/// - the K(E) terms are grouped by their first edge a (K += p_a q_a^T, q_a = sum_b coef p_b) and stored as
///   structure of arrays: per term the vertex k with p_b = x(v1(E)) - x(k) (sign folded into the coefficient) and
///   the coefficient, 12 bytes; per group the two vertices of a, 8 bytes (edge_assembly::GroupedEdgeTerms);
/// - edge vectors are never stored: p(E) = x(v0) - x(v1) is re-formed (bitwise identically) from the positions,
///   whose window (about one layer of vertices) stays in L2, instead of gathering from a 24 B/edge array;
/// - volumetric tets are sorted by their smallest vertex and evaluated in the same fused vertex sweep as the
///   edge blocks and the vertex gathers (edge_assembly::VertexSweep, as stvk_tl.cpp), so their 96-byte buffers
///   are consumed while in cache.
///
/// Scratch buffers are members (mutable): one object must not be evaluated from two threads at once; each
/// call is itself OpenMP-parallel.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/first_touch.hpp"
#include "core/setup_laps.hpp"
#include "materials/edge_assembly.hpp"
#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"
#include "mesh/topology.hpp"

namespace edgefem {

namespace {

using edge_assembly::Csr;
using tetgeo::kEdgeLocal;
using tetgeo::kEdgeOpp;

/// One volumetric-tet term of the K(E) gather. code = vt << 5 | slot << 2 | transpose << 1 | negate: K(E) gets
/// block (i, j) of tet vt's penalty Hessian, (i, j) = kEdgeLocal[slot] (swapped if transpose), whose cross-product
/// part [(x_k - x_l) x] uses x_k - x_l = (negate ? -1 : 1) p(opposite), the edge opposite to E in the tet, formed
/// from the positions of its vertices (opp0, opp1) = (v0, v1)(opposite) (the vertex array is cache-resident; p is not).
struct VEntry {
  std::uint32_t code;
  LocalIndex opp0, opp1;
};

/// Per volumetric tet scratch: [a1, a2, dC/dx_1, dC/dx_2, dC/dx_3, unused] (96 bytes).
constexpr std::int64_t kVolBuf = 12;

/// dC/dx_i of a volumetric tet's buffer; dC/dx_0 = -(dC/dx_1 + dC/dx_2 + dC/dx_3) is formed in `c0`.
inline const double* vol_grad(const double* buf, int i, double* c0) {
  if (i > 0) return buf + 3 * i - 1;
  for (int cc = 0; cc < 3; ++cc) c0[cc] = -(buf[2 + cc] + buf[5 + cc] + buf[8 + cc]);
  return c0;
}

/// What the volumetric penalty keeps of a tet's reference geometry.
struct RefTetScalars {
  double c_ini = 0.0, v0 = 0.0;
};

/// TSEP id of the local edge-slot pair (s1, s2) of tet t (layout contract of topology.hpp).
std::int64_t tsep_of(const Topology& topo, std::span<const LocalIndex> tets, std::int64_t t, int s1, int s2) {
  if (s1 + s2 == 5) return topo.n_type1 + 3 * t + std::min(s1, s2);  // opposite edges: type 2
  const int* a = kEdgeLocal[s1];
  const int* b = kEdgeLocal[s2];
  const int shared = (a[0] == b[0] || a[0] == b[1]) ? a[0] : a[1];
  const int missing = 6 - (a[0] + a[1] + b[0] + b[1] - shared);  // local vertex off the common face
  const LocalIndex f = topo.tet_faces[t][missing];
  const LocalIndex g = tets[4 * t + shared];
  const int k = topo.faces[f][0] == g ? 0 : (topo.faces[f][1] == g ? 1 : 2);
  return 3 * std::int64_t{f} + k;
}

class StvkTsep final : public edge_assembly::EdgeFormulation<> {
 public:
  StvkTsep(std::span<const double> coords, std::span<const LocalIndex> tets, std::span<const TetMaterial> materials,
           std::span<const std::int32_t> material_of_tet, bool nsn);

  [[nodiscard]] std::string_view name() const override { return nsn_ ? "stvk-nsn" : "stvk"; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override;

 private:
  /// Per tet: L(E), L(P) (eq. 23) and the volumetric tets (input order, in vol_of_tet).
  void tet_coefficients(std::span<const double> coords, std::span<const LocalIndex> tets, const Topology& topo,
                        std::span<const TetMaterial> materials, std::span<const std::int32_t> material_of_tet,
                        std::vector<double>& LP, std::vector<std::int64_t>& vol_of_tet);
  /// Volumetric tets sorted (stably) by their smallest vertex, for the fused sweep; returns the sweep's cell_first.
  std::vector<std::int64_t> sort_volumetric_tets(std::vector<std::int64_t>& vol_of_tet);
  /// The g gather (eq. 28) and the grouped K(E) terms (eq. 31) of the TSEPs.
  void tsep_lists(const Topology& topo, std::span<const LocalIndex> tets, const std::vector<double>& LP);
  /// Volumetric tets: gathers into vertices (forces) and edges (K(E)).
  void volumetric_lists(const Topology& topo, const std::vector<std::int64_t>& vol_of_tet);

  void check_x(std::span<const double> x) const;
  void edge_terms(
      const double* x) const;  ///< zeta (algF first loop), then g (TSEP gather); p(E) is re-formed from x where needed
  /// Volumetric tet k: active flag and buffer [a1, a2, dC/dx_1..3] (algB, first half).
  [[gnu::always_inline]] inline void vol_tet(std::int64_t k, const double* x) const;
  /// K(E) and K(E)^T of edge e into the output blocks (algKE + algB's edge terms).
  [[gnu::always_inline]] inline void edge_block(std::int64_t e, const double* x, double* kedge) const;
  /// f(v) and (kedge != nullptr) K(v, v).
  [[gnu::always_inline]] inline void vertex_terms(LocalIndex v, const double* x, double* f, double* blocks,
                                                  const double* kedge) const;
  template <bool kStiffness>
  void evaluate(const double* x, double* f, double* blocks) const;

  bool nsn_ = false;
  std::int64_t n_vol_ = 0;

  std::vector<double> H_, L_, L2_;
  edge_assembly::TsepGather g_terms_;        ///< edge -> (other edge, L(P)) (empty for NSN)
  edge_assembly::GroupedEdgeTerms k_terms_;  ///< K(E) TSEP terms (empty for NSN)
  // Volumetric tets (algB), sorted by their smallest vertex.
  std::vector<std::array<LocalIndex, 4>> vt_verts_;
  std::vector<double> vt_cini_, vt_kv_;     ///< signed C_ini, V0 k_vol
  std::vector<VolumetricPenalty> vt_kind_;  ///< cubic or quadratic
  Csr<std::uint32_t> vv_list_;              ///< vertex -> vt << 2 | local vertex
  Csr<VEntry> ve_list_;                     ///< edge -> volumetric-tet terms
  edge_assembly::VertexSweep sweep_;        ///< cells: the volumetric tets

  mutable std::vector<double> zeta_, g_, vt_buf_;  ///< scratch: 1/edge, 1/edge, kVolBuf/vol tet
  mutable std::vector<std::uint8_t> vt_active_;    ///< scratch: penalty active per vol tet (cubic: J < 1)
};

StvkTsep::StvkTsep(std::span<const double> coords, std::span<const LocalIndex> tets,
                   std::span<const TetMaterial> materials, std::span<const std::int32_t> material_of_tet, bool nsn)
    : EdgeFormulation(coords), nsn_(nsn) {
  tetgeo::check_inputs(coords.size(), tets, materials.size(), material_of_tet,
                       nsn ? "make_stvk_tsep (nsn)" : "make_stvk_tsep");
  const Topology topo = build_topology(n_vertices_, tets);
  edges_ = edge_assembly::EdgeBlocks(n_vertices_, topo.edges);
  setup_laps::mark(setup_laps::Phase::topology);
  const std::int64_t ne = edges_.n_edges();
  H_.resize(ne);
  for (std::int64_t e = 0; e < ne; ++e) {
    const LocalIndex a = edges_.v0(e), b = edges_.v1(e);
    double h = 0.0;
    for (int c = 0; c < 3; ++c) h += (coords[3 * a + c] - coords[3 * b + c]) * (coords[3 * a + c] - coords[3 * b + c]);
    H_[e] = h;  // eq. 16
  }
  std::vector<double> LP;
  std::vector<std::int64_t> vol_of_tet;
  tet_coefficients(coords, tets, topo, materials, material_of_tet, LP, vol_of_tet);
  std::vector<std::int64_t> vt_first = sort_volumetric_tets(vol_of_tet);
  if (!nsn_) tsep_lists(topo, tets, LP);
  volumetric_lists(topo, vol_of_tet);

  sweep_ = edge_assembly::VertexSweep(
      n_vertices_, topo.edges, std::move(vt_first),
      [&](std::int64_t k, auto&& sink) {
        for (int i = 0; i < 4; ++i) sink(vt_verts_[k][i]);
      },
      [&](std::int64_t k, auto&& sink) {
        for (int s = 0; s < 6; ++s) sink(topo.tet_edges[vol_of_tet[k]][s]);
      });
  const auto& edge_first = sweep_.edge_first();
  const auto& vt_first_sorted = sweep_.cell_first();
  sweep_.set_cost([&](LocalIndex v) {
    const std::int64_t e0 = edge_first[v], e1 = edge_first[v + 1];
    const std::int64_t kterms = nsn_ ? 0 : 2 * k_terms_.n_groups(e0, e1);
    return 16 + 8 * (e1 - e0) + kterms + 16 * (vt_first_sorted[v + 1] - vt_first_sorted[v]);
  });

  zeta_.resize(ne);
  g_.resize(ne);
  vt_buf_.resize(kVolBuf * n_vol_);
  vt_active_.assign(n_vol_, 0);
}

void StvkTsep::tet_coefficients(std::span<const double> coords, std::span<const LocalIndex> tets, const Topology& topo,
                                std::span<const TetMaterial> materials, std::span<const std::int32_t> material_of_tet,
                                std::vector<double>& LP, std::vector<std::int64_t>& vol_of_tet) {
  // L(E) = sum_T L_T(E, E), L(P) = sum_T L_T(a, b) (eq. 23); per-rank partial sums in a distributed run.
  const std::int64_t nt = topo.n_tets(), ne = edges_.n_edges();
  L_.clear();
  resize_first_touched(L_, static_cast<std::size_t>(ne));  // zeros
  LP.clear();
  if (!nsn_) resize_first_touched(LP, topo.tseps.size());
  // By chunks of tets: L_T and the TSEP ids on the threads, then the sums in tet order (the same sums on any
  // number of threads).
  constexpr std::int64_t kChunk = 8192;
  struct TetTerms {
    double LT[6][6];
    std::int64_t tsep[15];
    RefTetScalars ref;
  };
  std::vector<TetTerms> chunk(static_cast<std::size_t>(std::min(nt, kChunk)));
  for (std::int64_t t0 = 0; t0 < nt; t0 += kChunk) {
    const std::int64_t t1 = std::min(nt, t0 + kChunk);
    std::int64_t failed = nt;  // the first degenerate tet of the chunk
    std::string failure;
#pragma omp parallel for schedule(static)
    for (std::int64_t t = t0; t < t1; ++t) {
      TetTerms& out = chunk[static_cast<std::size_t>(t - t0)];
      double X[12];
      for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * tets[4 * t + i] + c];
      tetgeo::RefTet r{};
      try {
        r = tetgeo::reference_tet(X, t);
      } catch (const std::invalid_argument& e) {
#pragma omp critical(stvk_tsep_degenerate)
        if (t < failed) failed = t, failure = e.what();
        continue;
      }
      out.ref = {r.c_ini, r.v0};
      const TetMaterial& mat = materials[material_of_tet[t]];
      if (mat.isotropic)
        tetgeo::edge_coefficients(r, mat.lambda, mat.mu, out.LT);
      else
        tetgeo::edge_coefficients(r, mat.D.data(), out.LT);
      if (!nsn_)
        for (int s1 = 0, k = 0; s1 < 6; ++s1)
          for (int s2 = s1 + 1; s2 < 6; ++s2, ++k) out.tsep[k] = tsep_of(topo, tets, t, s1, s2);
    }
    if (failed < nt) throw std::invalid_argument(failure);
    for (std::int64_t t = t0; t < t1; ++t) {
      const TetTerms& in = chunk[static_cast<std::size_t>(t - t0)];
      for (int s = 0; s < 6; ++s) L_[topo.tet_edges[t][s]] += in.LT[s][s];
      if (!nsn_)
        for (int s1 = 0, k = 0; s1 < 6; ++s1)
          for (int s2 = s1 + 1; s2 < 6; ++s2, ++k) LP[in.tsep[k]] += in.LT[s1][s2];
      const TetMaterial& mat = materials[material_of_tet[t]];
      if (mat.volumetric != VolumetricPenalty::none && mat.k_vol != 0.0) {
        vol_of_tet.push_back(t);
        vt_verts_.push_back({tets[4 * t], tets[4 * t + 1], tets[4 * t + 2], tets[4 * t + 3]});
        vt_cini_.push_back(in.ref.c_ini);
        vt_kv_.push_back(in.ref.v0 * mat.k_vol);
        vt_kind_.push_back(mat.volumetric);
      }
    }
  }
  L2_.resize(ne);
  for (std::int64_t e = 0; e < ne; ++e) L2_[e] = 2.0 * L_[e];
}

std::vector<std::int64_t> StvkTsep::sort_volumetric_tets(std::vector<std::int64_t>& vol_of_tet) {
  n_vol_ = static_cast<std::int64_t>(vt_verts_.size());
  std::vector<std::int64_t> order;
  auto first = edge_assembly::sort_cells(
      n_vertices_, n_vol_,
      [&](std::int64_t k) {
        const auto& v = vt_verts_[k];
        return std::min(std::min(v[0], v[1]), std::min(v[2], v[3]));
      },
      order);
  auto permute = [&](auto& vec) {
    auto old = vec;
    for (std::int64_t k = 0; k < n_vol_; ++k) vec[k] = old[order[k]];
  };
  permute(vol_of_tet);
  permute(vt_verts_);
  permute(vt_cini_);
  permute(vt_kv_);
  permute(vt_kind_);
  return first;
}

void StvkTsep::tsep_lists(const Topology& topo, std::span<const LocalIndex> tets, const std::vector<double>& LP) {
  const auto& tp = topo.tseps;
  const auto np = static_cast<std::int64_t>(tp.size());
  // g gather (eq. 28): each TSEP feeds both of its edges.
  std::vector<std::array<LocalIndex, 2>> pairs;
  resize_first_touched(pairs, static_cast<std::size_t>(np));
#pragma omp parallel for schedule(static)
  for (std::int64_t P = 0; P < np; ++P) pairs[P] = {tp[P].edge0, tp[P].edge1};
  g_terms_ = edge_assembly::TsepGather(edges_.n_edges(), pairs, LP);
  // K(E) gather (eq. 31): for i, j in {0, 1} with A_i = V_e(a, i) != B_j = V_e(b, j), the edge E joining
  // them receives (-1)^(i+j) K_p if A_i = v0(E), else (-1)^(i+j) K_p^T (K_p = 2 L(P) p_a p_b^T, eq. 32).
  // E is an edge of every tet holding P (type 2: its tet; type 1: a tet of its face), so it is read from that
  // tet's edge slots instead of searched for in the edge list.
  std::vector<std::int64_t> face_tet(static_cast<std::size_t>(topo.n_faces()));
  for (std::int64_t t = 0; t < topo.n_tets(); ++t)
    for (int m = 0; m < 4; ++m) face_tet[static_cast<std::size_t>(topo.tet_faces[t][m])] = t;
  constexpr int kSlot[4][4] = {{-1, 0, 1, 2}, {0, -1, 3, 4}, {1, 3, -1, 5}, {2, 4, 5, -1}};  // kEdgeLocal's inverse
  std::vector<std::array<LocalIndex, 4>> cross;  // E_p2(P, i, j), -1: none
  resize_first_touched(cross, static_cast<std::size_t>(np));
#pragma omp parallel for schedule(static)
  for (std::int64_t P = 0; P < np; ++P) {
    const std::int64_t t = P < topo.n_type1 ? face_tet[static_cast<std::size_t>(P / 3)] : (P - topo.n_type1) / 3;
    const LocalIndex* v = tets.data() + 4 * t;
    const auto local = [v](LocalIndex w) { return w == v[0] ? 0 : w == v[1] ? 1 : w == v[2] ? 2 : 3; };
    const LocalIndex A[2] = {edges_.v0(tp[P].edge0), edges_.v1(tp[P].edge0)};
    const LocalIndex B[2] = {edges_.v0(tp[P].edge1), edges_.v1(tp[P].edge1)};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)  // A_i == B_j lands on K(v, v): covered by algKV
        cross[P][2 * i + j] = A[i] == B[j] ? -1 : topo.tet_edges[t][kSlot[local(A[i])][local(B[j])]];
  }
  k_terms_ = edge_assembly::GroupedEdgeTerms(edges_, np, [&](std::int64_t P, auto&& sink) {
    const LocalIndex a = tp[P].edge0, b = tp[P].edge1;
    const LocalIndex A[2] = {edges_.v0(a), edges_.v1(a)}, B[2] = {edges_.v0(b), edges_.v1(b)};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const LocalIndex E = cross[P][2 * i + j];
        if (E < 0) continue;
        const double coef = (((i + j) & 1) ? -2.0 : 2.0) * LP[P];
        sink(A[i] < B[j] ? edge_assembly::EdgeTerm{E, a, b, coef}
                         : edge_assembly::EdgeTerm{E, b, a, coef});  // A_i = v0(E): K_p, else K_p^T
      }
  });
}

void StvkTsep::volumetric_lists(const Topology& topo, const std::vector<std::int64_t>& vol_of_tet) {
  edge_assembly::check_packable(n_vol_, 27, "volumetric tetrahedra");
  vv_list_ = edge_assembly::build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
    for (std::int64_t k = 0; k < n_vol_; ++k)
      for (int i = 0; i < 4; ++i) sink(vt_verts_[k][i], static_cast<std::uint32_t>(k << 2 | i));
  });
  ve_list_ = edge_assembly::build_csr<VEntry>(edges_.n_edges(), [&](auto&& sink) {
    for (std::int64_t k = 0; k < n_vol_; ++k) {
      const auto& v = vt_verts_[k];
      for (int s = 0; s < 6; ++s) {
        const bool transpose = v[kEdgeLocal[s][0]] > v[kEdgeLocal[s][1]];
        // After the transpose swap (k, l) -> (l, k); x_k - x_l = +p(opposite) iff x_k is its smaller vertex.
        const int kk = kEdgeOpp[s][transpose ? 1 : 0], l = kEdgeOpp[s][transpose ? 0 : 1];
        const bool negate = v[kk] > v[l];
        const auto& te = topo.tet_edges[vol_of_tet[k]];
        sink(te[s], VEntry{static_cast<std::uint32_t>(k << 5 | s << 2 | (transpose ? 2 : 0) | (negate ? 1 : 0)),
                           edges_.v0(te[5 - s]), edges_.v1(te[5 - s])});
      }
    }
  });
}

void StvkTsep::check_x(std::span<const double> x) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_))
    throw std::invalid_argument("stvk: x holds " + std::to_string(x.size()) + " values, expected " +
                                std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
}

void StvkTsep::edge_terms(const double* x) const {
  const std::int64_t ne = edges_.n_edges();
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {  // algF, first loop (eqs. 9, 15)
    double p[3];
    edges_.edge_vector(e, x, p);
    zeta_[e] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] - H_[e];
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e)  // eq. 28 as a gather (the TSEP loop of algF)
    g_[e] = nsn_ ? L_[e] * zeta_[e] : g_terms_.g(e, L_[e], zeta_.data());
}

void StvkTsep::vol_tet(std::int64_t k, const double* x) const {
  // algB, per tet: C = (x1-x0).((x2-x0)x(x3-x0)), c_i = dC/dx_i, W = V0 k psi(C/C_ini - 1), so
  // f_i = a1 c_i and K_ij = a2 c_i c_j^T + a1 d2C/dx_i dx_j with a1 = V0 k psi'/C_ini, a2 = V0 k psi''/C_ini^2.
  // Cubic: active when J < 1 only; quadratic: always (a1 = 0 at J = 1 but a2 != 0).
  const auto& v = vt_verts_[k];
  const double* x0 = x + 3 * std::int64_t{v[0]};
  double d[3][3];
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) d[i][c] = x[3 * std::int64_t{v[i + 1]} + c] - x0[c];
  double* buf = &vt_buf_[kVolBuf * k];
  // buf + 3 i - 1 = dC/dx_i, i = 1..3 (dC/dx_0 = -(sum of the others) is formed on use, see vol_grad)
  tetgeo::cross(d[1], d[2], buf + 2);
  const double theta = tetgeo::dot(d[0], buf + 2) / vt_cini_[k] - 1.0;
  const VolumetricPenalty kind = vt_kind_[k];
  const bool active = kind == VolumetricPenalty::quadratic || theta < 0.0;
  vt_active_[k] = active;
  if (!active) return;
  const tetgeo::Penalty pen = tetgeo::vol_penalty(theta, kind);
  tetgeo::cross(d[2], d[0], buf + 5);
  tetgeo::cross(d[0], d[1], buf + 8);
  buf[0] = vt_kv_[k] * pen.d1 / vt_cini_[k];
  buf[1] = vt_kv_[k] * pen.d2 / (vt_cini_[k] * vt_cini_[k]);
}

double StvkTsep::energy(std::span<const double> x) const {
  // Eq. 24 rewritten with g (eq. 28): sum_E L zeta^2/4 + sum_P L(P) zeta_a zeta_b/2 = sum_E zeta(E) g(E) / 4.
  check_x(x);
  const std::int64_t ne = edges_.n_edges(), nvt = n_vol_;
  const double* xd = x.data();
  double w_edge = 0.0, w_vol = 0.0;
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    double p[3];
    edges_.edge_vector(e, xd, p);
    zeta_[e] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] - H_[e];
  }
#pragma omp parallel for schedule(static) reduction(+ : w_edge)
  for (std::int64_t e = 0; e < ne; ++e)
    w_edge += zeta_[e] * (nsn_ ? L_[e] * zeta_[e] : g_terms_.g(e, L_[e], zeta_.data()));
#pragma omp parallel for schedule(static) reduction(+ : w_vol)
  for (std::int64_t k = 0; k < nvt; ++k) {
    const auto& v = vt_verts_[k];
    double d[3][3], c[3];
    for (int i = 0; i < 3; ++i)
      for (int cc = 0; cc < 3; ++cc) d[i][cc] = xd[3 * std::int64_t{v[i + 1]} + cc] - xd[3 * std::int64_t{v[0]} + cc];
    tetgeo::cross(d[1], d[2], c);
    w_vol += vt_kv_[k] * tetgeo::vol_penalty(tetgeo::dot(d[0], c) / vt_cini_[k] - 1.0, vt_kind_[k]).psi;
  }
  return 0.25 * w_edge + w_vol;  // eq. 24 + eq. 40
}

void StvkTsep::force(std::span<const double> x, std::span<double> f) const {
  check_x(x);
  if (f.size() != x.size()) throw std::invalid_argument("stvk: f has the wrong size");
  evaluate<false>(x.data(), f.data(), nullptr);
}

void StvkTsep::force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const {
  check_x(x);
  if (f.size() != x.size()) throw std::invalid_argument("stvk: f has the wrong size");
  edges_.check_blocks(blocks, "stvk");
  evaluate<true>(x.data(), f.data(), blocks.data());
}

void StvkTsep::edge_block(std::int64_t e, const double* x, double* kedge) const {
  // algKE: K(E) = -g I - 2 L p p^T + TSEP terms (eq. 31), then algB's edge terms.
  double p[3];
  edges_.edge_vector(e, x, p);  // p(E), as edge_terms forms it
  const double g = g_[e], l2 = L2_[e];
  double K[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) K[3 * r + c] = -l2 * p[r] * p[c];
  K[0] -= g;
  K[4] -= g;
  K[8] -= g;
  if (!nsn_) k_terms_.add(e, x, x + 3 * std::int64_t{edges_.v1(e)}, K);
  for (std::int64_t k = ve_list_.ptr[e]; k < ve_list_.ptr[e + 1]; ++k) {
    const VEntry ve = ve_list_.codes[k];
    const std::int64_t vt = ve.code >> 5;
    if (!vt_active_[vt]) continue;
    const double* buf = &vt_buf_[kVolBuf * vt];
    const int slot = (ve.code >> 2) & 7;
    int i = kEdgeLocal[slot][0], j = kEdgeLocal[slot][1];
    if (ve.code & 2) std::swap(i, j);  // block (j, i) = a2 c_j c_i^T + a1 [(x_l - x_k) x]
    double c0[3];
    const double* ci = vol_grad(buf, i, c0);
    const double* cj = vol_grad(buf, j, c0);
    const double* xk = x + 3 * std::int64_t{ve.opp0};
    const double* xl = x + 3 * std::int64_t{ve.opp1};
    const double po[3] = {xk[0] - xl[0], xk[1] - xl[1], xk[2] - xl[2]};  // p(opposite), as edge_terms forms it
    const double a1 = (ve.code & 1) ? -buf[0] : buf[0], a2 = buf[1];
    const double d[3] = {a1 * po[0], a1 * po[1], a1 * po[2]};    // a1 (x_k - x_l)
    const double sci[3] = {a2 * ci[0], a2 * ci[1], a2 * ci[2]};  // a2 c_i c_j^T
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) K[3 * r + c] += sci[r] * cj[c];
    K[1] -= d[2];
    K[2] += d[1];
    K[3] += d[2];
    K[5] -= d[0];
    K[6] -= d[1];
    K[7] += d[0];
  }
  edge_assembly::write_edge_block(kedge, e, K);
}

void StvkTsep::vertex_terms(LocalIndex v, const double* x, double* f, double* blocks, const double* kedge) const {
  // algF's last loop as a gather: f(v) = sum_E t(v, E) g(E) p(E); algKV: K(v, v) = -sum_w K(v, w).
  double fv[3] = {0.0, 0.0, 0.0};
  const double* xv = x + 3 * std::int64_t{v};
  edges_.gather_vertex(v, kedge, blocks, [&](std::int64_t e, bool is_v1) EDGEFEM_INLINE {
    const double s = is_v1 ? -g_[e] : g_[e];
    // p(E) from the (cache-resident) positions, bitwise as edge_terms forms it: x(v0) - x(v1).
    const double* xo = x + 3 * std::int64_t{is_v1 ? edges_.v0(e) : edges_.v1(e)};
    const double p[3] = {is_v1 ? xo[0] - xv[0] : xv[0] - xo[0], is_v1 ? xo[1] - xv[1] : xv[1] - xo[1],
                         is_v1 ? xo[2] - xv[2] : xv[2] - xo[2]};
    fv[0] += s * p[0];
    fv[1] += s * p[1];
    fv[2] += s * p[2];
  });
  for (std::int64_t k = vv_list_.ptr[v]; k < vv_list_.ptr[v + 1]; ++k) {  // algB forces: f(v) += a1 dC/dx(v)
    const std::uint32_t code = vv_list_.codes[k];
    if (!vt_active_[code >> 2]) continue;  // penalty inactive: buffer not filled
    const double* buf = &vt_buf_[kVolBuf * std::int64_t{code >> 2}];
    double c0[3];
    const double a1 = buf[0], *ci = vol_grad(buf, code & 3, c0);
    fv[0] += a1 * ci[0];
    fv[1] += a1 * ci[1];
    fv[2] += a1 * ci[2];
  }
  f[3 * std::int64_t{v}] = fv[0];
  f[3 * std::int64_t{v} + 1] = fv[1];
  f[3 * std::int64_t{v} + 2] = fv[2];
}

template <bool kStiffness>
void StvkTsep::evaluate(const double* x, double* f, double* blocks) const {
  edge_terms(x);
  // The fused sweep (edge_assembly.hpp) over the volumetric tets, then the edge blocks, then f(v) and K(v, v).
  double* kedge = kStiffness ? edges_.edge_blocks(blocks) : nullptr;  // K(E) at 18 e, K(E)^T at 18 e + 9
  sweep_.run<kStiffness>([&](std::int64_t k) EDGEFEM_INLINE { vol_tet(k, x); },
                         [&](std::int64_t e) EDGEFEM_INLINE { edge_block(e, x, kedge); },
                         [&](LocalIndex v) EDGEFEM_INLINE { vertex_terms(v, x, f, blocks, kedge); });
}

std::size_t StvkTsep::bytes() const {
  using edge_assembly::vector_bytes;
  return edges_.bytes() + vector_bytes(H_) + vector_bytes(L_) + vector_bytes(L2_) + g_terms_.bytes() +
         k_terms_.bytes() + vector_bytes(vt_verts_) + vector_bytes(vt_cini_) + vector_bytes(vt_kv_) +
         vector_bytes(vt_kind_) + vv_list_.bytes() + ve_list_.bytes() + sweep_.bytes() + vector_bytes(zeta_) +
         vector_bytes(g_) + vector_bytes(vt_buf_) + vector_bytes(vt_active_);
}

}  // namespace

std::unique_ptr<TetFormulation> make_stvk_tsep(std::span<const double> coords, std::span<const LocalIndex> tets,
                                               std::span<const TetMaterial> materials,
                                               std::span<const std::int32_t> material_of_tet, bool nsn) {
  return std::make_unique<StvkTsep>(coords, tets, materials, material_of_tet, nsn);
}

}  // namespace edgefem
