// SPDX-License-Identifier: BSD-3-Clause
#include "partition/partition.hpp"
#include "core/stopwatch.hpp"
#include "partition/metis_version.hpp"

#include <metis.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "mesh/facets.hpp"
#include "partition/collective.hpp"
#include "partition/ownership.hpp"

namespace edgefem {

std::string metis_version() {
  return std::to_string(METIS_VER_MAJOR) + "." + std::to_string(METIS_VER_MINOR) + "." +
         std::to_string(METIS_VER_SUBMINOR);
}

namespace {

struct CellView {
  const std::vector<LocalIndex>* cells;
  const std::vector<int>* region;
  int nodes;  // 4 for tets, 3 for triangles
  [[nodiscard]] LocalIndex count() const { return static_cast<LocalIndex>(cells->size() / nodes); }
};

CellView cell_view(const Mesh& mesh) {
  if (mesh.n_tets() > 0) return {&mesh.tets, &mesh.tet_region, 4};
  return {&mesh.triangles, &mesh.triangle_region, 3};
}

/// Facets (faces of tets, edges of triangles) as sorted vertex tuples; unused slot = -1.
using Facet = std::array<LocalIndex, 3>;

/// Every facet of every cell with that cell, sorted (an interior facet appears twice, once per cell). Sorted by
/// buckets: a counting sort on the facet's smallest vertex, then each bucket (some 20 facets) by the rest of the
/// pair, which gives std::sort's order of the whole list at a fraction of its cost (136,565 tets: 0.07 s of the
/// 2-rank partition's 0.13 s went to that sort).
std::vector<std::pair<Facet, LocalIndex>> cell_facets(const CellView& cv) {
  const int nf = cv.nodes;  // a tet has 4 faces, a triangle 3 edges
  std::vector<std::pair<Facet, LocalIndex>> all;
  all.reserve(static_cast<std::size_t>(cv.count()) * nf);
  for (LocalIndex c = 0; c < cv.count(); ++c) {
    const LocalIndex* v = cv.cells->data() + static_cast<std::size_t>(c) * cv.nodes;
    for (int k = 0; k < nf; ++k) all.emplace_back(cell_facet(v, cv.nodes, k), c);
  }
  if (all.empty()) return all;
  LocalIndex lowest = all.front().first[0], highest = lowest;
  for (const auto& [f, c] : all) {
    lowest = std::min(lowest, f[0]);
    highest = std::max(highest, f[0]);
  }
  std::vector<std::size_t> start(static_cast<std::size_t>(highest - lowest) + 2, 0);
  for (const auto& [f, c] : all) ++start[static_cast<std::size_t>(f[0] - lowest) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<Facet, LocalIndex>> sorted(all.size());
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (const auto& entry : all) sorted[next[static_cast<std::size_t>(entry.first[0] - lowest)]++] = entry;
  for (std::size_t b = 0; b + 1 < start.size(); ++b)
    std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(start[b]),
              sorted.begin() + static_cast<std::ptrdiff_t>(start[b + 1]));
  return sorted;
}

/// The dual graph as CSR: cells sharing a facet are neighbours.
struct DualGraph {
  std::vector<std::int64_t> offsets;
  std::vector<GlobalIndex> neighbours;
};

/// The dual graph of n_cells cells from their sorted facets (cell_facets).
DualGraph dual_graph(const std::vector<std::pair<Facet, LocalIndex>>& facets, LocalIndex n_cells) {
  DualGraph g;
  g.offsets.assign(static_cast<std::size_t>(n_cells) + 1, 0);
  for (std::size_t i = 0; i + 1 < facets.size(); ++i)
    if (facets[i].first == facets[i + 1].first) {
      ++g.offsets[facets[i].second + 1];
      ++g.offsets[facets[i + 1].second + 1];
    }
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  g.neighbours.resize(static_cast<std::size_t>(g.offsets.back()));
  std::vector<std::int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  for (std::size_t i = 0; i + 1 < facets.size(); ++i)
    if (facets[i].first == facets[i + 1].first) {
      g.neighbours[next[facets[i].second]++] = facets[i + 1].second;
      g.neighbours[next[facets[i + 1].second]++] = facets[i].second;
    }
  // Each cell's neighbours ascending (as the sort-based builder before this one gave them): in facet order METIS
  // found partitions with a worse vertex-ownership balance (1.081 instead of <= 1.05 on a 24^3 box at 256 parts).
  for (std::size_t c = 0; c + 1 < g.offsets.size(); ++c)
    std::sort(g.neighbours.begin() + g.offsets[c], g.neighbours.begin() + g.offsets[c + 1]);
  return g;
}

DualGraph dual_graph(const CellView& cv) { return dual_graph(cell_facets(cv), cv.count()); }

/// Boundary facets of the cells (facets that belong to exactly one cell) with that cell, from the sorted facets of
/// every cell (cell_facets).
std::vector<std::pair<Facet, LocalIndex>> boundary_facets(const std::vector<std::pair<Facet, LocalIndex>>& all) {
  std::vector<std::pair<Facet, LocalIndex>> boundary;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i + 1;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    if (j - i == 1) boundary.push_back(all[i]);
    i = j;
  }
  return boundary;
}

template <class T>
void send_vector(MPI_Comm comm, int dest, const std::vector<T>& v) {
  long long n = static_cast<long long>(v.size() * sizeof(T));
  MPI_Send(&n, 1, MPI_LONG_LONG, dest, 0, comm);
  const char* p = reinterpret_cast<const char*>(v.data());
  constexpr long long chunk = 1 << 30;
  for (long long off = 0; off < n; off += chunk)
    MPI_Send(p + off, static_cast<int>(std::min(chunk, n - off)), MPI_BYTE, dest, 1, comm);
}

template <class T>
void recv_vector(MPI_Comm comm, std::vector<T>& v) {
  long long n = 0;
  MPI_Recv(&n, 1, MPI_LONG_LONG, 0, 0, comm, MPI_STATUS_IGNORE);
  v.resize(static_cast<std::size_t>(n) / sizeof(T));
  char* p = reinterpret_cast<char*>(v.data());
  constexpr long long chunk = 1 << 30;
  for (long long off = 0; off < n; off += chunk)
    MPI_Recv(p + off, static_cast<int>(std::min(chunk, n - off)), MPI_BYTE, 0, 1, comm, MPI_STATUS_IGNORE);
}

/// The piece of part p, in flat arrays ready to send.
struct Piece {
  std::vector<double> coords;
  std::vector<LocalIndex> cells, facets;
  std::vector<int> cell_region, facet_region, region_offsets, regions;
  std::vector<GlobalIndex> global_vertex, original_vertex, cell_global,
      header;                                  // header: n_owned, first_owned, n_global_vertices, n_global_cells, nodes
  std::vector<LocalIndex> hinges, hinge_cell;  // 4 local vertices and the local cell of each hinge stencil
};

/// Calls f on every array of a piece, in the order they travel from rank 0 to their rank.
template <class P, class F>
void for_each_array(P& piece, F&& f) {
  f(piece.header);
  f(piece.coords);
  f(piece.cells);
  f(piece.facets);
  f(piece.cell_region);
  f(piece.facet_region);
  f(piece.region_offsets);
  f(piece.regions);
  f(piece.global_vertex);
  f(piece.original_vertex);
  f(piece.cell_global);
  f(piece.hinges);
  f(piece.hinge_cell);
}

/// The facets of the file (triangles of a tet mesh, lines of a triangle mesh), sorted with their region tags.
using TaggedFacets = std::vector<std::pair<Facet, int>>;

/// Region tags per original vertex, CSR: from the cells and from every file facet (boundary or interior).
struct VertexTags {
  std::vector<int> tags;            ///< each vertex's tags, ascending, each once
  std::vector<std::int64_t> begin;  ///< vertex v's tags: tags[begin[v] .. begin[v+1])
};

/// The file facets of `whole` (sorted, with their tags) and the region tags of every vertex. Bucketed by vertex
/// and each vertex's few tags sorted (the sort of all (vertex, tag) pairs this replaces took 0.04 s of the
/// 136,565-tet cantilever's 2-rank distribution, on rank 0 while the others wait).
VertexTags tag_vertices(const Mesh& whole, const CellView& cv, TaggedFacets& tagged) {
  const int fs = cv.nodes - 1;
  const bool solid = cv.nodes == 4;
  const auto& file_facets = solid ? whole.triangles : whole.lines;
  const auto& file_facet_region = solid ? whole.triangle_region : whole.line_region;
  const LocalIndex n_file_facets = static_cast<LocalIndex>(file_facets.size() / fs);
  const auto each_tag = [&](auto&& f) {  // f(vertex, tag) for every nonzero tag of a cell's or file facet's vertex
    for (LocalIndex c = 0; c < cv.count(); ++c)
      if ((*cv.region)[c] != 0)
        for (int k = 0; k < cv.nodes; ++k) f((*cv.cells)[static_cast<std::size_t>(c) * cv.nodes + k], (*cv.region)[c]);
    for (LocalIndex f_id = 0; f_id < n_file_facets; ++f_id)
      if (file_facet_region[f_id] != 0)
        for (int k = 0; k < fs; ++k) f(file_facets[static_cast<std::size_t>(f_id) * fs + k], file_facet_region[f_id]);
  };
  const auto n_vertices = static_cast<std::size_t>(whole.n_vertices());
  std::vector<std::int64_t> start(n_vertices + 1, 0);
  each_tag([&](LocalIndex v, int) { ++start[static_cast<std::size_t>(v) + 1]; });
  std::partial_sum(start.begin(), start.end(), start.begin());
  VertexTags vt;
  vt.tags.resize(static_cast<std::size_t>(start.back()));
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    each_tag([&](LocalIndex v, int tag) {
      vt.tags[static_cast<std::size_t>(next[static_cast<std::size_t>(v)]++)] = tag;
    });
  }
  vt.begin.assign(n_vertices + 1, 0);
  std::int64_t kept = 0;
  for (std::size_t v = 0; v < n_vertices; ++v) {
    std::sort(vt.tags.begin() + start[v], vt.tags.begin() + start[v + 1]);
    for (std::int64_t k = start[v]; k < start[v + 1]; ++k)  // compacted in place: kept <= k
      if (k == start[v] || vt.tags[static_cast<std::size_t>(k)] != vt.tags[static_cast<std::size_t>(k) - 1])
        vt.tags[static_cast<std::size_t>(kept++)] = vt.tags[static_cast<std::size_t>(k)];
    vt.begin[v + 1] = kept;
  }
  vt.tags.resize(static_cast<std::size_t>(kept));
  for (LocalIndex f = 0; f < n_file_facets; ++f)
    tagged.emplace_back(sorted_facet(file_facets.data() + static_cast<std::size_t>(f) * fs, fs), file_facet_region[f]);
  std::sort(tagged.begin(), tagged.end());
  return vt;
}

