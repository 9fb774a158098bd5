// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file stl.hpp
/// STL reader (ASCII and binary) for obstacle surfaces (solver/obstacles.hpp). Points with equal coordinates are
/// welded into one (STL lists each triangle's corners separately), so that neighbouring triangles share edges.
#include <array>
#include <string>
#include <vector>

namespace edgefem {

/// A triangle surface: points and triangles (3 point indices each, in the file's corner order).
struct TriangleSurface {
  std::vector<std::array<double, 3>> points;
  std::vector<std::array<int, 3>> triangles;
};

/// Reads an STL file. A file whose size is 84 + 50 n bytes with n the count at byte 80 is binary, else it must be
/// ASCII (`solid ... facet normal ... outer loop vertex x y z (x3) endloop endfacet ... endsolid`). Throws InputError
/// naming the file (and the line, for ASCII) when it cannot be read, is neither, has no triangles or a coordinate
/// that is not a finite number.
TriangleSurface read_stl(const std::string& path);

}  // namespace edgefem
