// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file edge_assembly.hpp
/// The edge-assembly engine every edge formulation shares (stvk, stvk-nsn, stvk-tl, linear, the triangle springs,
/// volino, the constant-stiffness models): the term lists, the race-free gathers, the K(v, v) rule, the block
/// layout and the fused vertex-ordered sweep, written once. A formulation supplies only its kernels (per edge,
/// per TSEP term, per cell) as lambdas; the loops here are templates, so the lambdas are inlined (no virtual call
/// or std::function per term) and every sum is formed in a fixed order: results are bitwise independent of the
/// thread count. Private to materials/ (no PETSc, no MPI).
///
/// Block layout (formulation.hpp's block_pattern()): a diagonal block (v, v) per touched vertex, ascending, then
/// (v0, v1) and (v1, v0) per edge in edge order; K(E) = block (v0, v1) sits at kedge + 18 e and its transpose at
/// kedge + 18 e + 9, kedge = blocks + 9 n_touched. Translation invariance gives K(v, v) = -sum_w K(v, w).
///
/// The pieces:
/// - Csr / build_csr (build_csr_parallel): compressed rows built in two passes over the same items (the gather
///   lists; no atomics);
/// - EdgeBlocks: the edges (v0 < v1, sorted), the vertex -> incident edge list, the pattern, the transposed edge
///   block write and the vertex gather that forms f(v) from a per-edge term and K(v, v) = -sum of row v;
/// - TsepGather: edge -> (other edge, coefficient), the g(E) = L(E) zeta(E) + sum L(P) zeta(other) gather;
/// - GroupedEdgeTerms: edge -> terms coef p(a) p(b)^T grouped by a, stored compactly (8 B per term);
/// - VertexSweep: the fused sweep over vertex ranges (cells, then edges, then vertices, deferring work below a
///   thread's first vertex past a barrier);
/// - ordered_sum, check_packable.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <omp.h>

#include "core/first_touch.hpp"
#include "materials/formulation.hpp"
#include "mesh/mesh.hpp"

/// Put after the parameter list of every kernel lambda handed to the engine's loops, e.g.
/// `[&](std::int64_t e) EDGEFEM_INLINE { ... }`: the loops run inside OpenMP-outlined functions, where GCC
/// otherwise calls the lambda out of line (measured: 3-8 % more instructions in the stvk kernels).
#define EDGEFEM_INLINE __attribute__((always_inline))