/// The boundary facets of each part's cells, tagged by the matching file facet (0 if none).
std::vector<TaggedFacets> boundary_facets_per_part(const std::vector<std::pair<Facet, LocalIndex>>& cell_facet_list,
                                                   const PartitionPlan& plan, const TaggedFacets& tagged) {
  std::vector<TaggedFacets> part_facets(static_cast<std::size_t>(plan.n_parts));
  for (const auto& [facet, cell] : boundary_facets(cell_facet_list)) {
    auto it = std::lower_bound(tagged.begin(), tagged.end(), std::make_pair(facet, std::numeric_limits<int>::min()));
    const int tag = (it != tagged.end() && it->first == facet) ? it->second : 0;
    part_facets[plan.cell_part[cell]].emplace_back(facet, tag);
  }
  return part_facets;
}

/// One bending stencil of a membrane mesh (original ids): the interior edge v[0] v[1], the opposite vertices v[2]
/// (of `cell`, the triangle with the smaller file index) and v[3] (of the other triangle).
struct Hinge {
  std::array<LocalIndex, 4> v;
  LocalIndex cell;
};

/// The hinge stencils of a triangle mesh, per part: every edge shared by exactly two triangles of the same region
/// tag, assigned to the part of its first triangle (smaller file index). That part needs the other triangle's
/// opposite vertex too: it is added to the part's ghosts (ascending global ids after the owned vertices), so
/// every hinge is assembled by exactly one rank, which has all four of its vertices.
std::vector<std::vector<Hinge>> find_hinges(const CellView& cv, PartitionPlan& plan) {
  std::vector<std::vector<Hinge>> per_part(static_cast<std::size_t>(plan.n_parts));
  if (cv.nodes != 3) return per_part;
  struct Side {
    LocalIndex a, b, cell, opposite;
  };
  std::vector<Side> sides;
  sides.reserve(3 * static_cast<std::size_t>(cv.count()));
  for (LocalIndex c = 0; c < cv.count(); ++c) {
    const LocalIndex* t = cv.cells->data() + 3 * static_cast<std::size_t>(c);
    for (int k = 0; k < 3; ++k) {
      const LocalIndex a = t[k], b = t[(k + 1) % 3];
      sides.push_back({std::min(a, b), std::max(a, b), c, t[(k + 2) % 3]});
    }
  }
  std::sort(sides.begin(), sides.end(),
            [](const Side& x, const Side& y) { return std::tie(x.a, x.b, x.cell) < std::tie(y.a, y.b, y.cell); });
  std::vector<std::vector<GlobalIndex>> extra(static_cast<std::size_t>(plan.n_parts));
  for (std::size_t i = 0; i < sides.size();) {
    std::size_t j = i + 1;
    while (j < sides.size() && sides[j].a == sides[i].a && sides[j].b == sides[i].b) ++j;
    const Side &s0 = sides[i], &s1 = sides[i + 1];
    if (j - i == 2 && (*cv.region)[s0.cell] == (*cv.region)[s1.cell]) {
      const int part = plan.cell_part[s0.cell];
      per_part[part].push_back({{s0.a, s0.b, s0.opposite, s1.opposite}, s0.cell});
      if (plan.cell_part[s1.cell] != part) extra[part].push_back(plan.global_id[s1.opposite]);
    }
    i = j;
  }
  // Add the missing opposite vertices to the parts' ghosts (ascending global id, each once).
  std::vector<LocalIndex> original(plan.global_id.size());
  for (std::size_t v = 0; v < plan.global_id.size(); ++v) original[plan.global_id[v]] = static_cast<LocalIndex>(v);
  for (int p = 0; p < plan.n_parts; ++p) {
    if (extra[p].empty()) continue;
    auto& list = plan.part_vertices[p];
    const auto owned = static_cast<std::ptrdiff_t>(plan.n_owned(p));
    std::vector<GlobalIndex> ghosts;
    for (auto it = list.begin() + owned; it != list.end(); ++it) ghosts.push_back(plan.global_id[*it]);
    for (const GlobalIndex g : extra[p])
      if (g < plan.owned_begin[p] || g >= plan.owned_begin[p + 1]) ghosts.push_back(g);
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    list.resize(static_cast<std::size_t>(owned));
    for (const GlobalIndex g : ghosts) list.push_back(original[g]);
  }
  return per_part;
}

