// SPDX-License-Identifier: BSD-3-Clause
#include "contact/self_potential.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "contact/self_broad_phase.hpp"
#include "contact/self_ccd.hpp"
#include "contact/self_distance.hpp"
#include "core/radix_sort.hpp"
#include "core/stopwatch.hpp"

namespace edgefem::contact {

SelfSurface make_self_surface(std::vector<std::array<int, 3>> triangles, std::vector<double> rest) {
  SelfSurface s;
  s.triangles = std::move(triangles);
  s.rest = std::move(rest);
  for (const auto& t : s.triangles)
    for (int k = 0; k < 3; ++k) s.edges.push_back({std::min(t[k], t[(k + 1) % 3]), std::max(t[k], t[(k + 1) % 3])});
  std::sort(s.edges.begin(), s.edges.end());
  s.edges.erase(std::unique(s.edges.begin(), s.edges.end()), s.edges.end());
  s.point_owned.assign(static_cast<std::size_t>(s.n_vertices()), 1);
  s.edge_owned.assign(s.edges.size(), 1);
  s.triangle_present.assign(s.triangles.size(), 1);
  s.edge_present.assign(s.edges.size(), 1);
  return s;
}

SelfPotential::SelfPotential(SelfSurface surface, double dh, double kappa)
    : surface_(std::move(surface)), dh_(dh), kappa_(kappa) {}

SelfPotential::~SelfPotential() = default;

void SelfPotential::set_known(const std::vector<char>& known) {
  const auto all_known = [&](const auto& prim) {
    return std::all_of(prim.begin(), prim.end(), [&](int v) { return known[static_cast<std::size_t>(v)] != 0; });
  };
  std::vector<char> triangles(surface_.triangles.size()), edges(surface_.edges.size());
  for (std::size_t t = 0; t < triangles.size(); ++t) triangles[t] = all_known(surface_.triangles[t]) ? 1 : 0;
  for (std::size_t e = 0; e < edges.size(); ++e) edges[e] = all_known(surface_.edges[e]) ? 1 : 0;
  if (triangles == surface_.triangle_present && edges == surface_.edge_present) return;
  surface_.triangle_present = std::move(triangles);
  surface_.edge_present = std::move(edges);
  candidates_.centre.clear();  // (its pairs may name primitives no longer at hand)
}

std::array<int, 4> pair_vertices(const SelfSurface& s, const SelfPair& p) {
  if (p.edge_edge) {
    const auto& a = s.edges[static_cast<std::size_t>(p.a)];
    const auto& b = s.edges[static_cast<std::size_t>(p.b)];
    return {a[0], a[1], b[0], b[1]};
  }
  const auto& t = s.triangles[static_cast<std::size_t>(p.b)];
  return {p.a, t[0], t[1], t[2]};
}

namespace {

/// The boxes of the primitives over the points x0 and x1 (3 per vertex each), grown by `inflate` on every side.
/// Absent primitives (`present` 0) get empty boxes, which overlap none.
template <std::size_t K>
std::vector<Aabb> primitive_boxes(const std::vector<std::array<int, K>>& prims, const std::vector<char>& present,
                                  std::span<const double> x0, std::span<const double> x1, double inflate) {
  std::vector<Aabb> boxes(prims.size());
  for (std::size_t i = 0; i < prims.size(); ++i) {
    if (!present[i]) continue;
    for (const int v : prims[i]) {
      boxes[i].grow(load3(&x0[3 * static_cast<std::size_t>(v)]));
      boxes[i].grow(load3(&x1[3 * static_cast<std::size_t>(v)]));
    }
    for (int k = 0; k < 3; ++k) boxes[i].lo[k] -= inflate, boxes[i].hi[k] += inflate;
  }
  return boxes;
}

/// A tree over the present primitives' boxes only, answering with the primitives' indices (increasing).
class PresentTree {
 public:
  PresentTree(std::vector<Aabb> boxes, const std::vector<char>& present)
      : all_(std::move(boxes)), tree_(subset(all_, present)) {}
  void query(const Aabb& box, std::vector<int>& out) const {
    const std::size_t start = out.size();
    tree_.query(box, out);
    for (std::size_t i = start; i < out.size(); ++i) out[i] = index_[static_cast<std::size_t>(out[i])];
  }
  [[nodiscard]] const Aabb& box(int i) const { return all_[static_cast<std::size_t>(i)]; }

