// SPDX-License-Identifier: BSD-3-Clause
/// \file gmsh.cpp
/// Gmsh .msh reader (MSH 2.2 and 4.1, ASCII and binary) and the user-mesh sanity check.
///
/// The whole file is read into memory and parsed with a cursor: ASCII numbers with std::from_chars,
/// binary values with memcpy (byte-swapped when the endianness check in $MeshFormat says so).
/// Line numbers are only computed when an error is reported (by counting '\n' up to the offending byte),
/// so the fast path never tracks them.
#include "io/gmsh.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace edgefem {
namespace {

/// A token shown in an error message: at most 40 characters, non-printable bytes as '?'.
std::string display(std::string_view token) {
  std::string out;
  for (const char c : token.substr(0, 40)) out += (c >= 32 && c < 127) ? c : '?';
  if (token.size() > 40) out += "...";
  return out;
}

/// Element type number -> number of nodes for the types we read (0 = not supported).
/// An element type number as int; out-of-range values become -1 (reported as unsupported).
int element_type(std::int64_t type) {
  return type >= 0 && type <= std::numeric_limits<int>::max() ? static_cast<int>(type) : -1;
}

std::string element_type_name(int type) {
  static const char* const names[] = {nullptr,
                                      "2-node line",
                                      "3-node triangle",
                                      "4-node quadrangle",
                                      "4-node tetrahedron",
                                      "8-node hexahedron",
                                      "6-node prism",
                                      "5-node pyramid",
                                      "3-node second-order line",
                                      "6-node second-order triangle",
                                      "9-node second-order quadrangle",
                                      "10-node second-order tetrahedron",
                                      "27-node second-order hexahedron",
                                      "18-node second-order prism",
                                      "14-node second-order pyramid",
                                      "1-node point",
                                      "8-node second-order quadrangle",
                                      "20-node second-order hexahedron",
                                      "15-node second-order prism",
                                      "13-node second-order pyramid"};
  if (type >= 1 && type < static_cast<int>(std::size(names))) return names[type];
  return "unknown";
}

std::string unsupported_type_message(int type) {
  return "unsupported element type " + std::to_string(type) + " (" + element_type_name(type) +
         "); supported: 1 (2-node line), 2 (3-node triangle), 4 (4-node tetrahedron), 15 (point, ignored)";
}

/// Descriptions of what is being read are built only when an error is reported: call sites on hot paths
/// pass a lambda, the others a string.
std::string text_of(const std::string& text) { return text; }
std::string text_of(const char* text) { return text; }
template <class F>
requires std::invocable<const F&> std::string text_of(const F& describe) { return describe(); }

std::string format_xyz(const double* x) {
  std::ostringstream s;
  s.precision(17);
  s << "(" << x[0] << ", " << x[1] << ", " << x[2] << ")";
  return s.str();
}

class MshReader {
 public:
  MshReader(std::string path, std::string data)
      : path_(std::move(path)), data_(std::move(data)), begin_(data_.data()), p_(begin_), end_(begin_ + data_.size()) {}

  Mesh read();

 private:
  // ---- error reporting ------------------------------------------------------------------------
  [[nodiscard]] long line_of(const char* where) const {
    return 1 + static_cast<long>(std::count(begin_, std::min(where, end_), '\n'));
  }
  [[noreturn]] void fail(const char* where, const std::string& what) const {
    if (in_binary_data_) {
      throw InputError(path_ + ": byte " + std::to_string(where - begin_) + " (binary data after line " +
                       std::to_string(binary_line_) + "): " + what);
    }
    throw InputError(path_ + ":" + std::to_string(line_of(where)) + ": " + what);
  }
  [[noreturn]] void fail_eof(const std::string& expected) const {
    fail(end_, "unexpected end of file (truncated?) while reading " + expected);
  }

  // ---- ASCII tokens ---------------------------------------------------------------------------
  static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v'; }
  void skip_space() {
    while (p_ < end_ && is_space(*p_)) ++p_;
  }
  /// Before a record: in ASCII skip to its first character (so errors name its line); binary has no spaces.
  void skip_space_if_ascii() {
    if (!binary_) skip_space();
  }
  std::string_view token() {
    skip_space();
    const char* start = p_;
    while (p_ < end_ && !is_space(*p_)) ++p_;
    return {start, static_cast<std::size_t>(p_ - start)};
  }
  /// Ends the ASCII line before binary data: optional blanks, then exactly one '\n'.
  void end_ascii_line(const std::string& before) {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r')) ++p_;
    if (p_ == end_) fail_eof(before);
    if (*p_ != '\n') fail(p_, "expected the end of the line before " + before + ", got '" + display(token()) + "'");
    ++p_;
  }

