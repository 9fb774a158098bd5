// SPDX-License-Identifier: BSD-3-Clause
/// \file box.cpp
/// Structured generators: a box of Kuhn-split hexahedra (tets) and a rectangular sheet (triangles).
#include "mesh/box.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace edgefem {
namespace {

template <std::size_t N, class T>
std::string format_list(const std::array<T, N>& values) {
  std::ostringstream s;
  s << '[';
  for (std::size_t i = 0; i < N; ++i) s << (i ? ", " : "") << values[i];
  s << ']';
  return s.str();
}

/// Validates a generator request and returns the vertex count; throws InputError naming the generator.
template <std::size_t N>
std::int64_t check_request(const char* what, const std::array<double, N>& size, const std::array<int, N>& cells,
                           std::int64_t cells_per_unit) {
  for (std::size_t d = 0; d < N; ++d) {
    if (cells[d] < 1) {
      throw InputError(std::string(what) + ": cells must be integers >= 1, got " + format_list(cells));
    }
    if (!(size[d] > 0.0) || !std::isfinite(size[d])) {
      throw InputError(std::string(what) + ": size must be positive finite numbers, got " + format_list(size));
    }
  }
  // Products in double first: cells up to 2^31 each would overflow 64-bit integers in 3D.
  double n_vertices = 1.0, n_cells = static_cast<double>(cells_per_unit);
  for (std::size_t d = 0; d < N; ++d) {
    n_vertices *= static_cast<double>(cells[d]) + 1.0;
    n_cells *= static_cast<double>(cells[d]);
  }
  constexpr double limit = static_cast<double>(std::numeric_limits<LocalIndex>::max());
  if (n_vertices > limit || n_cells > limit) {
    throw InputError(std::string(what) + ": cells " + format_list(cells) +
                     " give a mesh too large for 32-bit local indices (" + std::to_string(n_vertices) + " vertices, " +
                     std::to_string(n_cells) + " cells; limit " +
                     std::to_string(std::numeric_limits<LocalIndex>::max()) + ")");
  }
  return static_cast<std::int64_t>(n_vertices);
}

/// The six Kuhn tets of the unit cube as corner numbers (corner = bx + 2 by + 4 bz): for each permutation
/// (a, b, c) of the axes the path 0 -> e_a -> e_a + e_b -> (1,1,1). All six share the diagonal 0-7, and
/// every cube face is cut along the diagonal from its lowest to its highest corner, so neighbouring cubes
/// conform. det[e_a, e_a+e_b, e_a+e_b+e_c] = sign(a b c); odd permutations swap the middle two vertices.
struct KuhnTable {
  int corner[6][4];
  KuhnTable() {
    static constexpr int perms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    for (int t = 0; t < 6; ++t) {
      const int a = 1 << perms[t][0], b = 1 << perms[t][1];
      const bool even = t < 3;
      corner[t][0] = 0;
      corner[t][1] = even ? a : a + b;
      corner[t][2] = even ? a + b : a;
      corner[t][3] = 7;
    }
  }
};

/// Vertex numbering of a box of n[0] x n[1] x n[2] cells: x fastest.
struct BoxGrid {
  std::int64_t n[3];
  [[nodiscard]] std::int64_t vertex(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return i + (n[0] + 1) * (j + (n[1] + 1) * k);
  }
};

/// Coordinate of grid plane i of n along an axis of length `size`; the last plane is exactly at `size`.
double grid_coordinate(std::int64_t i, std::int64_t n, double size) {
  return i == n ? size : size * static_cast<double>(i) / static_cast<double>(n);
}

/// Coordinates of the grid vertices [first, end) (x fastest), 3 per vertex.
void box_coordinates(const BoxGrid& g, const std::array<double, 3>& size, std::int64_t first, std::int64_t end,
                     std::vector<double>& coords) {
  const std::int64_t sx = g.n[0] + 1, sy = g.n[1] + 1;
  coords.resize(3 * static_cast<std::size_t>(end - first));
  double* x = coords.data();
  for (std::int64_t v = first; v < end; ++v, x += 3) {
    x[0] = grid_coordinate(v % sx, g.n[0], size[0]);
    x[1] = grid_coordinate((v / sx) % sy, g.n[1], size[1]);
    x[2] = grid_coordinate(v / (sx * sy), g.n[2], size[2]);
  }
}

/// Six Kuhn tets per cell for the cells [first, end) (cell id i + nx (j + ny k)), positively oriented, in order.
template <class Index>
void box_tets(const BoxGrid& g, std::int64_t first, std::int64_t end, std::vector<Index>& tets) {
  static const KuhnTable kuhn;
  const std::int64_t nx = g.n[0], ny = g.n[1];
  std::int64_t corner_offset[8];
  for (int c = 0; c < 8; ++c) corner_offset[c] = g.vertex(c & 1, (c >> 1) & 1, (c >> 2) & 1);
  tets.resize(24 * static_cast<std::size_t>(end - first));
  Index* out = tets.data();
  for (std::int64_t cell = first; cell < end; ++cell) {
    const std::int64_t i = cell % nx, j = (cell / nx) % ny, k = cell / (nx * ny);
    // Mirror the Kuhn split in every other cell along each axis (corner c -> c ^ mirror), so the
    // mesh has no preferred diagonal direction (a single diagonal makes a coarse beam twist and
    // bend sideways). Shared faces still conform: their diagonal depends only on the two in-plane
    // cell indices. An odd number of reflections reverses orientation: swap two vertices.
    const int mirror = static_cast<int>((i & 1) | ((j & 1) << 1) | ((k & 1) << 2));
    const bool reversed = (std::popcount(static_cast<unsigned>(mirror)) & 1) != 0;
    const std::int64_t base = g.vertex(i, j, k);
    for (const auto& tet : kuhn.corner) {
      out[0] = static_cast<Index>(base + corner_offset[tet[0] ^ mirror]);
      out[1] = static_cast<Index>(base + corner_offset[tet[reversed ? 2 : 1] ^ mirror]);
      out[2] = static_cast<Index>(base + corner_offset[tet[reversed ? 1 : 2] ^ mirror]);
      out[3] = static_cast<Index>(base + corner_offset[tet[3] ^ mirror]);
      out += 4;
    }
  }
}

/// Boundary triangles, tagged by face. Face d = axis normal to the face, side 0 (min) or 1 (max). With in-plane
/// axes p = d+1, q = d+2 (cyclic), e_p x e_q = e_d; quad corners A=(a,b), B=(a+1,b), C=(a+1,b+1), D=(a,b+1) in
/// (p,q) are split along A-C when a+b is even, along B-D otherwise (matching the mirrored cells); (A,B,C) has
/// normal +e_d.
void box_boundary(const BoxGrid& g, std::vector<LocalIndex>& triangles, std::vector<int>& region) {
  const std::int64_t* n = g.n;
  std::size_t n_boundary = 0;
  for (int d = 0; d < 3; ++d) n_boundary += 4 * static_cast<std::size_t>(n[(d + 1) % 3] * n[(d + 2) % 3]);
  triangles.reserve(3 * n_boundary);
  region.reserve(n_boundary);
  static constexpr int tags[3][2] = {{box_region::x_min, box_region::x_max},
                                     {box_region::y_min, box_region::y_max},
                                     {box_region::z_min, box_region::z_max}};
  for (int d = 0; d < 3; ++d) {
    const int p = (d + 1) % 3, q = (d + 2) % 3;
    for (int side = 0; side < 2; ++side) {
      for (std::int64_t b = 0; b < n[q]; ++b) {
        for (std::int64_t a = 0; a < n[p]; ++a) {
          auto at = [&](std::int64_t da, std::int64_t db) {
            std::int64_t idx[3];
            idx[d] = side ? n[d] : 0;
            idx[p] = a + da;
            idx[q] = b + db;
            return static_cast<LocalIndex>(g.vertex(idx[0], idx[1], idx[2]));
          };
          const LocalIndex A = at(0, 0), B = at(1, 0), C = at(1, 1), D = at(0, 1);
          const bool along_ac = ((a + b) & 1) == 0;  // the mirrored cells' face diagonal
          if (along_ac) {
            if (side == 1) {
              triangles.insert(triangles.end(), {A, B, C, A, C, D});
            } else {
              triangles.insert(triangles.end(), {A, C, B, A, D, C});
            }
          } else if (side == 1) {
            triangles.insert(triangles.end(), {A, B, D, B, C, D});
          } else {
            triangles.insert(triangles.end(), {A, D, B, B, D, C});
          }
          region.insert(region.end(), 2, tags[d][side]);
        }
      }
    }
  }
}

/// Rank `rank` of `ranks`' slice of a generated mesh of `nodes`-vertex cells: its block of the n_vertices vertices
/// (coordinates(first, end, coords)), of the n_blocks grid blocks of cells_per_block cells each (cells(first, end,
/// cells): a hexahedron's tets, a quad's triangles) and of the boundary facets, which are generated whole
/// (boundary(facets, region): a surface or a perimeter, small) and cut to this rank's block.
template <class Coordinates, class Cells, class Boundary>
MeshSlice generated_slice(int nodes, std::int64_t n_vertices, std::int64_t n_blocks, int cells_per_block, int rank,
                          int ranks, Coordinates&& coordinates, Cells&& cells, Boundary&& boundary) {
  MeshSlice slice;
  slice.nodes = nodes;
  slice.n_vertices = n_vertices;
  slice.n_cells = cells_per_block * n_blocks;
  slice.vertex_begin = slice_begin(slice.n_vertices, rank, ranks);
  coordinates(slice.vertex_begin, slice_begin(slice.n_vertices, rank + 1, ranks), slice.coords);
  const std::int64_t block_begin = slice_begin(n_blocks, rank, ranks),
                     block_end = slice_begin(n_blocks, rank + 1, ranks);
  slice.cell_begin = cells_per_block * block_begin;
  cells(block_begin, block_end, slice.cells);
  slice.cell_region.assign(slice.cells.size() / nodes, box_region::volume);
  std::vector<LocalIndex> facets;
  std::vector<int> region;
  boundary(facets, region);
  const int fs = nodes - 1;
  const auto n_facets = static_cast<GlobalIndex>(region.size());
  const GlobalIndex first = slice_begin(n_facets, rank, ranks), end = slice_begin(n_facets, rank + 1, ranks);
  slice.facets.assign(facets.begin() + fs * first, facets.begin() + fs * end);
  slice.facet_region.assign(region.begin() + first, region.begin() + end);
  return slice;
}

}  // namespace