 private:
  std::vector<Aabb> subset(const std::vector<Aabb>& boxes, const std::vector<char>& present) {
    std::vector<Aabb> kept;
    for (std::size_t i = 0; i < boxes.size(); ++i)
      if (present[i]) kept.push_back(boxes[i]), index_.push_back(static_cast<int>(i));
    return kept;
  }
  std::vector<Aabb> all_;
  std::vector<int> index_;
  BoxTree tree_;
};

bool shares_vertex(const std::array<int, 4>& v) {
  return v[0] == v[2] || v[0] == v[3] || v[1] == v[2] || v[1] == v[3];
}

/// The box of point i over x0 and x1, grown by `inflate`.
Aabb point_box(std::span<const double> x0, std::span<const double> x1, int i, double inflate) {
  Aabb box;
  box.grow(load3(&x0[3 * static_cast<std::size_t>(i)]));
  box.grow(load3(&x1[3 * static_cast<std::size_t>(i)]));
  for (int k = 0; k < 3; ++k) box.lo[k] -= inflate, box.hi[k] += inflate;
  return box;
}

/// The lists one after the other.
template <class T>
std::vector<T> concatenated(const std::vector<std::vector<T>>& lists) {
  std::size_t total = 0;
  for (const auto& list : lists) total += list.size();
  std::vector<T> pairs;
  pairs.reserve(total);
  for (const auto& list : lists) pairs.insert(pairs.end(), list.begin(), list.end());
  return pairs;
}

/// The pairs of the surface's primitives whose boxes (over x0 and x1, grown by `inflate`) overlap, from the trees of
/// those boxes. In the order of the primitives, each one's pairs in increasing order; found in chunks of primitives
/// (one list per chunk).
std::vector<SelfPair> tree_query_pairs(const SelfSurface& s, const PresentTree& triangles, const PresentTree& edges,
                                       std::span<const double> x0, std::span<const double> x1, double inflate) {
  const int n_points = s.n_vertices(), n_edges = static_cast<int>(s.edges.size());
  constexpr int chunk = 256;
  const int n_chunks = (n_points + n_edges + chunk - 1) / chunk;
  std::vector<std::vector<SelfPair>> found(static_cast<std::size_t>(n_chunks));
#pragma omp parallel
  {
    std::vector<int> near;
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < n_chunks; ++c) {
      auto& out = found[static_cast<std::size_t>(c)];
      for (int i = c * chunk; i < std::min((c + 1) * chunk, n_points + n_edges); ++i) {
        near.clear();
        if (i < n_points) {  // point-triangle
          if (!s.point_owned[static_cast<std::size_t>(i)]) continue;
          triangles.query(point_box(x0, x1, i, inflate), near);
          for (const int t : near) {
            const auto& tri = s.triangles[static_cast<std::size_t>(t)];
            if (tri[0] != i && tri[1] != i && tri[2] != i) out.push_back({false, i, t});
          }
        } else {  // edge-edge, each pair from its smaller edge
          const int e = i - n_points;
          if (!s.edge_owned[static_cast<std::size_t>(e)]) continue;
          edges.query(edges.box(e), near);
          const auto& a = s.edges[static_cast<std::size_t>(e)];
          for (const int f : near) {
            if (f <= e) continue;
            const auto& b = s.edges[static_cast<std::size_t>(f)];
            if (!shares_vertex({a[0], a[1], b[0], b[1]})) out.push_back({true, e, f});
          }
        }
      }
    }
  }
  return concatenated(found);
}

/// The pairs of the surface's primitives whose boxes (over x0 and x1, grown by `inflate`) overlap.
std::vector<SelfPair> overlapping_pairs(const SelfSurface& s, std::span<const double> x0, std::span<const double> x1,
                                        double inflate) {
  const PresentTree triangles(primitive_boxes(s.triangles, s.triangle_present, x0, x1, inflate), s.triangle_present);
  const PresentTree edges(primitive_boxes(s.edges, s.edge_present, x0, x1, inflate), s.edge_present);
  return tree_query_pairs(s, triangles, edges, x0, x1, inflate);
}

/// The largest coordinate difference between a and b.
double largest_move(std::span<const double> a, std::span<const double> b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

/// The pairs of `candidates` whose boxes over x0 -> x1 grown by `inflate` overlap (the test of overlapping_pairs).
std::vector<SelfPair> filter_pairs(const SelfSurface& s, const std::vector<SelfPair>& candidates,
                                   std::span<const double> x0, std::span<const double> x1, double inflate) {
  const std::vector<Aabb> triangles = primitive_boxes(s.triangles, s.triangle_present, x0, x1, inflate);
  const std::vector<Aabb> edges = primitive_boxes(s.edges, s.edge_present, x0, x1, inflate);
  std::vector<SelfPair> pairs;
  for (const SelfPair& p : candidates) {
    const auto a = static_cast<std::size_t>(p.a), b = static_cast<std::size_t>(p.b);
    if (p.edge_edge) {
      if (overlap(edges[a], edges[b])) pairs.push_back(p);
      continue;
    }
    Aabb box;
    box.grow(load3(&x0[3 * a]));
    box.grow(load3(&x1[3 * a]));
    for (int k = 0; k < 3; ++k) box.lo[k] -= inflate, box.hi[k] += inflate;
    if (overlap(triangles[b], box)) pairs.push_back(p);
  }
  return pairs;
}

}  // namespace

std::vector<SelfPair> tree_pairs(const SelfSurface& s, std::span<const double> x0, std::span<const double> x1,
                                 double inflate) {
  return overlapping_pairs(s, x0, x1, inflate);
}

struct SweptPairs::Trees {
  /// Over all primitives, the hierarchy from the rest positions; the step's boxes (the points': the owned ones',
  /// the others empty).
  BoxTree triangles, edges, points;
};

namespace {

std::vector<Aabb> rest_point_boxes(const SelfSurface& s) {
  std::vector<Aabb> boxes(static_cast<std::size_t>(s.n_vertices()));
  for (int i = 0; i < s.n_vertices(); ++i) boxes[static_cast<std::size_t>(i)] = point_box(s.rest, s.rest, i, 0.0);
  return boxes;
}

bool pair_less(const SelfPair& p, const SelfPair& q) {  // tree_pairs' order: points first, then by a, b
  if (p.edge_edge != q.edge_edge) return !p.edge_edge;
  return p.a != q.a ? p.a < q.a : p.b < q.b;
}

/// A pair as a number whose order is pair_less': a and b (non-negative, below 2^bits) in `bits` bits each, the
/// edge-edge flag above them.
std::uint64_t pair_key(const SelfPair& p, int bits) {
  return (static_cast<std::uint64_t>(p.edge_edge) << (2 * bits)) | (static_cast<std::uint64_t>(p.a) << bits) |
         static_cast<std::uint64_t>(p.b);
}

SelfPair key_pair(std::uint64_t k, int bits) {
  const std::uint64_t low = (std::uint64_t{1} << bits) - 1;
  return {(k >> (2 * bits)) != 0, static_cast<int>((k >> bits) & low), static_cast<int>(k & low)};
}

/// The bits pair_key needs for the surface's primitives (every point, edge and triangle index below 2^bits).
int key_bits(const SelfSurface& s) {
  const auto most = static_cast<std::uint64_t>(std::max({s.n_vertices(), static_cast<int>(s.edges.size()),
                                                         static_cast<int>(s.triangles.size()), 1}));
  return static_cast<int>(std::bit_width(most));
}

bool triangle_has(const std::array<int, 3>& t, int v) { return t[0] == v || t[1] == v || t[2] == v; }

}  // namespace

SweptPairs::SweptPairs(const SelfSurface& s) : s_(s) {
  const std::vector<char> all_triangles(s.triangles.size(), 1), all_edges(s.edges.size(), 1);
  trees_ = std::make_unique<Trees>(Trees{BoxTree(primitive_boxes(s.triangles, all_triangles, s.rest, s.rest, 0.0)),
                                         BoxTree(primitive_boxes(s.edges, all_edges, s.rest, s.rest, 0.0)),
                                         BoxTree(rest_point_boxes(s))});
}

SweptPairs::SweptPairs(const SelfSurface& s, std::span<const double> x0, std::span<const double> x1, double inflate)
    : SweptPairs(s) {
  start(x0, x1, inflate);
}

void SweptPairs::start(std::span<const double> x0, std::span<const double> x1, double inflate) {
  const SelfSurface& s = s_;
  trees_->triangles.refit(primitive_boxes(s.triangles, s.triangle_present, x0, x1, inflate));
  trees_->edges.refit(primitive_boxes(s.edges, s.edge_present, x0, x1, inflate));
  std::vector<Aabb> points(static_cast<std::size_t>(s.n_vertices()));
  for (int i = 0; i < s.n_vertices(); ++i)
    if (s.point_owned[static_cast<std::size_t>(i)]) points[static_cast<std::size_t>(i)] = point_box(x0, x1, i, inflate);
  trees_->points.refit(std::move(points));
  // The pairs of tree_query_pairs (owned points against present triangles, owned edges against the present larger
  // ones; none sharing a vertex), from a traversal of the trees two at a time, sorted into its order.
  // Each OpenMP thread collects its own (BoxTree::each_overlap's thread number); the sort makes the result
  // independent of the thread count.
  // The pairs as keys whose order is pair_less', sorted by their digits (radix_sort: a few passes over the keys,
  // where std::sort took a fifth of the search), in lists kept between steps (no regrowing).
  const int bits = key_bits(s);
  std::vector<std::vector<std::uint64_t>>& found = found_;
  found.resize(static_cast<std::size_t>(omp_get_max_threads()));
  for (auto& list : found) list.clear();
  trees_->points.each_overlap(trees_->triangles, [&](int thread, int i, int t) {
    if (!triangle_has(s.triangles[static_cast<std::size_t>(t)], i))
      found[static_cast<std::size_t>(thread)].push_back(pair_key({false, i, t}, bits));
  });
  trees_->edges.each_overlap([&](int thread, int e, int f) {
    const auto& a = s.edges[static_cast<std::size_t>(e)];
    const auto& b = s.edges[static_cast<std::size_t>(f)];
    if (s.edge_owned[static_cast<std::size_t>(e)] && !shares_vertex({a[0], a[1], b[0], b[1]}))
      found[static_cast<std::size_t>(thread)].push_back(pair_key({true, e, f}, bits));
  });
  std::vector<std::uint64_t> keys = concatenated(found);
  radix_sort(keys, 2 * bits + 1, scratch_);
  pairs_.resize(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) pairs_[k] = key_pair(keys[k], bits);
}

SweptPairs::~SweptPairs() = default;

namespace {

bool inside(const Aabb& a, const Aabb& b) {  // a within b
  for (int k = 0; k < 3; ++k)
    if (a.lo[k] < b.lo[k] || a.hi[k] > b.hi[k]) return false;
  return true;
}

/// Each primitive's new box, and whether it left its built one (absent ones: never).
std::vector<char> escapes(const std::vector<Aabb>& built, const std::vector<Aabb>& now, const std::vector<char>& present,
                          long long& count) {
  std::vector<char> out(now.size(), 0);
  for (std::size_t i = 0; i < now.size(); ++i)
    if (present[i] && !inside(now[i], built[i])) out[i] = 1, ++count;
  return out;
}

/// The tree's boxes grown to hold the escaped primitives' new boxes.
std::vector<Aabb> holding(const std::vector<Aabb>& built, const std::vector<Aabb>& now, const std::vector<char>& out) {
  std::vector<Aabb> boxes = built;
  for (std::size_t i = 0; i < boxes.size(); ++i)
    if (out[i]) boxes[i].grow(now[i]);
  return boxes;
}

}  // namespace

std::vector<SelfPair> SweptPairs::moved(std::span<const double> x0, std::span<const double> x2, double inflate) {
  const SelfSurface& s = s_;
  const std::vector<Aabb> triangles = primitive_boxes(s.triangles, s.triangle_present, x0, x2, inflate);
  const std::vector<Aabb> edges = primitive_boxes(s.edges, s.edge_present, x0, x2, inflate);
  std::vector<Aabb> points(static_cast<std::size_t>(s.n_vertices()));
  escaped_ = 0;
  std::vector<char> point_out(points.size(), 0);
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i] = point_box(x0, x2, static_cast<int>(i), inflate);
    if (s.point_owned[i] && !inside(points[i], trees_->points.box(static_cast<int>(i)))) point_out[i] = 1, ++escaped_;
  }
  const std::vector<char> triangle_out = escapes(trees_->triangles.boxes(), triangles, s.triangle_present, escaped_);
  const std::vector<char> edge_out = escapes(trees_->edges.boxes(), edges, s.edge_present, escaped_);
  std::vector<SelfPair> pairs;  // the built pairs that pass the new test
  for (const SelfPair& p : pairs_) {
    const auto a = static_cast<std::size_t>(p.a), b = static_cast<std::size_t>(p.b);
    if (p.edge_edge ? overlap(edges[a], edges[b]) : overlap(points[a], triangles[b])) pairs.push_back(p);
  }
  if (escaped_ == 0) return pairs;
  const auto built = static_cast<std::ptrdiff_t>(pairs.size());  // (in order: those after them are sorted apart)
  trees_->triangles.refit(holding(trees_->triangles.boxes(), triangles, triangle_out));
  trees_->edges.refit(holding(trees_->edges.boxes(), edges, edge_out));
  std::vector<int> near;
  for (std::size_t i = 0; i < points.size(); ++i) {  // escaped points against all triangles
    if (!point_out[i]) continue;
    near.clear();
    trees_->triangles.query(points[i], near);
    for (const int t : near)
      if (overlap(points[i], triangles[static_cast<std::size_t>(t)]) &&
          !triangle_has(s.triangles[static_cast<std::size_t>(t)], static_cast<int>(i)))
        pairs.push_back({false, static_cast<int>(i), t});
  }
  std::vector<Aabb> escaped_boxes;  // escaped triangles against all owned points
  std::vector<int> escaped_index;
  for (std::size_t t = 0; t < triangles.size(); ++t)
    if (triangle_out[t]) escaped_boxes.push_back(triangles[t]), escaped_index.push_back(static_cast<int>(t));
  if (!escaped_boxes.empty()) {
    const BoxTree few(std::move(escaped_boxes));
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!s.point_owned[i] || point_out[i]) continue;  // (escaped points: above)
      near.clear();
      few.query(points[i], near);
      for (const int k : near) {
        const int t = escaped_index[static_cast<std::size_t>(k)];
        if (!triangle_has(s.triangles[static_cast<std::size_t>(t)], static_cast<int>(i)))
          pairs.push_back({false, static_cast<int>(i), t});
      }
    }
  }
  for (std::size_t e = 0; e < edges.size(); ++e) {  // escaped edges against all edges
    if (!edge_out[e]) continue;
    near.clear();
    trees_->edges.query(edges[e], near);
    for (const int f : near) {
      const auto F = static_cast<std::size_t>(f);
      const std::size_t lo = std::min(e, F), hi = std::max(e, F);
      if (f == static_cast<int>(e) || !s.edge_owned[lo] || !overlap(edges[e], edges[F])) continue;
      const auto& a = s.edges[lo];
      const auto& b = s.edges[hi];
      if (!shares_vertex({a[0], a[1], b[0], b[1]})) pairs.push_back({true, static_cast<int>(lo), static_cast<int>(hi)});
    }
  }
  std::sort(pairs.begin() + built, pairs.end(), pair_less);
  std::inplace_merge(pairs.begin(), pairs.begin() + built, pairs.end(), pair_less);
  pairs.erase(std::unique(pairs.begin(), pairs.end(),
                          [](const SelfPair& p, const SelfPair& q) { return !pair_less(p, q) && !pair_less(q, p); }),
              pairs.end());
  return pairs;
}

