/// \file vtk_output.cpp
/// Parallel VTK output (see vtk_output.hpp). The .vtu pieces go through VTK's XML writer (binary,
/// appended, raw, uncompressed: the fastest mode to write and to read back); the .pvtu and the .pvd
/// are small and are written by hand. Every file is written to a unique temporary name in the
/// target directory, fsync'ed and renamed into place.
#include "io/vtk_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string_view>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>

namespace edgefem {

namespace {

namespace fs = std::filesystem;

static_assert(sizeof(int) == sizeof(std::int32_t), "vtkIntArray must hold 32-bit values (Int32 in the .pvtu)");

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("VTK output '" + path + "': " + what);
}

std::string errno_text(int err) { return std::strerror(err); }

/// The directory that will hold `path` ("." for a bare file name). Throws if it does not exist.
fs::path checked_parent_directory(const std::string& path) {
  if (path.empty()) fail(path, "empty file name");
  const fs::path p(path);
  if (!p.has_filename()) fail(path, "the path names a directory, not a file");
  fs::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fail(path, "directory '" + dir.string() + "' does not exist (the caller must create output directories)");
  }
  return dir;
}

/// A temporary name next to `path`, unique per process and per call, ending in ".tmp".
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned long> counter{0};
  return path + "." + std::to_string(static_cast<long>(::getpid())) + "." + std::to_string(counter.fetch_add(1)) +
         ".tmp";
}

/// Removes the temporary file unless released (i.e. on every failure path).
class TempFileGuard {
 public:
  explicit TempFileGuard(std::string tmp) : tmp_(std::move(tmp)) {}
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  ~TempFileGuard() {
    if (!released_) ::unlink(tmp_.c_str());
  }
  void release() { released_ = true; }
  [[nodiscard]] const std::string& name() const { return tmp_; }

 private:
  std::string tmp_;
  bool released_ = false;
};

