// SPDX-License-Identifier: BSD-3-Clause
#include "partition/distributed.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "mesh/facets.hpp"
#include "partition/collective.hpp"
#include "partition/ownership.hpp"

namespace edgefem {
namespace {

/// All-to-all of plain records: item i goes to rank dest(items[i]); returns the items this rank receives,
/// grouped by source rank in rank order, each source's in the order it sent them. `items` is consumed (freed once
/// packed, so that at most two copies of the records exist at a time).
template <class T, class Dest>
std::vector<T> exchange(MPI_Comm comm, std::vector<T>&& items, Dest&& dest) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<long long> send_count(static_cast<std::size_t>(size), 0), recv_count(send_count.size(), 0);
  std::vector<int> to(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) ++send_count[to[i] = dest(items[i])];
  MPI_Alltoall(send_count.data(), 1, MPI_LONG_LONG, recv_count.data(), 1, MPI_LONG_LONG, comm);
  const long long n_send = std::accumulate(send_count.begin(), send_count.end(), 0LL);
  const long long n_recv = std::accumulate(recv_count.begin(), recv_count.end(), 0LL);
  bool too_many = n_send >= INT_MAX || n_recv >= INT_MAX, any_too_many = false;
  MPI_Allreduce(&too_many, &any_too_many, 1, MPI_CXX_BOOL, MPI_LOR, comm);
  if (any_too_many) throw CollectiveError("mesh exchange: more than 2^31 records on one rank; use more ranks");
  std::vector<int> sc(send_count.begin(), send_count.end()), rc(recv_count.begin(), recv_count.end());
  std::vector<int> sd(sc.size(), 0), rd(rc.size(), 0);
  std::partial_sum(sc.begin(), sc.end() - 1, sd.begin() + 1);
  std::partial_sum(rc.begin(), rc.end() - 1, rd.begin() + 1);
  std::vector<T> send(items.size());
  {
    std::vector<int> next = sd;
    for (std::size_t i = 0; i < items.size(); ++i) send[next[to[i]]++] = items[i];
  }
  std::vector<T>().swap(items);
  std::vector<int>().swap(to);
  std::vector<T> recv(static_cast<std::size_t>(n_recv));
  MPI_Datatype type;
  MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  MPI_Alltoallv(send.data(), sc.data(), sd.data(), type, recv.data(), rc.data(), rd.data(), type, comm);
  MPI_Type_free(&type);
  return recv;
}

/// The rank whose block (begins: size + 1 ascending offsets) holds id.
int block_of(const std::vector<GlobalIndex>& begins, GlobalIndex id) {
  return static_cast<int>(std::upper_bound(begins.begin(), begins.end(), id) - begins.begin()) - 1;
}

std::vector<GlobalIndex> all_begins(MPI_Comm comm, GlobalIndex begin, GlobalIndex total) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<GlobalIndex> begins(static_cast<std::size_t>(size) + 1);
  MPI_Allgather(&begin, 1, MPI_INT64_T, begins.data(), 1, MPI_INT64_T, comm);
  begins[size] = total;
  return begins;
}

using Key = std::array<GlobalIndex, 3>;  ///< a facet's sorted original vertex ids (-1 in the unused slot)

int hash_rank(const Key& k, int size) {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const GlobalIndex v : k) {
    h ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(size));
}

struct FacetRecord {
  Key key;
  GlobalIndex cell;  // kind 0: the cell; kind 1: unused
  int kind;          // 0: a facet of a cell, 1: a file facet
  int tag;           // kind 1: its region tag
};

struct Link {
  GlobalIndex cell, neighbour;
};

struct BoundaryFacet {
  Key key;
  GlobalIndex cell;
  int tag, part;
};

struct CellRecord {
  GlobalIndex cell;
  std::array<GlobalIndex, 4> v;
  int region, part;
};

struct VertexRequest {
  GlobalIndex vertex;
  int part, pad;
};

struct VertexTag {
  GlobalIndex vertex;
  int tag, part;
};

struct VertexInfo {
  GlobalIndex vertex, global;
  double x[3];
  int owner, part;
};

/// Frees a vector's memory now.
template <class T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