std::vector<SelfPair> SelfPotential::overlapping(std::span<const double> x0, std::span<const double> x1,
                                                 double inflate) const {
  const double margin = dh_, reach = 0.99 * (0.5 * dh_ + margin - inflate);
  Candidates& c = candidates_;
  const bool still = x0.data() == x1.data();
  const auto within = [&] {
    return !c.centre.empty() && largest_move(x0, c.centre) <= reach && (still || largest_move(x1, c.centre) <= reach);
  };
  if (!within()) {
    if (!still) return boxed_pairs(x0, x1, inflate);  // (a long move: the trees' own pairs)
    c.centre.assign(x0.begin(), x0.end());
    c.pairs = boxed_pairs(x0, x0, 0.5 * dh_ + margin);
    ++c.builds;
  } else {
    ++c.hits;
  }
  return filter_pairs(surface_, c.pairs, x0, x1, inflate);
}

std::vector<SelfPair> SelfPotential::boxed_pairs(std::span<const double> x0, std::span<const double> x1,
                                                 double inflate) const {
  if (!swept_) swept_ = std::make_unique<SweptPairs>(surface_);
  swept_->start(x0, x1, inflate);
  return swept_->pairs();
}

std::vector<SelfPair> SelfPotential::near_pairs(std::span<const double> x) const {
  return overlapping(x, x, 0.5 * dh_);
}