Mesh generate_box(const std::array<double, 3>& size, const std::array<int, 3>& cells) {
  check_request("generate box", size, cells, 6);
  const BoxGrid grid{{cells[0], cells[1], cells[2]}};
  Mesh mesh;
  box_coordinates(grid, size, 0, (grid.n[0] + 1) * (grid.n[1] + 1) * (grid.n[2] + 1), mesh.coords);
  box_tets(grid, 0, grid.n[0] * grid.n[1] * grid.n[2], mesh.tets);
  mesh.tet_region.assign(mesh.tets.size() / 4, box_region::volume);
  box_boundary(grid, mesh.triangles, mesh.triangle_region);
  return mesh;
}

MeshSlice generate_box_slice(const std::array<double, 3>& size, const std::array<int, 3>& cells, int rank, int ranks) {
  check_request("generate box", size, cells, 6);
  const BoxGrid grid{{cells[0], cells[1], cells[2]}};
  // The boundary triangles are a surface: O(N^(2/3)).
  return generated_slice(
      4, (grid.n[0] + 1) * (grid.n[1] + 1) * (grid.n[2] + 1), grid.n[0] * grid.n[1] * grid.n[2], 6, rank, ranks,
      [&](std::int64_t first, std::int64_t end, std::vector<double>& coords) {
        box_coordinates(grid, size, first, end, coords);
      },
      [&](std::int64_t first, std::int64_t end, std::vector<GlobalIndex>& tets) { box_tets(grid, first, end, tets); },
      [&](std::vector<LocalIndex>& triangles, std::vector<int>& region) { box_boundary(grid, triangles, region); });
}