  template <class T, class What>
  T ascii_integer(const What& what) {
    skip_space();
    if (p_ == end_) fail_eof(text_of(what));
    const char* start = p_;
    const char* first = (*p_ == '+') ? p_ + 1 : p_;
    T value{};
    const auto [ptr, ec] = std::from_chars(first, end_, value);
    if (ec != std::errc() || (ptr < end_ && !is_space(*ptr))) {
      p_ = start;
      const auto bad = token();
      p_ = start;
      fail(start, "expected " + text_of(what) + ", got '" + display(bad) + "'");
    }
    p_ = ptr;
    return value;
  }
  template <class What>
  double ascii_double(const What& what) {
    skip_space();
    if (p_ == end_) fail_eof(text_of(what));
    const char* start = p_;
    const char* first = (*p_ == '+') ? p_ + 1 : p_;
    double value = 0.0;
    const auto [ptr, ec] = std::from_chars(first, end_, value);
    if (ec == std::errc::result_out_of_range && (ptr == end_ || is_space(*ptr))) {
      p_ = ptr;
      return std::numeric_limits<double>::infinity();  // reported as a non-finite coordinate
    }
    if (ec != std::errc() || (ptr < end_ && !is_space(*ptr))) {
      const auto bad = token();
      p_ = start;
      fail(start, "expected " + text_of(what) + " (a number), got '" + display(bad) + "'");
    }
    p_ = ptr;
    return value;
  }

  // ---- binary values --------------------------------------------------------------------------
  template <class T, class What>
  T binary_value(const What& what) {
    if (end_ - p_ < static_cast<std::ptrdiff_t>(sizeof(T))) fail_eof(text_of(what));
    T value;
    std::memcpy(&value, p_, sizeof(T));
    p_ += sizeof(T);
    if (swap_) {
      unsigned char bytes[sizeof(T)];
      std::memcpy(bytes, &value, sizeof(T));
      std::reverse(bytes, bytes + sizeof(T));
      std::memcpy(&value, bytes, sizeof(T));
    }
    return value;
  }

  // ---- format-independent readers --------------------------------------------------------------
  /// An `int` field (4 bytes in binary).
  template <class What>
  std::int64_t read_int(const What& what) {
    return binary_ ? binary_value<std::int32_t>(what) : ascii_integer<std::int64_t>(what);
  }
  /// A `size_t` field of MSH 4.1 (data-size bytes in binary) or a node/element number of MSH 2.2.
  template <class What>
  std::uint64_t read_size(const What& what) {
    if (!binary_) return ascii_integer<std::uint64_t>([&] { return text_of(what) + " (a non-negative integer)"; });
    if (version_ == 2) {
      const std::int32_t v = binary_value<std::int32_t>(what);
      if (v < 0) fail(p_ - 4, "expected " + text_of(what) + " (a non-negative integer), got " + std::to_string(v));
      return static_cast<std::uint64_t>(v);
    }
    if (size_t_bytes_ == 4) return binary_value<std::uint32_t>(what);
    return binary_value<std::uint64_t>(what);
  }
  template <class What>
  double read_double(const What& what) {
    return binary_ ? binary_value<double>(what) : ascii_double(what);
  }

  // ---- sections -------------------------------------------------------------------------------
  void expect_end(std::string_view name) {
    skip_space();
    const char* start = p_;
    const auto tok = token();
    const std::string expected = "$End" + std::string(name);
    if (tok.empty()) fail_eof("'" + expected + "'");
    if (tok != expected) fail(start, "expected '" + expected + "', got '" + display(tok) + "'");
  }
  void skip_section(std::string_view name, const char* header) {
    const std::string end_tag = "$End" + std::string(name);
    const std::string_view rest(p_, static_cast<std::size_t>(end_ - p_));
    const auto at = rest.find(end_tag);
    if (at == std::string_view::npos) {
      fail(end_, "unexpected end of file (truncated?): section '$" + std::string(name) + "' opened on line " +
                     std::to_string(line_of(header)) + " has no '" + end_tag + "'");
    }
    p_ += at + end_tag.size();
  }
  /// In binary files the section body starts right after the header line.
  void begin_binary_body(const char* header, const std::string& name) {
    if (!binary_) return;
    end_ascii_line("the binary data of $" + name);
    in_binary_data_ = true;
    binary_line_ = line_of(header);
  }
  void end_binary_body() { in_binary_data_ = false; }
  /// The start of a MSH 4.1 $Nodes or $Elements body (`item`: "node" or "element"): the number of blocks and of
  /// items (the minimum and maximum tags are read and not used).
  std::pair<std::uint64_t, std::uint64_t> read_blocks_header(const char* header, const std::string& section,
                                                             const std::string& item) {
    begin_binary_body(header, section);
    const auto n_blocks = read_size("the number of " + item + " blocks");
    const auto n_items = read_size("the number of " + item + "s");
    read_size("the minimum " + item + " tag");
    read_size("the maximum " + item + " tag");
    return {n_blocks, n_items};
  }

  void parse_mesh_format();
  void parse_entities(const char* header);
  void parse_nodes_v2(const char* header);
  void parse_nodes_v4(const char* header);
  void parse_elements_v2(const char* header);
  void parse_elements_v4(const char* header);

