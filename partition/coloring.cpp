// SPDX-License-Identifier: BSD-3-Clause
/// \file coloring.cpp
/// Greedy cell colouring (coloring.hpp). Each vertex keeps a bit set of the colours of the cells already coloured
/// around it; a cell takes the lowest colour absent from its vertices' sets (distance-1 colouring of the
/// cell-adjacency graph through shared vertices, linear in the number of cells).
#include "partition/coloring.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "partition/collective.hpp"

namespace edgefem {

std::vector<std::int32_t> greedy_cell_colors(std::span<const std::int64_t> cells, int nodes_per_cell,
                                             std::int64_t n_vertices) {
  constexpr int kWords = kMaxCellColors / 64;
  using Mask = std::array<std::uint64_t, kWords>;
  const std::size_t n_cells = cells.size() / static_cast<std::size_t>(nodes_per_cell);
  std::vector<Mask> used(static_cast<std::size_t>(n_vertices), Mask{});
  std::vector<std::int32_t> color(n_cells, 0);
  for (std::size_t c = 0; c < n_cells; ++c) {
    Mask taken{};
    const std::int64_t* v = cells.data() + c * nodes_per_cell;
    for (int k = 0; k < nodes_per_cell; ++k) {
      if (v[k] < 0 || v[k] >= n_vertices)
        throw std::invalid_argument("cell colouring: cell " + std::to_string(c) + " has vertex id " +
                                    std::to_string(v[k]) + ", expected 0.." + std::to_string(n_vertices - 1));
      for (int w = 0; w < kWords; ++w) taken[w] |= used[v[k]][w];
    }
    int chosen = -1;
    for (int w = 0; w < kWords && chosen < 0; ++w)
      if (~taken[w] != 0) chosen = 64 * w + std::countr_one(taken[w]);
    if (chosen < 0)
      throw std::invalid_argument("cell colouring: cell " + std::to_string(c) + " needs more than " +
                                  std::to_string(kMaxCellColors) + " colours (a vertex is shared by too many cells)");
    color[c] = chosen;
    for (int k = 0; k < nodes_per_cell; ++k) used[v[k]][chosen / 64] |= std::uint64_t{1} << (chosen % 64);
  }
  return color;
}

namespace {

/// Gathers every rank's items (`width` int64 each) on rank 0, where `color` maps all of them (in gathered order)
/// to colours; each rank gets its own items' colours back and `n_colors` the number of colours. Collective; a
/// failure of `color` throws CollectiveError on every rank.
std::vector<std::int32_t> colors_through_rank0(
    MPI_Comm comm, const std::vector<std::int64_t>& send, int width, int* n_colors,
    const std::function<std::vector<std::int32_t>(const std::vector<std::int64_t>& all)>& color) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n_local = static_cast<int>(send.size()) / width;
  std::vector<int> counts(size), offsets(size + 1, 0);
  const int my_count = static_cast<int>(send.size());
  MPI_Gather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 0; r < size; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<std::int64_t> all(rank == 0 ? offsets[size] : 0);
  MPI_Gatherv(send.data(), my_count, MPI_INT64_T, all.data(), counts.data(), offsets.data(), MPI_INT64_T, 0, comm);
  std::vector<std::int32_t> colors_sent;  // rank 0: per gathered item, in gathered order
  int n = 0;
  run_collectively(comm, [&] {
    if (rank != 0) return;
    colors_sent = color(all);
    for (const std::int32_t c : colors_sent) n = std::max(n, c + 1);
  });
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  for (int r = 0; r <= size; ++r) offsets[r] /= width;
  for (int r = 0; r < size; ++r) counts[r] = offsets[r + 1] - offsets[r];
  std::vector<std::int32_t> mine(static_cast<std::size_t>(n_local));
  MPI_Scatterv(colors_sent.data(), counts.data(), offsets.data(), MPI_INT32_T, mine.data(), n_local, MPI_INT32_T, 0,
               comm);
  if (n_colors) *n_colors = n;
  return mine;
}

}  // namespace