std::vector<SelfPair> SelfPotential::swept_pairs(std::span<const double> x, std::span<const double> dx) const {
  std::vector<double> end(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) end[i] = x[i] + dx[i];
  return overlapping(x, end, 0.0);
}

double SelfPotential::evaluate(std::span<const double> x, std::span<double> gradient, std::vector<double>* diagonal,
                               std::vector<SelfPairHessian>* full, bool with_friction) const {
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<SelfPair> pairs = near_pairs(x);
  times_.broad += seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  ++times_.evaluations;
  times_.narrow_pairs += static_cast<long long>(pairs.size());
  const auto n = static_cast<std::ptrdiff_t>(pairs.size());
  const bool hessian = diagonal != nullptr || full != nullptr;
  std::vector<PairTerms> terms(pairs.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const SelfPair& p = pairs[static_cast<std::size_t>(k)];
    const std::array<int, 4> v = pair_vertices(p);
    std::array<Vec3, 4> y;
    for (int i = 0; i < 4; ++i) y[i] = load3(&x[3 * static_cast<std::size_t>(v[i])]);
    if (p.edge_edge) {
      const auto r = [&](int i) { return load3(&surface_.rest[3 * static_cast<std::size_t>(v[i])]); };
      terms[k] = edge_edge_terms(y, dh_, kappa_, mollifier_threshold(r(0), r(1), r(2), r(3)), hessian, true);
    } else {
      terms[k] = point_triangle_terms(y, dh_, kappa_, hessian, true);
    }
  }
  double energy = 0.0;
  if (full) full->clear();
  for (std::size_t l = 0; l < (with_friction ? friction_.size() : 0); ++l) {
    const SelfFrictionLag& f = friction_[l];
    PairTerms t;
    std::array<Vec3, 4> y;
    for (int i = 0; i < 4; ++i) y[i] = load3(&x[3 * static_cast<std::size_t>(f.vertices[i])]);
    t.energy = self_friction_terms(f, y, slip_, t.gradient.data(), hessian ? t.hessian.data() : nullptr);
    terms.push_back(t);
  }
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const PairTerms& t = terms[k];
    const bool friction = k >= pairs.size();  // (the lagged friction terms follow the barrier's)
    if (!friction && t.energy == 0.0 && !(t.distance < dh_)) continue;
    energy += t.energy;
    const std::array<int, 4> v = friction ? friction_[k - pairs.size()].vertices : pair_vertices(pairs[k]);
    for (int i = 0; i < 4; ++i) {
      const auto base = static_cast<std::size_t>(v[i]);
      if (!gradient.empty())
        for (int c = 0; c < 3; ++c) gradient[3 * base + c] += t.gradient[3 * i + c];
      if (diagonal)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) (*diagonal)[9 * base + 3 * r + c] += t.hessian[12 * (3 * i + r) + 3 * i + c];
    }
    if (full) full->push_back({v, t.hessian});
  }
  times_.narrow += seconds_since(t0);
  return energy;
}

