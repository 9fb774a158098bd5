// SPDX-License-Identifier: BSD-3-Clause
/// \file diffused_weights.cpp
/// Diffused Voronoi weights on the voxel grid (diffused_weights.hpp).
#include "frames/diffused_weights.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace edgefem {
namespace {

using frames::Vec3;

double distance2(const double* a, const double* b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}

/// The centre of grid cell c.
Vec3 cell_centre(const VoxelGrid& g, std::size_t c) {
  return g.centre(static_cast<int>(c % g.n[0]), static_cast<int>((c / g.n[0]) % g.n[1]),
                  static_cast<int>(c / (static_cast<std::size_t>(g.n[0]) * g.n[1])));
}

/// The cells inside the mesh (or holding a fixed vertex) as unknowns, their face neighbours and the cells held by a fixed region.
struct CellSystem {
  std::vector<std::size_t> cell;              ///< per unknown: its grid cell
  std::vector<int> unknown;                   ///< per grid cell: its unknown (-1: empty)
  std::vector<std::array<int, 6>> neighbour;  ///< per unknown: the face-adjacent unknowns (-1: none)
  std::vector<double> mass;                   ///< per unknown: the cell's tet volume
  std::vector<int> held;                      ///< per unknown: the anchor frame holding it (-1: free)
};

CellSystem cell_system(const VoxelGrid& g, const std::vector<int>& fixed_cell) {
  CellSystem s;
  s.unknown.assign(g.cells(), -1);
  for (std::size_t c = 0; c < g.cells(); ++c)
    if (g.inside[c] || fixed_cell[c] >= 0) {
      s.unknown[c] = static_cast<int>(s.cell.size());
      s.cell.push_back(c);
      s.mass.push_back(g.size * g.size * g.size);
      s.held.push_back(fixed_cell[c]);
    }
  s.neighbour.resize(s.cell.size());
  for (std::size_t u = 0; u < s.cell.size(); ++u) {
    const std::size_t c = s.cell[u];
    const int ijk[3] = {static_cast<int>(c % g.n[0]), static_cast<int>((c / g.n[0]) % g.n[1]),
                        static_cast<int>(c / (static_cast<std::size_t>(g.n[0]) * g.n[1]))};
    for (int d = 0; d < 3; ++d)
      for (int side = 0; side < 2; ++side) {
        int nb[3] = {ijk[0], ijk[1], ijk[2]};
        nb[d] += side == 0 ? -1 : 1;
        const bool inside = nb[d] >= 0 && nb[d] < g.n[d];
        s.neighbour[u][2 * d + side] = inside ? s.unknown[g.index(nb[0], nb[1], nb[2])] : -1;
      }
  }
  return s;
}

/// Per grid cell: the anchor frame of a fixed vertex it holds (-1: none), from every rank's fixed vertices.
std::vector<int> fixed_cells(MPI_Comm comm, const LocalMesh& mesh, const Model& model, const FramePlacement& frames,
                             const VoxelGrid& g) {
  std::vector<int> anchor_plus_one(g.cells(), 0);
  for (std::size_t b = 0; b < frames.anchors.size() && b < model.boundary_vertices.size(); ++b)
    if (frames.anchors[b] >= 0)
      for (const LocalIndex v : model.boundary_vertices[b]) {
        const auto ijk = g.cell_of(&mesh.mesh.coords[3 * static_cast<std::size_t>(v)]);
        int& a = anchor_plus_one[g.index(ijk[0], ijk[1], ijk[2])];
        a = std::max(a, frames.anchors[b] + 1);
      }
  MPI_Allreduce(MPI_IN_PLACE, anchor_plus_one.data(), static_cast<int>(anchor_plus_one.size()), MPI_INT, MPI_MAX, comm);
  for (int& a : anchor_plus_one) --a;
  return anchor_plus_one;
}

/// Per unknown: the frame whose site is nearest to the cell's centroid (a held cell: its anchor).
std::vector<int> voronoi(const VoxelGrid& g, const CellSystem& s, const FramePlacement& frames) {
  std::vector<Vec3> centres(s.cell.size());
  for (std::size_t u = 0; u < centres.size(); ++u) centres[u] = cell_centre(g, s.cell[u]);
  std::vector<const double*> fixed_points;
  std::vector<int> fixed_anchor;
  for (std::size_t u = 0; u < s.cell.size(); ++u)
    if (s.held[u] >= 0) fixed_points.push_back(centres[u].data()), fixed_anchor.push_back(s.held[u]);
  std::vector<int> site(s.cell.size(), 0);
  for (std::size_t u = 0; u < s.cell.size(); ++u) {
    if (s.held[u] >= 0) {
      site[u] = s.held[u];
      continue;
    }
    const double* x = centres[u].data();
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < frames.origins.size(); ++i)
      if (const double d = distance2(x, frames.origins[i].data()); d < best) best = d, site[u] = static_cast<int>(i);
    for (std::size_t k = 0; k < fixed_points.size(); ++k)
      if (const double d = distance2(x, fixed_points[k]); d < best) best = d, site[u] = fixed_anchor[k];
  }
  return site;
}

