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
///   the coefficient, 12 bytes; per group the two vertices of a, 8 bytes;
/// - edge vectors are never stored: p(E) = x(v0) - x(v1) is re-formed (bitwise identically) from the positions,
///   whose window (about one layer of vertices) stays in L2, instead of gathering from a 24 B/edge array;
/// - volumetric tets are sorted by their smallest vertex and evaluated in the same fused vertex sweep as the
///   edge blocks and the vertex gathers (as stvk_tl.cpp), so their 96-byte buffers are consumed while in cache.
///
/// Scratch buffers are members (mutable): one object must not be evaluated from two threads at once; each
/// call is itself OpenMP-parallel.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <omp.h>

#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"
#include "mesh/topology.hpp"

namespace edgefem {

namespace {

using tetgeo::Csr;
using tetgeo::kEdgeLocal;
using tetgeo::kEdgeOpp;

/// One TSEP term of the g gather of an edge E (construction only): g(E) += L(tsep) * zeta(other).
struct GEntry {
  LocalIndex other;
  std::uint32_t tsep;
};

/// One volumetric-tet term of the K(E) gather. code = vt << 5 | slot << 2 | transpose << 1 | negate: K(E) gets
/// block (i, j) of tet vt's penalty Hessian, (i, j) = kEdgeLocal[slot] (swapped if transpose), whose cross-product
/// part [(x_k - x_l) x] uses x_k - x_l = (negate ? -1 : 1) p(opposite), the edge opposite to E in the tet, formed
/// from the positions of its vertices (opp0, opp1) = (v0, v1)(opposite) (the vertex array is cache-resident; p is not).
struct VEntry {
  std::uint32_t code;
  LocalIndex opp0, opp1;
};

/// One TSEP term of the K(E) gather (construction only): K(E) += coef * p(a) p(b)^T, coef = (-1)^(i+j) 2 L(P),
/// with (a, b) the TSEP's edges, swapped when the term is K_p^T; tsep = P << 1 | ((i + j) odd).
struct KEntry {
  LocalIndex a, b;
  std::uint32_t tsep;
};

/// Per volumetric tet scratch: [a1, a2, dC/dx_1, dC/dx_2, dC/dx_3, unused] (96 bytes).
constexpr std::int64_t kVolBuf = 12;

/// dC/dx_i of a volumetric tet's buffer; dC/dx_0 = -(dC/dx_1 + dC/dx_2 + dC/dx_3) is formed in `c0`.
inline const double* vol_grad(const double* buf, int i, double* c0) {
  if (i > 0) return buf + 3 * i - 1;
  for (int cc = 0; cc < 3; ++cc) c0[cc] = -(buf[2 + cc] + buf[5 + cc] + buf[8 + cc]);
  return c0;
}

class StvkTsep final : public TetFormulation {
 public:
  StvkTsep(std::span<const double> coords, std::span<const LocalIndex> tets, std::span<const TetMaterial> materials,
           std::span<const std::int32_t> material_of_tet, bool nsn);