/// The input checks, on every rank (collective): at least one cell per rank, vertex ids in range.
void check_slice(MPI_Comm comm, const MeshSlice& s, int size) {
  run_collectively(comm, [&] {
    if (s.n_cells < size)
      throw InputError("cannot split " + std::to_string(s.n_cells) + " cells over " + std::to_string(size) +
                       " ranks: use at most one rank per cell");
    for (const GlobalIndex v : s.cells)
      if (v < 0 || v >= s.n_vertices)
        throw InputError("a cell references vertex " + std::to_string(v + 1) + ", but the mesh has " +
                         std::to_string(s.n_vertices) + " vertices");
    for (const GlobalIndex v : s.facets)
      if (v < 0 || v >= s.n_vertices)
        throw InputError("a facet references vertex " + std::to_string(v + 1) + ", but the mesh has " +
                         std::to_string(s.n_vertices) + " vertices");
  });
}

/// Step 1: the dual-graph links (cell, neighbour) of this rank's cells, sorted, and their boundary facets.
void dual_graph(MPI_Comm comm, const MeshSlice& s, const std::vector<GlobalIndex>& cell_begins,
                std::vector<Link>& links, std::vector<BoundaryFacet>& boundary) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int fs = s.nodes - 1;
  std::vector<FacetRecord> records;
  records.reserve(static_cast<std::size_t>(s.n_local_cells() * s.nodes) + s.facet_region.size());
  for (GlobalIndex c = 0; c < s.n_local_cells(); ++c) {
    const GlobalIndex* v = s.cells.data() + c * s.nodes;
    for (int k = 0; k < s.nodes; ++k) records.push_back({cell_facet(v, s.nodes, k), s.cell_begin + c, 0, 0});
  }
  for (std::size_t f = 0; f < s.facet_region.size(); ++f)
    records.push_back({sorted_facet(s.facets.data() + f * fs, fs), -1, 1, s.facet_region[f]});
  std::vector<FacetRecord> mine = exchange(comm, std::move(records),
                                           [&](const FacetRecord& r) { return hash_rank(r.key, size); });
  release(records);
  std::sort(mine.begin(), mine.end(), [](const FacetRecord& a, const FacetRecord& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.kind == 0 ? a.cell < b.cell : a.tag < b.tag;
  });
  std::vector<Link> out_links;
  std::vector<BoundaryFacet> out_boundary;
  for (std::size_t i = 0; i < mine.size();) {
    std::size_t j = i;
    while (j < mine.size() && mine[j].key == mine[i].key) ++j;
    std::size_t n_cells = 0;
    while (i + n_cells < j && mine[i + n_cells].kind == 0) ++n_cells;
    if (n_cells == 1) {
      const int tag = i + 1 < j ? mine[i + 1].tag : 0;  // the smallest tag of the file facets alike
      out_boundary.push_back({mine[i].key, mine[i].cell, tag, 0});
    }
    for (std::size_t a = i; a < i + n_cells; ++a)
      for (std::size_t b = i; b < i + n_cells; ++b)
        if (a != b) out_links.push_back({mine[a].cell, mine[b].cell});
    i = j;
  }
  release(mine);
  links = exchange(comm, std::move(out_links), [&](const Link& l) { return block_of(cell_begins, l.cell); });
  std::sort(links.begin(), links.end(), [](const Link& a, const Link& b) {
    return a.cell != b.cell ? a.cell < b.cell : a.neighbour < b.neighbour;
  });
  boundary = exchange(comm, std::move(out_boundary),
                      [&](const BoundaryFacet& f) { return block_of(cell_begins, f.cell); });
}