/// y = (M + tau K) x on the free unknowns (x is zero on the held ones), y zero on the held ones.
void apply(const CellSystem& s, double tk, const std::vector<double>& x, std::vector<double>& y) {
  for (std::size_t u = 0; u < s.cell.size(); ++u) {
    if (s.held[u] >= 0) {
      y[u] = 0.0;
      continue;
    }
    double v = s.mass[u] * x[u];
    for (const int nb : s.neighbour[u])
      if (nb >= 0) v += tk * (x[u] - x[static_cast<std::size_t>(nb)]);
    y[u] = v;
  }
}

/// One implicit heat step of frame i's weights on the cells: CG with a diagonal preconditioner, the held cells at
/// 1 for their anchor i, 0 otherwise.
std::vector<double> heat_step(const CellSystem& s, double tk, const std::vector<double>& previous, int frame) {
  const std::size_t m = s.cell.size();
  std::vector<double> held(m, 0.0), b(m, 0.0), diag(m, 1.0);
  for (std::size_t u = 0; u < m; ++u) held[u] = s.held[u] == frame ? 1.0 : 0.0;
  for (std::size_t u = 0; u < m; ++u) {
    if (s.held[u] >= 0) continue;
    b[u] = s.mass[u] * previous[u];
    diag[u] = s.mass[u];
    for (const int nb : s.neighbour[u])
      if (nb >= 0) {
        diag[u] += tk;
        if (s.held[static_cast<std::size_t>(nb)] >= 0) b[u] += tk * held[static_cast<std::size_t>(nb)];
      }
  }
  std::vector<double> x(m, 0.0), r = b, z(m), p(m), q(m);
  for (std::size_t u = 0; u < m; ++u)
    if (s.held[u] < 0) x[u] = previous[u];
  apply(s, tk, x, q);
  for (std::size_t u = 0; u < m; ++u) r[u] = s.held[u] >= 0 ? 0.0 : b[u] - q[u];
  double b2 = 0.0;
  for (const double v : b) b2 += v * v;
  for (std::size_t u = 0; u < m; ++u) p[u] = z[u] = r[u] / diag[u];
  double rz = 0.0;
  for (std::size_t u = 0; u < m; ++u) rz += r[u] * z[u];
  for (int it = 0; it < 10000; ++it) {
    double r2 = 0.0;
    for (const double v : r) r2 += v * v;
    if (r2 <= 1e-20 * b2) break;
    apply(s, tk, p, q);
    double pq = 0.0;
    for (std::size_t u = 0; u < m; ++u) pq += p[u] * q[u];
    const double alpha = rz / pq;
    double rz_next = 0.0;
    for (std::size_t u = 0; u < m; ++u) {
      x[u] += alpha * p[u];
      r[u] -= alpha * q[u];
      z[u] = r[u] / diag[u];
      rz_next += r[u] * z[u];
    }
    for (std::size_t u = 0; u < m; ++u) p[u] = z[u] + (rz_next / rz) * p[u];
    rz = rz_next;
  }
  for (std::size_t u = 0; u < m; ++u)
    if (s.held[u] >= 0) x[u] = held[u];
  return x;
}