namespace edgefem::edge_assembly {

/// Bytes held by a vector (its capacity), for the formulations' bytes().
template <class T>
[[nodiscard]] std::size_t vector_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

/// Compressed sparse rows built in two passes over the same items: emit(sink) calls sink(row, code) for
/// every item; rows keep the emission order. Used for the race-free gathers (no atomics).
template <class Code>
struct Csr {
  std::vector<std::int64_t> ptr;
  std::vector<Code> codes;
  [[nodiscard]] std::size_t bytes() const { return vector_bytes(ptr) + vector_bytes(codes); }
};

template <class Code, class Emit>
Csr<Code> build_csr(std::int64_t n_rows, Emit&& emit) {
  Csr<Code> csr;
  csr.ptr.assign(static_cast<std::size_t>(n_rows) + 1, 0);
  emit([&](std::int64_t row, Code) { ++csr.ptr[row + 1]; });
  for (std::int64_t r = 0; r < n_rows; ++r) csr.ptr[r + 1] += csr.ptr[r];
  resize_first_touched(csr.codes, static_cast<std::size_t>(csr.ptr[n_rows]));
  std::vector<std::int64_t> cursor(csr.ptr.begin(), csr.ptr.end() - 1);
  emit([&](std::int64_t row, Code c) { csr.codes[cursor[row]++] = c; });
  return csr;
}

/// build_csr over items 0 .. n_items - 1, emit_item(i, sink) calling sink(row, code) for item i's codes, OpenMP-
/// parallel and with exactly build_csr's result for the items emitted in order: the items are cut into contiguous
/// chunks (one per thread, at most kCsrChunks), each chunk counts its codes per row, every row reserves its
/// chunks' slots in chunk order, and each chunk fills its own slots in its item order. So a row holds its codes
/// in item order, whatever the thread count (bitwise the same lists). Costs 4 bytes per row and chunk; a chunk
/// has at least kCsrChunkItems items (fewer items: build_csr itself).
inline constexpr int kCsrChunks = 8;
inline constexpr std::int64_t kCsrChunkItems = 65536;
template <class Code, class EmitItem>
Csr<Code> build_csr_parallel(std::int64_t n_rows, std::int64_t n_items, EmitItem&& emit_item) {
  const int chunks = static_cast<int>(
      std::clamp<std::int64_t>(std::min<std::int64_t>(omp_get_max_threads(), n_items / kCsrChunkItems), 1, kCsrChunks));
  if (chunks == 1)
    return build_csr<Code>(n_rows, [&](auto&& sink) {
      for (std::int64_t i = 0; i < n_items; ++i) emit_item(i, sink);
    });
  auto chunk_begin = [&](int c) { return n_items * c / chunks; };
  // slot[c][r]: codes of chunk c in row r, then the offset of chunk c's first code within row r.
  std::vector<std::vector<std::uint32_t>> slot(static_cast<std::size_t>(chunks));
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    auto& count = slot[c];
    count.assign(static_cast<std::size_t>(n_rows), 0);
    for (std::int64_t i = chunk_begin(c), end = chunk_begin(c + 1); i < end; ++i)
      emit_item(i, [&](std::int64_t row, const Code&) { ++count[row]; });
  }
  Csr<Code> csr;
  csr.ptr.assign(static_cast<std::size_t>(n_rows) + 1, 0);
  for (std::int64_t r = 0; r < n_rows; ++r) {
    std::uint32_t in_row = 0;
    for (int c = 0; c < chunks; ++c) {
      const std::uint32_t n = slot[c][r];
      slot[c][r] = in_row;
      in_row += n;
    }
    csr.ptr[r + 1] = csr.ptr[r] + in_row;
  }
  resize_first_touched(csr.codes, static_cast<std::size_t>(csr.ptr[n_rows]));
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    auto& at = slot[c];
    for (std::int64_t i = chunk_begin(c), end = chunk_begin(c + 1); i < end; ++i)
      emit_item(i, [&](std::int64_t row, const Code& code) { csr.codes[csr.ptr[row] + at[row]++] = code; });
  }
  return csr;
}

/// Throws if `n` does not fit in `bits` bits (the packed gather codes).
inline void check_packable(std::int64_t n, int bits, const char* what) {
  if (n >= (std::int64_t{1} << bits))
    throw std::invalid_argument(std::string("too many ") + what + " on one rank for the packed gather lists (" +
                                std::to_string(n) + "); use more ranks");
}

/// sum_{i < n} term(i) in fixed chunks, OpenMP-parallel, bitwise independent of the thread count.
template <class Term>
double ordered_sum(std::int64_t n, Term&& term) {
  constexpr std::int64_t kChunk = 2048;
  const std::int64_t nc = (n + kChunk - 1) / kChunk;
  std::vector<double> part(static_cast<std::size_t>(nc));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < nc; ++c) {
    double s = 0.0;
    for (std::int64_t i = c * kChunk, end = std::min(n, (c + 1) * kChunk); i < end; ++i) s += term(i);
    part[c] = s;
  }
  double s = 0.0;
  for (double p : part) s += p;
  return s;
}

/// Block (v0, v1) = K and block (v1, v0) = K^T of edge e (K row-major 3x3).
[[gnu::always_inline]] inline void write_edge_block(double* kedge, std::int64_t e, const double K[9]) {
  double* out = kedge + 18 * e;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      out[3 * r + c] = K[3 * r + c];
      out[9 + 3 * c + r] = K[3 * r + c];
    }
}

/// How K(v, v) = -sum_w K(v, w) is stored: as summed, or with its off-diagonal pairs averaged (exactly
/// symmetric, for formulations whose edge blocks are not symmetric).
enum class Diagonal : std::uint8_t { as_summed, symmetrised };