/// Step 2: the part of each of this rank's cells.
std::vector<int> cell_parts(MPI_Comm comm, const MeshSlice& s, const std::vector<Link>& links, CellPartitioner method) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto n_local = static_cast<std::size_t>(s.n_local_cells());
  if (size == 1) return std::vector<int>(n_local, 0);
  if (method == CellPartitioner::ptscotch) {
    std::vector<std::int64_t> offsets(n_local + 1, 0);
    std::vector<GlobalIndex> neighbours(links.size());
    for (std::size_t i = 0; i < links.size(); ++i) {
      ++offsets[static_cast<std::size_t>(links[i].cell - s.cell_begin) + 1];
      neighbours[i] = links[i].neighbour;
    }
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    std::vector<int> part;
    run_collectively(comm, [&] { part = scotch_cell_parts(comm, offsets, neighbours, size); });
    return part;
  }
  // METIS on rank 0: only the cell connectivity travels (as 32-bit ids), then each rank gets its cells' parts.
  if (s.n_vertices >= INT_MAX || s.n_cells * s.nodes >= INT_MAX)
    throw CollectiveError("mesh too large for 32-bit METIS (" + std::to_string(s.n_cells) +
                          " cells); use partition: {method: ptscotch}");
  const std::vector<LocalIndex> cells(s.cells.begin(), s.cells.end());
  const int n_send = static_cast<int>(cells.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(counts.size(), 0);
  MPI_Gather(&n_send, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::partial_sum(counts.begin(), counts.end() - 1, displs.begin() + 1);
  std::vector<LocalIndex> all(rank == 0 ? static_cast<std::size_t>(s.n_cells * s.nodes) : 0);
  MPI_Gatherv(cells.data(), n_send, MPI_INT32_T, all.data(), counts.data(), displs.data(), MPI_INT32_T, 0, comm);
  std::vector<int> all_parts;
  run_collectively(comm, [&] {
    if (rank == 0) all_parts = metis_cell_parts(all, s.nodes, static_cast<LocalIndex>(s.n_vertices), size);
  });
  release(all);
  for (int& c : counts) c /= s.nodes;
  for (int& d : displs) d /= s.nodes;
  std::vector<int> part(n_local);
  MPI_Scatterv(all_parts.data(), counts.data(), displs.data(), MPI_INT, part.data(), static_cast<int>(n_local), MPI_INT,
               0, comm);
  return part;
}

/// Sorts vertex tags by (vertex, tag) and drops repeats.
void sort_unique(std::vector<VertexTag>& tags) {
  std::sort(tags.begin(), tags.end(), [](const VertexTag& a, const VertexTag& b) {
    return a.vertex != b.vertex ? a.vertex < b.vertex : a.tag < b.tag;
  });
  tags.erase(std::unique(tags.begin(), tags.end(),
                         [](const VertexTag& a, const VertexTag& b) { return a.vertex == b.vertex && a.tag == b.tag; }),
             tags.end());
}

/// The region tags of vertices, from this rank's cells and file facets, sent to the directory (the rank whose
/// vertex block holds the vertex): the tags of this rank's block, sorted by (vertex, tag), each once.
std::vector<VertexTag> directory_tags(MPI_Comm comm, const MeshSlice& s,
                                      const std::vector<GlobalIndex>& vertex_begins) {
  const int nodes = s.nodes, fs = nodes - 1;
  std::vector<VertexTag> tags;
  for (GlobalIndex c = 0; c < s.n_local_cells(); ++c)
    if (s.cell_region[c] != 0)
      for (int k = 0; k < nodes; ++k) tags.push_back({s.cells[c * nodes + k], s.cell_region[c], 0});
  for (std::size_t f = 0; f < s.facet_region.size(); ++f)
    if (s.facet_region[f] != 0)
      for (int k = 0; k < fs; ++k) tags.push_back({s.facets[f * fs + k], s.facet_region[f], 0});
  sort_unique(tags);
  std::vector<VertexTag> directory = exchange(comm, std::move(tags),
                                              [&](const VertexTag& t) { return block_of(vertex_begins, t.vertex); });
  release(tags);
  sort_unique(directory);
  return directory;
}

/// This rank's cells as records for migration, each with its part.
std::vector<CellRecord> cell_records(const MeshSlice& s, const std::vector<int>& part) {
  const int nodes = s.nodes;
  std::vector<CellRecord> cells_out(static_cast<std::size_t>(s.n_local_cells()));
  for (GlobalIndex c = 0; c < s.n_local_cells(); ++c) {
    CellRecord& r = cells_out[c];
    r.cell = s.cell_begin + c;
    r.v = {-1, -1, -1, -1};
    for (int k = 0; k < nodes; ++k) r.v[k] = s.cells[c * nodes + k];
    r.region = s.cell_region[c];
    r.part = part[c];
  }
  return cells_out;
}

/// What step 3 gives a part: its cells, ascending by original id, and their boundary facets.
struct PartCells {
  std::vector<CellRecord> cells;
  std::vector<BoundaryFacet> facets;
};

/// Step 3: cells and their boundary facets to their parts (part: of this rank's cells, the first being
/// cell_begin).
PartCells migrate(MPI_Comm comm, std::vector<CellRecord>&& cells_out, std::vector<BoundaryFacet>&& boundary,
                  const std::vector<int>& part, GlobalIndex cell_begin) {
  PartCells mine;
  mine.cells = exchange(comm, std::move(cells_out), [](const CellRecord& r) { return r.part; });
  release(cells_out);
  for (BoundaryFacet& f : boundary) f.part = part[f.cell - cell_begin];
  mine.facets = exchange(comm, std::move(boundary), [](const BoundaryFacet& f) { return f.part; });
  release(boundary);
  std::sort(mine.cells.begin(), mine.cells.end(),
            [](const CellRecord& a, const CellRecord& b) { return a.cell < b.cell; });
  return mine;
}

/// This rank's block of the vertex directory (the original vertex ids [begin, begin + size())), filled by step 4.
struct DirectoryBlock {
  GlobalIndex begin = 0;
  std::vector<double> coords;        ///< 3 per block vertex
  std::vector<VertexTag> tags;       ///< the block vertices' region tags, by (vertex, tag), each once
  std::vector<VertexRequest> asked;  ///< the parts touching each block vertex, by (vertex, part)
  std::vector<std::int64_t> row;     ///< block vertex v's parts: asked[row[v], row[v + 1])
  std::vector<int> owner;            ///< per block vertex

  [[nodiscard]] GlobalIndex size() const { return static_cast<GlobalIndex>(coords.size() / 3); }
};

/// Step 4a: every part tells the directory which vertices its cells touch (asked, row). A block vertex no part
/// touches is an error on every rank.
void ask_directory(MPI_Comm comm, const std::vector<CellRecord>& my_cells, int nodes,
                   const std::vector<GlobalIndex>& vertex_begins, DirectoryBlock& d) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<VertexRequest> requests;
  for (const CellRecord& r : my_cells)
    for (int k = 0; k < nodes; ++k) requests.push_back({r.v[k], rank, 0});
  auto by_vertex_part = [](const VertexRequest& a, const VertexRequest& b) {
    return a.vertex != b.vertex ? a.vertex < b.vertex : a.part < b.part;
  };
  std::sort(requests.begin(), requests.end(), by_vertex_part);
  requests.erase(std::unique(requests.begin(), requests.end(),
                             [](const VertexRequest& a, const VertexRequest& b) { return a.vertex == b.vertex; }),
                 requests.end());
  d.asked = exchange(comm, std::move(requests),
                     [&](const VertexRequest& r) { return block_of(vertex_begins, r.vertex); });
  release(requests);
  std::sort(d.asked.begin(), d.asked.end(), by_vertex_part);
  const GlobalIndex n_block = d.size();
  // Rows of asked per block vertex; unused vertices are an error on every rank.
  d.row.assign(static_cast<std::size_t>(n_block) + 1, 0);
  for (const VertexRequest& r : d.asked) ++d.row[r.vertex - d.begin + 1];
  std::partial_sum(d.row.begin(), d.row.end(), d.row.begin());
  run_collectively(comm, [&] {
    for (GlobalIndex v = 0; v < n_block; ++v)
      if (d.row[v + 1] == d.row[v])
        throw InputError("vertex " + std::to_string(d.begin + v + 1) + " belongs to no cell (unused vertex)");
  });
}