/// The mean distance from a frame to its nearest other frame (the grid's cell edge with a single frame).
double mean_spacing(const FramePlacement& frames, double fallback) {
  const std::size_t n = frames.origins.size();
  if (n < 2) return fallback;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double nearest = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) nearest = std::min(nearest, distance2(frames.origins[i].data(), frames.origins[j].data()));
    sum += std::sqrt(nearest);
  }
  return sum / static_cast<double>(n);
}

/// The trilinear interpolation factors of point x over the occupied cell centres around it (renormalised), as
/// (unknown, factor) pairs; the nearest occupied cell when none of the eight is occupied.
std::vector<std::pair<int, double>> interpolation(const VoxelGrid& g, const CellSystem& s, const double* x) {
  int base[3];
  double t[3];
  for (int d = 0; d < 3; ++d) {
    const double u = (x[d] - g.lo[d]) / g.size - 0.5;
    base[d] = static_cast<int>(std::floor(u));
    t[d] = u - base[d];
  }
  std::vector<std::pair<int, double>> out;
  double sum = 0.0;
  for (int corner = 0; corner < 8; ++corner) {
    int ijk[3];
    double f = 1.0;
    for (int d = 0; d < 3; ++d) {
      const int up = (corner >> d) & 1;
      ijk[d] = std::clamp(base[d] + up, 0, g.n[d] - 1);
      f *= up ? t[d] : 1.0 - t[d];
    }
    const int u = s.unknown[g.index(ijk[0], ijk[1], ijk[2])];
    if (u < 0 || f <= 0.0) continue;
    out.emplace_back(u, f);
    sum += f;
  }
  if (sum > 0.0) {
    for (auto& [u, f] : out) f /= sum;
    return out;
  }
  int nearest = 0;
  for (std::size_t u = 1; u < s.cell.size(); ++u)
    if (distance2(x, cell_centre(g, s.cell[u]).data()) < distance2(x, cell_centre(g, s.cell[nearest]).data()))
      nearest = static_cast<int>(u);
  return {{nearest, 1.0}};
}

}  // namespace

std::vector<double> diffused_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                     const FramePlacement& frames, const VoxelGrid& grid,
                                     const std::vector<int>& anchor) {
  const int n = static_cast<int>(frames.origins.size());
  const CellSystem s = cell_system(grid, fixed_cells(comm, mesh, model, frames, grid));
  const std::vector<int> site = voronoi(grid, s, frames);
  const double h = mean_spacing(frames, grid.size);
  const double tk = h * h / kDiffusionSteps * grid.size;  // tau times the conductance (face area / distance)
  std::vector<std::vector<double>> cell_weights(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::vector<double> x(s.cell.size());
    for (std::size_t u = 0; u < x.size(); ++u) x[u] = site[u] == i ? 1.0 : 0.0;
    for (int step = 0; step < kDiffusionSteps; ++step) x = heat_step(s, tk, x, i);
    cell_weights[i] = std::move(x);
  }
  std::vector<double> w(static_cast<std::size_t>(mesh.n_local()) * n, 0.0);
  for (LocalIndex v = 0; v < mesh.n_local(); ++v) {
    double* wv = &w[static_cast<std::size_t>(v) * n];
    if (anchor[v] >= 0) {
      wv[anchor[v]] = 1.0;
      continue;
    }
    for (const auto& [u, f] : interpolation(grid, s, &mesh.mesh.coords[3 * static_cast<std::size_t>(v)]))
      for (int i = 0; i < n; ++i) wv[i] += f * cell_weights[i][static_cast<std::size_t>(u)];
  }
  return w;
}

}  // namespace edgefem
