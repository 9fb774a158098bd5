// SPDX-License-Identifier: BSD-3-Clause
#include "partition/ownership.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

namespace edgefem {
namespace {

/// Compressed rows: row i is items[begin[i] .. begin[i+1]).
struct Rows {
  std::vector<std::int64_t> begin;
  std::vector<int> items;
  [[nodiscard]] std::int64_t size(std::int64_t i) const { return begin[i + 1] - begin[i]; }
  [[nodiscard]] const int* first(std::int64_t i) const { return items.data() + begin[i]; }
  [[nodiscard]] const int* last(std::int64_t i) const { return items.data() + begin[i + 1]; }
};

/// The parts touching each vertex, ascending (an empty row for a vertex in no cell).
Rows vertex_parts(const std::vector<LocalIndex>& cells, int nodes, const std::vector<int>& cell_part,
                  LocalIndex n_vertices) {
  Rows rows;
  rows.begin.assign(static_cast<std::size_t>(n_vertices) + 1, 0);
  for (const LocalIndex v : cells) ++rows.begin[v + 1];
  std::partial_sum(rows.begin.begin(), rows.begin.end(), rows.begin.begin());
  rows.items.resize(cells.size());
  std::vector<std::int64_t> next(rows.begin.begin(), rows.begin.end() - 1);
  for (std::size_t i = 0; i < cells.size(); ++i) rows.items[next[cells[i]]++] = cell_part[i / nodes];
  // Sort and deduplicate each row, compacting the rows towards the front.
  std::int64_t out = 0;
  for (LocalIndex v = 0; v < n_vertices; ++v) {
    int* first = rows.items.data() + rows.begin[v];
    int* last = rows.items.data() + rows.begin[v + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    rows.begin[v] = out;
    for (const int* p = first; p != last; ++p) rows.items[out++] = *p;
  }
  rows.begin[n_vertices] = out;
  rows.items.resize(static_cast<std::size_t>(out));
  return rows;
}

/// Shifts single vertices between parts along chains of parts: part p can pass a vertex it owns to any other
/// part touching that vertex. A chain s -> p1 -> ... -> t moves one owned vertex out of s and one into t and
/// leaves the parts in between with their counts.
class OwnerShifter {
 public:
  OwnerShifter(const Rows& parts_of, std::vector<int>& owner, std::vector<std::int64_t>& load, int n_parts)
      : parts_of_(parts_of), owner_(owner), load_(load), seen_(n_parts, 0), via_part_(n_parts), via_vertex_(n_parts) {
    // Each part's shared vertices (touched by more than one part), ascending.
    shared_of_.begin.assign(static_cast<std::size_t>(n_parts) + 1, 0);
    const auto n_vertices = static_cast<std::int64_t>(owner.size());
    for (std::int64_t v = 0; v < n_vertices; ++v)
      if (parts_of.size(v) > 1)
        for (const int* p = parts_of.first(v); p != parts_of.last(v); ++p) ++shared_of_.begin[*p + 1];
    std::partial_sum(shared_of_.begin.begin(), shared_of_.begin.end(), shared_of_.begin.begin());
    shared_of_.items.resize(static_cast<std::size_t>(shared_of_.begin.back()));
    std::vector<std::int64_t> next(shared_of_.begin.begin(), shared_of_.begin.end() - 1);
    for (std::int64_t v = 0; v < n_vertices; ++v)
      if (parts_of.size(v) > 1)
        for (const int* p = parts_of.first(v); p != parts_of.last(v); ++p)
          shared_of_.items[next[*p]++] = static_cast<int>(v);
  }

  /// Moves vertices out of every part owning more than `limit` (in ascending order) into parts owning fewer,
  /// shortest chains first: phases of a breadth-first labelling (links to the nearest part with room, over
  /// "p owns a vertex that q touches") and depth-first walks down the labels (Dinic's blocking flow). Stops
  /// when no chain is left.
  void level_out(std::int64_t limit) {
    const int n_parts = static_cast<int>(load_.size());
    for (bool moved = true; moved;) {
      moved = false;
      level_.assign(static_cast<std::size_t>(n_parts), unreached);
      queue_.clear();
      for (int p = 0; p < n_parts; ++p)
        if (load_[p] < limit) {
          level_[p] = 0;
          queue_.push_back(p);
        }
      for (std::size_t head = 0; head < queue_.size(); ++head) {
        const int q = queue_[head];
        for (const int* v = shared_of_.first(q); v != shared_of_.last(q); ++v)
          if (level_[owner_[*v]] == unreached) {
            level_[owner_[*v]] = level_[q] + 1;
            queue_.push_back(owner_[*v]);
          }
      }
      next_.assign(shared_of_.begin.begin(), shared_of_.begin.end() - 1);
      for (int p = 0; p < n_parts; ++p)
        while (load_[p] > limit && level_[p] != unreached && walk_down(p, limit)) moved = true;
    }
  }

  /// Moves one vertex out of `source` into the nearest part (breadth first, ascending ids) owning fewer than
  /// `limit`; false if no chain reaches such a part.
  bool shift_out(int source, std::int64_t limit) {
    start(source);
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const int p = queue_[head];
      for (const int* v = shared_of_.first(p); v != shared_of_.last(p); ++v) {
        if (owner_[*v] != p) continue;
        for (const int* q = parts_of_.first(*v); q != parts_of_.last(*v); ++q) {
          if (seen_[*q] == stamp_) continue;
          reach(*q, p, *v);
          if (load_[*q] < limit) {
            for (int r = *q; r != source; r = via_part_[r]) owner_[via_vertex_[r]] = r;
            --load_[source];
            ++load_[*q];
            return true;
          }
        }
      }
    }
    return false;
  }

  /// Moves one vertex into `target` from the nearest part (breadth first, ascending ids) owning more than
  /// `limit`; false if no chain reaches such a part.
  bool shift_in(int target, std::int64_t limit) {
    start(target);
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const int p = queue_[head];
      for (const int* v = shared_of_.first(p); v != shared_of_.last(p); ++v) {
        const int q = owner_[*v];
        if (seen_[q] == stamp_) continue;
        reach(q, p, *v);
        if (load_[q] > limit) {
          for (int r = q; r != target; r = via_part_[r]) owner_[via_vertex_[r]] = via_part_[r];
          ++load_[target];
          --load_[q];
          return true;
        }
      }
    }
    return false;
  }