/// The owners of the shared vertices, balanced on rank 0: every rank's rows of parts (row i: shared_parts
/// [shared_begin[i], shared_begin[i + 1])) gathered in rank order, which is vertex order, and balanced by
/// balance_shared_owners against the parts' loads (their vertices touched by one part only); returns the owners
/// of this rank's rows.
std::vector<int> balanced_shared_owners(MPI_Comm comm, const std::vector<std::int64_t>& shared_begin,
                                        const std::vector<int>& shared_parts, const std::vector<std::int64_t>& load,
                                        GlobalIndex n_vertices) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n_rows = static_cast<int>(shared_begin.size()) - 1, n_items = static_cast<int>(shared_parts.size());
  std::vector<int> row_counts(static_cast<std::size_t>(size)), item_counts(row_counts.size());
  MPI_Gather(&n_rows, 1, MPI_INT, row_counts.data(), 1, MPI_INT, 0, comm);
  MPI_Gather(&n_items, 1, MPI_INT, item_counts.data(), 1, MPI_INT, 0, comm);
  std::vector<int> row_displs(row_counts.size(), 0), item_displs(row_counts.size(), 0);
  std::partial_sum(row_counts.begin(), row_counts.end() - 1, row_displs.begin() + 1);
  std::partial_sum(item_counts.begin(), item_counts.end() - 1, item_displs.begin() + 1);
  std::vector<int> row_sizes(static_cast<std::size_t>(n_rows));
  for (int i = 0; i < n_rows; ++i) row_sizes[i] = static_cast<int>(shared_begin[i + 1] - shared_begin[i]);
  const std::size_t all_rows = rank == 0 ? static_cast<std::size_t>(row_displs.back() + row_counts.back()) : 0;
  const std::size_t all_items = rank == 0 ? static_cast<std::size_t>(item_displs.back() + item_counts.back()) : 0;
  std::vector<int> all_sizes(all_rows), all_parts(all_items), all_owners;
  MPI_Gatherv(row_sizes.data(), n_rows, MPI_INT, all_sizes.data(), row_counts.data(), row_displs.data(), MPI_INT, 0,
              comm);
  MPI_Gatherv(shared_parts.data(), n_items, MPI_INT, all_parts.data(), item_counts.data(), item_displs.data(), MPI_INT,
              0, comm);
  if (rank == 0) {
    std::vector<std::int64_t> begin(all_rows + 1, 0);
    for (std::size_t i = 0; i < all_rows; ++i) begin[i + 1] = begin[i] + all_sizes[i];
    all_owners = balance_shared_owners(std::move(begin), std::move(all_parts), load, n_vertices, size);
  }
  std::vector<int> shared_owner(static_cast<std::size_t>(n_rows));
  MPI_Scatterv(all_owners.data(), row_counts.data(), row_displs.data(), MPI_INT, shared_owner.data(), n_rows, MPI_INT,
               0, comm);
  return shared_owner;
}

