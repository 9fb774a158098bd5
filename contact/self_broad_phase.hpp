// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_broad_phase.hpp
/// The broad phase of self-contact: a bounding-volume hierarchy over axis-aligned boxes (of the surface's triangles or
/// edges, at the current positions inflated by the activation distance, or swept over a step: the box of a
/// primitive's start and end positions holds it at every time of a linear move), built by median splits along the
/// longest axis (leaves of at most four boxes), queried for every box that overlaps a given one. The Newton solvers
/// rebuild it whenever the positions change (a build is O(n log n)); the position-based integrator builds it once and
/// refits it to every step's boxes (refit, O(n); contact::SweptPairs). No MPI, no PETSc; const queries are
/// thread-safe.
#include <vector>

#include "contact/bvh.hpp"

namespace edgefem::contact {

/// Whether two closed boxes overlap (touching counts).
inline bool overlap(const Aabb& a, const Aabb& b) {
  for (int k = 0; k < 3; ++k)
    if (a.hi[k] < b.lo[k] || b.hi[k] < a.lo[k]) return false;
  return true;
}

class BoxTree {
 public:
  explicit BoxTree(std::vector<Aabb> boxes);
  /// Appends to `out` the index of every box that overlaps `box`, in increasing order.
  void query(const Aabb& box, std::vector<int>& out) const;
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
  std::vector<Aabb> boxes_;
  std::vector<Node> nodes_;
  std::vector<int> order_;
};

}  // namespace edgefem::contact
