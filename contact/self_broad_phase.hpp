// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_broad_phase.hpp
/// The broad phase of self-contact: a bounding-volume hierarchy over axis-aligned boxes (of the surface's triangles or
/// edges, at the current positions inflated by the activation distance, or swept over a step: the box of a
/// primitive's start and end positions holds it at every time of a linear move), built by median splits along the
/// longest axis (leaves of at most four boxes), queried for every box that overlaps a given one. The self-contact's
/// queries (contact::SweptPairs, for the Newton solvers' candidate lists and the position-based steps) build it once
/// and refit it to every query's boxes (refit, O(n)), and find all overlapping boxes of two trees,
/// or of one tree with itself, in one traversal (each_overlap). No MPI, no PETSc; const queries are
/// thread-safe.
#include <omp.h>

#include <algorithm>
#include <array>
#include <vector>

#include "contact/bvh.hpp"

namespace edgefem::contact {

/// Whether two closed boxes overlap (touching counts). Without branches: the traversals test millions of box pairs
/// whose answers a branch predictor cannot guess.
inline bool overlap(const Aabb& a, const Aabb& b) {
  return !(a.hi[0] < b.lo[0]) & !(b.hi[0] < a.lo[0]) & !(a.hi[1] < b.lo[1]) & !(b.hi[1] < a.lo[1]) &
         !(a.hi[2] < b.lo[2]) & !(b.hi[2] < a.lo[2]);
}

class BoxTree {
 public:
  explicit BoxTree(std::vector<Aabb> boxes);
  /// Appends to `out` the index of every box that overlaps `box`, in increasing order.
  void query(const Aabb& box, std::vector<int>& out) const;
  /// Calls f(thread, i, j) for every box i of this tree and box j of `other` that overlap, in no particular order:
  /// one traversal of both hierarchies at once (the node pairs whose boxes overlap), instead of a query per box;
  /// on the OpenMP threads (`thread` the caller's number, for per-thread results).
  template <class F>
  void each_overlap(const BoxTree& other, F&& f) const {
    traverse(other, false, f);
  }
  /// Calls f(thread, i, j), i < j, once for every two of this tree's boxes that overlap, in no particular order.
  template <class F>
  void each_overlap(F&& f) const {
    traverse(*this, true, f);
  }
  /// New boxes (as many, in the same order) in the same hierarchy: every node's box recomputed from its leaves'
  /// (O(n), no sorting). Queries stay exact; they slow down as the boxes drift from where the tree was built.
  /// Empty boxes (lo > hi) are allowed: they overlap none and leave their nodes' boxes as they are.
  void refit(std::vector<Aabb> boxes);
  [[nodiscard]] std::size_t size() const { return boxes_.size(); }
  [[nodiscard]] const Aabb& box(int i) const { return boxes_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] const std::vector<Aabb>& boxes() const { return boxes_; }

 private:
  struct Node {
    Aabb box;
    int left = -1, right = -1, first = 0, count = 0;
  };
  int build(int first, int last);
  /// each_overlap: from the root pair, a node pair whose boxes overlap splits the node (of the internal ones, the
  /// larger); `self` (other is this tree): a node paired with itself gives its children's three pairs, and each
  /// unordered pair of boxes is met once. Several threads (OpenMP, when called outside a parallel region): the
  /// node pairs left after the first splits are shared out, f(thread, i, j) naming the calling thread.
  template <class F>
  void traverse(const BoxTree& other, bool self, F& f) const {
    if (nodes_.empty() || other.nodes_.empty()) return;
    std::vector<std::array<int, 2>> stack{{0, 0}};
    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (threads == 1) {
      while (!stack.empty()) split(other, self, stack, [&f](int i, int j) { f(0, i, j); });
      return;
    }
    // Breadth first until there are enough node pairs to share out (depth first, the stack stays short).
    while (!stack.empty() && stack.size() < 16 * static_cast<std::size_t>(threads)) {
      std::vector<std::array<int, 2>> next, one;
      for (const auto& pair : stack) {
        one.assign(1, pair);
        split(other, self, one, [&f](int i, int j) { f(0, i, j); });
        next.insert(next.end(), one.begin(), one.end());
      }
      stack.swap(next);
    }
    const auto seeds = static_cast<long>(stack.size());
#pragma omp parallel
    {
      const int thread = omp_get_thread_num();
      std::vector<std::array<int, 2>> own;
#pragma omp for schedule(dynamic, 1)
      for (long k = 0; k < seeds; ++k) {
        own.assign(1, stack[static_cast<std::size_t>(k)]);
        while (!own.empty()) split(other, self, own, [&f, thread](int i, int j) { f(thread, i, j); });
      }
    }
  }
  /// One node pair off the stack: its children's pairs pushed, or its leaves' overlapping boxes given to f(i, j).
  template <class G>
  void split(const BoxTree& other, bool self, std::vector<std::array<int, 2>>& stack, G&& f) const {
    const auto extent = [](const Aabb& b) { return b.hi[0] - b.lo[0] + b.hi[1] - b.lo[1] + b.hi[2] - b.lo[2]; };
    const auto [a, b] = stack.back();
    stack.pop_back();
    const Node& A = nodes_[static_cast<std::size_t>(a)];
    const Node& B = other.nodes_[static_cast<std::size_t>(b)];
    if (self && a == b) {
      if (A.left >= 0) {
        stack.push_back({A.left, A.left}), stack.push_back({A.right, A.right}), stack.push_back({A.left, A.right});
        return;
      }
      for (int i = A.first; i < A.first + A.count; ++i)
        for (int j = i + 1; j < A.first + A.count; ++j) {
          if (!overlap(sorted_[static_cast<std::size_t>(i)], sorted_[static_cast<std::size_t>(j)])) continue;
          const int p = order_[static_cast<std::size_t>(i)], q = order_[static_cast<std::size_t>(j)];
          f(std::min(p, q), std::max(p, q));
        }
      return;
    }
    if (!overlap(A.box, B.box)) return;
    if (A.left < 0 && B.left < 0) {
      for (int i = A.first; i < A.first + A.count; ++i)
        for (int j = B.first; j < B.first + B.count; ++j) {
          if (!overlap(sorted_[static_cast<std::size_t>(i)], other.sorted_[static_cast<std::size_t>(j)])) continue;
          const int p = order_[static_cast<std::size_t>(i)], q = other.order_[static_cast<std::size_t>(j)];
          if (self)
            f(std::min(p, q), std::max(p, q));
          else
            f(p, q);
        }
    } else if (B.left < 0 || (A.left >= 0 && extent(A.box) >= extent(B.box))) {
      stack.push_back({A.left, b}), stack.push_back({A.right, b});
    } else {
      stack.push_back({a, B.left}), stack.push_back({a, B.right});
    }
  }
  /// Fills sorted_ from boxes_ (the leaves' boxes side by side: the traversals read them in this order).
  void sort_boxes();
  std::vector<Aabb> boxes_;
  std::vector<Aabb> sorted_;  ///< boxes_[order_[i]]
  std::vector<Node> nodes_;
  std::vector<int> order_;
};

}  // namespace edgefem::contact