  [[nodiscard]] std::string_view name() const override { return nsn_ ? "stvk-nsn" : "stvk"; }
  [[nodiscard]] LocalIndex n_vertices() const override { return n_vertices_; }
  [[nodiscard]] const std::vector<std::array<LocalIndex, 2>>& block_pattern() const override { return pattern_; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override;

 private:
  void check_x(std::span<const double> x) const;
  void edge_terms(const double* x) const;  ///< zeta (algF first loop), then g (TSEP gather); p(E) is re-formed from x where needed
  /// Volumetric tet k: active flag and buffer [a1, a2, dC/dx_1..3] (algB, first half).
  [[gnu::always_inline]] inline void vol_tet(std::int64_t k, const double* x) const;
  /// K(E) and K(E)^T of edge e into the output blocks (algKE + algB's edge terms).
  [[gnu::always_inline]] inline void edge_block(std::int64_t e, const double* x, double* kedge) const;
  /// f(v) and (kedge != nullptr) K(v, v).
  [[gnu::always_inline]] inline void vertex_terms(std::int64_t v, const double* x, double* f, double* blocks,
                                                  const double* kedge) const;
  /// First vertex of the k-th of n vertex ranges with balanced work (cost_ prefix sums).
  [[nodiscard]] LocalIndex split(int k, int n) const;
  void evaluate(const double* x, double* f, double* blocks) const;

  LocalIndex n_vertices_ = 0;
  bool nsn_ = false;
  std::int64_t n_edges_ = 0, n_touched_ = 0, n_vol_ = 0;

  // Edges (structure of arrays).
  std::vector<LocalIndex> ev0_, ev1_;
  std::vector<double> H_, L_, L2_;
  // TSEP terms, stored inline in per-edge gathers so the hot loops stream them (empty for NSN).
  std::vector<std::int64_t> g_ptr_;  ///< edge -> g terms (g_other_, g_coef_ = L(P))
  std::vector<LocalIndex> g_other_;
  std::vector<double> g_coef_;
  // K(E) terms (structure of arrays), grouped by their first edge a: edge e -> groups [kg_ptr_[e], kg_ptr_[e + 1]), group q -> edge
  // a = kg_a_[q] and terms [kg_end_[q - 1], kg_end_[q]) (kg_end_[-1] = 0), term k -> vertex kb_[k], coefficient kc_[k].
  std::vector<std::uint32_t> kg_ptr_;
  std::vector<std::array<LocalIndex, 2>> kg_a_;  ///< (v0, v1)(a): p(a) is formed from the cache-resident x
  std::vector<std::uint32_t> kg_end_;
  std::vector<LocalIndex> kb_;  ///< the end k != v1(E) of the term's second edge b: p(b) = +-(x(v1(E)) - x(k))
  std::vector<double> kc_;      ///< +-(-1)^(i+j) 2 L(P), the sign making p(b) = x(v1(E)) - x(k)
  Csr<std::uint32_t> v_list_;   ///< vertex -> edge << 1 | (vertex is v1)
  std::vector<LocalIndex> diag_slot_;  ///< block index of K(v, v), -1 for untouched vertices
  // Volumetric tets (algB).
  std::vector<std::array<LocalIndex, 4>> vt_verts_;
  std::vector<double> vt_cini_, vt_kv_;   ///< signed C_ini, V0 k_vol
  std::vector<VolumetricPenalty> vt_kind_;  ///< cubic or quadratic
  Csr<std::uint32_t> vv_list_;  ///< vertex -> vt << 2 | local vertex
  Csr<VEntry> ve_list_;         ///< edge -> volumetric-tet terms
  // Fused sweep (see evaluate()): volumetric tets are sorted by their smallest vertex.
  std::vector<std::int64_t> vt_first_;    ///< vertex -> first vol tet whose smallest vertex is >= it
  std::vector<std::int64_t> edge_first_;  ///< vertex -> first edge with v0 >= it
  std::vector<LocalIndex> lo_edge_;       ///< per edge: min(v0, smallest vertex of its vol tets)
  std::vector<LocalIndex> lo_vertex_;     ///< per vertex: min(itself, v0 of its edges, smallest vertex of its vol tets)
  std::vector<std::int64_t> cost_;        ///< vertex -> prefix sum of the sweep's work estimate
  std::vector<std::array<LocalIndex, 2>> pattern_;

  mutable std::vector<double> zeta_, g_, vt_buf_;  ///< scratch: 1/edge, 1/edge, kVolBuf/vol tet
  mutable std::vector<std::uint8_t> vt_active_;       ///< scratch: penalty active per vol tet (cubic: J < 1)
};

StvkTsep::StvkTsep(std::span<const double> coords, std::span<const LocalIndex> tets,
                   std::span<const TetMaterial> materials, std::span<const std::int32_t> material_of_tet, bool nsn)
    : n_vertices_(static_cast<LocalIndex>(coords.size() / 3)), nsn_(nsn) {
  tetgeo::check_inputs(coords.size(), tets, materials.size(), material_of_tet, nsn ? "make_stvk_tsep (nsn)" : "make_stvk_tsep");
  const Topology topo = build_topology(n_vertices_, tets);
  const std::int64_t nt = topo.n_tets(), np = static_cast<std::int64_t>(topo.tseps.size());
  n_edges_ = topo.n_edges();
  tetgeo::check_packable(n_edges_, 31, "edges");

  ev0_.resize(n_edges_);
  ev1_.resize(n_edges_);
  H_.resize(n_edges_);
  for (std::int64_t e = 0; e < n_edges_; ++e) {
    const auto [a, b] = topo.edges[e];
    ev0_[e] = a;
    ev1_[e] = b;
    double h = 0.0;
    for (int c = 0; c < 3; ++c) h += (coords[3 * a + c] - coords[3 * b + c]) * (coords[3 * a + c] - coords[3 * b + c]);
    H_[e] = h;  // eq. 16
  }

  // TSEP id of the local edge-slot pair (s1, s2) of tet t (layout contract of topology.hpp).
  auto tsep_of = [&](std::int64_t t, int s1, int s2) -> std::int64_t {
    if (s1 + s2 == 5) return topo.n_type1 + 3 * t + std::min(s1, s2);  // opposite edges: type 2
    const int* a = kEdgeLocal[s1];
    const int* b = kEdgeLocal[s2];
    const int shared = (a[0] == b[0] || a[0] == b[1]) ? a[0] : a[1];
    const int missing = 6 - (a[0] + a[1] + b[0] + b[1] - shared);  // local vertex off the common face
    const LocalIndex f = topo.tet_faces[t][missing];
    const LocalIndex g = tets[4 * t + shared];
    const int k = topo.faces[f][0] == g ? 0 : (topo.faces[f][1] == g ? 1 : 2);
    return 3 * std::int64_t{f} + k;
  };

  // L(E) = sum_T L_T(E, E), L(P) = sum_T L_T(a, b) (eq. 23); per-rank partial sums in a distributed run.
  L_.assign(n_edges_, 0.0);
  std::vector<double> LP;
  if (!nsn_) LP.assign(np, 0.0);
  std::vector<std::int64_t> vol_of_tet;
  for (std::int64_t t = 0; t < nt; ++t) {
    double X[12];
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * tets[4 * t + i] + c];
    const tetgeo::RefTet r = tetgeo::reference_tet(X, t);
    const TetMaterial& mat = materials[material_of_tet[t]];
    double LT[6][6];
    if (mat.isotropic)
      tetgeo::edge_coefficients(r, mat.lambda, mat.mu, LT);
    else
      tetgeo::edge_coefficients(r, mat.D.data(), LT);
    for (int s = 0; s < 6; ++s) L_[topo.tet_edges[t][s]] += LT[s][s];
    if (!nsn_)
      for (int s1 = 0; s1 < 6; ++s1)
        for (int s2 = s1 + 1; s2 < 6; ++s2) LP[tsep_of(t, s1, s2)] += LT[s1][s2];
    if (mat.volumetric != VolumetricPenalty::none && mat.k_vol != 0.0) {
      vol_of_tet.push_back(t);
      vt_verts_.push_back({tets[4 * t], tets[4 * t + 1], tets[4 * t + 2], tets[4 * t + 3]});
      vt_cini_.push_back(r.c_ini);
      vt_kv_.push_back(r.v0 * mat.k_vol);
      vt_kind_.push_back(mat.volumetric);
    }
  }
  L2_.resize(n_edges_);
  for (std::int64_t e = 0; e < n_edges_; ++e) L2_[e] = 2.0 * L_[e];
  {
    // Volumetric tets sorted (stably) by their smallest vertex, for the fused sweep of evaluate().
    const std::int64_t nvt = static_cast<std::int64_t>(vt_verts_.size());
    vt_first_.assign(static_cast<std::size_t>(n_vertices_) + 1, 0);
    auto lo_of = [](const std::array<LocalIndex, 4>& v) { return std::min(std::min(v[0], v[1]), std::min(v[2], v[3])); };
    for (std::int64_t k = 0; k < nvt; ++k) ++vt_first_[lo_of(vt_verts_[k]) + 1];
    for (LocalIndex v = 0; v < n_vertices_; ++v) vt_first_[v + 1] += vt_first_[v];
    std::vector<std::int64_t> order(static_cast<std::size_t>(nvt));
    std::vector<std::int64_t> cursor(vt_first_.begin(), vt_first_.end() - 1);
    for (std::int64_t k = 0; k < nvt; ++k) order[cursor[lo_of(vt_verts_[k])]++] = k;
    auto permute = [&](auto& vec) {
      auto old = vec;
      for (std::int64_t k = 0; k < nvt; ++k) vec[k] = old[order[k]];
    };
    permute(vol_of_tet);
    permute(vt_verts_);
    permute(vt_cini_);
    permute(vt_kv_);
    permute(vt_kind_);
  }