/// The edges of a formulation (v0 < v1, sorted by (v0, v1)), stored as structure of arrays, with the block layout
/// and the vertex gather.
class EdgeBlocks {
 public:
  EdgeBlocks() = default;
  /// What a formulation keeps beyond the block layout (the rest is dropped once the pattern is built).
  struct Keep {
    bool edge_vertices = true;  ///< v0(), v1(), edge_vector()
    bool vertex_gather = true;  ///< gather_vertex(), vertex_edges() (else K(v, v) is formed another way)
  };
  /// `edges` sorted lexicographically, v0 < v1, ids < n_vertices. Throws if there are 2^31 edges or more.
  EdgeBlocks(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges, Keep keep);
  EdgeBlocks(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges)
      : EdgeBlocks(n_vertices, edges, Keep{}) {}

  [[nodiscard]] LocalIndex n_vertices() const { return n_vertices_; }
  [[nodiscard]] std::int64_t n_edges() const { return n_edges_; }
  /// Number of vertices with at least one edge (= diagonal blocks at the start of the pattern).
  [[nodiscard]] std::int64_t n_touched() const { return n_touched_; }
  [[nodiscard]] LocalIndex v0(std::int64_t e) const { return ev0_[e]; }
  [[nodiscard]] LocalIndex v1(std::int64_t e) const { return ev1_[e]; }
  /// Block index of K(v, v), -1 for a vertex without edges.
  [[nodiscard]] LocalIndex diagonal_slot(LocalIndex v) const { return diag_slot_[v]; }
  [[nodiscard]] const std::vector<std::array<LocalIndex, 2>>& pattern() const { return pattern_; }
  /// Vertex -> e << 1 | (vertex is v1(e)), edges in ascending order.
  [[nodiscard]] const Csr<std::uint32_t>& vertex_edges() const { return v_list_; }
  /// First edge block (K(E) of edge 0) inside the blocks array.
  [[nodiscard]] double* edge_blocks(double* blocks) const { return blocks ? blocks + 9 * n_touched_ : nullptr; }
  /// p(e) = x(v0) - x(v1), formed the same way (bitwise) wherever a formulation needs it.
  [[gnu::always_inline]] void edge_vector(std::int64_t e, const double* x, double p[3]) const {
    const double* a = x + 3 * std::int64_t{ev0_[e]};
    const double* b = x + 3 * std::int64_t{ev1_[e]};
    p[0] = a[0] - b[0];
    p[1] = a[1] - b[1];
    p[2] = a[2] - b[2];
  }