/// Part p's piece: its vertices (owned then ghosts) with coordinates, ids and region tags, its cells and its
/// boundary facets in local numbering. `local_of` (-1 per vertex of `whole`) is scratch, left all -1.
Piece make_piece(const Mesh& whole, const CellView& cv, const PartitionPlan& plan, int p, const VertexTags& vt,
                 const TaggedFacets& facets, const std::vector<Hinge>& hinges, std::vector<LocalIndex>& local_of) {
  Piece pc;
  const auto& verts = plan.part_vertices[p];
  for (std::size_t i = 0; i < verts.size(); ++i) local_of[verts[i]] = static_cast<LocalIndex>(i);
  pc.header = {plan.n_owned(p), plan.owned_begin[p], whole.n_vertices(), cv.count(), cv.nodes};
  pc.coords.reserve(verts.size() * 3);
  pc.region_offsets.push_back(0);
  for (LocalIndex v : verts) {
    for (int d = 0; d < 3; ++d) pc.coords.push_back(whole.coords[3 * static_cast<std::size_t>(v) + d]);
    pc.global_vertex.push_back(plan.global_id[v]);
    pc.original_vertex.push_back(v);
    for (std::int64_t k = vt.begin[v]; k < vt.begin[v + 1]; ++k)
      pc.regions.push_back(vt.tags[static_cast<std::size_t>(k)]);
    pc.region_offsets.push_back(static_cast<int>(pc.regions.size()));
  }
  for (LocalIndex c : plan.part_cells[p]) {
    for (int k = 0; k < cv.nodes; ++k)
      pc.cells.push_back(local_of[(*cv.cells)[static_cast<std::size_t>(c) * cv.nodes + k]]);
    pc.cell_region.push_back((*cv.region)[c]);
    pc.cell_global.push_back(c);
  }
  for (const auto& [facet, tag] : facets) {
    for (int k = 0; k < cv.nodes - 1; ++k) pc.facets.push_back(local_of[facet[k]]);
    pc.facet_region.push_back(tag);
  }
  const auto& cells = plan.part_cells[p];
  for (const Hinge& h : hinges) {
    for (int k = 0; k < 4; ++k) pc.hinges.push_back(local_of[h.v[k]]);
    pc.hinge_cell.push_back(static_cast<LocalIndex>(std::lower_bound(cells.begin(), cells.end(), h.cell) -
                                                    cells.begin()));
  }
  for (LocalIndex v : verts) local_of[v] = -1;
  return pc;
}

