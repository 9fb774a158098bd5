// SPDX-License-Identifier: BSD-3-Clause
#include "contact/self_broad_phase.hpp"

#include <algorithm>
#include <numeric>

namespace edgefem::contact {

BoxTree::BoxTree(std::vector<Aabb> boxes) : boxes_(std::move(boxes)) {
  order_.resize(boxes_.size());
  std::iota(order_.begin(), order_.end(), 0);
  nodes_.reserve(2 * boxes_.size() / 2 + 1);
  if (!boxes_.empty()) build(0, static_cast<int>(boxes_.size()));
  sort_boxes();
}

void BoxTree::sort_boxes() {
  sorted_.resize(boxes_.size());
  for (std::size_t i = 0; i < order_.size(); ++i) sorted_[i] = boxes_[static_cast<std::size_t>(order_[i])];
}

int BoxTree::build(int first, int last) {
  const int index = static_cast<int>(nodes_.size());
  nodes_.push_back({});
  Aabb box;
  for (int i = first; i < last; ++i) {
    const Aabb& b = boxes_[static_cast<std::size_t>(order_[static_cast<std::size_t>(i)])];
    if (b.lo[0] <= b.hi[0]) box.grow(b);  // (an empty box's corners would make the node's box everything)
  }
  nodes_[static_cast<std::size_t>(index)].box = box;
  if (last - first <= 4) {
    nodes_[static_cast<std::size_t>(index)].first = first;
    nodes_[static_cast<std::size_t>(index)].count = last - first;
    return index;
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (box.hi[k] - box.lo[k] > box.hi[axis] - box.lo[axis]) axis = k;
  const int middle = (first + last) / 2;
  const auto centre = [&](int b) {
    const Aabb& a = boxes_[static_cast<std::size_t>(b)];
    return a.lo[axis] + a.hi[axis];
  };
  std::nth_element(order_.begin() + first, order_.begin() + middle, order_.begin() + last,
                   [&](int a, int b) { return centre(a) < centre(b) || (centre(a) == centre(b) && a < b); });
  const int left = build(first, middle);
  const int right = build(middle, last);
  nodes_[static_cast<std::size_t>(index)].left = left;
  nodes_[static_cast<std::size_t>(index)].right = right;
  return index;
}

void BoxTree::refit(std::vector<Aabb> boxes) {
  boxes_ = std::move(boxes);
  sort_boxes();
  // build() numbers a node before its children, so a reverse pass meets the children first.
  for (std::size_t k = nodes_.size(); k-- > 0;) {
    Node& n = nodes_[k];
    Aabb box;
    const auto grow = [&box](const Aabb& b) {
      if (b.lo[0] <= b.hi[0]) box.grow(b);  // (an empty box's corners would make the node's box everything)
    };
    if (n.left < 0) {
      for (int i = n.first; i < n.first + n.count; ++i) grow(sorted_[static_cast<std::size_t>(i)]);
    } else {
      grow(nodes_[static_cast<std::size_t>(n.left)].box);
      grow(nodes_[static_cast<std::size_t>(n.right)].box);
    }
    n.box = box;
  }
}

void BoxTree::query(const Aabb& box, std::vector<int>& out) const {
  if (nodes_.empty()) return;
  const std::size_t start = out.size();
  int stack[128];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& n = nodes_[static_cast<std::size_t>(stack[--top])];
    if (!overlap(n.box, box)) continue;
    if (n.left < 0) {
      for (int i = n.first; i < n.first + n.count; ++i)
        if (overlap(sorted_[static_cast<std::size_t>(i)], box)) out.push_back(order_[static_cast<std::size_t>(i)]);
      continue;
    }
    stack[top++] = n.left;
    stack[top++] = n.right;
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
}

}  // namespace edgefem::contact