/// Step 4b: the owner of every block vertex: the part touching it when only one does, else the balanced owner of
/// the shared vertices (balanced_shared_owners).
void settle_owners(MPI_Comm comm, GlobalIndex n_vertices, DirectoryBlock& d) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const GlobalIndex n_block = d.size();
  std::vector<std::int64_t> load(static_cast<std::size_t>(size), 0);
  std::vector<std::int64_t> shared_begin(1, 0);
  std::vector<int> shared_parts;
  d.owner.assign(static_cast<std::size_t>(n_block), -1);
  for (GlobalIndex v = 0; v < n_block; ++v) {
    if (d.row[v + 1] - d.row[v] == 1) {
      d.owner[v] = d.asked[d.row[v]].part;
      ++load[d.owner[v]];
    } else {
      for (std::int64_t i = d.row[v]; i < d.row[v + 1]; ++i) shared_parts.push_back(d.asked[i].part);
      shared_begin.push_back(static_cast<std::int64_t>(shared_parts.size()));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, load.data(), size, MPI_INT64_T, MPI_SUM, comm);
  const std::vector<int> shared_owner = balanced_shared_owners(comm, shared_begin, shared_parts, load, n_vertices);
  std::size_t next = 0;
  for (GlobalIndex v = 0; v < n_block; ++v)
    if (d.owner[v] < 0) d.owner[v] = shared_owner[next++];
}

/// Global numbers: part p's owned vertices in original order from owned_begin[p] (size + 1 entries); this block's
/// first one of part p is next[p] (the parts' owned vertices in the blocks below, by an exclusive scan).
struct Numbering {
  std::vector<GlobalIndex> owned_begin, next;
};

