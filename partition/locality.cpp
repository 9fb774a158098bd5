// SPDX-License-Identifier: BSD-3-Clause
#include "partition/locality.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace edgefem {
namespace {

/// The graph of `cells` over the vertices [0, n): CSR, each neighbour list sorted, without the vertex itself.
struct Graph {
  std::vector<LocalIndex> offsets, neighbours;
  [[nodiscard]] LocalIndex degree(LocalIndex v) const { return offsets[v + 1] - offsets[v]; }
};

Graph cell_graph(LocalIndex n, const std::vector<LocalIndex>& cells, int nodes_per_cell) {
  Graph g;
  g.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  const std::size_t n_cells = cells.size() / static_cast<std::size_t>(nodes_per_cell);
  const auto for_each_pair = [&](auto&& f) {
    for (std::size_t c = 0; c < n_cells; ++c) {
      const LocalIndex* v = cells.data() + c * static_cast<std::size_t>(nodes_per_cell);
      for (int a = 0; a < nodes_per_cell; ++a)
        for (int b = 0; b < nodes_per_cell; ++b)
          if (a != b && v[a] < n && v[b] < n && v[a] != v[b]) f(v[a], v[b]);
    }
  };
  for_each_pair([&](LocalIndex a, LocalIndex) { ++g.offsets[static_cast<std::size_t>(a) + 1]; });
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  std::vector<LocalIndex> fill(g.offsets.begin(), g.offsets.end() - 1);
  g.neighbours.resize(static_cast<std::size_t>(g.offsets.back()));
  for_each_pair([&](LocalIndex a, LocalIndex b) { g.neighbours[static_cast<std::size_t>(fill[a]++)] = b; });
  // Sort and drop repeats (an edge of several cells), compacting in place.
  LocalIndex out = 0;
  for (LocalIndex v = 0; v < n; ++v) {
    const auto begin = g.neighbours.begin() + g.offsets[v], end = g.neighbours.begin() + g.offsets[v + 1];
    std::sort(begin, end);
    const auto last = std::unique(begin, end);
    g.offsets[v] = out;
    out = static_cast<LocalIndex>(std::copy(begin, last, g.neighbours.begin() + out) - g.neighbours.begin());
  }
  g.offsets[n] = out;
  g.neighbours.resize(static_cast<std::size_t>(out));
  return g;
}

/// What breadth_first found: the number of levels and where the last one starts in `order`.
struct Levels {
  std::size_t count = 0, last_begin = 0;
};

/// Breadth-first levels from `start` over the unmarked vertices (`mark` != stamp) of its connected part; appends
/// them to `order` (each vertex's new neighbours by increasing degree, ties by number) and marks them.
Levels breadth_first(const Graph& g, LocalIndex start, std::vector<LocalIndex>& order, std::vector<int>& mark,
                          int stamp) {
  const std::size_t first = order.size();
  order.push_back(start);
  mark[static_cast<std::size_t>(start)] = stamp;
  std::size_t level_begin = first, level_end = order.size();
  Levels levels;
  std::vector<LocalIndex> next;
  while (level_begin < level_end) {
    levels.last_begin = level_begin;
    ++levels.count;
    for (std::size_t i = level_begin; i < level_end; ++i) {
      const LocalIndex v = order[i];
      next.clear();
      for (LocalIndex k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
        const LocalIndex w = g.neighbours[static_cast<std::size_t>(k)];
        if (mark[static_cast<std::size_t>(w)] == stamp) continue;
        mark[static_cast<std::size_t>(w)] = stamp;
        next.push_back(w);
      }
      std::sort(next.begin(), next.end(), [&](LocalIndex a, LocalIndex b) {
        return g.degree(a) != g.degree(b) ? g.degree(a) < g.degree(b) : a < b;
      });
      order.insert(order.end(), next.begin(), next.end());
    }
    level_begin = level_end;
    level_end = order.size();
  }
  return levels;
}

}  // namespace

std::vector<LocalIndex> reverse_cuthill_mckee(LocalIndex n, const std::vector<LocalIndex>& cells, int nodes_per_cell) {
  if (nodes_per_cell < 1 || cells.size() % static_cast<std::size_t>(nodes_per_cell) != 0)
    throw std::invalid_argument("reverse_cuthill_mckee: cells.size() is not a multiple of nodes_per_cell");
  const Graph g = cell_graph(n, cells, nodes_per_cell);
  std::vector<LocalIndex> order;
  order.reserve(static_cast<std::size_t>(n));
  std::vector<int> visited(static_cast<std::size_t>(n), 0), trial(static_cast<std::size_t>(n), 0);
  std::vector<LocalIndex> scratch;
  int stamp = 0;
  for (LocalIndex seed = 0; seed < n; ++seed) {
    if (visited[static_cast<std::size_t>(seed)] != 0) continue;
    // Pseudo-peripheral start (George and Liu): the lowest-degree vertex of the last level, again while the number
    // of levels grows (a search stays in the seed's connected part, which no earlier search entered).
    LocalIndex start = seed;
    std::size_t depth = 0;
    for (int round = 0; round < 8; ++round) {
      scratch.clear();
      const Levels levels = breadth_first(g, start, scratch, trial, ++stamp);
      if (levels.count <= depth) break;
      depth = levels.count;
      LocalIndex best = scratch[levels.last_begin];
      for (std::size_t i = levels.last_begin; i < scratch.size(); ++i)
        if (g.degree(scratch[i]) < g.degree(best)) best = scratch[i];
      if (best == start) break;
      start = best;
    }
    breadth_first(g, start, order, visited, 1);
  }
  std::vector<LocalIndex> new_number(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < order.size(); ++i)
    new_number[static_cast<std::size_t>(order[i])] = static_cast<LocalIndex>(order.size() - 1 - i);
  return new_number;
}