  // ---- nodes and elements ---------------------------------------------------------------------
  std::size_t capped_reserve(std::uint64_t count) const {
    // Never trust a count more than the file size allows (a corrupt header must not exhaust memory).
    return static_cast<std::size_t>(std::min<std::uint64_t>(count, data_.size() / 2 + 1));
  }
  void add_node_tag(std::uint64_t tag, const char* where) {
    if (node_tags_.size() >= static_cast<std::size_t>(std::numeric_limits<LocalIndex>::max())) {
      fail(where, "too many nodes for a 32-bit local index");
    }
    node_tags_.push_back(tag);
    node_offsets_.push_back(static_cast<std::uint64_t>(where - begin_));
  }
  void add_node_coords(const double* x, std::size_t node, const char* where) {
    if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2])) {
      fail(where, "node " + std::to_string(node_tags_[node]) + " has a non-finite coordinate " + format_xyz(x) +
                      "; expected finite numbers");
    }
    mesh_.coords.insert(mesh_.coords.end(), x, x + 3);
  }
  void build_node_map(const char* section_end);
  [[nodiscard]] LocalIndex find_node(std::uint64_t tag) const {
    if (dense_) {
      if (tag < dense_min_ || tag - dense_min_ >= dense_map_.size()) return -1;
      return dense_map_[tag - dense_min_];
    }
    const auto it = sparse_map_.find(tag);
    return it == sparse_map_.end() ? -1 : it->second;
  }
  /// Reads the `n` node tags of one element and appends it (local indices, region) to the mesh; points are dropped.
  void read_element_nodes(int type, int n, std::uint64_t element_tag, const char* where, int region);
  void check_unused_nodes();

  std::string path_;
  std::string data_;
  const char* begin_;
  const char* p_;
  const char* end_;

  int version_ = 0;  // 2 or 4
  bool binary_ = false;
  bool swap_ = false;
  int size_t_bytes_ = 8;
  bool in_binary_data_ = false;
  long binary_line_ = 0;

  bool have_nodes_ = false, have_elements_ = false;
  std::unordered_map<std::int64_t, int> entity_physical_[4];  // MSH 4.1: entity tag -> first physical tag

  std::vector<std::uint64_t> node_tags_;     // file order
  std::vector<std::uint64_t> node_offsets_;  // byte offset of each node's record, for messages
  bool dense_ = true;
  std::uint64_t dense_min_ = 0;
  std::vector<LocalIndex> dense_map_;
  std::unordered_map<std::uint64_t, LocalIndex> sparse_map_;

  Mesh mesh_;
};

Mesh MshReader::read() {
  if (data_.empty()) throw InputError(path_ + ":1: not a Gmsh .msh file: the file is empty");
  {
    const char* start = p_;
    skip_space();
    const auto first = token();
    if (first != "$MeshFormat") {
      fail(start, "not a Gmsh .msh file: expected '$MeshFormat', got '" + display(first) + "'");
    }
  }
  parse_mesh_format();
  for (;;) {
    skip_space();
    if (p_ == end_) break;
    const char* header = p_;
    const auto tok = token();
    if (tok.size() < 2 || tok[0] != '$') {
      fail(header, "expected a section header such as '$Nodes' or '$Elements', got '" + display(tok) + "'");
    }
    const std::string name(tok.substr(1));
    if (name == "Nodes") {
      if (have_nodes_) fail(header, "a second $Nodes section (only one is supported)");
      version_ == 2 ? parse_nodes_v2(header) : parse_nodes_v4(header);
      have_nodes_ = true;
    } else if (name == "Elements") {
      if (have_elements_) fail(header, "a second $Elements section (only one is supported)");
      if (!have_nodes_) fail(header, "$Elements section before the $Nodes section");
      version_ == 2 ? parse_elements_v2(header) : parse_elements_v4(header);
      have_elements_ = true;
    } else if (name == "Entities" && version_ == 4) {
      parse_entities(header);
    } else if (name == "PartitionedEntities") {
      fail(header,
           "partitioned .msh files are not supported (found $PartitionedEntities); save the mesh without "
           "partitions, edgefem partitions it itself");
    } else if (name.rfind("End", 0) == 0) {
      fail(header, "'" + display(tok) + "' without a matching '$" + display(name.substr(3)) + "'");
    } else if (name == "MeshFormat") {
      fail(header, "a second $MeshFormat section");
    } else {
      skip_section(name, header);  // $PhysicalNames, $Periodic, $NodeData, ... are not needed
    }
  }
  if (!have_nodes_) fail(end_, "no $Nodes section in the file");
  if (!have_elements_) fail(end_, "no $Elements section in the file");
  check_unused_nodes();
  return std::move(mesh_);
}