/// Step 4c: the numbering of the owned vertices.
Numbering number_vertices(MPI_Comm comm, const std::vector<int>& owner) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> owned_here(static_cast<std::size_t>(size), 0), below(owned_here.size(), 0),
      owned_total(owned_here.size(), 0);
  for (const int p : owner) ++owned_here[p];
  MPI_Exscan(owned_here.data(), below.data(), size, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) std::fill(below.begin(), below.end(), 0);
  MPI_Allreduce(owned_here.data(), owned_total.data(), size, MPI_INT64_T, MPI_SUM, comm);
  Numbering out;
  out.owned_begin.assign(static_cast<std::size_t>(size) + 1, 0);
  std::partial_sum(owned_total.begin(), owned_total.end(), out.owned_begin.begin() + 1);
  out.next.resize(static_cast<std::size_t>(size));
  for (int p = 0; p < size; ++p) out.next[p] = out.owned_begin[p] + below[p];
  return out;
}

/// Step 4d: the directory's answers to every part touching a block vertex: its global number, coordinates and
/// owner, and its region tags.
void directory_answers(const DirectoryBlock& d, std::vector<GlobalIndex> next, std::vector<VertexInfo>& answers,
                       std::vector<VertexTag>& tag_answers) {
  answers.reserve(d.asked.size());
  std::size_t t = 0;
  for (GlobalIndex v = 0; v < d.size(); ++v) {
    const GlobalIndex global = next[d.owner[v]]++;
    const GlobalIndex id = d.begin + v;
    while (t < d.tags.size() && d.tags[t].vertex < id) ++t;
    std::size_t t_end = t;
    while (t_end < d.tags.size() && d.tags[t_end].vertex == id) ++t_end;
    for (std::int64_t i = d.row[v]; i < d.row[v + 1]; ++i) {
      VertexInfo a{
          id, global, {d.coords[3 * v], d.coords[3 * v + 1], d.coords[3 * v + 2]}, d.owner[v], d.asked[i].part};
      answers.push_back(a);
      for (std::size_t k = t; k < t_end; ++k) tag_answers.push_back({id, d.tags[k].tag, d.asked[i].part});
    }
    t = t_end;
  }
}

/// Original vertex id -> local index on this part: a table over the span of the part's original ids when that span
/// is at most kDenseSpan times the part's vertices (a part of a few ranks' mesh; 4 bytes per id of the span), else a
/// binary search of the sorted pairs (the 1,054,606-tet Gmsh file on 1 rank: 4.2 million searches of 188,481 pairs,
/// 4 % of the whole run's CPU time, mostly cache misses).
struct LocalOf {
  static constexpr GlobalIndex kDenseSpan = 4;
  std::vector<std::pair<GlobalIndex, LocalIndex>> pairs;  ///< sorted (empty when `dense` is used)
  GlobalIndex lowest = 0;
  std::vector<LocalIndex> dense;  ///< [v - lowest]: the local index (only the part's own ids are looked up)

  /// From the sorted pairs.
  void index() {
    if (pairs.empty()) return;
    const GlobalIndex span = pairs.back().first - pairs.front().first + 1;
    if (span > kDenseSpan * static_cast<GlobalIndex>(pairs.size()) + 1024) return;
    lowest = pairs.front().first;
    dense.assign(static_cast<std::size_t>(span), -1);
    for (const auto& [v, l] : pairs) dense[static_cast<std::size_t>(v - lowest)] = l;
    release(pairs);
  }

  LocalIndex operator()(GlobalIndex v) const {
    if (!dense.empty()) return dense[static_cast<std::size_t>(v - lowest)];
    return std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(v, LocalIndex{-1}))->second;
  }
};

/// Step 5a: the part's vertices, owned ones first, each group by global number: their coordinates and numbers.
LocalOf local_vertices(int rank, std::vector<VertexInfo>&& my_vertices, LocalMesh& lm) {
  std::sort(my_vertices.begin(), my_vertices.end(), [rank](const VertexInfo& a, const VertexInfo& b) {
    const bool ga = a.owner != rank, gb = b.owner != rank;
    return ga != gb ? gb : a.global < b.global;
  });
  lm.n_owned = static_cast<LocalIndex>(std::count_if(my_vertices.begin(), my_vertices.end(),
                                                     [rank](const VertexInfo& a) { return a.owner == rank; }));
  const std::size_t n_local = my_vertices.size();
  LocalOf local;
  local.pairs.resize(n_local);
  lm.mesh.coords.resize(3 * n_local);
  lm.global_vertex.resize(n_local);
  lm.original_vertex.resize(n_local);
  for (std::size_t i = 0; i < n_local; ++i) {
    const VertexInfo& a = my_vertices[i];
    std::copy(a.x, a.x + 3, lm.mesh.coords.begin() + 3 * i);
    lm.global_vertex[i] = a.global;
    lm.original_vertex[i] = a.vertex;
    local.pairs[i] = {a.vertex, static_cast<LocalIndex>(i)};
  }
  release(my_vertices);
  std::sort(local.pairs.begin(), local.pairs.end());
  local.index();
  return local;
}

