// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file msh_writer.hpp
/// A tiny Gmsh MSH writer for the reader's tests (and fuzz seeds): a model of entities with physical tags, nodes with
/// sparse tags and typed elements, written as MSH 2.2 or 4.1, ASCII or binary, native or byte-swapped.
/// Test-only, header-only; independent of io/gmsh.cpp.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace edgefem::testing {

/// An entity (point, curve, surface, volume) and its physical tags.
struct TestEntity {
  int dim, tag;
  std::vector<int> physicals;
};
/// A node: its (sparse) tag, position and owning entity.
struct TestNode {
  std::uint64_t tag;
  std::array<double, 3> x;
  int dim, entity;  // owning entity (MSH 4.1 node blocks)
};
/// An element: Gmsh type, dimension and entity of its block, node tags.
struct TestElement {
  int type, dim, entity;
  std::vector<std::uint64_t> nodes;
};
/// A whole model; physical(dim, entity) is the first physical tag of an entity (0 if none).
struct TestModel {
  std::vector<TestEntity> entities;
  std::vector<TestNode> nodes;
  std::vector<TestElement> elements;

  [[nodiscard]] int physical(int dim, int entity) const {
    for (const auto& e : entities) {
      if (e.dim == dim && e.tag == entity) return e.physicals.empty() ? 0 : e.physicals.front();
    }
    return 0;
  }
};

/// Two positively oriented tets sharing a face, boundary triangles (one without a physical tag),
/// a line and a point element; sparse, unsorted node tags.
inline TestModel two_tet_model() {
  TestModel m;
  m.entities = {{0, 1, {31}}, {1, 1, {21}}, {2, 1, {11}}, {2, 2, {12}}, {2, 3, {}}, {3, 1, {1, 5}}, {3, 2, {2}}};
  m.nodes = {{10, {0, 0, 0}, 0, 1},
             {20, {1, 0, 0}, 3, 1},
             {35, {0, 1, 0}, 3, 1},
             {7, {0, 0, 1}, 3, 1},
             {100, {1, 1, 1}, 3, 2}};
  m.elements = {{15, 0, 1, {10}},           {1, 1, 1, {10, 20}},        {2, 2, 1, {10, 20, 35}},
                {2, 2, 1, {10, 35, 7}},     {2, 2, 2, {20, 35, 100}},   {2, 2, 3, {10, 20, 7}},
                {4, 3, 1, {10, 20, 35, 7}}, {4, 3, 2, {20, 35, 7, 100}}};
  return m;
}

/// A file being written: text, decimal numbers with 17 digits, raw binary values (byte-swapped on request).
class Out {
 public:
  explicit Out(bool swap) : swap_(swap) {}
  template <class T>
  void bin(T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    if (swap_) std::reverse(bytes, bytes + sizeof(T));
    s_.append(bytes, sizeof(T));
  }
  Out& operator<<(const std::string& text) {
    s_ += text;
    return *this;
  }
  template <class T>
  Out& num(T value) {
    std::ostringstream o;
    o.precision(17);
    o << value;
    s_ += o.str();
    return *this;
  }
  [[nodiscard]] const std::string& str() const { return s_; }

 private:
  bool swap_;
  std::string s_;
};

/// The $PhysicalNames section every written file carries.
inline const char* const physical_names = "$PhysicalNames\n2\n3 1 \"left part\"\n2 11 \"x_min\"\n$EndPhysicalNames\n";

/// m as an MSH 2.2 file, ASCII or binary (byte-swapped binary with `swap`).
inline std::string write_msh22(const TestModel& m, bool binary, bool swap = false) {
  Out out(swap);
  out << "$MeshFormat\n2.2 " << (binary ? "1" : "0") << " 8\n";
  if (binary) out.bin<std::int32_t>(1), out << "\n";
  out << "$EndMeshFormat\n" << physical_names;
  out << "$Nodes\n" << std::to_string(m.nodes.size()) << "\n";
  for (const auto& n : m.nodes) {
    if (binary) {
      out.bin<std::int32_t>(static_cast<std::int32_t>(n.tag));
      for (const double c : n.x) out.bin(c);
    } else {
      out.num(n.tag) << " ";
      out.num(n.x[0]) << " ";
      out.num(n.x[1]) << " ";
      out.num(n.x[2]) << "\n";
    }
  }
  if (binary) out << "\n";
  out << "$EndNodes\n$Elements\n" << std::to_string(m.elements.size()) << "\n";
  for (std::size_t i = 0; i < m.elements.size();) {
    std::size_t j = i;  // blocks of consecutive elements of one type (binary headers)
    while (j < m.elements.size() && m.elements[j].type == m.elements[i].type) ++j;
    if (binary) {
      out.bin<std::int32_t>(m.elements[i].type);
      out.bin<std::int32_t>(static_cast<std::int32_t>(j - i));
      out.bin<std::int32_t>(2);
    }
    for (std::size_t e = i; e < j; ++e) {
      const auto& el = m.elements[e];
      const int tags[2] = {m.physical(el.dim, el.entity), el.entity};
      if (binary) {
        out.bin<std::int32_t>(static_cast<std::int32_t>(e + 1));
        for (const int t : tags) out.bin<std::int32_t>(t);
        for (const auto v : el.nodes) out.bin<std::int32_t>(static_cast<std::int32_t>(v));
      } else {
        out.num(e + 1) << " ";
        out.num(el.type) << " 2 ";
        out.num(tags[0]) << " ";
        out.num(tags[1]);
        for (const auto v : el.nodes) out << " ", out.num(v);
        out << "\n";
      }
    }
    i = j;
  }
  if (binary) out << "\n";
  out << "$EndElements\n";
  return out.str();
}

