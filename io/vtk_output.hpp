// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file vtk_output.hpp
/// Parallel VTK output: one .vtu piece per rank, a .pvtu per written step, a .pvd collection.
/// Every file is written under a temporary name in the same directory and renamed into place, so a
/// killed job never leaves a truncated file behind a valid .pvd. No MPI here: the caller orders
/// the writes (all pieces, barrier, then rank 0 writes the .pvtu and the .pvd).
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// A named data array: n_components doubles (or ints) per point/cell.
struct DataArray {
  std::string name;
  int n_components = 1;
  std::vector<double> values;            ///< used when is_int is false
  std::vector<std::int32_t> int_values;  ///< used when is_int is true
  bool is_int = false;
  /// A symmetric 3 x 3 tensor (n_components 9, as the .vtu gets it, row-major) kept as its 6 independent components,
  /// XX, YY, ZZ, XY, YZ, XZ (VTK's order), component after component: values[c * n + i] for tuple i of n. The .vtu
  /// writer hands VTK the 9 components as views of the 6 (issue 56: 48 bytes per tet less for a piece's two
  /// tensors); the XDMF output stores the 6 (Tensor6).
  bool symmetric = false;
  /// Values per tuple in `values` (6 for a symmetric tensor).
  [[nodiscard]] int stored_components() const { return symmetric ? 6 : n_components; }
};

/// One rank's piece of the unstructured grid.
struct VtuPiece {
  std::vector<double> points;            ///< 3 per point (reference coordinates)
  std::vector<LocalIndex> connectivity;  ///< nodes_per_cell per cell
  int nodes_per_cell = 4;                ///< 4: VTK_TETRA, 3: VTK_TRIANGLE
  std::vector<DataArray> point_data;
  std::vector<DataArray> cell_data;
  /// Views instead of copies (ResultWriter: the mesh's own arrays, which outlive the write; issue 56), used where
  /// `points` (`connectivity`) is empty.
  std::span<const double> points_view;
  std::span<const LocalIndex> connectivity_view;
  [[nodiscard]] std::span<const double> point_coordinates() const {
    return points.empty() ? points_view : std::span<const double>(points);
  }
  [[nodiscard]] std::span<const LocalIndex> cells() const {
    return connectivity.empty() ? connectivity_view : std::span<const LocalIndex>(connectivity);
  }
};

/// Write a .vtu (VTK XML, binary appended, via VTK's vtkXMLUnstructuredGridWriter) atomically.
void write_vtu_piece(const std::string& path, const VtuPiece& piece);

/// Write a .pvtu that references `piece_files` (paths relative to the .pvtu), with the array
/// layout (names, components, types) of `layout`, atomically.
void write_pvtu(const std::string& path, const std::vector<std::string>& piece_files, const VtuPiece& layout);

/// The .pvd collection: (time, dataset file relative to the .pvd) pairs; write() rewrites it atomically.
/// Times are written with 17 significant digits, so load() returns them bit for bit.
class PvdCollection {
 public:
  explicit PvdCollection(std::string path) : path_(std::move(path)) {}

  /// Reads a collection written by write() (entries in file order), for a restarted run to append to.
  /// A missing file gives an empty collection with this path; a file that cannot be read or is not in
  /// write()'s format (one element per line, DataSet elements with a finite `timestep` and a non-empty
  /// `file`, closed by </VTKFile>) throws InputError "PATH:LINE: ...".
  static PvdCollection load(const std::string& path);

  void add(double time, const std::string& relative_file) { entries_.emplace_back(time, relative_file); }

  /// Drops every entry whose time is later than `time` (order of the others kept): on restart from a
  /// checkpoint at `time`, the steps the killed run wrote after it are rewritten. An entry counts as later
  /// when t > time + 1e-12 * |time|: the relative tolerance absorbs rounding when the two times were
  /// accumulated differently (t += dt versus step * dt) and is far below any time step (consecutive
  /// outputs would need 1e12 steps in between to come that close). Throws std::invalid_argument if
  /// `time` is not finite.
  void truncate_after(double time);

  void write() const;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::vector<std::pair<double, std::string>>& entries() const { return entries_; }

 private:
  std::string path_;
  std::vector<std::pair<double, std::string>> entries_;
};

/// The VTK version edgefem was built with ("9.1.0").
std::string vtk_version();

/// Write `contents` to `path` through a temporary file in the same directory and rename().
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace edgefem