/// Throws InputError when METIS cannot take a mesh of n_cell_nodes / nodes cells (32-bit indices).
void check_metis_size(std::size_t n_cell_nodes, int nodes);

/// cell_facets for a partition into n_parts by `method`: a mesh too large for METIS is refused first (the list
/// costs 16 bytes per facet).
std::vector<std::pair<Facet, LocalIndex>> facets_to_partition(const CellView& cv, int n_parts, CellPartitioner method) {
  if (n_parts > 1 && method == CellPartitioner::metis) check_metis_size(cv.cells->size(), cv.nodes);
  return cell_facets(cv);
}

/// plan_partition with the sorted facets of the mesh's cells (facets_to_partition) given.
PartitionPlan plan_partition_of(const Mesh& mesh, int n_parts, CellPartitioner method,
                                const std::vector<std::pair<Facet, LocalIndex>>& facets);

/// Rank 0: partitions `whole` into n_parts and cuts it into one piece per part.
/// `partition_seconds`: the time plan_partition took. `hinges`: find the membrane's hinge stencils (find_hinges).
/// `method`: METIS, or PT-Scotch on this process alone.
std::vector<Piece> cut_into_pieces(const Mesh& whole, int n_parts, double& partition_seconds, bool hinges,
                                   CellPartitioner method) {
  const auto t0 = std::chrono::steady_clock::now();
  const CellView cv = cell_view(whole);
  // The cells' facets once, for the dual graph and for the boundary facets (each list took 0.03 s of the
  // 136,565-tet cantilever's 2-rank distribution).
  const std::vector<std::pair<Facet, LocalIndex>> facets = facets_to_partition(cv, n_parts, method);
  PartitionPlan plan = plan_partition_of(whole, n_parts, method, facets);
  partition_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<std::vector<Hinge>> part_hinges =
      hinges ? find_hinges(cv, plan) : std::vector<std::vector<Hinge>>(static_cast<std::size_t>(n_parts));
  TaggedFacets tagged;
  const VertexTags vt = tag_vertices(whole, cv, tagged);
  const std::vector<TaggedFacets> part_facets = boundary_facets_per_part(facets, plan, tagged);
  std::vector<Piece> pieces(static_cast<std::size_t>(n_parts));
  std::vector<LocalIndex> local_of(static_cast<std::size_t>(whole.n_vertices()), -1);
  for (int p = 0; p < n_parts; ++p)
    pieces[p] = make_piece(whole, cv, plan, p, vt, part_facets[p], part_hinges[p], local_of);
  return pieces;
}

