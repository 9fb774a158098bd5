// SPDX-License-Identifier: BSD-3-Clause
/// \file vtk_output.cpp
/// Parallel VTK output (see vtk_output.hpp). The .vtu pieces go through VTK's XML writer (binary,
/// appended, raw, uncompressed: the fastest mode to write and to read back); the .pvtu and the .pvd
/// are small and are written by hand; a restart reads the .pvd back through VTK's XML parser. Every file is written to a unique temporary name in the
/// target directory, fsync'ed and renamed into place.
#include "io/vtk_output.hpp"

#include <vtkVersionMacros.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <system_error>

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
#include <vtkSOADataArrayTemplate.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt32Array.h>
#include <vtkUnstructuredGrid.h>
#include <vtkObjectFactory.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLUnstructuredGridWriter.h>
#include <vtk_expat.h>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "io/xml_escape.hpp"

namespace edgefem {

namespace {

namespace fs = std::filesystem;

static_assert(sizeof(int) == sizeof(std::int32_t), "vtkIntArray must hold 32-bit values (Int32 in the .pvtu)");

[[noreturn]] void vtk_fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("VTK output '" + path + "': " + what);
}

std::string errno_text(int err) { return std::strerror(err); }

/// The directory that will hold `path` ("." for a bare file name). Throws if it does not exist.
fs::path checked_parent_directory(const std::string& path) {
  if (path.empty()) vtk_fail(path, "empty file name");
  const fs::path p(path);
  if (!p.has_filename()) vtk_fail(path, "the path names a directory, not a file");
  fs::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    vtk_fail(path, "directory '" + dir.string() + "' does not exist (the caller must create output directories)");
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
    vtk_fail(report_path, "cannot reopen temporary file '" + name + "' for fsync: " + errno_text(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL && err != EROFS && !directory) {
    vtk_fail(report_path, "fsync of '" + name + "' failed: " + errno_text(err));
  }
}

/// fsync `tmp`, rename it onto `path`, fsync the directory. `guard` owns `tmp`.
void commit(const std::string& path, TempFileGuard& guard, const fs::path& dir) {
  fsync_path(path, guard.name(), false);
  if (std::rename(guard.name().c_str(), path.c_str()) != 0) {
    vtk_fail(path, "cannot rename '" + guard.name() + "' into place: " + errno_text(errno));
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
    if (a.name.empty()) vtk_fail(path, std::string(kind) + " array with an empty name");
    if (!names.insert(a.name).second) vtk_fail(path, std::string("duplicate ") + kind + " array '" + a.name + "'");
    if (a.n_components < 1) {
      vtk_fail(path, std::string(kind) + " array '" + a.name + "' has " + std::to_string(a.n_components) + " components");
    }
    if (n_tuples == nullptr) continue;
    if (a.symmetric && (a.n_components != 9 || a.is_int))
      vtk_fail(path, std::string(kind) + " array '" + a.name + "': a symmetric tensor has 9 components of doubles");
    const std::size_t expected = *n_tuples * static_cast<std::size_t>(a.stored_components());
    const std::size_t actual = a.is_int ? a.int_values.size() : a.values.size();
    if (actual != expected) {
      vtk_fail(path, std::string(kind) + " array '" + a.name + "' has " + std::to_string(actual) + " values, expected " +
                     std::to_string(*n_tuples) + " x " + std::to_string(a.stored_components()) + " = " +
                     std::to_string(expected));
    }
  }
}

void check_piece(const std::string& path, const VtuPiece& piece) {
  if (piece.nodes_per_cell != 3 && piece.nodes_per_cell != 4) {
    vtk_fail(path, "nodes_per_cell must be 3 (triangles) or 4 (tetrahedra), got " + std::to_string(piece.nodes_per_cell));
  }
  const std::span<const double> points = piece.point_coordinates();
  const std::span<const LocalIndex> connectivity = piece.cells();
  if (points.size() % 3 != 0) vtk_fail(path, "points.size() is not a multiple of 3");
  const auto npc = static_cast<std::size_t>(piece.nodes_per_cell);
  if (connectivity.size() % npc != 0) {
    vtk_fail(path, "connectivity.size() is not a multiple of nodes_per_cell = " + std::to_string(npc));
  }
  const std::size_t n_points = points.size() / 3;
  const std::size_t n_cells = connectivity.size() / npc;
  for (std::size_t i = 0; i < connectivity.size(); ++i) {
    const LocalIndex v = connectivity[i];
    if (v < 0 || static_cast<std::size_t>(v) >= n_points) {
      vtk_fail(path, "cell " + std::to_string(i / npc) + " references point " + std::to_string(v) + " but there are " +
                     std::to_string(n_points) + " points");
    }
  }
  check_arrays(path, piece.point_data, &n_points, "point");
  check_arrays(path, piece.cell_data, &n_cells, "cell");
}

/// A VTK array over `a`'s values, without a copy: VTK reads them while writing and never frees or changes them
/// (SetArray with save = 1), so the piece must outlive the writer (it does: write_vtu_piece holds both). A copy
/// here cost a fresh 30 MB of page faults and zeroing per step on the 136k-tet cantilever.
vtkSmartPointer<vtkDataArray> make_vtk_array(const DataArray& a, std::size_t n_tuples) {
  const auto n_values = static_cast<vtkIdType>(n_tuples * static_cast<std::size_t>(a.n_components));
  if (a.symmetric) {  // 9 components by rows, each a view of one of the 6 stored (XX, YY, ZZ, XY, YZ, XZ)
    constexpr int stored[9] = {0, 3, 5, 3, 1, 4, 5, 4, 2};
    auto arr = vtkSmartPointer<vtkSOADataArrayTemplate<double>>::New();
    arr->SetName(a.name.c_str());
    arr->SetNumberOfComponents(9);
    for (int c = 0; c < 9; ++c) {
      double* component = const_cast<double*>(a.values.data()) + static_cast<std::size_t>(stored[c]) * n_tuples;
      arr->SetArray(c, component, static_cast<vtkIdType>(n_tuples), true, true);
    }
    return arr;
  }
  if (a.is_int) {
    auto arr = vtkSmartPointer<vtkIntArray>::New();
    arr->SetName(a.name.c_str());
    arr->SetNumberOfComponents(a.n_components);
    arr->SetArray(const_cast<std::int32_t*>(a.int_values.data()), n_values, 1);
    return arr;
  }
  auto arr = vtkSmartPointer<vtkDoubleArray>::New();
  arr->SetName(a.name.c_str());
  arr->SetNumberOfComponents(a.n_components);
  arr->SetArray(const_cast<double*>(a.values.data()), n_values, 1);
  return arr;
}

/// The cells of `connectivity` (`npc` points each) for VTK: in 32-bit storage over the piece's own indices (no copy;
/// the file's connectivity and offsets are then Int32) while the offsets fit, else copied into 64-bit storage.
vtkSmartPointer<vtkCellArray> cell_array(std::span<const LocalIndex> connectivity, std::size_t npc) {
  const std::size_t n_cells = connectivity.size() / npc;
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  if (connectivity.size() <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    vtkNew<vtkTypeInt32Array> offsets;
    offsets->SetNumberOfTuples(static_cast<vtkIdType>(n_cells + 1));
    std::int32_t* off = offsets->GetPointer(0);
    for (std::size_t c = 0; c <= n_cells; ++c) off[c] = static_cast<std::int32_t>(c * npc);
    vtkNew<vtkTypeInt32Array> conn;
    conn->SetArray(const_cast<std::int32_t*>(connectivity.data()), static_cast<vtkIdType>(connectivity.size()), 1);
    cells->SetData(offsets, conn);
    return cells;
  }
  vtkNew<vtkIdTypeArray> offsets;
  offsets->SetNumberOfTuples(static_cast<vtkIdType>(n_cells + 1));
  vtkIdType* off = offsets->GetPointer(0);
  for (std::size_t c = 0; c <= n_cells; ++c) off[c] = static_cast<vtkIdType>(c * npc);
  vtkNew<vtkIdTypeArray> conn;
  conn->SetNumberOfTuples(static_cast<vtkIdType>(connectivity.size()));
  std::copy(connectivity.begin(), connectivity.end(), conn->GetPointer(0));
  cells->SetData(offsets, conn);
  return cells;
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

const char* byte_order() { return std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian"; }

/// The XML declaration and the VTKFile start tag of a `type` file of format `version` in this machine's byte order;
/// `attributes`: more attributes of the tag, each after a space.
std::string vtk_file_start(const char* type, const char* version, const char* attributes = "") {
  return std::string("<?xml version=\"1.0\"?>\n<VTKFile type=\"") + type + "\" version=\"" + version +
         "\" byte_order=\"" + byte_order() + "\"" + attributes + ">\n";
}

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

// ---- .pvd reading (PvdCollection::load) -------------------------------------------------------------

/// VTK's XML parser (expat underneath), which also remembers the line of every element (in document order) and
/// the first syntax error with its line, for messages "PATH:LINE: ...".
class PvdXmlParser : public vtkXMLDataParser {
 public:
  static PvdXmlParser* New();
  vtkTypeMacro(PvdXmlParser, vtkXMLDataParser);

  std::vector<int> element_lines;
  int error_line = 0;
  std::string error;

 protected:
  PvdXmlParser() = default;
  void StartElement(const char* name, const char** atts) override {
    element_lines.push_back(line());
    vtkXMLDataParser::StartElement(name, atts);
  }
  void ReportXmlParseError() override {
    error_line = line();
    error = XML_ErrorString(XML_GetErrorCode(static_cast<XML_Parser>(this->Parser)));
  }

 private:
  [[nodiscard]] int line() { return static_cast<int>(XML_GetCurrentLineNumber(static_cast<XML_Parser>(this->Parser))); }
};
vtkStandardNewMacro(PvdXmlParser);

/// The checks of a parsed .pvd: VTKFile type="Collection" holding one Collection of DataSet elements, each with a
/// finite `timestep` and a non-empty `file`.
class PvdChecker {
 public:
  PvdChecker(const std::string& path, const std::vector<int>& lines) : path_(path), lines_(lines) {}

  std::vector<std::pair<double, std::string>> entries(vtkXMLDataElement* root) {
    number(root);
    const char* type = root->GetAttribute("type");
    if (std::string_view(root->GetName()) != "VTKFile") vtk_fail(root, "expected <VTKFile type=\"Collection\">");
    if (type == nullptr || std::string_view(type) != "Collection")
      vtk_fail(root, "not a VTK collection (.pvd): VTKFile type is '" + std::string(type ? type : "") + "'");
    if (root->GetNumberOfNestedElements() != 1 || std::string_view(root->GetNestedElement(0)->GetName()) != "Collection")
      vtk_fail(root->GetNumberOfNestedElements() > 0 ? root->GetNestedElement(0) : root, "expected one <Collection>");
    vtkXMLDataElement* collection = root->GetNestedElement(0);
    check_no_text(root);
    check_no_text(collection);
    std::vector<std::pair<double, std::string>> out;
    for (int i = 0; i < collection->GetNumberOfNestedElements(); ++i) {
      vtkXMLDataElement* e = collection->GetNestedElement(i);
      if (std::string_view(e->GetName()) != "DataSet" || e->GetNumberOfNestedElements() != 0)
        vtk_fail(e, "expected <DataSet timestep=\"...\" file=\"...\"/>");
      const char* timestep = e->GetAttribute("timestep");
      const char* file = e->GetAttribute("file");
      if (timestep == nullptr) vtk_fail(e, "DataSet without a timestep attribute");
      if (file == nullptr || *file == '\0') vtk_fail(e, "DataSet without a file attribute");
      out.emplace_back(time(e, timestep), file);
    }
    return out;
  }

 private:
  [[noreturn]] void vtk_fail(vtkXMLDataElement* e, const std::string& what) const {
    const auto at = line_.find(e);
    throw InputError(path_ + ":" + std::to_string(at == line_.end() ? 1 : at->second) + ": " + what);
  }

  /// The elements in document order are the parser's element_lines.
  void number(vtkXMLDataElement* e) {
    line_[e] = next_ < lines_.size() ? lines_[next_] : 1;
    ++next_;
    for (int i = 0; i < e->GetNumberOfNestedElements(); ++i) number(e->GetNestedElement(i));
  }

  void check_no_text(vtkXMLDataElement* e) const {
    const std::string text = e->GetCharacterData() != nullptr ? e->GetCharacterData() : "";
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return;
    const std::size_t last = text.find_last_not_of(" \t\r\n");
    vtk_fail(e, "unexpected text '" + text.substr(first, std::min<std::size_t>(last + 1 - first, 40)) + "' in <" +
                e->GetName() + ">");
  }

  /// The whole value must be a finite number (strtod: overflow gives inf and is rejected; underflow to a
  /// subnormal is the exact value write() printed and is accepted).
  double time(vtkXMLDataElement* e, const std::string& text) const {
    const char* begin = text.c_str();
    char* end = nullptr;
    const double t = std::strtod(begin, &end);
    if (text.empty() || end != begin + text.size() || !std::isfinite(t))
      vtk_fail(e, "timestep=\"" + text + "\" is not a finite number");
    return t;
  }

  const std::string& path_;
  const std::vector<int>& lines_;
  std::map<vtkXMLDataElement*, int> line_;
  std::size_t next_ = 0;
};

}  // namespace

std::string vtk_version() { return VTK_VERSION; }

void write_file_atomically(const std::string& path, const std::string& contents) {
  const fs::path dir = checked_parent_directory(path);
  TempFileGuard guard(temporary_name(path));
  const int fd = ::open(guard.name().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) vtk_fail(path, "cannot create temporary file '" + guard.name() + "': " + errno_text(errno));
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      vtk_fail(path, "write to '" + guard.name() + "' failed: " + errno_text(err));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    ::close(fd);
    vtk_fail(path, "fsync of '" + guard.name() + "' failed: " + errno_text(err));
  }
  if (::close(fd) != 0) vtk_fail(path, "close of '" + guard.name() + "' failed: " + errno_text(errno));
  if (std::rename(guard.name().c_str(), path.c_str()) != 0) {
    vtk_fail(path, "cannot rename '" + guard.name() + "' into place: " + errno_text(errno));
  }
  guard.release();
  fsync_path(path, dir.string(), true);
}

void write_vtu_piece(const std::string& path, const VtuPiece& piece) {
  const fs::path dir = checked_parent_directory(path);
  check_piece(path, piece);

  const std::span<const double> xyz = piece.point_coordinates();
  const std::span<const LocalIndex> connectivity = piece.cells();
  const std::size_t n_points = xyz.size() / 3;
  const auto npc = static_cast<std::size_t>(piece.nodes_per_cell);
  const std::size_t n_cells = connectivity.size() / npc;

  vtkNew<vtkDoubleArray> coords;
  coords->SetName("Points");
  coords->SetNumberOfComponents(3);
  coords->SetArray(const_cast<double*>(xyz.data()), static_cast<vtkIdType>(xyz.size()), 1);
  vtkNew<vtkPoints> points;
  points->SetData(coords);
  const vtkSmartPointer<vtkCellArray> cells = cell_array(connectivity, npc);

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
    vtk_fail(path,
         std::string("vtkXMLUnstructuredGridWriter failed writing '") + guard.name() + "': " + error_code_text(code));
  }
  commit(path, guard, dir);
}

void write_pvtu(const std::string& path, const std::vector<std::string>& piece_files, const VtuPiece& layout) {
  check_arrays(path, layout.point_data, nullptr, "point");
  check_arrays(path, layout.cell_data, nullptr, "cell");
  std::string xml = vtk_file_start("PUnstructuredGrid", "1.0", " header_type=\"UInt64\"");
  xml += "  <PUnstructuredGrid GhostLevel=\"0\">\n";
  append_pdata(xml, "PPointData", layout.point_data);
  append_pdata(xml, "PCellData", layout.cell_data);
  xml += "    <PPoints>\n";
  xml += "      <PDataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\"/>\n";
  xml += "    </PPoints>\n";
  for (const std::string& f : piece_files) {
    if (f.empty()) vtk_fail(path, "empty piece file name");
    xml += "    <Piece Source=\"" + xml_escape(f) + "\"/>\n";
  }
  xml += "  </PUnstructuredGrid>\n";
  xml += "</VTKFile>\n";
  write_file_atomically(path, xml);
}

PvdCollection PvdCollection::load(const std::string& path) {
  PvdCollection pvd(path);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return pvd;
  if (ec) throw InputError(path + ": cannot access the collection: " + ec.message());
  if (st.type() == fs::file_type::directory) throw InputError(path + ": is a directory, not a .pvd collection");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the collection: " + errno_text(errno));
  vtkNew<PvdXmlParser> parser;
  parser->SetStream(&in);
  if (parser->Parse() != 1 || parser->GetRootElement() == nullptr) {
    if (in.bad()) throw InputError(path + ": read error");
    throw InputError(path + ":" + std::to_string(std::max(1, parser->error_line)) + ": not a VTK collection (.pvd): " +
                     (parser->error.empty() ? std::string("VTK's XML parser failed") : parser->error));
  }
  pvd.entries_ = PvdChecker(path, parser->element_lines).entries(parser->GetRootElement());
  return pvd;
}

void PvdCollection::truncate_after(double time) {
  if (!std::isfinite(time)) {
    throw std::invalid_argument("PvdCollection::truncate_after('" + path_ + "'): time " + exact_text(time) +
                                " is not finite");
  }
  const double limit = time + 1e-12 * std::fabs(time);
  std::erase_if(entries_, [limit](const std::pair<double, std::string>& e) { return e.first > limit; });
}

void PvdCollection::write() const {
  std::string xml = vtk_file_start("Collection", "0.1");
  xml += "  <Collection>\n";
  for (const auto& [time, file] : entries_) {
    if (!std::isfinite(time)) vtk_fail(path_, "non-finite time value for '" + file + "'");
    if (file.empty()) vtk_fail(path_, "empty data set file name at time " + exact_text(time));
    xml += "    <DataSet timestep=\"" + exact_text(time) + "\" group=\"\" part=\"0\" file=\"" + xml_escape(file) +
           "\"/>\n";
  }
  xml += "  </Collection>\n";
  xml += "</VTKFile>\n";
  write_file_atomically(path_, xml);
}

}  // namespace edgefem
