// SPDX-License-Identifier: BSD-3-Clause
/// \file voxel_grid.cpp
/// The frames' voxel grid (voxel_grid.hpp).
#include "frames/voxel_grid.hpp"

#include <algorithm>
#include <cmath>

#include "frames/frame_placement.hpp"

namespace edgefem {

std::array<int, 3> VoxelGrid::cell_of(const double* p) const {
  std::array<int, 3> c{};
  for (int d = 0; d < 3; ++d) c[d] = std::clamp(static_cast<int>(std::floor((p[d] - lo[d]) / size)), 0, n[d] - 1);
  return c;
}

double mesh_volume(MPI_Comm comm, const LocalMesh& mesh) {
  double v = 0.0, total = 0.0;
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t) v += mesh.mesh.tet_volume(t);
  MPI_Allreduce(&v, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total;
}

double voxel_size_for(double volume, int n_frames) { return std::cbrt(volume / std::max(1, n_frames)) / 6.0; }

namespace {

/// Marks the cells whose centre lies in tet t (barycentric coordinates >= -1e-12).
void mark_inside(const VoxelGrid& g, const Mesh& mesh, LocalIndex t, std::vector<char>& inside) {
  const LocalIndex* v = &mesh.tets[4 * static_cast<std::size_t>(t)];
  const double* X[4] = {mesh.point(v[0]), mesh.point(v[1]), mesh.point(v[2]), mesh.point(v[3])};
  double lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = std::min({X[0][d], X[1][d], X[2][d], X[3][d]});
    hi[d] = std::max({X[0][d], X[1][d], X[2][d], X[3][d]});
  }
  const double V6 = tet_volume6(X[0], X[1], X[2], X[3]);
  const auto a = g.cell_of(lo), b = g.cell_of(hi);
  for (int k = a[2]; k <= b[2]; ++k)
    for (int j = a[1]; j <= b[1]; ++j)
      for (int i = a[0]; i <= b[0]; ++i) {
        const frames::Vec3 c = g.centre(i, j, k);
        // Barycentric coordinates of c: the sub-volumes with c in place of each vertex, over the tet's.
        const double l1 = tet_volume6(X[0], c.data(), X[2], X[3]) / V6,
                     l2 = tet_volume6(X[0], X[1], c.data(), X[3]) / V6;
        const double l3 = tet_volume6(X[0], X[1], X[2], c.data()) / V6, l0 = 1.0 - l1 - l2 - l3;
        if (std::min({l0, l1, l2, l3}) >= -1e-12) inside[g.index(i, j, k)] = 1;
      }
}

}  // namespace

VoxelGrid make_voxel_grid(MPI_Comm comm, const LocalMesh& mesh, double size) {
  const auto box = global_bounding_box(comm, mesh);
  VoxelGrid g;
  g.lo = {box[0], box[1], box[2]};
  const double extent[3] = {box[3] - box[0], box[4] - box[1], box[5] - box[2]};
  // A size of 0 or not finite (a mesh of no volume) would never reach the cell limit: one cell over the box instead.
  const double largest = std::max({extent[0], extent[1], extent[2]});
  g.size = size > 0.0 && std::isfinite(size) ? size : (largest > 0.0 ? largest : 1.0);
  for (;;) {
    for (int d = 0; d < 3; ++d) g.n[d] = std::max(1, static_cast<int>(std::ceil(extent[d] / g.size)));
    if (static_cast<double>(g.n[0]) * g.n[1] * g.n[2] <= kMaxVoxelCells) break;
    g.size *= 1.25;
  }
  const std::size_t cells = static_cast<std::size_t>(g.n[0]) * g.n[1] * g.n[2];
  std::vector<double> sums(4 * cells, 0.0);  // V, V x, V y, V z
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t) {
    const LocalIndex* v = &mesh.mesh.tets[4 * static_cast<std::size_t>(t)];
    double c[3];
    for (int d = 0; d < 3; ++d)
      c[d] = 0.25 * (mesh.mesh.coords[3 * v[0] + d] + mesh.mesh.coords[3 * v[1] + d] + mesh.mesh.coords[3 * v[2] + d] +
                     mesh.mesh.coords[3 * v[3] + d]);
    const auto ijk = g.cell_of(c);
    double* s = &sums[4 * g.index(ijk[0], ijk[1], ijk[2])];
    const double V = mesh.mesh.tet_volume(t);
    s[0] += V;
    for (int d = 0; d < 3; ++d) s[1 + d] += V * c[d];
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm);
  g.inside.assign(cells, 0);
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t) mark_inside(g, mesh.mesh, t, g.inside);
  MPI_Allreduce(MPI_IN_PLACE, g.inside.data(), static_cast<int>(cells), MPI_CHAR, MPI_MAX, comm);
  g.volume.resize(cells);
  g.centroid.resize(cells);
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const std::size_t c = g.index(i, j, k);
        const double V = sums[4 * c];
        g.volume[c] = V;
        const int ijk[3] = {i, j, k};
        for (int d = 0; d < 3; ++d)
          g.centroid[c][d] = V > 0.0 ? sums[4 * c + 1 + d] / V : g.lo[d] + (ijk[d] + 0.5) * g.size;
      }
  return g;
}

}  // namespace edgefem