/// fsync a file or directory by name. Filesystems that cannot sync (EINVAL) are tolerated.
void fsync_path(const std::string& report_path, const std::string& name, bool directory) {
  const int flags = O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0);
  const int fd = ::open(name.c_str(), flags);
  if (fd < 0) {
    if (directory) return;  // best effort: the data itself is already safe
    fail(report_path, "cannot reopen temporary file '" + name + "' for fsync: " + errno_text(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL && err != EROFS && !directory) {
    fail(report_path, "fsync of '" + name + "' failed: " + errno_text(err));
  }
}

/// fsync `tmp`, rename it onto `path`, fsync the directory. `guard` owns `tmp`.
void commit(const std::string& path, TempFileGuard& guard, const fs::path& dir) {
  fsync_path(path, guard.name(), false);
  if (std::rename(guard.name().c_str(), path.c_str()) != 0) {
    fail(path, "cannot rename '" + guard.name() + "' into place: " + errno_text(errno));
  }
  guard.release();
  fsync_path(path, dir.string(), true);
}

/// Names non-empty and unique, components >= 1; value counts == n_tuples x components unless
/// n_tuples is nullptr (layout only).
void check_arrays(const std::string& path, const std::vector<DataArray>& arrays, const std::size_t* n_tuples,
                  const char* kind) {
  std::set<std::string_view> names;
  for (const DataArray& a : arrays) {
    if (a.name.empty()) fail(path, std::string(kind) + " array with an empty name");
    if (!names.insert(a.name).second) fail(path, std::string("duplicate ") + kind + " array '" + a.name + "'");
    if (a.n_components < 1) {
      fail(path, std::string(kind) + " array '" + a.name + "' has " + std::to_string(a.n_components) + " components");
    }
    if (n_tuples == nullptr) continue;
    const std::size_t expected = *n_tuples * static_cast<std::size_t>(a.n_components);
    const std::size_t actual = a.is_int ? a.int_values.size() : a.values.size();
    if (actual != expected) {
      fail(path, std::string(kind) + " array '" + a.name + "' has " + std::to_string(actual) + " values, expected " +
                     std::to_string(*n_tuples) + " x " + std::to_string(a.n_components) + " = " +
                     std::to_string(expected));
    }
  }
}

void check_piece(const std::string& path, const VtuPiece& piece) {
  if (piece.nodes_per_cell != 3 && piece.nodes_per_cell != 4) {
    fail(path, "nodes_per_cell must be 3 (triangles) or 4 (tetrahedra), got " + std::to_string(piece.nodes_per_cell));
  }
  if (piece.points.size() % 3 != 0) fail(path, "points.size() is not a multiple of 3");
  const auto npc = static_cast<std::size_t>(piece.nodes_per_cell);
  if (piece.connectivity.size() % npc != 0) {
    fail(path, "connectivity.size() is not a multiple of nodes_per_cell = " + std::to_string(npc));
  }
  const std::size_t n_points = piece.points.size() / 3;
  const std::size_t n_cells = piece.connectivity.size() / npc;
  for (std::size_t i = 0; i < piece.connectivity.size(); ++i) {
    const LocalIndex v = piece.connectivity[i];
    if (v < 0 || static_cast<std::size_t>(v) >= n_points) {
      fail(path, "cell " + std::to_string(i / npc) + " references point " + std::to_string(v) + " but there are " +
                     std::to_string(n_points) + " points");
    }
  }
  check_arrays(path, piece.point_data, &n_points, "point");
  check_arrays(path, piece.cell_data, &n_cells, "cell");
}

vtkSmartPointer<vtkDataArray> make_vtk_array(const DataArray& a, std::size_t n_tuples) {
  if (a.is_int) {
    auto arr = vtkSmartPointer<vtkIntArray>::New();
    arr->SetName(a.name.c_str());
    arr->SetNumberOfComponents(a.n_components);
    arr->SetNumberOfTuples(static_cast<vtkIdType>(n_tuples));
    std::copy(a.int_values.begin(), a.int_values.end(), arr->GetPointer(0));
    return arr;
  }
  auto arr = vtkSmartPointer<vtkDoubleArray>::New();
  arr->SetName(a.name.c_str());
  arr->SetNumberOfComponents(a.n_components);
  arr->SetNumberOfTuples(static_cast<vtkIdType>(n_tuples));
  std::copy(a.values.begin(), a.values.end(), arr->GetPointer(0));
  return arr;
}

/// vtkErrorCode::GetStringFromErrorCode lives in VTK::CommonMisc, which we do not link.
const char* error_code_text(unsigned long code) {
  switch (code) {
    case vtkErrorCode::NoError: return "no error code set (writer reported failure)";
    case vtkErrorCode::FileNotFoundError: return "file not found";
    case vtkErrorCode::CannotOpenFileError: return "cannot open file";
    case vtkErrorCode::UnrecognizedFileTypeError: return "unrecognized file type";
    case vtkErrorCode::PrematureEndOfFileError: return "premature end of file";
    case vtkErrorCode::FileFormatError: return "file format error";
    case vtkErrorCode::NoFileNameError: return "no file name";
    case vtkErrorCode::OutOfDiskSpaceError: return "out of disk space";
    default: return "unknown VTK error";
  }
}

/// XML attribute value escaping.
std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_double(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

const char* byte_order() { return std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian"; }

void append_pdata(std::string& xml, const char* section, const std::vector<DataArray>& arrays) {
  if (arrays.empty()) return;
  xml += "    <";
  xml += section;
  xml += ">\n";
  for (const DataArray& a : arrays) {
    xml += "      <PDataArray type=\"";
    xml += a.is_int ? "Int32" : "Float64";
    xml += "\" Name=\"" + xml_escape(a.name) + "\" NumberOfComponents=\"" + std::to_string(a.n_components) + "\"/>\n";
  }
  xml += "    </";
  xml += section;
  xml += ">\n";
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& contents) {
  const fs::path dir = checked_parent_directory(path);
  TempFileGuard guard(temporary_name(path));
  const int fd = ::open(guard.name().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot create temporary file '" + guard.name() + "': " + errno_text(errno));
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail(path, "write to '" + guard.name() + "' failed: " + errno_text(err));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    ::close(fd);
    fail(path, "fsync of '" + guard.name() + "' failed: " + errno_text(err));
  }
  if (::close(fd) != 0) fail(path, "close of '" + guard.name() + "' failed: " + errno_text(errno));
  if (std::rename(guard.name().c_str(), path.c_str()) != 0) {
    fail(path, "cannot rename '" + guard.name() + "' into place: " + errno_text(errno));
  }
  guard.release();
  fsync_path(path, dir.string(), true);
}

void write_vtu_piece(const std::string& path, const VtuPiece& piece) {
  const fs::path dir = checked_parent_directory(path);
  check_piece(path, piece);

  const std::size_t n_points = piece.points.size() / 3;
  const auto npc = static_cast<std::size_t>(piece.nodes_per_cell);
  const std::size_t n_cells = piece.connectivity.size() / npc;

  vtkNew<vtkDoubleArray> coords;
  coords->SetName("Points");
  coords->SetNumberOfComponents(3);
  coords->SetNumberOfTuples(static_cast<vtkIdType>(n_points));
  std::copy(piece.points.begin(), piece.points.end(), coords->GetPointer(0));
  vtkNew<vtkPoints> points;
  points->SetData(coords);

  vtkNew<vtkIdTypeArray> offsets;
  offsets->SetNumberOfTuples(static_cast<vtkIdType>(n_cells + 1));
  vtkIdType* off = offsets->GetPointer(0);
  for (std::size_t c = 0; c <= n_cells; ++c) off[c] = static_cast<vtkIdType>(c * npc);
  vtkNew<vtkIdTypeArray> conn;
  conn->SetNumberOfTuples(static_cast<vtkIdType>(piece.connectivity.size()));
  std::copy(piece.connectivity.begin(), piece.connectivity.end(), conn->GetPointer(0));
  vtkNew<vtkCellArray> cells;
  cells->SetData(offsets, conn);

  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(points);
  grid->SetCells(piece.nodes_per_cell == 4 ? VTK_TETRA : VTK_TRIANGLE, cells);
  for (const DataArray& a : piece.point_data) grid->GetPointData()->AddArray(make_vtk_array(a, n_points));
  for (const DataArray& a : piece.cell_data) grid->GetCellData()->AddArray(make_vtk_array(a, n_cells));

  TempFileGuard guard(temporary_name(path));
  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->SetFileName(guard.name().c_str());
  writer->SetInputData(grid);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();  // raw binary
  writer->SetCompressorTypeToNone();
  writer->SetHeaderTypeToUInt64();  // pieces larger than 4 GiB
  const int ok = writer->Write();
  const unsigned long code = writer->GetErrorCode();
  if (ok != 1 || code != vtkErrorCode::NoError) {
    fail(path, std::string("vtkXMLUnstructuredGridWriter failed writing '") + guard.name() + "': " +
                   error_code_text(code));
  }
  commit(path, guard, dir);
}

void write_pvtu(const std::string& path, const std::vector<std::string>& piece_files, const VtuPiece& layout) {
  check_arrays(path, layout.point_data, nullptr, "point");
  check_arrays(path, layout.cell_data, nullptr, "cell");
  std::string xml;
  xml += "<?xml version=\"1.0\"?>\n";
  xml += "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"";
  xml += byte_order();
  xml += "\" header_type=\"UInt64\">\n";
  xml += "  <PUnstructuredGrid GhostLevel=\"0\">\n";
  append_pdata(xml, "PPointData", layout.point_data);
  append_pdata(xml, "PCellData", layout.cell_data);
  xml += "    <PPoints>\n";
  xml += "      <PDataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\"/>\n";
  xml += "    </PPoints>\n";
  for (const std::string& f : piece_files) {
    if (f.empty()) fail(path, "empty piece file name");
    xml += "    <Piece Source=\"" + xml_escape(f) + "\"/>\n";
  }
  xml += "  </PUnstructuredGrid>\n";
  xml += "</VTKFile>\n";
  write_file_atomically(path, xml);
}

void PvdCollection::write() const {
  std::string xml;
  xml += "<?xml version=\"1.0\"?>\n";
  xml += "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"";
  xml += byte_order();
  xml += "\">\n";
  xml += "  <Collection>\n";
  for (const auto& [time, file] : entries_) {
    if (!std::isfinite(time)) fail(path_, "non-finite time value for '" + file + "'");
    if (file.empty()) fail(path_, "empty data set file name at time " + format_double(time));
    xml += "    <DataSet timestep=\"" + format_double(time) + "\" group=\"\" part=\"0\" file=\"" + xml_escape(file) +
           "\"/>\n";
  }
  xml += "  </Collection>\n";
  xml += "</VTKFile>\n";
  write_file_atomically(path_, xml);
}

}  // namespace edgefem
