// SPDX-License-Identifier: BSD-3-Clause
/// \file gmsh_counts.cpp
/// gmsh_header_counts: the section and block headers of a .msh file, the data jumped over (gmsh_counts.hpp).
#include "io/gmsh_counts.hpp"

#include <sys/types.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

#include "io/gmsh.hpp"

namespace edgefem {
namespace {

/// A file read forwards: lines, raw values, jumps, and scans for a token or a number of line ends.
class Scanner {
 public:
  explicit Scanner(const std::string& path) : f_(std::fopen(path.c_str(), "rb")) {
    if (f_ == nullptr) return;
    if (fseeko(f_, 0, SEEK_END) == 0) size_ = static_cast<std::uint64_t>(ftello(f_));
    fseeko(f_, 0, SEEK_SET);
  }
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;
  ~Scanner() {
    if (f_ != nullptr) std::fclose(f_);
  }
  [[nodiscard]] bool open() const { return f_ != nullptr; }
  [[nodiscard]] std::uint64_t size() const { return size_; }

  /// The next line without its end (at most 4096 characters kept); false at the end of the file.
  bool line(std::string& out) {
    out.clear();
    int c = 0;
    while ((c = std::fgetc(f_)) != EOF && c != '\n')
      if (out.size() < 4096) out.push_back(static_cast<char>(c));
    if (c == EOF && out.empty()) return false;
    while (!out.empty() && (out.back() == '\r' || out.back() == ' ')) out.pop_back();
    return true;
  }
  /// The next non-empty line.
  bool text_line(std::string& out) {
    while (line(out))
      if (!out.empty()) return true;
    return false;
  }
  template <class T>
  bool value(T& v) {
    return std::fread(&v, sizeof v, 1, f_) == 1;
  }
  bool jump(std::uint64_t bytes) {
    const auto here = static_cast<std::uint64_t>(ftello(f_));
    if (bytes > size_ - std::min(size_, here)) return false;
    return fseeko(f_, static_cast<off_t>(here + bytes), SEEK_SET) == 0;
  }
  /// Moves past the next occurrence of `token`.
  bool skip_past(const std::string& token) {
    std::vector<char> chunk(1 << 20);
    std::string window;
    for (;;) {
      const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f_);
      if (n == 0) return false;
      const std::string joined = window + std::string(chunk.data(), n);
      const auto at = joined.find(token);
      if (at != std::string::npos) {
        const auto back = static_cast<off_t>(joined.size() - at - token.size());
        return fseeko(f_, -back, SEEK_CUR) == 0;
      }
      window = joined.substr(joined.size() > token.size() ? joined.size() - token.size() : 0);
    }
  }
  /// Moves past the next `count` line ends.
  bool skip_lines(std::uint64_t count) {
    std::vector<char> chunk(1 << 20);
    while (count > 0) {
      const auto start = ftello(f_);
      const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f_);
      if (n == 0) return false;
      std::size_t at = 0;
      while (count > 0 && at < n) {
        const void* nl = std::memchr(chunk.data() + at, '\n', n - at);
        if (nl == nullptr) break;
        at = static_cast<std::size_t>(static_cast<const char*>(nl) - chunk.data()) + 1;
        --count;
      }
      if (count == 0) return fseeko(f_, start + static_cast<off_t>(at), SEEK_SET) == 0;
    }
    return true;
  }

 private:
  std::FILE* f_ = nullptr;
  std::uint64_t size_ = 0;
};

void add_block(GmshCounts& c, int type, std::uint64_t count) {
  if (type == 4) c.tets += static_cast<std::int64_t>(count);
  if (type == 2) c.triangles += static_cast<std::int64_t>(count);
}