namespace {

/// Coordinates of the sheet's grid vertices [first, end) (x fastest, z = 0), 3 per vertex.
void sheet_coordinates(std::int64_t nx, std::int64_t ny, const std::array<double, 2>& size, std::int64_t first,
                       std::int64_t end, std::vector<double>& coords) {
  const std::int64_t sx = nx + 1;
  coords.resize(3 * static_cast<std::size_t>(end - first));
  double* x = coords.data();
  for (std::int64_t v = first; v < end; ++v, x += 3) {
    x[0] = grid_coordinate(v % sx, nx, size[0]);
    x[1] = grid_coordinate(v / sx, ny, size[1]);
    x[2] = 0.0;
  }
}

/// Two triangles per quad for the quads [first, end) (quad id i + nx j), split along A-C, normal +z, in order.
template <class Index>
void sheet_triangles(std::int64_t nx, std::int64_t first, std::int64_t end, std::vector<Index>& triangles) {
  const std::int64_t sx = nx + 1;
  triangles.resize(6 * static_cast<std::size_t>(end - first));
  Index* out = triangles.data();
  for (std::int64_t quad = first; quad < end; ++quad) {
    const std::int64_t i = quad % nx, j = quad / nx;
    const auto A = static_cast<Index>(i + sx * j), B = static_cast<Index>(i + 1 + sx * j),
               C = static_cast<Index>(i + 1 + sx * (j + 1)), D = static_cast<Index>(i + sx * (j + 1));
    const Index two[6] = {A, B, C, A, C, D};
    for (const Index v : two) *out++ = v;
  }
}

/// Boundary edges, counter-clockwise around the sheet (outward normal = edge direction x e_z), tagged by side.
void sheet_boundary(std::int64_t nx, std::int64_t ny, std::vector<LocalIndex>& lines, std::vector<int>& region) {
  const std::int64_t sx = nx + 1;
  auto vertex = [&](std::int64_t i, std::int64_t j) { return static_cast<LocalIndex>(i + sx * j); };
  const std::size_t n_lines = 2 * static_cast<std::size_t>(nx + ny);
  lines.reserve(2 * n_lines);
  region.reserve(n_lines);
  auto add = [&](LocalIndex v0, LocalIndex v1, int tag) {
    lines.push_back(v0);
    lines.push_back(v1);
    region.push_back(tag);
  };
  for (std::int64_t j = 0; j < ny; ++j) add(vertex(0, j + 1), vertex(0, j), box_region::x_min);
  for (std::int64_t j = 0; j < ny; ++j) add(vertex(nx, j), vertex(nx, j + 1), box_region::x_max);
  for (std::int64_t i = 0; i < nx; ++i) add(vertex(i, 0), vertex(i + 1, 0), box_region::y_min);
  for (std::int64_t i = 0; i < nx; ++i) add(vertex(i + 1, ny), vertex(i, ny), box_region::y_max);
}

}  // namespace

