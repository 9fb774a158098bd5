// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file gmsh_counts.hpp
/// The size of a Gmsh .msh file's mesh from its headers, without reading it: what the memory plan
/// (run/memory_budget.hpp) needs before anything large is read. The $Nodes header gives the vertices; MSH 4.1 files
/// (ASCII or binary) give the elements of each type from their block headers (the data between them is skipped,
/// not parsed), MSH 2.2 files only the $Elements header's total (every element type together).
#include <cstdint>
#include <optional>
#include <string>

namespace edgefem {

struct GmshCounts {
  std::int64_t nodes = 0;
  std::int64_t tets = 0, triangles = 0;  ///< MSH 4.1: by type; MSH 2.2: 0
  std::int64_t elements = 0;             ///< every element (points, lines, triangles, tets)
  bool by_type = false;                  ///< tets and triangles were counted (MSH 4.1)
};

/// The counts of `path`'s headers, or nothing when the file cannot be opened or its headers are not those of a .msh
/// file (the reader then says what is wrong). Reads the headers and jumps over or scans past the data; allocates
/// nothing that grows with the file.
std::optional<GmshCounts> gmsh_header_counts(const std::string& path);

}  // namespace edgefem