 private:
  static constexpr int unreached = std::numeric_limits<int>::max();

  /// One depth-first walk of level_out from `source` down the levels to a part with room; parts found to lead
  /// nowhere are unlabelled, next_[p] is where part p's scan of its shared vertices resumes.
  bool walk_down(int source, std::int64_t limit) {
    path_.assign(1, source);
    steps_.clear();
    while (!path_.empty()) {
      const int p = path_.back();
      if (level_[p] == 0) {  // a part with room: each vertex of the walk moves one link down
        for (std::size_t i = 0; i < steps_.size(); ++i) owner_[steps_[i]] = path_[i + 1];
        --load_[source];
        if (++load_[p] >= limit) level_[p] = unreached;
        return true;
      }
      int down = -1;
      for (; next_[p] < shared_of_.begin[p + 1]; ++next_[p]) {
        const int v = shared_of_.items[next_[p]];
        if (owner_[v] != p) continue;
        for (const int* q = parts_of_.first(v); q != parts_of_.last(v) && down < 0; ++q)
          if (level_[*q] == level_[p] - 1) down = *q;
        if (down >= 0) {
          path_.push_back(down);
          steps_.push_back(v);
          break;  // v is scanned again on the way back (another of its parts may lead down)
        }
      }
      if (down < 0) {
        level_[p] = unreached;
        path_.pop_back();
        if (!steps_.empty()) steps_.pop_back();
      }
    }
    return false;
  }

  void start(int part) {
    ++stamp_;
    queue_.assign(1, part);
    seen_[part] = stamp_;
  }
  /// Part q is reached from part p through vertex v (shared by p and q).
  void reach(int q, int p, int v) {
    seen_[q] = stamp_;
    via_part_[q] = p;
    via_vertex_[q] = v;
    queue_.push_back(q);
  }

