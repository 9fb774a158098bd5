#pragma once
/// \file box.hpp
/// Mesh generators (DESIGN.md, "generate").
#include <array>

#include "mesh/mesh.hpp"

namespace edgefem {

/// Physical tags the box generator gives its tets and its six faces' boundary triangles.
namespace box_region {
inline constexpr int volume = 1;
inline constexpr int x_min = 11, x_max = 12, y_min = 13, y_max = 14, z_min = 15, z_max = 16;
}  // namespace box_region

/// Box [0,size] split into cells[0] x cells[1] x cells[2] hexahedra, 6 tets each (conforming Kuhn split),
/// tets tagged box_region::volume, boundary triangles tagged by face (box_region::x_min, ...).
Mesh generate_box(const std::array<double, 3>& size, const std::array<int, 3>& cells);

}  // namespace edgefem
