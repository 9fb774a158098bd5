// SPDX-License-Identifier: BSD-3-Clause
// Tests of the small shared helpers: mesh/facets.hpp (a cell's facets as sorted vertex tuples),
// core/number_text.hpp and tetgeo::check_sizes (the factories' size checks).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "core/number_text.hpp"
#include "materials/tet_geometry.hpp"
#include "mesh/facets.hpp"

namespace edgefem {
namespace {

TEST(Facets, SortedFacetOfThreeAndTwo) {
  for (const std::array<LocalIndex, 3> v : {std::array<LocalIndex, 3>{7, 2, 5}, {2, 5, 7}, {5, 7, 2}, {7, 5, 2}}) {
    const auto f = sorted_facet(v.data(), 3);
    EXPECT_EQ(f, (std::array<LocalIndex, 3>{2, 5, 7}));
  }
  const GlobalIndex e[2] = {9, 4};
  EXPECT_EQ(sorted_facet(e, 2), (std::array<GlobalIndex, 3>{4, 9, -1}));
}

TEST(Facets, TetFacetKIsTheFaceOppositeVertexK) {
  const LocalIndex tet[4] = {40, 10, 30, 20};
  std::set<std::array<LocalIndex, 3>> faces;
  for (int k = 0; k < 4; ++k) {
    const auto f = cell_facet(tet, 4, k);
    EXPECT_TRUE(std::is_sorted(f.begin(), f.end()));
    EXPECT_EQ(std::count(f.begin(), f.end(), tet[k]), 0) << "facet " << k;
    faces.insert(f);
  }
  EXPECT_EQ(faces.size(), 4u);
}

TEST(Facets, TriangleFacetKIsTheEdgeOppositeVertexK) {
  const std::int64_t tri[3] = {8, 3, 6};
  EXPECT_EQ(cell_facet(tri, 3, 0), (std::array<std::int64_t, 3>{3, 6, -1}));
  EXPECT_EQ(cell_facet(tri, 3, 1), (std::array<std::int64_t, 3>{6, 8, -1}));
  EXPECT_EQ(cell_facet(tri, 3, 2), (std::array<std::int64_t, 3>{3, 8, -1}));
}

TEST(NumberText, Precision) {
  EXPECT_EQ(number_text(0.1, 17), "0.10000000000000001");
  EXPECT_EQ(number_text(0.1, 12), "0.1");
  EXPECT_EQ(number_text(1.0 / 3.0, 6), "0.333333");
}

std::string size_error(std::size_t n_coords, std::size_t n_ids, int per_cell, const char* list, const char* cell) {
  try {
    tetgeo::check_sizes(n_coords, n_ids, per_cell, "make_x", list, cell);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CheckSizes, Messages) {
  EXPECT_EQ(size_error(12, 8, 4, "tets", "tetrahedron"), "");
  EXPECT_EQ(size_error(13, 8, 4, "tets", "tetrahedron"), "make_x: coords holds 13 values, expected 3 per vertex");
  EXPECT_EQ(size_error(12, 7, 4, "tets", "tetrahedron"), "make_x: tets holds 7 ids, expected 4 per tetrahedron");
  EXPECT_EQ(size_error(9, 5, 3, "triangles", "triangle"), "make_x: triangles holds 5 ids, expected 3 per triangle");
}

}  // namespace
}  // namespace edgefem