void MshReader::parse_mesh_format() {
  const char* at = (skip_space(), p_);
  const auto version = token();
  if (version.empty()) fail_eof("the MSH version");
  if (version == "4.1") {
    version_ = 4;
  } else if (version == "2.2" || version == "2.1" || version == "2" || version == "2.0") {
    version_ = 2;
  } else {
    fail(at, "unsupported MSH version '" + display(version) +
                 "'; supported: 2.2 and 4.1, ASCII or binary (export with `gmsh -format msh41` or msh22)");
  }
  at = (skip_space(), p_);
  const auto file_type = ascii_integer<int>("the file type (0 = ASCII, 1 = binary)");
  if (file_type != 0 && file_type != 1)
    fail(at, "expected file type 0 (ASCII) or 1 (binary), got " + std::to_string(file_type));
  binary_ = file_type == 1;
  at = (skip_space(), p_);
  const auto data_size = ascii_integer<int>("the data size");
  if (version_ == 2 && data_size != 8) {
    fail(at, "unsupported data size " + std::to_string(data_size) + " (MSH 2.2 requires 8, the size of a double)");
  }
  if (version_ == 4 && data_size != 4 && data_size != 8) {
    fail(at, "unsupported data size " + std::to_string(data_size) + " (MSH 4.1: the size of size_t, 4 or 8)");
  }
  size_t_bytes_ = data_size;
  if (binary_) {
    end_ascii_line("the binary endianness check");
    const char* one_at = p_;
    const auto one = binary_value<std::int32_t>("the binary endianness check (the integer 1)");
    if (one != 1) {
      const auto swapped = static_cast<std::int32_t>(((static_cast<std::uint32_t>(one) & 0xffu) << 24) |
                                                     ((static_cast<std::uint32_t>(one) & 0xff00u) << 8) |
                                                     ((static_cast<std::uint32_t>(one) >> 8) & 0xff00u) |
                                                     (static_cast<std::uint32_t>(one) >> 24));
      if (swapped != 1) {
        fail(one_at, "binary endianness check failed: expected the integer 1, got " + std::to_string(one));
      }
      swap_ = true;
    }
  }
  expect_end("MeshFormat");
}

void MshReader::parse_entities(const char* header) {
  begin_binary_body(header, "Entities");
  std::uint64_t counts[4];
  static const char* const kinds[4] = {"points", "curves", "surfaces", "volumes"};
  for (int d = 0; d < 4; ++d) counts[d] = read_size("the number of " + std::string(kinds[d]) + " in $Entities");
  for (int d = 0; d < 4; ++d) {
    const std::string kind = std::string(kinds[d]).substr(0, std::strlen(kinds[d]) - 1);
    for (std::uint64_t e = 0; e < counts[d]; ++e) {
      const char* at = p_;
      const auto tag = read_int(kind + " tag");
      const int n_doubles = d == 0 ? 3 : 6;
      for (int i = 0; i < n_doubles; ++i) read_double(kind + " " + std::to_string(tag) + " coordinates");
      const auto n_physical = read_size("the number of physical tags of " + kind + " " + std::to_string(tag));
      int physical = 0;
      for (std::uint64_t i = 0; i < n_physical; ++i) {
        const auto t = read_int("a physical tag of " + kind + " " + std::to_string(tag));
        if (i == 0) physical = static_cast<int>(t);
      }
      if (d > 0) {
        const auto n_bounding = read_size("the number of bounding entities of " + kind + " " + std::to_string(tag));
        for (std::uint64_t i = 0; i < n_bounding; ++i)
          read_int("a bounding entity of " + kind + " " + std::to_string(tag));
      }
      if (!entity_physical_[d].emplace(tag, physical).second) {
        fail(at, "duplicate " + kind + " entity " + std::to_string(tag) + " in $Entities");
      }
    }
  }
  end_binary_body();
  expect_end("Entities");
}

void MshReader::parse_nodes_v2(const char* header) {
  skip_space();
  const auto n = ascii_integer<std::uint64_t>("the number of nodes (a non-negative integer)");
  begin_binary_body(header, "Nodes");
  node_tags_.reserve(capped_reserve(n));
  node_offsets_.reserve(capped_reserve(n));
  mesh_.coords.reserve(3 * capped_reserve(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    skip_space_if_ascii();
    const char* at = p_;
    auto what = [&] { return "node " + std::to_string(i + 1) + " of " + std::to_string(n); };
    add_node_tag(read_size([&] { return "the tag of " + what(); }), at);
    double x[3];
    for (double& c : x) c = read_double([&] { return "a coordinate of " + what(); });
    add_node_coords(x, node_tags_.size() - 1, at);
  }
  end_binary_body();
  const char* section_end = (skip_space(), p_);
  expect_end("Nodes");
  build_node_map(section_end);
}

void MshReader::parse_nodes_v4(const char* header) {
  const auto [n_blocks, n_nodes] = read_blocks_header(header, "Nodes", "node");
  node_tags_.reserve(capped_reserve(n_nodes));
  node_offsets_.reserve(capped_reserve(n_nodes));
  mesh_.coords.reserve(3 * capped_reserve(n_nodes));
  for (std::uint64_t b = 0; b < n_blocks; ++b) {
    const std::string block = "node block " + std::to_string(b + 1) + " of " + std::to_string(n_blocks);
    const auto dim = read_int("the entity dimension of " + block);
    read_int("the entity tag of " + block);
    const auto parametric = read_int("the parametric flag of " + block);
    const auto count = read_size("the number of nodes in " + block);
    const std::size_t first = node_tags_.size();
    for (std::uint64_t i = 0; i < count; ++i) {
      skip_space_if_ascii();
      const char* at = p_;
      add_node_tag(read_size([&] { return "a node tag of " + block; }), at);
    }
    const int extra = parametric != 0 ? static_cast<int>(std::clamp<std::int64_t>(dim, 0, 3)) : 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      skip_space_if_ascii();
      const char* at = p_;
      auto what = [&] { return "the coordinates of node " + std::to_string(node_tags_[first + i]); };
      double x[3];
      for (double& c : x) c = read_double(what);
      for (int k = 0; k < extra; ++k) read_double([&] { return "the parametric " + what().substr(4); });
      add_node_coords(x, first + i, at);
    }
  }
  end_binary_body();
  const char* section_end = (skip_space(), p_);
  if (node_tags_.size() != n_nodes) {
    fail(section_end, "the $Nodes header announces " + std::to_string(n_nodes) + " nodes, the blocks hold " +
                          std::to_string(node_tags_.size()));
  }
  expect_end("Nodes");
  build_node_map(section_end);
}