  const Rows& parts_of_;
  std::vector<int>& owner_;
  std::vector<std::int64_t>& load_;
  Rows shared_of_;
  std::vector<std::int64_t> seen_;
  std::int64_t stamp_ = 0;
  std::vector<int> via_part_, via_vertex_, queue_;
  std::vector<int> level_, path_, steps_;
  std::vector<std::int64_t> next_;
};

}  // namespace

std::vector<int> balance_shared_owners(std::vector<std::int64_t> shared_begin, std::vector<int> shared_parts,
                                       std::vector<std::int64_t> load, std::int64_t n_used, int n_parts) {
  Rows parts_of{std::move(shared_begin), std::move(shared_parts)};
  const auto n_shared = static_cast<std::int64_t>(parts_of.begin.size()) - 1;
  std::vector<int> owner(static_cast<std::size_t>(n_shared), n_parts);
  // Greedy: each shared vertex, in order, to the touching part owning the fewest so far (lowest id on ties).
  for (std::int64_t v = 0; v < n_shared; ++v) {
    int best = *parts_of.first(v);
    for (const int* p = parts_of.first(v) + 1; p != parts_of.last(v); ++p)
      if (load[*p] < load[best]) best = *p;
    owner[v] = best;
    ++load[best];
  }
  if (n_parts == 1 || n_shared == 0) return owner;
  // Then chains of single-vertex moves: first every part down to ceil(mean) and up to floor(mean) where a
  // chain reaches a part with room (or a surplus); then parts still outside (their vertices touched by no other
  // part alone exceed the mean, or no chain reaches far enough) move a vertex to a part owning at least two
  // fewer (from one owning at least two more) while such a chain exists. Every move narrows the spread of the
  // two parts it changes (their sum of squares drops), so the loop ends and the largest count never grows.
  const std::int64_t floor_mean = n_used / n_parts, ceil_mean = (n_used + n_parts - 1) / n_parts;
  OwnerShifter shifter(parts_of, owner, load, n_parts);
  shifter.level_out(ceil_mean);   // every part down to ceil(mean) ...
  shifter.level_out(floor_mean);  // ... and up to floor(mean), from parts above it
  for (bool moved = true; moved;) {
    moved = false;
    for (int p = 0; p < n_parts; ++p)
      while (load[p] > ceil_mean && shifter.shift_out(p, load[p] - 1)) moved = true;
    for (int p = 0; p < n_parts; ++p)
      while (load[p] < floor_mean && shifter.shift_in(p, load[p] + 1)) moved = true;
  }
  return owner;
}

std::vector<int> balanced_vertex_owners(const std::vector<LocalIndex>& cells, int nodes,
                                        const std::vector<int>& cell_part, int n_parts, LocalIndex n_vertices) {
  const Rows parts_of = vertex_parts(cells, nodes, cell_part, n_vertices);
  std::vector<int> owner(static_cast<std::size_t>(n_vertices), n_parts);
  std::vector<std::int64_t> load(static_cast<std::size_t>(n_parts), 0);
  std::int64_t n_used = 0;
  std::vector<std::int64_t> shared_begin(1, 0);
  std::vector<int> shared_parts;
  std::vector<LocalIndex> shared;
  for (LocalIndex v = 0; v < n_vertices; ++v) {
    if (parts_of.size(v) == 0) continue;
    ++n_used;
    if (parts_of.size(v) == 1) {
      owner[v] = *parts_of.first(v);
      ++load[owner[v]];
    } else {
      shared.push_back(v);
      shared_parts.insert(shared_parts.end(), parts_of.first(v), parts_of.last(v));
      shared_begin.push_back(static_cast<std::int64_t>(shared_parts.size()));
    }
  }
  const std::vector<int> shared_owner = balance_shared_owners(std::move(shared_begin), std::move(shared_parts),
                                                              std::move(load), n_used, n_parts);
  for (std::size_t i = 0; i < shared.size(); ++i) owner[shared[i]] = shared_owner[i];
  return owner;
}

}  // namespace edgefem