/// Step 5b: the region tags of the part's vertices.
void local_vertex_regions(std::vector<VertexTag>&& my_tags, const LocalOf& local, LocalMesh& lm) {
  std::vector<std::pair<LocalIndex, int>> vertex_tags(my_tags.size());
  for (std::size_t i = 0; i < my_tags.size(); ++i) vertex_tags[i] = {local(my_tags[i].vertex), my_tags[i].tag};
  release(my_tags);
  std::sort(vertex_tags.begin(), vertex_tags.end());
  lm.vertex_region_offsets.assign(lm.original_vertex.size() + 1, 0);
  lm.vertex_regions.resize(vertex_tags.size());
  for (std::size_t i = 0; i < vertex_tags.size(); ++i) {
    ++lm.vertex_region_offsets[vertex_tags[i].first + 1];
    lm.vertex_regions[i] = vertex_tags[i].second;
  }
  std::partial_sum(lm.vertex_region_offsets.begin(), lm.vertex_region_offsets.end(), lm.vertex_region_offsets.begin());
}

/// Step 5c: the part's cells (ascending by original id) and boundary facets (by their original vertex ids) in
/// local numbers, as tets and triangles (nodes 4) or triangles and lines (nodes 3).
void local_cells(int nodes, PartCells&& mine, const LocalOf& local, LocalMesh& lm) {
  const int fs = nodes - 1;
  std::vector<LocalIndex> cells, facets;
  std::vector<int> cell_region, facet_region;
  cells.reserve(mine.cells.size() * nodes);
  cell_region.reserve(mine.cells.size());
  lm.cell_global.reserve(mine.cells.size());
  for (const CellRecord& r : mine.cells) {
    for (int k = 0; k < nodes; ++k) cells.push_back(local(r.v[k]));
    cell_region.push_back(r.region);
    lm.cell_global.push_back(r.cell);
  }
  release(mine.cells);
  std::sort(mine.facets.begin(), mine.facets.end(),
            [](const BoundaryFacet& a, const BoundaryFacet& b) { return a.key < b.key; });
  for (const BoundaryFacet& f : mine.facets) {
    for (int k = 0; k < fs; ++k) facets.push_back(local(f.key[k]));
    facet_region.push_back(f.tag);
  }
  if (nodes == 4) {
    lm.mesh.tets = std::move(cells);
    lm.mesh.tet_region = std::move(cell_region);
    lm.mesh.triangles = std::move(facets);
    lm.mesh.triangle_region = std::move(facet_region);
  } else {
    lm.mesh.triangles = std::move(cells);
    lm.mesh.triangle_region = std::move(cell_region);
    lm.mesh.lines = std::move(facets);
    lm.mesh.line_region = std::move(facet_region);
  }
}

}  // namespace

