// SPDX-License-Identifier: BSD-3-Clause
#include "io/stl.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/error.hpp"

namespace edgefem {
namespace {

/// Welds corners into points (exact coordinate equality).
class Welder {
 public:
  int add(const std::array<double, 3>& p) {
    const auto [it, added] = index_.try_emplace(p, static_cast<int>(surface.points.size()));
    if (added) surface.points.push_back(p);
    return it->second;
  }
  TriangleSurface surface;

 private:
  std::map<std::array<double, 3>, int> index_;
};

TriangleSurface read_binary(const std::string& path, const std::string& bytes, std::uint32_t n) {
  Welder w;
  for (std::uint32_t t = 0; t < n; ++t) {
    const char* record = bytes.data() + 84 + 50 * static_cast<std::size_t>(t) + 12;  // after the normal
    std::array<int, 3> tri{};
    for (int k = 0; k < 3; ++k) {
      float c[3];
      std::memcpy(c, record + 12 * k, sizeof c);
      const std::array<double, 3> p{c[0], c[1], c[2]};
      for (const double v : p)
        if (!std::isfinite(v))
          throw InputError(path + ": binary STL triangle " + std::to_string(t) + " has a coordinate that is not a "
                           "finite number");
      tri[k] = w.add(p);
    }
    w.surface.triangles.push_back(tri);
  }
  return std::move(w.surface);
}

TriangleSurface read_ascii(const std::string& path, const std::string& bytes) {
  std::istringstream in(bytes);
  Welder w;
  std::string line;
  int line_number = 0, corners = 0;
  std::array<int, 3> tri{};
  auto fail = [&](const std::string& what) -> void {
    throw InputError(path + ":" + std::to_string(line_number) + ": ASCII STL: " + what);
  };
  while (std::getline(in, line)) {
    ++line_number;
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    if (word == "vertex") {
      std::array<double, 3> p{};
      std::string text[3];
      for (int k = 0; k < 3; ++k) {
        if (!(words >> text[k])) fail("expected 'vertex x y z', got '" + line + "'");
        char* end = nullptr;
        errno = 0;
        p[k] = std::strtod(text[k].c_str(), &end);
        if (end == text[k].c_str() || *end != '\0' || !std::isfinite(p[k]))
          fail("expected a finite number, got '" + text[k] + "'");
      }
      if (corners == 3) fail("a facet with more than 3 vertices");
      tri[corners++] = w.add(p);
    } else if (word == "endloop" || word == "endfacet") {
      if (word == "endloop") {
        if (corners != 3) fail("a facet with " + std::to_string(corners) + " vertices (expected 3)");
        w.surface.triangles.push_back(tri);
        corners = 0;
      }
    } else if (word != "solid" && word != "facet" && word != "outer" && word != "endsolid") {
      fail("unexpected '" + word + "'");
    }
  }
  return std::move(w.surface);
}

}  // namespace

TriangleSurface read_stl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open STL file: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  TriangleSurface surface;
  std::uint32_t n = 0;
  if (bytes.size() >= 84) std::memcpy(&n, bytes.data() + 80, sizeof n);
  if (bytes.size() >= 84 && bytes.size() == 84 + 50 * static_cast<std::size_t>(n)) {
    surface = read_binary(path, bytes, n);
  } else if (bytes.rfind("solid", 0) == 0) {
    surface = read_ascii(path, bytes);
  } else {
    throw InputError(path + ": not an STL file: neither ASCII (no 'solid' at the start) nor binary (" +
                     std::to_string(bytes.size()) + " bytes, where the triangle count at byte 80 needs " +
                     (bytes.size() >= 84 ? std::to_string(84 + 50 * static_cast<std::size_t>(n)) : "at least 84") +
                     ")");
  }
  if (surface.triangles.empty()) throw InputError(path + ": the STL file has no triangles");
  return surface;
}

}  // namespace edgefem
