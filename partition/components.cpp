// SPDX-License-Identifier: BSD-3-Clause
/// \file components.cpp
/// connected_components (components.hpp).
#include "partition/components.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace edgefem {

UnionFind::UnionFind(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }

std::int64_t UnionFind::find(std::int64_t a) {
  while (parent_[a] != a) a = parent_[a] = parent_[parent_[a]];
  return a;
}

void UnionFind::unite(std::int64_t a, std::int64_t b) {
  a = find(a), b = find(b);
  if (a != b) parent_[std::max(a, b)] = std::min(a, b);
}

std::int64_t UnionFind::label(std::vector<std::int64_t>& out) {
  out.assign(parent_.size(), -1);
  std::int64_t sets = 0;
  for (std::size_t i = 0; i < parent_.size(); ++i) {
    const std::int64_t root = find(static_cast<std::int64_t>(i));
    if (out[root] < 0) out[root] = sets++;  // a root is its set's smallest element: seen first
    out[i] = out[root];
  }
  return sets;
}

namespace {

/// This rank's parts: every local vertex's local part (its cells and hinges joined), and their count.
std::int64_t local_parts(const LocalMesh& mesh, std::vector<std::int64_t>& part) {
  const Mesh& m = mesh.mesh;
  const bool solid = m.n_tets() > 0;
  const std::vector<LocalIndex>& cells = solid ? m.tets : m.triangles;
  const std::size_t nodes = solid ? 4 : 3;
  UnionFind uf(static_cast<std::size_t>(mesh.n_local()));
  for (std::size_t c = 0; c + nodes <= cells.size(); c += nodes)
    for (std::size_t k = 1; k < nodes; ++k) uf.unite(cells[c], cells[c + k]);
  for (std::size_t h = 0; h + 4 <= mesh.hinges.size(); h += 4)
    for (std::size_t k = 1; k < 4; ++k) uf.unite(mesh.hinges[h], mesh.hinges[h + k]);
  return uf.label(part);
}

/// For every ghost vertex (in local order), the global number of the owner's part holding it: each rank asks the
/// owners of its ghosts (owned ranges are contiguous: rank r owns [first[r], first[r + 1])).
std::vector<std::int64_t> owner_parts(MPI_Comm comm, const LocalMesh& mesh, const std::vector<std::int64_t>& global_part) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<long long> first(static_cast<std::size_t>(size) + 1, 0);
  long long mine = mesh.first_owned;
  MPI_Allgather(&mine, 1, MPI_LONG_LONG, first.data(), 1, MPI_LONG_LONG, comm);
  first[size] = mesh.n_global_vertices;
  // Ghosts ascend by global id, so those of one owner are consecutive and the owners ascend.
  std::vector<int> send_counts(size, 0), recv_counts(size, 0), send_offsets(size + 1, 0), recv_offsets(size + 1, 0);
  std::vector<long long> asked;
  for (LocalIndex v = mesh.n_owned; v < mesh.n_local(); ++v) {
    const long long g = mesh.global_vertex[v];
    const int owner = static_cast<int>(std::upper_bound(first.begin(), first.end() - 1, g) - first.begin()) - 1;
    ++send_counts[owner];
    asked.push_back(g);
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r)
    send_offsets[r + 1] = send_offsets[r] + send_counts[r], recv_offsets[r + 1] = recv_offsets[r] + recv_counts[r];
  std::vector<long long> questions(static_cast<std::size_t>(recv_offsets[size]));
  MPI_Alltoallv(asked.data(), send_counts.data(), send_offsets.data(), MPI_LONG_LONG, questions.data(),
                recv_counts.data(), recv_offsets.data(), MPI_LONG_LONG, comm);
  for (long long& q : questions) q = global_part[static_cast<std::size_t>(q - mesh.first_owned)];
  std::vector<long long> answers(asked.size());
  MPI_Alltoallv(questions.data(), recv_counts.data(), recv_offsets.data(), MPI_LONG_LONG, answers.data(),
                send_counts.data(), send_offsets.data(), MPI_LONG_LONG, comm);
  return {answers.begin(), answers.end()};
}