/// The LocalMesh a received piece describes (its arrays are moved out).
LocalMesh to_local_mesh(Piece&& mine) {
  LocalMesh lm;
  lm.n_owned = static_cast<LocalIndex>(mine.header[0]);
  lm.first_owned = mine.header[1];
  lm.n_global_vertices = mine.header[2];
  lm.n_global_cells = mine.header[3];
  lm.mesh.coords = std::move(mine.coords);
  if (mine.header[4] == 4) {
    lm.mesh.tets = std::move(mine.cells);
    lm.mesh.tet_region = std::move(mine.cell_region);
    lm.mesh.triangles = std::move(mine.facets);
    lm.mesh.triangle_region = std::move(mine.facet_region);
  } else {
    lm.mesh.triangles = std::move(mine.cells);
    lm.mesh.triangle_region = std::move(mine.cell_region);
    lm.mesh.lines = std::move(mine.facets);
    lm.mesh.line_region = std::move(mine.facet_region);
  }
  lm.vertex_region_offsets = std::move(mine.region_offsets);
  lm.vertex_regions = std::move(mine.regions);
  lm.global_vertex = std::move(mine.global_vertex);
  lm.original_vertex = std::move(mine.original_vertex);
  lm.cell_global = std::move(mine.cell_global);
  lm.hinges = std::move(mine.hinges);
  lm.hinge_cell = std::move(mine.hinge_cell);
  return lm;
}

}  // namespace