/// m as an MSH 4.1 file (with $Entities and node/element blocks), ASCII or binary (byte-swapped with `swap`).
inline std::string write_msh41(const TestModel& m, bool binary, bool swap = false) {
  Out out(swap);
  auto size = [&](std::uint64_t v, const char* sep = " ") {
    if (binary) {
      out.bin<std::uint64_t>(v);
    } else {
      out.num(v) << sep;
    }
  };
  auto integer = [&](std::int64_t v, const char* sep = " ") {
    if (binary) {
      out.bin<std::int32_t>(static_cast<std::int32_t>(v));
    } else {
      out.num(v) << sep;
    }
  };
  auto real = [&](double v, const char* sep = " ") {
    if (binary) {
      out.bin<double>(v);
    } else {
      out.num(v) << sep;
    }
  };
  out << "$MeshFormat\n4.1 " << (binary ? "1" : "0") << " 8\n";
  if (binary) out.bin<std::int32_t>(1), out << "\n";
  out << "$EndMeshFormat\n" << physical_names << "$Entities\n";
  for (int d = 0; d < 4; ++d) {
    size(static_cast<std::uint64_t>(std::count_if(m.entities.begin(), m.entities.end(),
                                                  [&](const TestEntity& e) { return e.dim == d; })),
         d == 3 ? "\n" : " ");
  }
  for (int d = 0; d < 4; ++d) {
    for (const auto& e : m.entities) {
      if (e.dim != d) continue;
      integer(e.tag);
      for (int k = 0; k < (d == 0 ? 3 : 6); ++k) real(k < 3 ? 0.0 : 1.0);
      size(e.physicals.size());
      for (const int p : e.physicals) integer(p);
      if (d > 0) size(0);  // no bounding entities
      if (!binary) out << "\n";
    }
  }
  if (binary) out << "\n";
  out << "$EndEntities\n$Nodes\n";
  std::vector<std::pair<std::size_t, std::size_t>> node_blocks;
  for (std::size_t i = 0; i < m.nodes.size();) {
    std::size_t j = i;
    while (j < m.nodes.size() && m.nodes[j].dim == m.nodes[i].dim && m.nodes[j].entity == m.nodes[i].entity) ++j;
    node_blocks.emplace_back(i, j);
    i = j;
  }
  std::uint64_t min_tag = std::numeric_limits<std::uint64_t>::max(), max_tag = 0;
  for (const auto& n : m.nodes) min_tag = std::min(min_tag, n.tag), max_tag = std::max(max_tag, n.tag);
  size(node_blocks.size()), size(m.nodes.size()), size(min_tag), size(max_tag, "\n");
  for (const auto& [i, j] : node_blocks) {
    integer(m.nodes[i].dim), integer(m.nodes[i].entity), integer(0), size(j - i, "\n");
    for (std::size_t k = i; k < j; ++k) size(m.nodes[k].tag, "\n");
    for (std::size_t k = i; k < j; ++k) real(m.nodes[k].x[0]), real(m.nodes[k].x[1]), real(m.nodes[k].x[2], "\n");
  }
  if (binary) out << "\n";
  out << "$EndNodes\n$Elements\n";
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (std::size_t i = 0; i < m.elements.size();) {
    std::size_t j = i;
    const auto& a = m.elements[i];
    while (j < m.elements.size() && m.elements[j].type == a.type && m.elements[j].dim == a.dim &&
           m.elements[j].entity == a.entity) {
      ++j;
    }
    blocks.emplace_back(i, j);
    i = j;
  }
  size(blocks.size()), size(m.elements.size()), size(1), size(m.elements.size(), "\n");
  for (const auto& [i, j] : blocks) {
    integer(m.elements[i].dim), integer(m.elements[i].entity), integer(m.elements[i].type), size(j - i, "\n");
    for (std::size_t e = i; e < j; ++e) {
      size(e + 1);
      for (const auto v : m.elements[e].nodes) size(v);
      if (!binary) out << "\n";
    }
  }
  if (binary) out << "\n";
  out << "$EndElements\n";
  return out.str();
}

}  // namespace edgefem::testing