  if (!nsn_) {
    const auto& tp = topo.tseps;
    // g gather (eq. 28): each TSEP feeds both of its edges.
    tetgeo::check_packable(np, 31, "TSEPs");
    const auto g_list = tetgeo::build_csr<GEntry>(n_edges_, [&](auto&& sink) {
      for (std::int64_t P = 0; P < np; ++P) {
        sink(tp[P].edge0, GEntry{tp[P].edge1, static_cast<std::uint32_t>(P)});
        sink(tp[P].edge1, GEntry{tp[P].edge0, static_cast<std::uint32_t>(P)});
      }
    });
    // K(E) gather (eq. 31): for i, j in {0, 1} with A_i = V_e(a, i) != B_j = V_e(b, j), the edge E joining
    // them receives (-1)^(i+j) K_p if A_i = v0(E), else (-1)^(i+j) K_p^T (K_p = 2 L(P) p_a p_b^T, eq. 32).
    std::vector<std::int64_t> first_edge(static_cast<std::size_t>(n_vertices_) + 1, 0);  // edges sorted by v0
    for (std::int64_t e = 0; e < n_edges_; ++e) ++first_edge[ev0_[e] + 1];
    for (LocalIndex v = 0; v < n_vertices_; ++v) first_edge[v + 1] += first_edge[v];
    auto edge_between = [&](LocalIndex u, LocalIndex w) {
      const LocalIndex lo = std::min(u, w), hi = std::max(u, w);
      const auto first = ev1_.begin() + first_edge[lo], last = ev1_.begin() + first_edge[lo + 1];
      return static_cast<std::int64_t>(std::lower_bound(first, last, hi) - ev1_.begin());
    };
    std::vector<std::array<LocalIndex, 4>> cross(static_cast<std::size_t>(np));  // E_p2(P, i, j), -1: none
#pragma omp parallel for schedule(static)
    for (std::int64_t P = 0; P < np; ++P) {
      const LocalIndex A[2] = {ev0_[tp[P].edge0], ev1_[tp[P].edge0]}, B[2] = {ev0_[tp[P].edge1], ev1_[tp[P].edge1]};
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)  // A_i == B_j lands on K(v, v): covered by algKV
          cross[P][2 * i + j] = A[i] == B[j] ? -1 : static_cast<LocalIndex>(edge_between(A[i], B[j]));
    }
    auto k_list = tetgeo::build_csr<KEntry>(n_edges_, [&](auto&& sink) {
      for (std::int64_t P = 0; P < np; ++P) {
        const LocalIndex a = tp[P].edge0, b = tp[P].edge1;
        const LocalIndex A[2] = {ev0_[a], ev1_[a]}, B[2] = {ev0_[b], ev1_[b]};
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j) {
            const LocalIndex E = cross[P][2 * i + j];
            if (E < 0) continue;
            const auto code = static_cast<std::uint32_t>(P << 1 | ((i + j) & 1));
            sink(E, A[i] < B[j] ? KEntry{a, b, code} : KEntry{b, a, code});  // A_i = v0(E): K_p, else K_p^T
          }
      }
    });
    // Sort each edge's terms by their first edge so the loop can factor sum_b coef p_a p_b^T = p_a (sum_b coef p_b)^T.
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::int64_t e = 0; e < n_edges_; ++e)
      std::sort(k_list.codes.begin() + k_list.ptr[e], k_list.codes.begin() + k_list.ptr[e + 1],
                [](const KEntry& l, const KEntry& r) { return l.a != r.a ? l.a < r.a : l.b < r.b; });
    // Compact grouped lists (12 bytes per term plus 8 per group instead of 16 per term).
    tetgeo::check_packable(static_cast<std::int64_t>(k_list.codes.size()), 32, "K(E) terms");
    kg_ptr_.assign(static_cast<std::size_t>(n_edges_) + 1, 0);
    kb_.resize(k_list.codes.size());
    kc_.resize(k_list.codes.size());
    for (std::int64_t e = 0; e < n_edges_; ++e) {
      for (std::int64_t k = k_list.ptr[e]; k < k_list.ptr[e + 1]; ++k) {
        const KEntry& t = k_list.codes[k];
        if (k == k_list.ptr[e] || t.a != k_list.codes[k - 1].a) {
          if (k > k_list.ptr[e]) kg_end_.push_back(static_cast<std::uint32_t>(k));
          kg_a_.push_back({ev0_[t.a], ev1_[t.a]});
        }
        // t.a contains v0(e) and t.b contains w = v1(e): p(b) = +-(x_w - x_k), k the other end of b; the sign
        // goes into the coefficient (exact), so the loop gathers the 3 doubles of x_k from the (small) vertex
        // array instead of p(b) from the edge array.
        const LocalIndex w = ev1_[e];
        if ((ev0_[t.a] != ev0_[e] && ev1_[t.a] != ev0_[e]) || (ev0_[t.b] != w && ev1_[t.b] != w))
          throw std::logic_error("stvk: inconsistent K(E) term");
        const double coef = (t.tsep & 1 ? -2.0 : 2.0) * LP[t.tsep >> 1];
        kb_[k] = ev0_[t.b] == w ? ev1_[t.b] : ev0_[t.b];
        kc_[k] = ev0_[t.b] == w ? coef : -coef;
      }
      if (k_list.ptr[e + 1] > k_list.ptr[e]) kg_end_.push_back(static_cast<std::uint32_t>(k_list.ptr[e + 1]));
      kg_ptr_[e + 1] = static_cast<std::uint32_t>(kg_a_.size());
    }
    g_ptr_ = g_list.ptr;
    g_other_.resize(g_list.codes.size());
    g_coef_.resize(g_list.codes.size());
    for (std::size_t k = 0; k < g_list.codes.size(); ++k) {
      g_other_[k] = g_list.codes[k].other;
      g_coef_[k] = LP[g_list.codes[k].tsep];
    }
  }

  // Vertex gather over incident edges (forces, algKV) and the block pattern.
  v_list_ = tetgeo::build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
    for (std::int64_t e = 0; e < n_edges_; ++e) {
      sink(ev0_[e], static_cast<std::uint32_t>(e << 1));
      sink(ev1_[e], static_cast<std::uint32_t>(e << 1 | 1));
    }
  });
  n_touched_ = edge_block_pattern(
      n_vertices_, v_list_, n_edges_,
      [&](std::int64_t e) { return std::array<LocalIndex, 2>{ev0_[e], ev1_[e]}; }, diag_slot_, pattern_);

  // Volumetric tets: gathers into vertices (forces) and edges (K(E)).
  n_vol_ = static_cast<std::int64_t>(vt_verts_.size());
  tetgeo::check_packable(n_vol_, 27, "volumetric tetrahedra");
  vv_list_ = tetgeo::build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
    for (std::int64_t k = 0; k < n_vol_; ++k)
      for (int i = 0; i < 4; ++i) sink(vt_verts_[k][i], static_cast<std::uint32_t>(k << 2 | i));
  });
  ve_list_ = tetgeo::build_csr<VEntry>(n_edges_, [&](auto&& sink) {
    for (std::int64_t k = 0; k < n_vol_; ++k) {
      const auto& v = vt_verts_[k];
      for (int s = 0; s < 6; ++s) {
        const bool transpose = v[kEdgeLocal[s][0]] > v[kEdgeLocal[s][1]];
        // After the transpose swap (k, l) -> (l, k); x_k - x_l = +p(opposite) iff x_k is its smaller vertex.
        const int kk = kEdgeOpp[s][transpose ? 1 : 0], l = kEdgeOpp[s][transpose ? 0 : 1];
        const bool negate = v[kk] > v[l];
        const auto& te = topo.tet_edges[vol_of_tet[k]];
        sink(te[s], VEntry{static_cast<std::uint32_t>(k << 5 | s << 2 | (transpose ? 2 : 0) | (negate ? 1 : 0)),
                           ev0_[te[5 - s]], ev1_[te[5 - s]]});
      }
    }
  });

  edge_first_.assign(static_cast<std::size_t>(n_vertices_) + 1, 0);
  for (std::int64_t e = 0; e < n_edges_; ++e) ++edge_first_[ev0_[e] + 1];
  for (LocalIndex v = 0; v < n_vertices_; ++v) edge_first_[v + 1] += edge_first_[v];
  lo_edge_.assign(ev0_.begin(), ev0_.end());
  lo_vertex_.resize(n_vertices_);
  for (LocalIndex v = 0; v < n_vertices_; ++v) lo_vertex_[v] = v;
  for (std::int64_t e = 0; e < n_edges_; ++e) lo_vertex_[ev1_[e]] = std::min(lo_vertex_[ev1_[e]], ev0_[e]);
  for (std::int64_t k = 0; k < n_vol_; ++k) {
    const auto& v = vt_verts_[k];
    const LocalIndex lo = std::min(std::min(v[0], v[1]), std::min(v[2], v[3]));
    for (int i = 0; i < 4; ++i) lo_vertex_[v[i]] = std::min(lo_vertex_[v[i]], lo);
    const auto& te = topo.tet_edges[vol_of_tet[k]];
    for (int s = 0; s < 6; ++s) lo_edge_[te[s]] = std::min(lo_edge_[te[s]], lo);
  }
  cost_.assign(static_cast<std::size_t>(n_vertices_) + 1, 0);
  for (LocalIndex v = 0; v < n_vertices_; ++v) {
    const std::int64_t e0 = edge_first_[v], e1 = edge_first_[v + 1];
    const std::int64_t kterms = nsn_ ? 0 : 2 * (std::int64_t{kg_ptr_[e1]} - kg_ptr_[e0]);
    cost_[v + 1] = cost_[v] + 16 + 8 * (e1 - e0) + kterms + 16 * (vt_first_[v + 1] - vt_first_[v]);
  }

  zeta_.resize(n_edges_);
  g_.resize(n_edges_);
  vt_buf_.resize(kVolBuf * n_vol_);
  vt_active_.assign(n_vol_, 0);
}