bool LocalMesh::vertex_in_region(LocalIndex v, int region) const {
  for (int k = vertex_region_offsets[v]; k < vertex_region_offsets[v + 1]; ++k)
    if (vertex_regions[k] == region) return true;
  return false;
}

const char* to_string(CellPartitioner method) { return method == CellPartitioner::metis ? "metis" : "ptscotch"; }

namespace {

void check_metis_size(std::size_t n_cell_nodes, int nodes) {
  if (static_cast<long long>(n_cell_nodes) >= std::numeric_limits<idx_t>::max())
    throw InputError("mesh too large for 32-bit METIS (" + std::to_string(n_cell_nodes / nodes) +
                     " cells); use partition: {method: ptscotch}");
}

/// METIS_PartGraphKway of a dual graph of n_cells cells into n_parts, seed 1.
std::vector<int> metis_graph_parts(const DualGraph& g, LocalIndex n_cells_in, int n_parts) {
  idx_t n_cells = n_cells_in, constraints = 1, nparts = n_parts, objval = 0;
  std::vector<idx_t> xadj(g.offsets.begin(), g.offsets.end()), adjncy(g.neighbours.begin(), g.neighbours.end());
  if (adjncy.empty()) adjncy.push_back(0);  // METIS wants a non-null array
  std::vector<idx_t> part(static_cast<std::size_t>(n_cells));
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 1;  // reproducible partitions
  const int status = METIS_PartGraphKway(&n_cells, &constraints, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr,
                                         &nparts, nullptr, nullptr, options, &objval, part.data());
  if (status != METIS_OK) throw InputError("METIS_PartGraphKway failed with status " + std::to_string(status));
  return {part.begin(), part.end()};
}

}  // namespace

std::vector<int> metis_cell_parts(const std::vector<LocalIndex>& cells, int nodes, LocalIndex n_vertices, int n_parts) {
  check_metis_size(cells.size(), nodes);
  (void)n_vertices;  // (the dual graph needs only the cells)
  // Our dual graph and METIS_PartGraphKway, which is what METIS_PartMeshDual does after building a dual graph
  // itself: on the 136,565-tet cantilever split in 2 the partition took 0.34 s with METIS_PartMeshDual, 0.18 s so.
  const CellView cv{&cells, nullptr, nodes};
  return metis_graph_parts(dual_graph(cv), cv.count(), n_parts);
}