double SelfPotential::step_limit(std::span<const double> x, std::span<const double> dx) const {
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<SelfPair> pairs = swept_pairs(x, dx);
  times_.broad += seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  ++times_.limits;
  times_.ccd_pairs += static_cast<long long>(pairs.size());
  const auto n = static_cast<std::ptrdiff_t>(pairs.size());
  double limit = 1.0;
#pragma omp parallel for reduction(min : limit) schedule(dynamic, 16)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const SelfPair& p = pairs[static_cast<std::size_t>(k)];
    const std::array<int, 4> v = pair_vertices(p);
    std::array<Vec3, 4> y, d;
    for (int i = 0; i < 4; ++i) {
      y[i] = load3(&x[3 * static_cast<std::size_t>(v[i])]);
      d[i] = load3(&dx[3 * static_cast<std::size_t>(v[i])]);
    }
    limit = std::min(limit, additive_ccd(y, d, p.edge_edge));
  }
  times_.ccd += seconds_since(t0);
  return limit;
}

void SelfPotential::lag_friction(std::span<const double> x0, double mu, double eps) {
  friction_.clear();
  slip_ = eps;
  if (!(mu > 0.0)) return;
  for (const SelfPair& p : near_pairs(x0)) {
    const std::array<int, 4> v = pair_vertices(p);
    std::array<Vec3, 4> y;
    for (int i = 0; i < 4; ++i) y[i] = load3(&x0[3 * static_cast<std::size_t>(v[i])]);
    PairTerms t;
    if (p.edge_edge) {
      const auto r = [&](int i) { return load3(&surface_.rest[3 * static_cast<std::size_t>(v[i])]); };
      t = edge_edge_terms(y, dh_, kappa_, mollifier_threshold(r(0), r(1), r(2), r(3)), false, false);
    } else {
      t = point_triangle_terms(y, dh_, kappa_, false, false);
    }
    if (!(t.distance < dh_) || t.energy == 0.0) continue;
    Vec3 force{0.0, 0.0, 0.0};  // the barrier's force on the first primitive: its normal force lambda
    for (int i = 0; i < (p.edge_edge ? 2 : 1); ++i) force = force + load3(&t.gradient[3 * static_cast<std::size_t>(i)]);
    SelfFrictionLag lag;
    lag.vertices = v;
    if (lag_self_friction(y, p.edge_edge, norm(force), mu, lag)) friction_.push_back(lag);
  }
}