LocalIndex StvkTsep::split(int k, int n) const {
  if (k >= n) return n_vertices_;
  const std::int64_t target = cost_[n_vertices_] / n * k;
  return static_cast<LocalIndex>(std::lower_bound(cost_.begin(), cost_.end() - 1, target) - cost_.begin());
}

void StvkTsep::check_x(std::span<const double> x) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_))
    throw std::invalid_argument("stvk: x holds " + std::to_string(x.size()) + " values, expected " +
                                std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
}

void StvkTsep::edge_terms(const double* x) const {
  const std::int64_t ne = n_edges_;
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {  // algF, first loop (eqs. 9, 15)
    const double* a = x + 3 * std::int64_t{ev0_[e]};
    const double* b = x + 3 * std::int64_t{ev1_[e]};
    const double p[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    zeta_[e] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] - H_[e];
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {  // eq. 28 as a gather (the TSEP loop of algF)
    double g = L_[e] * zeta_[e];
    if (!nsn_)
      for (std::int64_t k = g_ptr_[e]; k < g_ptr_[e + 1]; ++k) g += g_coef_[k] * zeta_[g_other_[k]];
    g_[e] = g;
  }
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
  const std::int64_t ne = n_edges_, nvt = n_vol_;
  const double* xd = x.data();
  double w_edge = 0.0, w_vol = 0.0;
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    const double* a = xd + 3 * std::int64_t{ev0_[e]};
    const double* b = xd + 3 * std::int64_t{ev1_[e]};
    const double p[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    zeta_[e] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] - H_[e];
  }
#pragma omp parallel for schedule(static) reduction(+ : w_edge)
  for (std::int64_t e = 0; e < ne; ++e) {
    double g = L_[e] * zeta_[e];
    if (!nsn_)
      for (std::int64_t k = g_ptr_[e]; k < g_ptr_[e + 1]; ++k) g += g_coef_[k] * zeta_[g_other_[k]];
    w_edge += zeta_[e] * g;
  }
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
  evaluate(x.data(), f.data(), nullptr);
}