void MshReader::build_node_map(const char* section_end) {
  const std::size_t n = node_tags_.size();
  if (n == 0) fail(section_end, "the $Nodes section has no nodes");
  const auto [lo, hi] = std::minmax_element(node_tags_.begin(), node_tags_.end());
  const std::uint64_t range = *hi - *lo;
  dense_ = range < 8 * static_cast<std::uint64_t>(n) + 1024;
  auto duplicate = [&](std::size_t i, LocalIndex previous) {
    in_binary_data_ = binary_;
    const std::string first_where =
        binary_ ? "byte " + std::to_string(node_offsets_[static_cast<std::size_t>(previous)])
                : "line " + std::to_string(line_of(begin_ + node_offsets_[static_cast<std::size_t>(previous)]));
    fail(begin_ + node_offsets_[i],
         "duplicate node tag " + std::to_string(node_tags_[i]) + " (first defined at " + first_where + ")");
  };
  if (dense_) {
    dense_min_ = *lo;
    dense_map_.assign(static_cast<std::size_t>(range) + 1, -1);
    for (std::size_t i = 0; i < n; ++i) {
      LocalIndex& slot = dense_map_[node_tags_[i] - dense_min_];
      if (slot >= 0) duplicate(i, slot);
      slot = static_cast<LocalIndex>(i);
    }
  } else {
    sparse_map_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto [it, inserted] = sparse_map_.emplace(node_tags_[i], static_cast<LocalIndex>(i));
      if (!inserted) duplicate(i, it->second);
    }
  }
}

void MshReader::read_element_nodes(int type, int n, std::uint64_t element_tag, const char* where, int region) {
  LocalIndex local[4];
  for (int k = 0; k < n; ++k) {
    const auto tag = read_size([&] { return "a node of element " + std::to_string(element_tag); });
    const LocalIndex v = find_node(tag);
    if (v < 0) {
      fail(where, "element " + std::to_string(element_tag) + " references node " + std::to_string(tag) +
                      ", which is not in the $Nodes section (unknown node)");
    }
    local[k] = v;
  }
  switch (type) {
    case 1:
      mesh_.lines.insert(mesh_.lines.end(), local, local + 2);
      mesh_.line_region.push_back(region);
      break;
    case 2:
      mesh_.triangles.insert(mesh_.triangles.end(), local, local + 3);
      mesh_.triangle_region.push_back(region);
      break;
    case 4:
      mesh_.tets.insert(mesh_.tets.end(), local, local + 4);
      mesh_.tet_region.push_back(region);
      break;
    default: break;  // points
  }
  if (mesh_.tets.size() / 4 > static_cast<std::size_t>(std::numeric_limits<LocalIndex>::max()) ||
      mesh_.triangles.size() / 3 > static_cast<std::size_t>(std::numeric_limits<LocalIndex>::max())) {
    fail(where, "too many elements for a 32-bit local index");
  }
}