  /// The gather of vertex v: term(e, is_v1) for each incident edge in ascending edge order (the formulation adds
  /// its share of f(v)); with kedge (the written edge blocks) also K(v, v) = -sum of the blocks (v, w) of row v,
  /// stored at v's diagonal slot.
  template <Diagonal kDiagonal = Diagonal::as_summed, class Term>
  [[gnu::always_inline]] inline void gather_vertex(LocalIndex v, const double* kedge, double* blocks,
                                                   Term&& term) const {
    double D[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (std::int64_t k = v_list_.ptr[v]; k < v_list_.ptr[v + 1]; ++k) {
      const std::uint32_t code = v_list_.codes[k];
      const std::int64_t e = code >> 1;
      term(e, (code & 1) != 0);
      if (kedge) {
        const double* B = kedge + 18 * e + 9 * (code & 1);  // block (v, other end of e)
        for (int q = 0; q < 9; ++q) D[q] -= B[q];
      }
    }
    if (kedge && diag_slot_[v] >= 0) {
      if constexpr (kDiagonal == Diagonal::symmetrised)
        for (int r = 0; r < 3; ++r)
          for (int c = r + 1; c < 3; ++c) D[3 * r + c] = D[3 * c + r] = 0.5 * (D[3 * r + c] + D[3 * c + r]);
      std::memcpy(blocks + 9 * std::int64_t{diag_slot_[v]}, D, sizeof D);
    }
  }

  /// Stores a diagonal block formed another way (e.g. from element blocks) at v's slot, if v has one.
  void write_diagonal(LocalIndex v, const double D[9], double* blocks) const {
    if (diag_slot_[v] >= 0) std::memcpy(blocks + 9 * std::int64_t{diag_slot_[v]}, D, 9 * sizeof(double));
  }

  /// Throws std::invalid_argument naming `who` unless blocks holds 9 values per pattern entry.
  void check_blocks(std::span<const double> blocks, const std::string& who) const;

  [[nodiscard]] std::size_t bytes() const {
    return vector_bytes(ev0_) + vector_bytes(ev1_) + v_list_.bytes() + vector_bytes(diag_slot_) +
           vector_bytes(pattern_);
  }

 private:
  LocalIndex n_vertices_ = 0;
  std::int64_t n_edges_ = 0, n_touched_ = 0;
  std::vector<LocalIndex> ev0_, ev1_;
  Csr<std::uint32_t> v_list_;
  std::vector<LocalIndex> diag_slot_;
  std::vector<std::array<LocalIndex, 2>> pattern_;
};

/// The TSEP gather of eq. 28: g(E) = L(E) zeta(E) + sum_{P ∋ E} L(P) zeta(other edge of P), coefficients stored
/// inline so the loop streams them.
class TsepGather {
 public:
  TsepGather() = default;
  /// pairs[P] = (edge0, edge1) of TSEP P, coefficient[P] = L(P). Each TSEP feeds both its edges.
  TsepGather(std::int64_t n_edges, std::span<const std::array<LocalIndex, 2>> pairs,
             std::span<const double> coefficient);

  /// g(e) = l * zeta[e] + sum of the TSEP terms (in construction order).
  [[gnu::always_inline]] double g(std::int64_t e, double l, const double* zeta) const {
    double g = l * zeta[e];
    for (std::int64_t k = ptr_[e]; k < ptr_[e + 1]; ++k) g += coef_[k] * zeta[other_[k]];
    return g;
  }
  [[nodiscard]] std::size_t bytes() const { return vector_bytes(ptr_) + vector_bytes(other_) + vector_bytes(coef_); }

 private:
  std::vector<std::int64_t> ptr_;
  std::vector<LocalIndex> other_;
  std::vector<double> coef_;
};

/// One term of an edge's block before grouping: K(E) += coef p(a) p(b)^T; a contains v0(E), b contains v1(E).
struct EdgeTerm {
  LocalIndex edge;  ///< E, the block the term lands on
  LocalIndex a, b;  ///< the two edges of the term
  double coef;
};

/// Terms K(E) += sum coef p(a) p(b)^T grouped by a (K += p(a) q(a)^T, q(a) = sum_b coef p(b): 3 flops per term
/// instead of 9) in structure of arrays: per term the end k != v1(E) of b (p(b) = +-(x(v1(E)) - x(k)), the sign
/// folded into the coefficient, exact) and the coefficient in single precision, 8 bytes; per group the two vertices
/// of a, 8 bytes.
/// Edge vectors are re-formed from the cache-resident positions, bitwise as EdgeBlocks::edge_vector.
class GroupedEdgeTerms {
 public:
  GroupedEdgeTerms() = default;
  /// emit_item(i, sink) calls sink(EdgeTerm) for the terms of item i in [0, n_items), twice with the same terms
  /// (count pass, fill pass), from several threads (build_csr_parallel). Within an edge, terms are sorted by
  /// (a, b), which must be unique per edge (so the order is fully determined).
  template <class EmitItem>
  GroupedEdgeTerms(const EdgeBlocks& edges, std::int64_t n_items, EmitItem&& emit_item)
      : GroupedEdgeTerms(edges,
                         build_csr_parallel<Term>(edges.n_edges(), n_items, [&](std::int64_t i, auto&& sink) {
                           emit_item(i, [&](const EdgeTerm& t) { sink(t.edge, Term{t.a, t.b, t.coef}); });
                         })) {}