std::vector<std::int32_t> distributed_cell_colors(MPI_Comm comm, const LocalMesh& mesh, int nodes_per_cell,
                                                  int* n_colors) {
  const int npc = nodes_per_cell;
  const std::vector<LocalIndex>& local_cells = npc == 4 ? mesh.mesh.tets : mesh.mesh.triangles;
  const int n_local = static_cast<int>(local_cells.size() / npc);
  // Per local cell: its file index, then its vertices' file indices.
  std::vector<std::int64_t> send(static_cast<std::size_t>(n_local) * (npc + 1));
  for (int c = 0; c < n_local; ++c) {
    send[c * (npc + 1)] = mesh.cell_global[c];
    for (int k = 0; k < npc; ++k) send[c * (npc + 1) + 1 + k] = mesh.original_vertex[local_cells[c * npc + k]];
  }
  return colors_through_rank0(comm, send, npc + 1, n_colors, [&](const std::vector<std::int64_t>& all) {
    const std::int64_t n_cells = mesh.n_global_cells;
    std::int64_t n_vertices = 0;
    std::vector<std::int64_t> by_file(static_cast<std::size_t>(n_cells) * npc, 0);
    const std::size_t gathered = all.size() / (npc + 1);
    if (static_cast<std::int64_t>(gathered) != n_cells)
      throw std::runtime_error("cell colouring: gathered " + std::to_string(gathered) + " cells, expected " +
                               std::to_string(n_cells));
    for (std::size_t c = 0; c < gathered; ++c) {
      const std::int64_t id = all[c * (npc + 1)];
      for (int k = 0; k < npc; ++k) {
        by_file[id * npc + k] = all[c * (npc + 1) + 1 + k];
        n_vertices = std::max(n_vertices, by_file[id * npc + k] + 1);
      }
    }
    const std::vector<std::int32_t> color = greedy_cell_colors(by_file, npc, n_vertices);
    std::vector<std::int32_t> sent(gathered);
    for (std::size_t c = 0; c < gathered; ++c) sent[c] = color[all[c * (npc + 1)]];
    return sent;
  });
}

std::vector<std::int32_t> distributed_stencil_colors(MPI_Comm comm, const LocalMesh& mesh,
                                                     std::span<const LocalIndex> stencils, int* n_colors) {
  constexpr int kWidth = 4;
  std::vector<std::int64_t> send(stencils.size());
  for (std::size_t k = 0; k < stencils.size(); ++k) send[k] = mesh.original_vertex[stencils[k]];
  return colors_through_rank0(comm, send, kWidth, n_colors, [&](const std::vector<std::int64_t>& all) {
    const std::size_t gathered = all.size() / kWidth;
    auto key = [&](std::size_t h) {
      const std::int64_t a = all[kWidth * h], b = all[kWidth * h + 1];
      return std::pair{std::min(a, b), std::max(a, b)};
    };
    std::vector<std::size_t> order(gathered);
    for (std::size_t h = 0; h < gathered; ++h) order[h] = h;
    std::sort(order.begin(), order.end(), [&](std::size_t l, std::size_t r) { return key(l) < key(r); });
    std::vector<std::int64_t> sorted(all.size());
    std::int64_t n_vertices = 0;
    for (std::size_t i = 0; i < gathered; ++i)
      for (int k = 0; k < kWidth; ++k) {
        sorted[kWidth * i + k] = all[kWidth * order[i] + k];
        n_vertices = std::max(n_vertices, sorted[kWidth * i + k] + 1);
      }
    const std::vector<std::int32_t> color = greedy_cell_colors(sorted, kWidth, n_vertices);
    std::vector<std::int32_t> sent(gathered);
    for (std::size_t i = 0; i < gathered; ++i) sent[order[i]] = color[i];
    return sent;
  });
}

}  // namespace edgefem