LocalMesh distribute_slices(MPI_Comm comm, MeshSlice&& slice, CellPartitioner method, SliceTimes* times) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto start = std::chrono::steady_clock::now();
  MeshSlice s = std::move(slice);
  const int nodes = s.nodes;
  check_slice(comm, s, size);
  const std::vector<GlobalIndex> cell_begins = all_begins(comm, s.cell_begin, s.n_cells);
  const std::vector<GlobalIndex> vertex_begins = all_begins(comm, s.vertex_begin, s.n_vertices);

  // 1-2. Dual graph and cell partition.
  std::vector<Link> links;
  std::vector<BoundaryFacet> boundary;
  dual_graph(comm, s, cell_begins, links, boundary);
  const std::vector<int> part = cell_parts(comm, s, links, method);
  release(links);

  // Region tags of vertices, from cells and file facets, to the directory.
  DirectoryBlock directory;
  directory.tags = directory_tags(comm, s, vertex_begins);

  // 3. Cells and boundary facets to their parts.
  std::vector<CellRecord> cells_out = cell_records(s, part);
  const GlobalIndex n_vertices = s.n_vertices, n_cells = s.n_cells;
  directory.begin = s.vertex_begin;
  directory.coords = std::move(s.coords);
  s = MeshSlice{};
  PartCells mine = migrate(comm, std::move(cells_out), std::move(boundary), part, cell_begins[rank]);

  // 4. The directory: parts touching each vertex of its block, owners, global numbers.
  ask_directory(comm, mine.cells, nodes, vertex_begins, directory);
  settle_owners(comm, n_vertices, directory);
  const Numbering numbering = number_vertices(comm, directory.owner);
  std::vector<VertexInfo> answers;
  std::vector<VertexTag> tag_answers;
  directory_answers(directory, numbering.next, answers, tag_answers);
  directory = DirectoryBlock{};
  const double partition_seconds = seconds_since(start);
  std::vector<VertexInfo> my_vertices = exchange(comm, std::move(answers), [](const VertexInfo& a) { return a.part; });
  release(answers);
  std::vector<VertexTag> my_tags = exchange(comm, std::move(tag_answers), [](const VertexTag& t) { return t.part; });
  release(tag_answers);

  // 5. The LocalMesh.
  LocalMesh lm;
  const LocalOf local = local_vertices(rank, std::move(my_vertices), lm);
  lm.first_owned = numbering.owned_begin[rank];
  lm.n_global_vertices = n_vertices;
  lm.n_global_cells = n_cells;
  local_vertex_regions(std::move(my_tags), local, lm);
  local_cells(nodes, std::move(mine), local, lm);
  if (times != nullptr) {
    times->partition = partition_seconds;
    times->distribute = seconds_since(start) - partition_seconds;
  }
  return lm;
}

namespace {

template <class T>
void send_array(MPI_Comm comm, int dest, const std::vector<T>& v) {
  long long n = static_cast<long long>(v.size());
  MPI_Send(&n, 1, MPI_LONG_LONG, dest, 0, comm);
  constexpr long long chunk = (1LL << 30) / sizeof(T);
  for (long long off = 0; off < n; off += chunk)
    MPI_Send(v.data() + off, static_cast<int>(std::min(chunk, n - off) * sizeof(T)), MPI_BYTE, dest, 1, comm);
}

template <class T>
void recv_array(MPI_Comm comm, std::vector<T>& v) {
  long long n = 0;
  MPI_Recv(&n, 1, MPI_LONG_LONG, 0, 0, comm, MPI_STATUS_IGNORE);
  v.resize(static_cast<std::size_t>(n));
  constexpr long long chunk = (1LL << 30) / sizeof(T);
  for (long long off = 0; off < n; off += chunk)
    MPI_Recv(v.data() + off, static_cast<int>(std::min(chunk, n - off) * sizeof(T)), MPI_BYTE, 0, 1, comm,
             MPI_STATUS_IGNORE);
}

template <class S, class F>
void for_each_slice_array(S& s, F&& f) {
  f(s.coords);
  f(s.cells);
  f(s.cell_region);
  f(s.facets);
  f(s.facet_region);
}

}  // namespace

MeshSlice scatter_slices(MPI_Comm comm, const Mesh& whole) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MeshSlice mine;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      const MeshSlice s = slice_of(whole, r, size);
      const std::array<GlobalIndex, 5> header{s.nodes, s.n_vertices, s.n_cells, s.vertex_begin, s.cell_begin};
      MPI_Send(header.data(), 5, MPI_INT64_T, r, 0, comm);
      for_each_slice_array(s, [&](const auto& v) { send_array(comm, r, v); });
    }
    mine = slice_of(whole, 0, size);
  } else {
    std::array<GlobalIndex, 5> header{};
    MPI_Recv(header.data(), 5, MPI_INT64_T, 0, 0, comm, MPI_STATUS_IGNORE);
    mine.nodes = static_cast<int>(header[0]);
    mine.n_vertices = header[1];
    mine.n_cells = header[2];
    mine.vertex_begin = header[3];
    mine.cell_begin = header[4];
    for_each_slice_array(mine, [&](auto& v) { recv_array(comm, v); });
  }
  return mine;
}

}  // namespace edgefem