std::vector<int> SelfPotential::friction_vertices() const {
  std::vector<int> v;
  for (const SelfFrictionLag& f : friction_) v.insert(v.end(), f.vertices.begin(), f.vertices.end());
  return v;
}

SelfMeasure SelfPotential::measure(std::span<const double> x, bool listed) const {
  return measure_pairs(surface_, listed ? near_pairs(x) : boxed_pairs(x, x, 0.5 * dh_), x, dh_);
}

SelfMeasure measure_pairs(const SelfSurface& s, const std::vector<SelfPair>& pairs, std::span<const double> x,
                          double dh) {
  SelfMeasure m;
  for (const SelfPair& p : pairs) {
    const std::array<int, 4> v = pair_vertices(s, p);
    std::array<Vec3, 4> y;
    for (int i = 0; i < 4; ++i) y[i] = load3(&x[3 * static_cast<std::size_t>(v[i])]);
    const double d =
        std::sqrt(std::max(p.edge_edge ? edge_edge_squared_distance(y) : point_triangle_squared_distance(y), 0.0));
    if (!(d < dh)) continue;
    ++m.active;
    m.min_distance = std::min(m.min_distance, d);
  }
  return m;
}

std::vector<SelfPair> swept_overlapping(const SelfSurface& s, const std::vector<SelfPair>& pairs,
                                        std::span<const double> x0, std::span<const double> x1) {
  const auto box = [&](const int* v, int n) {
    Aabb b;
    for (int i = 0; i < n; ++i) {
      b.grow(load3(&x0[3 * static_cast<std::size_t>(v[i])]));
      b.grow(load3(&x1[3 * static_cast<std::size_t>(v[i])]));
    }
    return b;
  };
  std::vector<SelfPair> kept;
  for (const SelfPair& p : pairs) {
    const std::array<int, 4> v = pair_vertices(s, p);
    const int first = p.edge_edge ? 2 : 1;  // (as primitive_boxes and point_box grow them, with nothing added)
    if (overlap(box(v.data(), first), box(v.data() + first, 4 - first))) kept.push_back(p);
  }
  return kept;
}

}  // namespace edgefem::contact