  /// K += the terms of edge e (positions x; xw = x(v1(e))).
  [[gnu::always_inline]] void add(std::int64_t e, const double* x, const double* xw, double K[9]) const {
    const std::uint32_t q_end = group_ptr_[e + 1];
    std::uint32_t q0 = group_ptr_[e];
    std::uint32_t k = q0 > 0 ? group_end_[q0 - 1] : 0;
    for (std::uint32_t qg = q0; qg < q_end; ++qg) {
      double q[3] = {0.0, 0.0, 0.0};
      for (const std::uint32_t k_end = group_end_[qg]; k < k_end; ++k) {
        const double coef = static_cast<double>(coef_[k]);
        const double* xk = x + 3 * std::int64_t{vertex_[k]};
        q[0] += coef * (xw[0] - xk[0]);
        q[1] += coef * (xw[1] - xk[1]);
        q[2] += coef * (xw[2] - xk[2]);
      }
      const double* xa0 = x + 3 * std::int64_t{group_a_[qg][0]};
      const double* xa1 = x + 3 * std::int64_t{group_a_[qg][1]};
      const double pa[3] = {xa0[0] - xa1[0], xa0[1] - xa1[1], xa0[2] - xa1[2]};  // p(a), as edge_vector forms it
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) K[3 * r + c] += pa[r] * q[c];
    }
  }
  /// Number of groups of edges [e0, e1) (a work estimate).
  [[nodiscard]] std::int64_t n_groups(std::int64_t e0, std::int64_t e1) const {
    return std::int64_t{group_ptr_[e1]} - group_ptr_[e0];
  }
  [[nodiscard]] std::size_t bytes() const {
    return vector_bytes(group_ptr_) + vector_bytes(group_a_) + vector_bytes(group_end_) + vector_bytes(vertex_) +
           vector_bytes(coef_);
  }

 private:
  /// An EdgeTerm in its edge's row of the list (the row is the edge): 16 bytes instead of 24 to write, sort and read.
  struct Term {
    LocalIndex a, b;
    double coef;
  };
  GroupedEdgeTerms(const EdgeBlocks& edges, Csr<Term> terms);

  std::vector<std::uint32_t> group_ptr_;            ///< edge -> groups [group_ptr_[e], group_ptr_[e + 1])
  std::vector<std::array<LocalIndex, 2>> group_a_;  ///< (v0, v1)(a) per group
  std::vector<std::uint32_t> group_end_;            ///< group -> end of its terms (start: previous group's end)
  std::vector<LocalIndex> vertex_;                  ///< per term: the end k != v1(E) of b
  /// per term: +-coef, making p(b) = x(v1(E)) - x(k), in single precision: K only (the forces' g gather keeps its
  /// coefficients in double), 4 bytes per term less (issue 56: 17 MB of the 136,565-tet cantilever's 106 MB of kernel
  /// data); the Jacobian's entries move by about 1e-7 relative, which Newton's convergence does not see.
  std::vector<float> coef_;
};

/// Vertices per step of the fused sweep: a step's per-cell scratch (~2800 tets, 1.5 MB for stvk-tl on a Kuhn box)
/// is still in L2/L3 when its edges and vertices gather it (measured: 256-1024 within noise, 512 best).
inline constexpr LocalIndex kSweepChunk = 512;

/// The fused vertex-ordered sweep. Cells (tets, volumetric tets, ...) are stored sorted by their smallest vertex.
/// Step [v0, v1) of kSweepChunk vertices: the cells whose smallest vertex is in it, then the edges with v0(E) in it
/// (all their cells have smallest vertex <= v0(E)), then the vertices (all cells and edges at v are done). Each
/// thread sweeps a contiguous vertex range [vb, ve) balanced by a work estimate; an edge or vertex depending on
/// work below vb (lo < vb) is deferred past a barrier. Every sum is formed in the same order whichever pass
/// computes it, so the results do not depend on the thread count (bitwise).
class VertexSweep {
 public:
  VertexSweep() = default;
  /// `edges` as EdgeBlocks takes them; cell_vertices(c, sink) calls sink(vertex) for each vertex of cell c and
  /// cell_edges(c, sink) sink(edge) for each edge of c; cell_first[v] = first cell whose smallest vertex is >= v
  /// (n_vertices + 1 entries, see sort_cells).
  /// The work of vertex range [a, b) is estimated by cell_first[b] - cell_first[a] unless set_cost is called.
  template <class CellVertices, class CellEdges>
  VertexSweep(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges,
              std::vector<std::int64_t> cell_first, CellVertices&& cell_vertices, CellEdges&& cell_edges);

