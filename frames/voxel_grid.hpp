// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file voxel_grid.hpp
/// A regular grid of cubes over the mesh's bounding box with each cell's tet volume and volume-weighted centroid
/// (tets binned by centroid) and whether its centre lies in the mesh, over all ranks: the same grid on every rank. The frame set-up works on it where
/// the mesh's resolution is not needed: k-means placement (frame_placement.hpp) and the diffused weights
/// (diffused_weights.hpp). Collective to build; no PETSc.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

#include "materials/frame_kinematics.hpp"
#include "partition/partition.hpp"

namespace edgefem {

struct VoxelGrid {
  frames::Vec3 lo{};                   ///< the bounding box's low corner
  double size = 1.0;                   ///< edge of a cell
  std::array<int, 3> n{1, 1, 1};       ///< cells along x, y, z
  std::vector<double> volume;          ///< per cell (x fastest): the volume of the tets whose centroid it holds
  std::vector<frames::Vec3> centroid;  ///< per cell: their volume-weighted centroid (the cell centre when empty)
  std::vector<char> inside;            ///< per cell: its centre lies in a tet (the cells the weights diffuse on)

  [[nodiscard]] std::size_t cells() const { return volume.size(); }
  [[nodiscard]] std::size_t index(int i, int j, int k) const {
    return (static_cast<std::size_t>(k) * n[1] + static_cast<std::size_t>(j)) * n[0] + static_cast<std::size_t>(i);
  }
  /// The cell holding `p` (clamped to the grid), as (i, j, k).
  [[nodiscard]] std::array<int, 3> cell_of(const double* p) const;
  /// The centre of cell (i, j, k).
  [[nodiscard]] frames::Vec3 centre(int i, int j, int k) const {
    return {lo[0] + (i + 0.5) * size, lo[1] + (j + 0.5) * size, lo[2] + (k + 0.5) * size};
  }
};

/// The largest number of cells of a grid (make_voxel_grid enlarges the cells beyond it).
inline constexpr double kMaxVoxelCells = 40000;

/// The grid of cubes of edge `size` (enlarged until there are at most kMaxVoxelCells) over the global bounding box.
VoxelGrid make_voxel_grid(MPI_Comm comm, const LocalMesh& mesh, double size);

/// The edge for `n_frames` frames in a mesh of volume `volume`: a sixth of (volume / n_frames)^(1/3), the typical
/// frame spacing, so the diffused weights and k-means see about six cells between neighbouring frames.
double voxel_size_for(double volume, int n_frames);

/// The total tet volume over all ranks.
double mesh_volume(MPI_Comm comm, const LocalMesh& mesh);

}  // namespace edgefem