void MshReader::parse_elements_v2(const char* header) {
  skip_space();
  const auto n = ascii_integer<std::uint64_t>("the number of elements (a non-negative integer)");
  begin_binary_body(header, "Elements");
  mesh_.tets.reserve(4 * capped_reserve(n / 2));
  if (!binary_) {
    for (std::uint64_t i = 0; i < n; ++i) {
      skip_space();
      const char* at = p_;
      const auto tag = read_size([&] {
        return "the number of element " + std::to_string(i + 1) + " of " + std::to_string(n);
      });
      auto element = [&] { return "element " + std::to_string(tag); };
      const char* type_at = (skip_space(), p_);
      const int type = element_type(read_int([&] { return "the type of " + element(); }));
      const int n_nodes = gmsh_nodes_per_element(type);
      if (n_nodes == 0) fail(type_at, element() + ": " + unsupported_type_message(type));
      const auto n_tags = read_int([&] { return "the number of tags of " + element(); });
      if (n_tags < 0) fail(at, element() + ": negative number of tags");
      int region = 0;
      for (std::int64_t k = 0; k < n_tags; ++k) {
        const auto t = read_int([&] { return "a tag of " + element(); });
        if (k == 0) region = static_cast<int>(t);
      }
      read_element_nodes(type, n_nodes, tag, at, region);
    }
  } else {
    std::uint64_t done = 0;
    while (done < n) {
      const char* at = p_;
      const int type = element_type(read_int("an element block header (type)"));
      const auto count = read_int("an element block header (count)");
      const auto n_tags = read_int("an element block header (number of tags)");
      const int n_nodes = gmsh_nodes_per_element(type);
      if (n_nodes == 0) fail(at, unsupported_type_message(type));
      if (count <= 0 || static_cast<std::uint64_t>(count) > n - done || n_tags < 0 || n_tags > 1000) {
        fail(at, "corrupt element block header (type " + std::to_string(type) + ", " + std::to_string(count) +
                     " elements, " + std::to_string(n_tags) + " tags) with " + std::to_string(n - done) +
                     " elements left");
      }
      for (std::int64_t e = 0; e < count; ++e) {
        const char* element_at = p_;
        const auto tag = read_size("an element number");
        int region = 0;
        for (std::int64_t k = 0; k < n_tags; ++k) {
          const auto t = read_int([&] { return "a tag of element " + std::to_string(tag); });
          if (k == 0) region = static_cast<int>(t);
        }
        read_element_nodes(type, n_nodes, tag, element_at, region);
      }
      done += static_cast<std::uint64_t>(count);
    }
  }
  end_binary_body();
  expect_end("Elements");
}

void MshReader::parse_elements_v4(const char* header) {
  const auto [n_blocks, n_elements] = read_blocks_header(header, "Elements", "element");
  mesh_.tets.reserve(4 * capped_reserve(n_elements / 2));
  std::uint64_t total = 0;
  for (std::uint64_t b = 0; b < n_blocks; ++b) {
    const std::string block = "element block " + std::to_string(b + 1) + " of " + std::to_string(n_blocks);
    skip_space_if_ascii();
    const char* at = p_;
    const auto dim = read_int("the entity dimension of " + block);
    const auto entity = read_int("the entity tag of " + block);
    const int type = element_type(read_int("the element type of " + block));
    const auto count = read_size("the number of elements in " + block);
    const int n_nodes = gmsh_nodes_per_element(type);
    if (n_nodes == 0) fail(at, block + ": " + unsupported_type_message(type));
    int region = 0;
    if (dim >= 0 && dim <= 3) {
      const auto it = entity_physical_[dim].find(entity);
      if (it != entity_physical_[dim].end()) region = it->second;
    }
    for (std::uint64_t e = 0; e < count; ++e) {
      skip_space_if_ascii();
      const char* element_at = p_;
      const auto tag = read_size([&] { return "an element tag in " + block; });
      read_element_nodes(type, n_nodes, tag, element_at, region);
    }
    total += count;
  }
  end_binary_body();
  const char* section_end = (skip_space(), p_);
  if (total != n_elements) {
    fail(section_end, "the $Elements header announces " + std::to_string(n_elements) + " elements, the blocks hold " +
                          std::to_string(total));
  }
  expect_end("Elements");
}

void MshReader::check_unused_nodes() {
  const std::vector<LocalIndex>* cells = nullptr;
  const char* kind = nullptr;
  if (!mesh_.tets.empty()) {
    cells = &mesh_.tets, kind = "tetrahedron";
  } else if (!mesh_.triangles.empty()) {
    cells = &mesh_.triangles, kind = "triangle";
  } else if (!mesh_.lines.empty()) {
    cells = &mesh_.lines, kind = "line";
  } else {
    throw InputError(path_ + ": the mesh has no tetrahedra, triangles or lines");
  }
  std::vector<char> used(node_tags_.size(), 0);
  for (const LocalIndex v : *cells) used[static_cast<std::size_t>(v)] = 1;
  const auto it = std::find(used.begin(), used.end(), 0);
  if (it == used.end()) return;
  const auto i = static_cast<std::size_t>(it - used.begin());
  in_binary_data_ = binary_;
  binary_line_ = 0;
  const std::string where = binary_ ? path_ + ": byte " + std::to_string(node_offsets_[i])
                                    : path_ + ":" + std::to_string(line_of(begin_ + node_offsets_[i]));
  throw InputError(where + ": node " + std::to_string(node_tags_[i]) + " is not used by any " + kind +
                   " (unused vertex; remove it from the mesh)");
}

}  // namespace

Mesh read_gmsh(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": cannot read mesh file: it is a directory");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw InputError(path + ": cannot open mesh file: " + std::strerror(errno));
  std::string data;
  if (std::fseek(file.get(), 0, SEEK_END) == 0) {
    const long size = std::ftell(file.get());
    if (size > 0) data.reserve(static_cast<std::size_t>(size));
    std::rewind(file.get());
  }
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) data.append(buffer, got);
  if (std::ferror(file.get())) throw InputError(path + ": error while reading mesh file: " + std::strerror(errno));
  MshReader reader(path, std::move(data));
  return reader.read();
}