  /// Work estimate: cost(v) for vertex v (prefix-summed here).
  template <class Cost>
  void set_cost(Cost&& cost) {
    cost_.assign(cell_first_.size(), 0);
    for (std::size_t v = 0; v + 1 < cell_first_.size(); ++v) cost_[v + 1] = cost_[v] + cost(static_cast<LocalIndex>(v));
  }

  [[nodiscard]] const std::vector<std::int64_t>& cell_first() const { return cell_first_; }
  /// vertex -> first edge with v0 >= it (n_vertices + 1 entries).
  [[nodiscard]] const std::vector<std::int64_t>& edge_first() const { return edge_first_; }

  /// Runs the sweep: cell(c), then (kEdges) edge(e), then vertex(v), each exactly once.
  template <bool kEdges, class Cell, class Edge, class Vertex>
  void run(Cell&& cell, Edge&& edge, Vertex&& vertex) const;

  [[nodiscard]] std::size_t bytes() const {
    return vector_bytes(cell_first_) + vector_bytes(edge_first_) + vector_bytes(lo_edge_) + vector_bytes(lo_vertex_) +
           vector_bytes(cost_);
  }

 private:
  /// First vertex of the k-th of n vertex ranges with balanced work.
  [[nodiscard]] LocalIndex split(int k, int n) const {
    const auto& w = cost_.empty() ? cell_first_ : cost_;
    const auto nv = static_cast<LocalIndex>(w.size() - 1);
    if (k >= n) return nv;
    const std::int64_t target = w[nv] * k / n;
    return static_cast<LocalIndex>(std::lower_bound(w.begin(), w.end() - 1, target) - w.begin());
  }

  std::vector<std::int64_t> cell_first_;  ///< vertex -> first cell whose smallest vertex is >= it
  std::vector<std::int64_t> edge_first_;  ///< vertex -> first edge with v0 >= it
  std::vector<LocalIndex> lo_edge_;       ///< per edge: min(v0, smallest vertex of its cells)
  std::vector<LocalIndex> lo_vertex_;     ///< per vertex: min(itself, v0 of its edges, smallest vertex of its cells)
  std::vector<std::int64_t> cost_;        ///< vertex -> prefix sum of the work estimate (empty: cell_first_)
};

/// first[v] = the first edge with v0 >= v (n_vertices + 1 entries; edges sorted by v0).
std::vector<std::int64_t> first_edges(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges);

/// Index of the edge (lo, hi), lo < hi, which must exist; first = first_edges(n_vertices, edges). O(log degree).
inline std::int64_t find_edge(std::span<const std::array<LocalIndex, 2>> edges, const std::vector<std::int64_t>& first,
                              LocalIndex lo, LocalIndex hi) {
  const auto begin = edges.begin();
  return std::lower_bound(begin + first[lo], begin + first[lo + 1], hi,
                          [](const std::array<LocalIndex, 2>& e, LocalIndex v) { return e[1] < v; }) -
         begin;
}

/// Sorts cells (stably) by their smallest vertex lo_of(c): returns first[v] (n_vertices + 1 entries, the first
/// sorted position with smallest vertex >= v) and fills order[k] = the input cell at sorted position k.
template <class LoOf>
std::vector<std::int64_t> sort_cells(LocalIndex n_vertices, std::int64_t n_cells, LoOf&& lo_of,
                                     std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> first(static_cast<std::size_t>(n_vertices) + 1, 0);
  for (std::int64_t c = 0; c < n_cells; ++c) ++first[lo_of(c) + 1];
  for (LocalIndex v = 0; v < n_vertices; ++v) first[v + 1] += first[v];
  order.resize(static_cast<std::size_t>(n_cells));
  std::vector<std::int64_t> cursor(first.begin(), first.end() - 1);
  for (std::int64_t c = 0; c < n_cells; ++c) order[cursor[lo_of(c)]++] = c;
  return first;
}