void StvkTsep::force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const {
  check_x(x);
  if (f.size() != x.size()) throw std::invalid_argument("stvk: f has the wrong size");
  if (blocks.size() != 9 * pattern_.size())
    throw std::invalid_argument("stvk: blocks holds " + std::to_string(blocks.size()) + " values, expected " +
                                std::to_string(9 * pattern_.size()));
  evaluate(x.data(), f.data(), blocks.data());
}

void StvkTsep::edge_block(std::int64_t e, const double* x, double* kedge) const {
  // algKE: K(E) = -g I - 2 L p p^T + TSEP terms (eq. 31), then algB's edge terms.
  const double* xv0 = x + 3 * std::int64_t{ev0_[e]};
  const double* xv1 = x + 3 * std::int64_t{ev1_[e]};
  const double p[3] = {xv0[0] - xv1[0], xv0[1] - xv1[1], xv0[2] - xv1[2]};  // p(E), as edge_terms forms it
  const double g = g_[e], l2 = L2_[e];
  double K[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) K[3 * r + c] = -l2 * p[r] * p[c];
  K[0] -= g;
  K[4] -= g;
  K[8] -= g;
  if (!nsn_) {
    // Terms grouped by a: K += p_a q_a^T with q_a = sum_b coef p_b (3 flops per term instead of 9).
    const std::uint32_t q_end = kg_ptr_[e + 1];
    std::uint32_t q0 = kg_ptr_[e];
    std::uint32_t k = q0 > 0 ? kg_end_[q0 - 1] : 0;
    const double* xw = x + 3 * std::int64_t{ev1_[e]};
    for (std::uint32_t qg = q0; qg < q_end; ++qg) {
      double q[3] = {0.0, 0.0, 0.0};
      for (const std::uint32_t k_end = kg_end_[qg]; k < k_end; ++k) {
        const double coef = kc_[k];
        const double* xk = x + 3 * std::int64_t{kb_[k]};
        q[0] += coef * (xw[0] - xk[0]);
        q[1] += coef * (xw[1] - xk[1]);
        q[2] += coef * (xw[2] - xk[2]);
      }
      const double* xa0 = x + 3 * std::int64_t{kg_a_[qg][0]};
      const double* xa1 = x + 3 * std::int64_t{kg_a_[qg][1]};
      const double pa[3] = {xa0[0] - xa1[0], xa0[1] - xa1[1], xa0[2] - xa1[2]};  // p(a), as edge_terms forms it
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) K[3 * r + c] += pa[r] * q[c];
    }
  }
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
    const double d[3] = {a1 * po[0], a1 * po[1], a1 * po[2]};  // a1 (x_k - x_l)
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
  double* out = kedge + 18 * e;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      out[3 * r + c] = K[3 * r + c];
      out[9 + 3 * c + r] = K[3 * r + c];
    }
}