/// MSH 4.1 binary $Nodes / $Elements bodies: the block headers, the data jumped over.
bool binary_nodes(Scanner& s, GmshCounts& c) {
  std::uint64_t head[4];
  for (auto& h : head)
    if (!s.value(h)) return false;
  c.nodes = static_cast<std::int64_t>(head[1]);
  for (std::uint64_t b = 0; b < head[0]; ++b) {
    std::int32_t dim = 0, tag = 0, parametric = 0;
    std::uint64_t count = 0;
    if (!s.value(dim) || !s.value(tag) || !s.value(parametric) || !s.value(count) || count > s.size()) return false;
    const std::uint64_t stride = 8 * (3 + (parametric != 0 ? std::min(std::max(dim, 0), 3) : 0));
    if (!s.jump(count * (8 + stride))) return false;
  }
  return true;
}

bool binary_elements(Scanner& s, GmshCounts& c) {
  std::uint64_t head[4];
  for (auto& h : head)
    if (!s.value(h)) return false;
  c.elements = static_cast<std::int64_t>(head[1]);
  for (std::uint64_t b = 0; b < head[0]; ++b) {
    std::int32_t dim = 0, tag = 0, type = 0;
    std::uint64_t count = 0;
    if (!s.value(dim) || !s.value(tag) || !s.value(type) || !s.value(count) || count > s.size()) return false;
    if (gmsh_nodes_per_element(type) == 0 ||
        !s.jump(count * 8 * (1 + static_cast<std::uint64_t>(gmsh_nodes_per_element(type)))))
      return false;
    add_block(c, type, count);
  }
  c.by_type = true;
  return true;
}

/// MSH 4.1 ASCII $Elements body: the block header lines, the element lines counted, not parsed.
bool ascii_elements(Scanner& s, GmshCounts& c) {
  std::string text;
  std::uint64_t blocks = 0, elements = 0;
  if (!s.text_line(text) || !(std::istringstream(text) >> blocks >> elements)) return false;
  c.elements = static_cast<std::int64_t>(elements);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    long long dim = 0, tag = 0, type = 0, count = -1;
    if (!s.text_line(text) || !(std::istringstream(text) >> dim >> tag >> type >> count) || count < 0) return false;
    if (!s.skip_lines(static_cast<std::uint64_t>(count))) return false;
    add_block(c, static_cast<int>(type), static_cast<std::uint64_t>(count));
  }
  c.by_type = true;
  return true;
}

/// A text count of `n` items of at least 8 bytes each that the file cannot hold is a damaged header.
bool plausible(const Scanner& s, long long n) { return n >= 0 && static_cast<std::uint64_t>(n) <= s.size() / 8; }

}  // namespace

std::optional<GmshCounts> gmsh_header_counts(const std::string& path) {
  Scanner s(path);
  std::string text;
  if (!s.open() || !s.text_line(text) || text != "$MeshFormat" || !s.text_line(text)) return std::nullopt;
  double version = 0;
  int binary = 0;
  if (!(std::istringstream(text) >> version >> binary)) return std::nullopt;
  const bool v4 = version >= 4.0;
  if (!s.skip_past("$EndMeshFormat")) return std::nullopt;
  GmshCounts c;
  bool have_nodes = false;
  while (s.text_line(text)) {
    if (text.empty() || text[0] != '$') return std::nullopt;
    const std::string section = text.substr(1);
    if (section == "Nodes") {
      long long first = 0, second = 0;
      if (v4 && binary != 0) {
        if (!binary_nodes(s, c)) return std::nullopt;
      } else {
        if (!s.text_line(text) || !(std::istringstream(text) >> first)) return std::nullopt;
        if (v4 && !(std::istringstream(text) >> first >> second)) return std::nullopt;
        c.nodes = v4 ? second : first;
        if (!plausible(s, c.nodes)) return std::nullopt;
      }
      if (!s.skip_past("$EndNodes")) return std::nullopt;
      have_nodes = true;
    } else if (section == "Elements") {
      if (v4) {
        if (!(binary != 0 ? binary_elements(s, c) : ascii_elements(s, c))) return std::nullopt;
      } else {
        long long n = 0;
        if (!s.text_line(text) || !(std::istringstream(text) >> n) || !plausible(s, n)) return std::nullopt;
        c.elements = n;
      }
      if (have_nodes) return c;
      if (!s.skip_past("$EndElements")) return std::nullopt;
    } else if (!s.skip_past("$End" + section)) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace edgefem