template <class CellVertices, class CellEdges>
VertexSweep::VertexSweep(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges,
                         std::vector<std::int64_t> cell_first, CellVertices&& cell_vertices, CellEdges&& cell_edges)
    : cell_first_(std::move(cell_first)) {
  const LocalIndex nv = n_vertices;
  const auto ne = static_cast<std::int64_t>(edges.size());
  edge_first_ = first_edges(nv, edges);
  lo_edge_.resize(ne);
  for (std::int64_t e = 0; e < ne; ++e) lo_edge_[e] = edges[e][0];
  lo_vertex_.resize(nv);
  for (LocalIndex v = 0; v < nv; ++v) lo_vertex_[v] = v;
  for (const auto& [a, b] : edges) lo_vertex_[b] = std::min(lo_vertex_[b], a);
  for (LocalIndex v = 0; v < nv; ++v)
    for (std::int64_t c = cell_first_[v]; c < cell_first_[v + 1]; ++c) {  // v = the smallest vertex of cell c
      cell_vertices(c, [&](LocalIndex w) { lo_vertex_[w] = std::min(lo_vertex_[w], v); });
      cell_edges(c, [&](std::int64_t e) { lo_edge_[e] = std::min(lo_edge_[e], v); });
    }
}

template <bool kEdges, class Cell, class Edge, class Vertex>
void VertexSweep::run(Cell&& cell, Edge&& edge, Vertex&& vertex) const {
#pragma omp parallel
  {
    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
    const LocalIndex vb = split(tid, nth), ve = split(tid + 1, nth);
    for (LocalIndex v0 = vb; v0 < ve; v0 += kSweepChunk) {
      const LocalIndex v1 = std::min<LocalIndex>(ve, v0 + kSweepChunk);
      for (std::int64_t c = cell_first_[v0]; c < cell_first_[v1]; ++c) cell(c);
      if constexpr (kEdges)
        for (std::int64_t e = edge_first_[v0]; e < edge_first_[v1]; ++e)
          if (lo_edge_[e] >= vb) edge(e);
      for (LocalIndex v = v0; v < v1; ++v)
        if (lo_vertex_[v] >= vb) vertex(v);
    }
    if (nth > 1) {
#pragma omp barrier
      if constexpr (kEdges) {
        for (LocalIndex v = vb; v < ve; ++v)
          if (lo_vertex_[v] < vb)  // only such vertices have edges with lo < vb
            for (std::int64_t e = edge_first_[v]; e < edge_first_[v + 1]; ++e)
              if (lo_edge_[e] < vb) edge(e);
#pragma omp barrier
      }
      for (LocalIndex v = vb; v < ve; ++v)
        if (lo_vertex_[v] < vb) vertex(v);
    }
  }
}

/// Base of the edge formulations: the vertex count and the block layout (EdgeBlocks) that every one of them
/// reports through the TetFormulation interface (or an interface derived from it, e.g. VolinoMembrane). The
/// derived constructor sets edges_.
template <class Interface = TetFormulation>
class EdgeFormulation : public Interface {
 public:
  [[nodiscard]] LocalIndex n_vertices() const final { return n_vertices_; }
  [[nodiscard]] const std::vector<std::array<LocalIndex, 2>>& block_pattern() const final { return edges_.pattern(); }

 protected:
  /// coords: 3 reference coordinates per vertex.
  explicit EdgeFormulation(std::span<const double> coords) : n_vertices_(static_cast<LocalIndex>(coords.size() / 3)) {}
  LocalIndex n_vertices_ = 0;
  EdgeBlocks edges_;
};

}  // namespace edgefem::edge_assembly