namespace {

[[noreturn]] void mesh_error(const std::string& source, const std::string& what) {
  throw InputError(source + ": " + what);
}

std::string cell_vertices(const LocalIndex* v, int n) {
  std::ostringstream s;
  s << "(vertices";
  for (int k = 0; k < n; ++k) s << ' ' << v[k];
  s << ')';
  return s.str();
}

void check_cell_indices(const std::vector<LocalIndex>& cells, int per_cell, std::size_t n_regions, const char* kind,
                        LocalIndex n_vertices, const std::string& source) {
  if (cells.size() % static_cast<std::size_t>(per_cell) != 0) {
    mesh_error(source, std::string("the ") + kind + " array length " + std::to_string(cells.size()) +
                           " is not a multiple of " + std::to_string(per_cell));
  }
  const std::size_t n_cells = cells.size() / static_cast<std::size_t>(per_cell);
  if (n_regions != n_cells) {
    mesh_error(source,
               std::to_string(n_cells) + " " + kind + " cells but " + std::to_string(n_regions) + " region tags");
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i] < 0 || cells[i] >= n_vertices) {
      const std::size_t c = i / static_cast<std::size_t>(per_cell);
      mesh_error(source, std::string(kind) + " " + std::to_string(c) + " " +
                             cell_vertices(&cells[c * static_cast<std::size_t>(per_cell)], per_cell) +
                             " references vertex " + std::to_string(cells[i]) + ", but the mesh has " +
                             std::to_string(n_vertices) + " vertices");
    }
  }
}

template <std::size_t N>
void check_duplicate_cells(const std::vector<LocalIndex>& cells, const char* kind, const std::string& source) {
  const std::size_t n = cells.size() / N;
  std::vector<std::pair<std::array<LocalIndex, N>, LocalIndex>> sorted(n);
  for (std::size_t c = 0; c < n; ++c) {
    std::copy_n(&cells[N * c], N, sorted[c].first.begin());
    std::sort(sorted[c].first.begin(), sorted[c].first.end());
    sorted[c].second = static_cast<LocalIndex>(c);
  }
  std::sort(sorted.begin(), sorted.end());
  const auto same = std::adjacent_find(sorted.begin(), sorted.end(),
                                       [](const auto& a, const auto& b) { return a.first == b.first; });
  if (same != sorted.end()) {
    const LocalIndex first = same->second, second = std::next(same)->second;
    mesh_error(source, std::string(kind) + " " + std::to_string(second) + " " +
                           cell_vertices(&cells[N * static_cast<std::size_t>(second)], static_cast<int>(N)) +
                           " duplicates " + kind + " " + std::to_string(first) +
                           " (a cell listed twice, e.g. an element in two physical groups of a MSH 2.2 file)");
  }
}

/// Coordinates: 3 per vertex, at most a 32-bit local index of vertices, all finite.
void check_coordinates(const Mesh& mesh, const std::string& source) {
  if (mesh.coords.size() % 3 != 0) mesh_error(source, "the coordinate array length is not a multiple of 3");
  if (mesh.coords.size() / 3 > static_cast<std::size_t>(std::numeric_limits<LocalIndex>::max())) {
    mesh_error(source, "too many vertices for a 32-bit local index");
  }
  const LocalIndex n = mesh.n_vertices();
  for (LocalIndex v = 0; v < n; ++v) {
    const double* x = &mesh.coords[3 * static_cast<std::size_t>(v)];
    if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2])) {
      mesh_error(source, "vertex " + std::to_string(v) + " has a non-finite coordinate " + format_xyz(x));
    }
  }
}

/// Every vertex must belong to a cell of the mesh's top dimension (the cells that carry stiffness); a vertex only
/// on a boundary facet or a point would make the system singular.
void check_unused_vertices(const Mesh& mesh, const std::string& source) {
  const std::vector<LocalIndex>* cells = &mesh.tets;
  const char* kind = "tetrahedron";
  if (mesh.tets.empty()) cells = &mesh.triangles, kind = "triangle";
  if (cells->empty()) cells = &mesh.lines, kind = "line";
  if (cells->empty()) mesh_error(source, "the mesh has no tetrahedra, triangles or lines");
  std::vector<char> used(static_cast<std::size_t>(mesh.n_vertices()), 0);
  for (const LocalIndex v : *cells) used[static_cast<std::size_t>(v)] = 1;
  if (const auto it = std::find(used.begin(), used.end(), 0); it != used.end()) {
    mesh_error(source,
               "vertex " + std::to_string(it - used.begin()) + " is not used by any " + kind + " (unused vertex)");
  }
}