void renumber_for_locality(MPI_Comm comm, LocalMesh& piece) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const LocalIndex n_owned = piece.n_owned, n_local = piece.n_local();
  const bool solid = piece.mesh.n_tets() > 0;
  std::vector<LocalIndex> owned_new =
      reverse_cuthill_mckee(n_owned, solid ? piece.mesh.tets : piece.mesh.triangles, solid ? 4 : 3);

  // The ghosts' new global numbers, from their owners.
  std::vector<GlobalIndex> begins(static_cast<std::size_t>(size) + 1, 0);
  MPI_Allgather(&piece.first_owned, 1, MPI_INT64_T, begins.data(), 1, MPI_INT64_T, comm);
  begins[static_cast<std::size_t>(size)] = piece.n_global_vertices;
  const auto owner = [&](GlobalIndex g) {
    return static_cast<int>(std::upper_bound(begins.begin(), begins.end() - 1, g) - begins.begin()) - 1;
  };
  std::vector<int> send_counts(static_cast<std::size_t>(size), 0), recv_counts(static_cast<std::size_t>(size), 0);
  // Ghosts are ascending by global number, so grouped by owner in rank order.
  for (LocalIndex v = n_owned; v < n_local; ++v) ++send_counts[static_cast<std::size_t>(owner(piece.global_vertex[v]))];
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  std::vector<int> send_offsets(static_cast<std::size_t>(size), 0), recv_offsets(static_cast<std::size_t>(size), 0);
  std::exclusive_scan(send_counts.begin(), send_counts.end(), send_offsets.begin(), 0);
  std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_offsets.begin(), 0);
  const std::vector<GlobalIndex> asked(piece.global_vertex.begin() + n_owned, piece.global_vertex.end());
  std::vector<GlobalIndex> questions(static_cast<std::size_t>(recv_offsets.back() + recv_counts.back()));
  MPI_Alltoallv(asked.data(), send_counts.data(), send_offsets.data(), MPI_INT64_T, questions.data(),
                recv_counts.data(), recv_offsets.data(), MPI_INT64_T, comm);
  for (GlobalIndex& g : questions) g = piece.first_owned + owned_new[static_cast<std::size_t>(g - piece.first_owned)];
  std::vector<GlobalIndex> ghost_global(asked.size());
  MPI_Alltoallv(questions.data(), recv_counts.data(), recv_offsets.data(), MPI_INT64_T, ghost_global.data(),
                send_counts.data(), send_offsets.data(), MPI_INT64_T, comm);

  // The local permutation: owned vertices by their new numbers, ghosts ascending by their new global numbers.
  std::vector<LocalIndex> new_local(static_cast<std::size_t>(n_local));
  std::copy(owned_new.begin(), owned_new.end(), new_local.begin());
  std::vector<LocalIndex> ghosts(asked.size());
  std::iota(ghosts.begin(), ghosts.end(), 0);
  std::sort(ghosts.begin(), ghosts.end(), [&](LocalIndex a, LocalIndex b) {
    return ghost_global[static_cast<std::size_t>(a)] < ghost_global[static_cast<std::size_t>(b)];
  });
  for (std::size_t k = 0; k < ghosts.size(); ++k)
    new_local[static_cast<std::size_t>(n_owned + ghosts[k])] = n_owned + static_cast<LocalIndex>(k);

  // Every per-vertex array and every cell's vertices follow.
  const auto permuted = [&](const auto& values, std::size_t per_vertex) {
    std::remove_cvref_t<decltype(values)> out(values.size());
    for (LocalIndex v = 0; v < n_local; ++v)
      for (std::size_t i = 0; i < per_vertex; ++i)
        out[static_cast<std::size_t>(new_local[static_cast<std::size_t>(v)]) * per_vertex + i] =
            values[static_cast<std::size_t>(v) * per_vertex + i];
    return out;
  };
  piece.mesh.coords = permuted(piece.mesh.coords, 3);
  piece.original_vertex = permuted(piece.original_vertex, 1);
  for (LocalIndex v = n_owned; v < n_local; ++v)
    piece.global_vertex[static_cast<std::size_t>(v)] = ghost_global[static_cast<std::size_t>(v - n_owned)];
  piece.global_vertex = permuted(piece.global_vertex, 1);
  for (LocalIndex v = 0; v < n_owned; ++v) piece.global_vertex[static_cast<std::size_t>(v)] = piece.first_owned + v;
  for (std::vector<LocalIndex>* cells : {&piece.mesh.tets, &piece.mesh.triangles, &piece.mesh.lines, &piece.hinges})
    for (LocalIndex& v : *cells) v = new_local[static_cast<std::size_t>(v)];
  // The region tags' CSR, row by row in the new order.
  std::vector<LocalIndex> old_of(static_cast<std::size_t>(n_local));
  for (LocalIndex v = 0; v < n_local; ++v) old_of[static_cast<std::size_t>(new_local[static_cast<std::size_t>(v)])] = v;
  if (!piece.vertex_region_offsets.empty()) {
    std::vector<int> offsets(1, 0), regions;
    regions.reserve(piece.vertex_regions.size());
    for (LocalIndex v = 0; v < n_local; ++v) {
      const LocalIndex old = old_of[static_cast<std::size_t>(v)];
      regions.insert(regions.end(), piece.vertex_regions.begin() + piece.vertex_region_offsets[old],
                     piece.vertex_regions.begin() + piece.vertex_region_offsets[old + 1]);
      offsets.push_back(static_cast<int>(regions.size()));
    }
    piece.vertex_region_offsets = std::move(offsets);
    piece.vertex_regions = std::move(regions);
  }
}

}  // namespace edgefem