Mesh generate_sheet(std::array<double, 2> size, std::array<int, 2> cells) {
  const std::int64_t n_vertices = check_request("generate sheet", size, cells, 2);
  const std::int64_t nx = cells[0], ny = cells[1];
  Mesh mesh;
  sheet_coordinates(nx, ny, size, 0, n_vertices, mesh.coords);
  sheet_triangles(nx, 0, nx * ny, mesh.triangles);
  mesh.triangle_region.assign(mesh.triangles.size() / 3, box_region::volume);
  sheet_boundary(nx, ny, mesh.lines, mesh.line_region);
  return mesh;
}

MeshSlice generate_sheet_slice(const std::array<double, 2>& size, const std::array<int, 2>& cells, int rank,
                               int ranks) {
  const std::int64_t n_vertices = check_request("generate sheet", size, cells, 2);
  const std::int64_t nx = cells[0], ny = cells[1];
  // The boundary edges are a perimeter: O(N^(1/2)).
  return generated_slice(
      3, n_vertices, nx * ny, 2, rank, ranks,
      [&](std::int64_t first, std::int64_t end, std::vector<double>& coords) {
        sheet_coordinates(nx, ny, size, first, end, coords);
      },
      [&](std::int64_t first, std::int64_t end, std::vector<GlobalIndex>& triangles) {
        sheet_triangles(nx, first, end, triangles);
      },
      [&](std::vector<LocalIndex>& lines, std::vector<int>& region) { sheet_boundary(nx, ny, lines, region); });
}

}  // namespace edgefem