void StvkTsep::vertex_terms(std::int64_t v, const double* x, double* f, double* blocks, const double* kedge) const {
  // algF's last loop as a gather: f(v) = sum_E t(v, E) g(E) p(E); algKV: K(v, v) = -sum_w K(v, w).
  double fv[3] = {0.0, 0.0, 0.0};
  double D[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  const double* xv = x + 3 * v;
  for (std::int64_t k = v_list_.ptr[v]; k < v_list_.ptr[v + 1]; ++k) {
    const std::uint32_t code = v_list_.codes[k];
    const std::int64_t e = code >> 1;
    const double s = (code & 1) ? -g_[e] : g_[e];
    // p(E) from the (cache-resident) positions, bitwise as edge_terms forms it: x(v0) - x(v1).
    const double* xo = x + 3 * std::int64_t{(code & 1) ? ev0_[e] : ev1_[e]};
    const double p[3] = {(code & 1) ? xo[0] - xv[0] : xv[0] - xo[0], (code & 1) ? xo[1] - xv[1] : xv[1] - xo[1],
                         (code & 1) ? xo[2] - xv[2] : xv[2] - xo[2]};
    fv[0] += s * p[0];
    fv[1] += s * p[1];
    fv[2] += s * p[2];
    if (kedge) {
      const double* B = kedge + 18 * e + 9 * (code & 1);  // block (v, other end of E)
      for (int q = 0; q < 9; ++q) D[q] -= B[q];
    }
  }
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
  f[3 * v] = fv[0];
  f[3 * v + 1] = fv[1];
  f[3 * v + 2] = fv[2];
  if (kedge && diag_slot_[v] >= 0) std::memcpy(blocks + 9 * std::int64_t{diag_slot_[v]}, D, sizeof D);
}

/// Vertices per step of the fused sweep (as stvk_tl.cpp): a step's volumetric buffers and K(E) blocks are still
/// in cache when its edges and vertices gather them.
constexpr LocalIndex kChunk = 512;

void StvkTsep::evaluate(const double* x, double* f, double* blocks) const {
  edge_terms(x);
  // One fused sweep over the vertices in ascending order, in steps of kChunk vertices (as stvk_tl.cpp). Step
  // [v0, v1): the volumetric tets whose smallest vertex is in it, then the edges with v0(E) in it (all their
  // volumetric tets have smallest vertex <= v0(E)), then f(v) and K(v, v) (all tets and edges at v are done).
  // Each thread sweeps a contiguous vertex range [vb, ve); an edge or vertex depending on work below vb
  // (lo < vb) is deferred past a barrier. Sums are formed in the same order whichever pass computes them.
  double* kedge = blocks ? blocks + 9 * n_touched_ : nullptr;  // K(E) at 18 e, K(E)^T at 18 e + 9
#pragma omp parallel
  {
    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
    const LocalIndex vb = split(tid, nth), ve = split(tid + 1, nth);
    for (LocalIndex v0 = vb; v0 < ve; v0 += kChunk) {
      const LocalIndex v1 = std::min<LocalIndex>(ve, v0 + kChunk);
      for (std::int64_t k = vt_first_[v0]; k < vt_first_[v1]; ++k) vol_tet(k, x);
      if (kedge)
        for (std::int64_t e = edge_first_[v0]; e < edge_first_[v1]; ++e)
          if (lo_edge_[e] >= vb) edge_block(e, x, kedge);
      for (LocalIndex v = v0; v < v1; ++v)
        if (lo_vertex_[v] >= vb) vertex_terms(v, x, f, blocks, kedge);
    }
    if (nth > 1) {
#pragma omp barrier
      if (kedge) {
        for (LocalIndex v = vb; v < ve; ++v)
          if (lo_vertex_[v] < vb)  // only such vertices have edges with lo < vb
            for (std::int64_t e = edge_first_[v]; e < edge_first_[v + 1]; ++e)
              if (lo_edge_[e] < vb) edge_block(e, x, kedge);
#pragma omp barrier
      }
      for (LocalIndex v = vb; v < ve; ++v)
        if (lo_vertex_[v] < vb) vertex_terms(v, x, f, blocks, kedge);
    }
  }
}

std::size_t StvkTsep::bytes() const {
  auto vb = [](const auto& vec) { return vec.capacity() * sizeof(vec[0]); };
  return vb(ev0_) + vb(ev1_) + vb(H_) + vb(L_) + vb(L2_) + vb(g_ptr_) + vb(g_other_) + vb(g_coef_) +
         vb(kg_ptr_) + vb(kg_a_) + vb(kg_end_) + vb(kb_) + vb(kc_) + v_list_.bytes() + vb(diag_slot_) + vb(vt_verts_) + vb(vt_cini_) +
         vb(vt_kv_) + vb(vt_kind_) + vv_list_.bytes() + ve_list_.bytes() + vb(vt_first_) + vb(edge_first_) + vb(lo_edge_) + vb(lo_vertex_) + vb(cost_) + vb(pattern_) + vb(zeta_) + vb(g_) +
         vb(vt_buf_) + vb(vt_active_);
}

}  // namespace

std::unique_ptr<TetFormulation> make_stvk_tsep(std::span<const double> coords, std::span<const LocalIndex> tets,
                                               std::span<const TetMaterial> materials,
                                               std::span<const std::int32_t> material_of_tet, bool nsn) {
  return std::make_unique<StvkTsep>(coords, tets, materials, material_of_tet, nsn);
}

}  // namespace edgefem