PartitionPlan plan_partition(const Mesh& mesh, int n_parts, CellPartitioner method) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::pair<Facet, LocalIndex>> facets = facets_to_partition(cell_view(mesh), n_parts, method);
  const double seconds_facets = seconds_since(start);
  PartitionPlan plan = plan_partition_of(mesh, n_parts, method, facets);
  plan.seconds_cells += seconds_facets;  // the dual graph's facets are part of the cell partition
  plan.seconds += seconds_facets;
  return plan;
}

namespace {

PartitionPlan plan_partition_of(const Mesh& mesh, int n_parts, CellPartitioner method,
                                const std::vector<std::pair<Facet, LocalIndex>>& facets) {
  const CellView cv = cell_view(mesh);
  const LocalIndex n_cells = cv.count();
  const LocalIndex n_vertices = mesh.n_vertices();
  if (n_parts < 1) throw InputError("number of parts must be at least 1, got " + std::to_string(n_parts));
  if (n_cells == 0) throw InputError("the mesh has no cells (no tetrahedra and no triangles)");
  if (n_parts > n_cells)
    throw InputError("cannot split " + std::to_string(n_cells) + " cells over " + std::to_string(n_parts) +
                     " ranks: use at most one rank per cell");

  const auto start = std::chrono::steady_clock::now();
  PartitionPlan plan;
  plan.n_parts = n_parts;
  plan.cell_part.assign(static_cast<std::size_t>(n_cells), 0);
  if (n_parts > 1 && method == CellPartitioner::metis) {  // (its size checked by facets_to_partition)
    plan.cell_part = metis_graph_parts(dual_graph(facets, n_cells), n_cells, n_parts);
  } else if (n_parts > 1) {
    const DualGraph g = dual_graph(facets, n_cells);
    plan.cell_part = scotch_cell_parts(MPI_COMM_SELF, g.offsets, g.neighbours, n_parts);
  }

  plan.seconds_cells = seconds_since(start);

  // Owners: one of the parts touching the vertex, balancing the owned counts (ownership.hpp).
  plan.vertex_owner = balanced_vertex_owners(*cv.cells, cv.nodes, plan.cell_part, n_parts, n_vertices);
  plan.seconds_owners = seconds_since(start) - plan.seconds_cells;
  plan.owned_begin.assign(static_cast<std::size_t>(n_parts) + 1, 0);
  for (LocalIndex v = 0; v < n_vertices; ++v) {
    if (plan.vertex_owner[v] == n_parts)
      throw InputError("vertex " + std::to_string(v + 1) + " belongs to no cell (unused vertex)");
    ++plan.owned_begin[plan.vertex_owner[v] + 1];
  }
  std::partial_sum(plan.owned_begin.begin(), plan.owned_begin.end(), plan.owned_begin.begin());
  plan.global_id.resize(static_cast<std::size_t>(n_vertices));
  {
    std::vector<GlobalIndex> next(plan.owned_begin.begin(), plan.owned_begin.end() - 1);
    for (LocalIndex v = 0; v < n_vertices; ++v) plan.global_id[v] = next[plan.vertex_owner[v]]++;
  }

  // Cells per part, and (part, vertex) pairs to find each part's local vertices.
  plan.part_cells.assign(static_cast<std::size_t>(n_parts), {});
  for (LocalIndex c = 0; c < n_cells; ++c) plan.part_cells[plan.cell_part[c]].push_back(c);
  // Each part's vertices by marking them (global ids ascending after a sort of the part's own list; the sort of all
  // (part, vertex) pairs this replaces took 0.03 s of the 136,565-tet cantilever's 2-part plan).
  std::vector<LocalIndex> original(static_cast<std::size_t>(n_vertices));
  for (LocalIndex v = 0; v < n_vertices; ++v) original[plan.global_id[v]] = v;
  plan.part_vertices.assign(static_cast<std::size_t>(n_parts), {});
  std::vector<char> seen(static_cast<std::size_t>(n_vertices), 0);  // by global id
  std::vector<GlobalIndex> touched;
  for (int p = 0; p < n_parts; ++p) {
    touched.clear();
    for (const LocalIndex c : plan.part_cells[p])
      for (int k = 0; k < cv.nodes; ++k) {
        const GlobalIndex g = plan.global_id[(*cv.cells)[static_cast<std::size_t>(c) * cv.nodes + k]];
        if (seen[static_cast<std::size_t>(g)] == 0) {
          seen[static_cast<std::size_t>(g)] = 1;
          touched.push_back(g);
        }
      }
    std::sort(touched.begin(), touched.end());
    for (const GlobalIndex g : touched) seen[static_cast<std::size_t>(g)] = 0;
    // Owned first (their global ids lie in [owned_begin[p], owned_begin[p+1])), then ghosts, both ascending.
    auto& list = plan.part_vertices[p];
    list.reserve(touched.size());
    for (const GlobalIndex g : touched)
      if (g >= plan.owned_begin[p] && g < plan.owned_begin[p + 1]) list.push_back(original[g]);
    for (const GlobalIndex g : touched)
      if (g < plan.owned_begin[p] || g >= plan.owned_begin[p + 1]) list.push_back(original[g]);
  }
  plan.seconds = seconds_since(start);
  return plan;
}

}  // namespace

