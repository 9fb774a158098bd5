// SPDX-License-Identifier: BSD-3-Clause
/// \file edge_assembly.cpp
/// The non-template parts of the edge-assembly engine (edge_assembly.hpp): the edge block layout, the TSEP gather
/// and the grouped edge-term lists.
#include "materials/edge_assembly.hpp"

#include "core/first_touch.hpp"

namespace edgefem::edge_assembly {

EdgeBlocks::EdgeBlocks(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges, Keep keep)
    : n_vertices_(n_vertices), n_edges_(static_cast<std::int64_t>(edges.size())) {
  const std::int64_t ne = n_edges_;
  check_packable(ne, 31, "edges");
  ev0_.resize(ne);
  ev1_.resize(ne);
  for (std::int64_t e = 0; e < ne; ++e) {
    ev0_[e] = edges[e][0];
    ev1_[e] = edges[e][1];
  }
  v_list_ = build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
    for (std::int64_t e = 0; e < ne; ++e) {
      sink(ev0_[e], static_cast<std::uint32_t>(e << 1));
      sink(ev1_[e], static_cast<std::uint32_t>(e << 1 | 1));
    }
  });
  diag_slot_.assign(n_vertices_, -1);
  for (LocalIndex v = 0; v < n_vertices_; ++v)
    if (v_list_.ptr[v + 1] > v_list_.ptr[v]) {
      diag_slot_[v] = static_cast<LocalIndex>(pattern_.size());
      pattern_.push_back({v, v});
    }
  n_touched_ = static_cast<std::int64_t>(pattern_.size());
  pattern_.reserve(pattern_.size() + 2 * static_cast<std::size_t>(ne));
  for (std::int64_t e = 0; e < ne; ++e) {
    pattern_.push_back({ev0_[e], ev1_[e]});
    pattern_.push_back({ev1_[e], ev0_[e]});
  }
  if (!keep.vertex_gather) v_list_ = {};
  if (!keep.edge_vertices) {
    ev0_ = std::vector<LocalIndex>();  // (= {} would keep the capacity)
    ev1_ = std::vector<LocalIndex>();
  }
}

void EdgeBlocks::check_blocks(std::span<const double> blocks, const std::string& who) const {
  if (blocks.size() != 9 * pattern_.size())
    throw std::invalid_argument(who + ": blocks holds " + std::to_string(blocks.size()) + " values, expected " +
                                std::to_string(9 * pattern_.size()));
}

std::vector<std::int64_t> first_edges(LocalIndex n_vertices, std::span<const std::array<LocalIndex, 2>> edges) {
  const LocalIndex nv = n_vertices;
  std::vector<std::int64_t> first(static_cast<std::size_t>(nv) + 1, 0);
  for (const auto& e : edges) ++first[e[0] + 1];
  for (LocalIndex v = 0; v < nv; ++v) first[v + 1] += first[v];
  return first;
}

TsepGather::TsepGather(std::int64_t n_edges, std::span<const std::array<LocalIndex, 2>> pairs,
                       std::span<const double> coefficient) {
  struct Entry {
    LocalIndex other;
    std::uint32_t tsep;
  };
  const auto np = static_cast<std::int64_t>(pairs.size());
  check_packable(np, 31, "TSEPs");
  const auto list = build_csr_parallel<Entry>(n_edges, np, [&](std::int64_t P, auto&& sink) {
    sink(pairs[P][0], Entry{pairs[P][1], static_cast<std::uint32_t>(P)});
    sink(pairs[P][1], Entry{pairs[P][0], static_cast<std::uint32_t>(P)});
  });
  ptr_ = list.ptr;
  const auto n = static_cast<std::int64_t>(list.codes.size());
  resize_first_touched(other_, static_cast<std::size_t>(n));
  resize_first_touched(coef_, static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) {
    other_[k] = list.codes[k].other;
    coef_[k] = coefficient[list.codes[k].tsep];
  }
}

GroupedEdgeTerms::GroupedEdgeTerms(const EdgeBlocks& edges, Csr<Term> terms) {
  const std::int64_t ne = edges.n_edges();
  check_packable(static_cast<std::int64_t>(terms.codes.size()), 32, "K(E) terms");
  // Sort each edge's terms by their first edge so the loop can factor sum_b coef p_a p_b^T = p_a (sum_b coef p_b)^T,
  // and count its groups (runs of equal a).
  group_ptr_.assign(static_cast<std::size_t>(ne) + 1, 0);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t e = 0; e < ne; ++e) {
    const auto first = terms.codes.begin() + terms.ptr[e], last = terms.codes.begin() + terms.ptr[e + 1];
    // Insertion sort on the packed key (a, b) (a, b >= 0): rows hold about 20 terms, where it beats std::sort's
    // introsort and its two-field comparison.
    const auto key = [](const Term& t) {
      return static_cast<std::uint64_t>(static_cast<std::uint32_t>(t.a)) << 32 | static_cast<std::uint32_t>(t.b);
    };
    if (last - first > 64) {
      std::sort(first, last, [&](const Term& l, const Term& r) { return key(l) < key(r); });
    } else {
      for (auto i = first; i != last; ++i) {
        const Term t = *i;
        const std::uint64_t kt = key(t);
        auto j = i;
        for (; j != first && key(*(j - 1)) > kt; --j) *j = *(j - 1);
        *j = t;
      }
    }
    std::uint32_t groups = 0;
    for (auto t = first; t != last; ++t) groups += (t == first || t->a != (t - 1)->a) ? 1 : 0;
    group_ptr_[e + 1] = groups;
  }
  for (std::int64_t e = 0; e < ne; ++e) group_ptr_[e + 1] += group_ptr_[e];
  resize_first_touched(group_a_, group_ptr_[ne]);
  resize_first_touched(group_end_, group_ptr_[ne]);
  resize_first_touched(vertex_, terms.codes.size());
  resize_first_touched(coef_, terms.codes.size());
  bool consistent = true;
#pragma omp parallel for schedule(dynamic, 4096) reduction(&& : consistent)
  for (std::int64_t e = 0; e < ne; ++e) {
    const LocalIndex v0 = edges.v0(e), w = edges.v1(e);
    std::uint32_t g = group_ptr_[e];
    for (std::int64_t k = terms.ptr[e]; k < terms.ptr[e + 1]; ++k) {
      const Term& t = terms.codes[k];
      if (k == terms.ptr[e] || t.a != terms.codes[k - 1].a) {
        if (k > terms.ptr[e]) group_end_[g++] = static_cast<std::uint32_t>(k);
        group_a_[g] = {edges.v0(t.a), edges.v1(t.a)};
      }
      // t.a contains v0(e) and t.b contains w = v1(e): p(b) = +-(x_w - x_k), k the other end of b; the sign goes
      // into the coefficient (exact), so the loop gathers the 3 doubles of x_k from the (small) vertex array
      // instead of p(b) from an edge array.
      if ((edges.v0(t.a) != v0 && edges.v1(t.a) != v0) || (edges.v0(t.b) != w && edges.v1(t.b) != w))
        consistent = false;
      const bool b_starts_at_w = edges.v0(t.b) == w;
      vertex_[k] = b_starts_at_w ? edges.v1(t.b) : edges.v0(t.b);
      coef_[k] = static_cast<float>(b_starts_at_w ? t.coef : -t.coef);
    }
    if (terms.ptr[e + 1] > terms.ptr[e]) group_end_[g] = static_cast<std::uint32_t>(terms.ptr[e + 1]);
  }
  if (!consistent) throw std::logic_error("edge assembly: inconsistent K(E) term");
}

}  // namespace edgefem::edge_assembly