/// Renumbers the parts in the order of their first vertex in the mesh file (or generator): the same numbers on any
/// number of ranks.
void number_by_file_order(MPI_Comm comm, const LocalMesh& mesh, MeshComponents& parts) {
  std::vector<long long> first(static_cast<std::size_t>(parts.count), std::numeric_limits<long long>::max());
  for (std::size_t v = 0; v < parts.of_vertex.size() && v < mesh.original_vertex.size(); ++v) {
    long long& f = first[static_cast<std::size_t>(parts.of_vertex[v])];
    f = std::min(f, static_cast<long long>(mesh.original_vertex[v]));
  }
  MPI_Allreduce(MPI_IN_PLACE, first.data(), parts.count, MPI_LONG_LONG, MPI_MIN, comm);
  std::vector<int> order(static_cast<std::size_t>(parts.count)), number(order.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return first[a] < first[b]; });
  for (std::size_t i = 0; i < order.size(); ++i) number[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  for (int& p : parts.of_vertex) p = number[static_cast<std::size_t>(p)];
}

}  // namespace

MeshComponents connected_components(MPI_Comm comm, const LocalMesh& mesh) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> part;
  const long long k = local_parts(mesh, part);
  long long offset = 0;
  MPI_Exscan(&k, &offset, 1, MPI_LONG_LONG, MPI_SUM, comm);
  if (rank == 0) offset = 0;
  std::vector<std::int64_t> global_part(part.size());
  for (std::size_t v = 0; v < part.size(); ++v) global_part[v] = offset + part[v];
  // The ties between this rank's parts and the owners' (each once).
  const std::vector<std::int64_t> owners = owner_parts(comm, mesh, global_part);
  std::vector<std::pair<long long, long long>> ties;
  for (std::size_t i = 0; i < owners.size(); ++i) {
    const long long a = global_part[static_cast<std::size_t>(mesh.n_owned) + i], b = owners[i];
    if (a != b) ties.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(ties.begin(), ties.end());
  ties.erase(std::unique(ties.begin(), ties.end()), ties.end());
  // Rank 0 joins every rank's ties over all ranks' parts and sends each rank the numbers of its own.
  const int n_ties = static_cast<int>(2 * ties.size()), parts = static_cast<int>(k);
  std::vector<int> tie_counts(size), part_counts(size), tie_offsets(size + 1, 0), part_offsets(size + 1, 0);
  MPI_Gather(&n_ties, 1, MPI_INT, tie_counts.data(), 1, MPI_INT, 0, comm);
  MPI_Gather(&parts, 1, MPI_INT, part_counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 0; r < size; ++r)
    tie_offsets[r + 1] = tie_offsets[r] + tie_counts[r], part_offsets[r + 1] = part_offsets[r] + part_counts[r];
  std::vector<long long> all_ties(rank == 0 ? static_cast<std::size_t>(tie_offsets[size]) : 0);
  MPI_Gatherv(ties.data(), n_ties, MPI_LONG_LONG, all_ties.data(), tie_counts.data(), tie_offsets.data(),
              MPI_LONG_LONG, 0, comm);
  std::vector<int> labels(rank == 0 ? static_cast<std::size_t>(part_offsets[size]) : 0);
  long long count = 0;
  if (rank == 0) {
    UnionFind uf(labels.size());
    for (std::size_t i = 0; i + 1 < all_ties.size(); i += 2) uf.unite(all_ties[i], all_ties[i + 1]);
    std::vector<std::int64_t> joined;
    count = uf.label(joined);
    std::copy(joined.begin(), joined.end(), labels.begin());
  }
  std::vector<int> my_labels(static_cast<std::size_t>(k));
  MPI_Scatterv(labels.data(), part_counts.data(), part_offsets.data(), MPI_INT, my_labels.data(), parts, MPI_INT, 0,
               comm);
  MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, comm);
  MeshComponents out;
  out.count = static_cast<int>(count);
  out.of_vertex.resize(part.size());
  for (std::size_t v = 0; v < part.size(); ++v) out.of_vertex[v] = my_labels[static_cast<std::size_t>(part[v])];
  number_by_file_order(comm, mesh, out);
  return out;
}

}  // namespace edgefem