PartitionQuality partition_quality(const Mesh& mesh, const PartitionPlan& plan) {
  const CellView cv = cell_view(mesh);
  PartitionQuality q;
  const std::vector<std::pair<Facet, LocalIndex>> facets = cell_facets(cv);
  for (std::size_t i = 0; i + 1 < facets.size(); ++i)
    if (facets[i].first == facets[i + 1].first &&
        plan.cell_part[facets[i].second] != plan.cell_part[facets[i + 1].second])
      ++q.cut_facets;
  std::vector<char> shared(static_cast<std::size_t>(mesh.n_vertices()), 0);
  q.owned_min = q.ghost_min = std::numeric_limits<std::int64_t>::max();
  for (int p = 0; p < plan.n_parts; ++p) {
    const std::int64_t owned = plan.n_owned(p);
    const auto ghosts = static_cast<std::int64_t>(plan.part_vertices[p].size()) - owned;
    const auto cells = static_cast<std::int64_t>(plan.part_cells[p].size());
    for (std::size_t k = static_cast<std::size_t>(owned); k < plan.part_vertices[p].size(); ++k)
      shared[plan.part_vertices[p][k]] = 1;
    q.owned_min = std::min(q.owned_min, owned);
    q.owned_max = std::max(q.owned_max, owned);
    q.ghost_min = std::min(q.ghost_min, ghosts);
    q.ghost_max = std::max(q.ghost_max, ghosts);
    q.cells_max = std::max(q.cells_max, cells);
    q.owned_mean += static_cast<double>(owned) / plan.n_parts;
    q.ghost_mean += static_cast<double>(ghosts) / plan.n_parts;
    q.cells_mean += static_cast<double>(cells) / plan.n_parts;
    const double ratio = owned > 0 ? static_cast<double>(ghosts) / owned : std::numeric_limits<double>::infinity();
    if (p == 0 || ratio > q.max_ghost_ratio) {
      q.max_ghost_ratio = ratio;
      q.max_ghost_ratio_part = p;
    }
  }
  q.shared_vertices = std::count(shared.begin(), shared.end(), 1);
  return q;
}

LocalMesh distribute_mesh(MPI_Comm comm, const Mesh& whole, double* partition_seconds, bool hinges,
                          CellPartitioner method) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  std::vector<Piece> pieces;
  run_collectively(comm, [&] {
    double seconds = 0.0;
    if (rank == 0) pieces = cut_into_pieces(whole, size, seconds, hinges, method);
    if (partition_seconds != nullptr) *partition_seconds = seconds;
  });
  Piece mine;
  if (rank == 0) {
    for (int p = 1; p < size; ++p) {
      for_each_array(pieces[p], [&](const auto& array) { send_vector(comm, p, array); });
      pieces[p] = Piece{};
    }
    mine = std::move(pieces[0]);
  } else {
    for_each_array(mine, [&](auto& array) { recv_vector(comm, array); });
  }
  LocalMesh lm = to_local_mesh(std::move(mine));
  lm.has_hinges = hinges;
  return lm;
}

}  // namespace edgefem