/// Every tetrahedron: a finite volume, not degenerate (|6V| > 1e-12 h^3), not inverted.
void check_tet_shapes(const Mesh& mesh, const std::string& source) {
  auto point = [&](LocalIndex v) { return &mesh.coords[3 * static_cast<std::size_t>(v)]; };
  for (LocalIndex t = 0; t < mesh.n_tets(); ++t) {
    const LocalIndex* v = &mesh.tets[4 * static_cast<std::size_t>(t)];
    const double* x[4] = {point(v[0]), point(v[1]), point(v[2]), point(v[3])};
    double e[6][3];
    static constexpr int pairs[6][2] = {{1, 0}, {2, 0}, {3, 0}, {2, 1}, {3, 1}, {3, 2}};
    double longest2 = 0.0;
    for (int k = 0; k < 6; ++k) {
      for (int c = 0; c < 3; ++c) e[k][c] = x[pairs[k][0]][c] - x[pairs[k][1]][c];
      longest2 = std::max(longest2, e[k][0] * e[k][0] + e[k][1] * e[k][1] + e[k][2] * e[k][2]);
    }
    // 6V = det[x1-x0, x2-x0, x3-x0] (columns), positive for a correctly oriented tet.
    const double six_volume = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                              e[1][0] * (e[0][1] * e[2][2] - e[0][2] * e[2][1]) +
                              e[2][0] * (e[0][1] * e[1][2] - e[0][2] * e[1][1]);
    const double longest = std::sqrt(longest2);
    if (!std::isfinite(six_volume) || !std::isfinite(longest * longest * longest)) {
      std::ostringstream s;
      s << "tetrahedron " << t << " " << cell_vertices(v, 4) << ": its volume overflows (6*volume = " << six_volume
        << ", longest edge " << longest << "; expected coordinates whose cubes are finite, |x| < 1e100)";
      mesh_error(source, s.str());
    }
    if (std::abs(six_volume) <= 1e-12 * longest * longest * longest) {
      std::ostringstream s;
      s << "tetrahedron " << t << " " << cell_vertices(v, 4) << " is degenerate: 6*volume = " << six_volume
        << " with longest edge " << longest << " (|6V| <= 1e-12 h^3)";
      mesh_error(source, s.str());
    }
    if (six_volume < 0.0) {
      std::ostringstream s;
      s << "tetrahedron " << t << " " << cell_vertices(v, 4) << " is inverted: 6*volume = " << six_volume
        << " < 0 (expected det[x1-x0, x2-x0, x3-x0] > 0)";
      mesh_error(source, s.str());
    }
  }
}

/// Every triangle: a finite area, not degenerate (2A > 1e-12 h^2).
void check_triangle_shapes(const Mesh& mesh, const std::string& source) {
  auto point = [&](LocalIndex v) { return &mesh.coords[3 * static_cast<std::size_t>(v)]; };
  for (LocalIndex t = 0; t < mesh.n_triangles(); ++t) {
    const LocalIndex* v = &mesh.triangles[3 * static_cast<std::size_t>(t)];
    const double* x[3] = {point(v[0]), point(v[1]), point(v[2])};
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; ++k) a[k] = x[1][k] - x[0][k], b[k] = x[2][k] - x[0][k], c[k] = x[2][k] - x[1][k];
    const double cross[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    const double twice_area = std::sqrt(cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]);
    const double longest2 = std::max({a[0] * a[0] + a[1] * a[1] + a[2] * a[2], b[0] * b[0] + b[1] * b[1] + b[2] * b[2],
                                      c[0] * c[0] + c[1] * c[1] + c[2] * c[2]});
    if (!std::isfinite(twice_area) || !std::isfinite(longest2)) {
      std::ostringstream s;
      s << "triangle " << t << " " << cell_vertices(v, 3) << ": its area overflows (2*area = " << twice_area
        << "; expected coordinates whose squares are finite, |x| < 1e150)";
      mesh_error(source, s.str());
    }
    if (twice_area <= 1e-12 * longest2) {
      std::ostringstream s;
      s << "triangle " << t << " " << cell_vertices(v, 3) << " is degenerate: 2*area = " << twice_area
        << " with longest edge " << std::sqrt(longest2) << " (2A <= 1e-12 h^2)";
      mesh_error(source, s.str());
    }
  }
}

}  // namespace

void check_mesh(const Mesh& mesh, const std::string& source) {
  check_coordinates(mesh, source);
  const LocalIndex n = mesh.n_vertices();
  check_cell_indices(mesh.tets, 4, mesh.tet_region.size(), "tetrahedron", n, source);
  check_cell_indices(mesh.triangles, 3, mesh.triangle_region.size(), "triangle", n, source);
  check_cell_indices(mesh.lines, 2, mesh.line_region.size(), "line", n, source);
  check_unused_vertices(mesh, source);
  // Duplicate cells (MSH 2.2 repeats an element once per physical group it belongs to) would count twice.
  check_duplicate_cells<4>(mesh.tets, "tetrahedron", source);
  if (mesh.tets.empty()) check_duplicate_cells<3>(mesh.triangles, "triangle", source);
  check_tet_shapes(mesh, source);
  if (mesh.tets.empty()) check_triangle_shapes(mesh, source);
}

int gmsh_nodes_per_element(int type) {
  switch (type) {
    case 1: return 2;   // line
    case 2: return 3;   // triangle
    case 4: return 4;   // tetrahedron
    case 15: return 1;  // point (ignored)
    default: return 0;
  }
}

}  // namespace edgefem
