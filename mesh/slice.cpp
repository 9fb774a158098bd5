// SPDX-License-Identifier: BSD-3-Clause
#include "mesh/slice.hpp"

namespace edgefem {

MeshSlice slice_of(const Mesh& whole, int rank, int ranks) {
  const bool solid = whole.n_tets() > 0;
  const std::vector<LocalIndex>& cells = solid ? whole.tets : whole.triangles;
  const std::vector<int>& cell_region = solid ? whole.tet_region : whole.triangle_region;
  const std::vector<LocalIndex>& facets = solid ? whole.triangles : whole.lines;
  const std::vector<int>& facet_region = solid ? whole.triangle_region : whole.line_region;
  MeshSlice s;
  s.nodes = solid ? 4 : 3;
  const int facet_nodes = s.nodes - 1;
  s.n_vertices = whole.n_vertices();
  s.n_cells = static_cast<GlobalIndex>(cell_region.size());
  s.vertex_begin = slice_begin(s.n_vertices, rank, ranks);
  const GlobalIndex vertex_end = slice_begin(s.n_vertices, rank + 1, ranks);
  s.coords.assign(whole.coords.begin() + 3 * s.vertex_begin, whole.coords.begin() + 3 * vertex_end);
  s.cell_begin = slice_begin(s.n_cells, rank, ranks);
  const GlobalIndex cell_end = slice_begin(s.n_cells, rank + 1, ranks);
  s.cells.assign(cells.begin() + s.nodes * s.cell_begin, cells.begin() + s.nodes * cell_end);
  s.cell_region.assign(cell_region.begin() + s.cell_begin, cell_region.begin() + cell_end);
  const auto n_facets = static_cast<GlobalIndex>(facet_region.size());
  const GlobalIndex facet_begin = slice_begin(n_facets, rank, ranks),
                    facet_end = slice_begin(n_facets, rank + 1, ranks);
  s.facets.assign(facets.begin() + facet_nodes * facet_begin, facets.begin() + facet_nodes * facet_end);
  s.facet_region.assign(facet_region.begin() + facet_begin, facet_region.begin() + facet_end);
  return s;
}

}  // namespace edgefem
