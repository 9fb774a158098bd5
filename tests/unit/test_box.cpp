// SPDX-License-Identifier: BSD-3-Clause
// Box and sheet generator tests: counts, orientation, volume/area, tags, conformity of the Kuhn split.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/gmsh.hpp"
#include "mesh/box.hpp"

namespace edgefem {
namespace {

using Vec3 = std::array<double, 3>;

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

double six_volume(const Mesh& m, LocalIndex t) {
  const LocalIndex* v = &m.tets[4 * static_cast<std::size_t>(t)];
  const Vec3 x0 = m.vertex(v[0]);
  return dot(sub(m.vertex(v[1]), x0), cross(sub(m.vertex(v[2]), x0), sub(m.vertex(v[3]), x0)));
}

std::array<LocalIndex, 3> sorted_face(LocalIndex a, LocalIndex b, LocalIndex c) {
  std::array<LocalIndex, 3> f{a, b, c};
  std::sort(f.begin(), f.end());
  return f;
}

TEST(BoxGenerator, CountsOrientationVolumeAndVertexOrder) {
  const std::array<double, 3> size{2.0, 3.0, 0.5};
  const std::array<int, 3> cells{2, 3, 4};
  const Mesh m = generate_box(size, cells);
  EXPECT_EQ(m.n_vertices(), 3 * 4 * 5);
  EXPECT_EQ(m.n_tets(), 6 * 2 * 3 * 4);
  EXPECT_EQ(m.n_triangles(), 2 * 2 * (2 * 3 + 3 * 4 + 4 * 2));
  EXPECT_EQ(m.n_lines(), 0);
  EXPECT_EQ(m.tet_region.size(), static_cast<std::size_t>(m.n_tets()));
  EXPECT_EQ(m.triangle_region.size(), static_cast<std::size_t>(m.n_triangles()));
  EXPECT_TRUE(std::all_of(m.tet_region.begin(), m.tet_region.end(), [](int r) { return r == box_region::volume; }));

  // x fastest, exact corners.
  EXPECT_EQ(m.vertex(1), (Vec3{1.0, 0.0, 0.0}));
  EXPECT_EQ(m.vertex(3), (Vec3{0.0, 1.0, 0.0}));
  EXPECT_EQ(m.vertex(12), (Vec3{0.0, 0.0, 0.125}));
  EXPECT_EQ(m.vertex(m.n_vertices() - 1), (Vec3{2.0, 3.0, 0.5}));

  double volume = 0.0;
  const double cell_volume = (2.0 / 2) * (3.0 / 3) * (0.5 / 4);
  for (LocalIndex t = 0; t < m.n_tets(); ++t) {
    const double v6 = six_volume(m, t);
    ASSERT_NEAR(v6, cell_volume, 1e-12) << "tet " << t;  // Kuhn tets all have volume cell/6
    volume += v6 / 6.0;
  }
  EXPECT_NEAR(volume, 2.0 * 3.0 * 0.5, 1e-12);
  EXPECT_NO_THROW(check_mesh(m, "box"));
}

TEST(BoxGenerator, KuhnSplitConformsAndBoundaryTrianglesAreOutwardTetFaces) {
  const std::array<double, 3> size{1.0, 2.0, 3.0};
  const std::array<int, 3> cells{3, 2, 2};
  const Mesh m = generate_box(size, cells);
  std::map<std::array<LocalIndex, 3>, int> face_count;
  for (LocalIndex t = 0; t < m.n_tets(); ++t) {
    const LocalIndex* v = &m.tets[4 * static_cast<std::size_t>(t)];
    for (int skip = 0; skip < 4; ++skip) {
      LocalIndex f[3];
      for (int k = 0, n = 0; k < 4; ++k) {
        if (k != skip) f[n++] = v[k];
      }
      ++face_count[sorted_face(f[0], f[1], f[2])];
    }
  }
  int n_boundary_faces = 0;
  for (const auto& [face, count] : face_count) {
    ASSERT_LE(count, 2) << "a face shared by more than two tets";
    n_boundary_faces += count == 1;
  }
  // Conforming: the faces with one tet are exactly the boundary triangles.
  EXPECT_EQ(n_boundary_faces, m.n_triangles());

  const Vec3 centre{0.5, 1.0, 1.5};
  std::map<int, int> per_tag;
  for (LocalIndex t = 0; t < m.n_triangles(); ++t) {
    const LocalIndex* v = &m.triangles[3 * static_cast<std::size_t>(t)];
    ASSERT_EQ(face_count[sorted_face(v[0], v[1], v[2])], 1)
        << "boundary triangle " << t << " is not a boundary tet face";
    const int tag = m.triangle_region[static_cast<std::size_t>(t)];
    ++per_tag[tag];
    ASSERT_GE(tag, box_region::x_min);
    ASSERT_LE(tag, box_region::z_max);
    const int axis = (tag - box_region::x_min) / 2;
    const bool max_side = (tag - box_region::x_min) % 2 == 1;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(m.vertex(v[k])[axis], max_side ? size[axis] : 0.0) << "triangle " << t;
    const Vec3 x0 = m.vertex(v[0]);
    const Vec3 normal = cross(sub(m.vertex(v[1]), x0), sub(m.vertex(v[2]), x0));
    EXPECT_GT(dot(normal, sub(x0, centre)), 0.0) << "triangle " << t << " is not oriented outward";
  }
  EXPECT_EQ(per_tag[box_region::x_min], 2 * 2 * 2);
  EXPECT_EQ(per_tag[box_region::x_max], 2 * 2 * 2);
  EXPECT_EQ(per_tag[box_region::y_min], 2 * 3 * 2);
  EXPECT_EQ(per_tag[box_region::y_max], 2 * 3 * 2);
  EXPECT_EQ(per_tag[box_region::z_min], 2 * 3 * 2);
  EXPECT_EQ(per_tag[box_region::z_max], 2 * 3 * 2);
}

TEST(BoxGenerator, SingleCellAndLargeBox) {
  const Mesh one = generate_box({1, 1, 1}, {1, 1, 1});
  EXPECT_EQ(one.n_vertices(), 8);
  EXPECT_EQ(one.n_tets(), 6);
  EXPECT_EQ(one.n_triangles(), 12);

  // Its time (once asserted here, under 10 s) is a benchmark: build/bench/edgefem_bench_mesh_setup.
  const Mesh big = generate_box({7, 7, 6.8}, {70, 70, 68});  // 1,999,200 tets
  EXPECT_EQ(big.n_tets(), 6 * 70 * 70 * 68);
  EXPECT_EQ(big.n_vertices(), 71 * 71 * 69);
  EXPECT_GT(six_volume(big, big.n_tets() - 1), 0.0);
}

TEST(BoxGenerator, RejectsBadInput) {
  EXPECT_THROW(generate_box({1, 1, 1}, {0, 1, 1}), InputError);
  EXPECT_THROW(generate_box({1, -1, 1}, {1, 1, 1}), InputError);
  EXPECT_THROW(generate_box({1, 1, std::nan("")}, {1, 1, 1}), InputError);
  EXPECT_THROW(generate_box({1, 1, 1}, {2000, 2000, 2000}), InputError);  // > 2^31 tets
  try {
    generate_box({1, 1, 1}, {4, -2, 4});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cells must be integers >= 1, got [4, -2, 4]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate_sheet({1, 0}, {1, 1}), InputError);
  EXPECT_THROW(generate_sheet({1, 1}, {1, 0}), InputError);
}

TEST(BoxSheet, CountsTagsOrientationAndArea) {
  const Mesh m = generate_sheet({2.0, 1.0}, {4, 3});
  EXPECT_EQ(m.n_vertices(), 5 * 4);
  EXPECT_EQ(m.n_triangles(), 2 * 4 * 3);
  EXPECT_EQ(m.n_tets(), 0);
  EXPECT_EQ(m.n_lines(), 2 * (4 + 3));
  EXPECT_TRUE(std::all_of(m.triangle_region.begin(), m.triangle_region.end(), [](int r) { return r == 1; }));
  EXPECT_EQ(m.vertex(1), (Vec3{0.5, 0.0, 0.0}));
  EXPECT_EQ(m.vertex(5), (Vec3{0.0, 1.0 / 3.0, 0.0}));

  double area = 0.0;
  for (LocalIndex t = 0; t < m.n_triangles(); ++t) {
    const LocalIndex* v = &m.triangles[3 * static_cast<std::size_t>(t)];
    const Vec3 x0 = m.vertex(v[0]);
    const Vec3 n = cross(sub(m.vertex(v[1]), x0), sub(m.vertex(v[2]), x0));
    EXPECT_GT(n[2], 0.0);
    EXPECT_EQ(n[0], 0.0);
    EXPECT_EQ(m.vertex(v[0])[2], 0.0);
    area += n[2] / 2.0;
  }
  EXPECT_NEAR(area, 2.0, 1e-12);

  std::map<int, int> per_tag;
  double length = 0.0;
  for (LocalIndex l = 0; l < m.n_lines(); ++l) {
    const Vec3 a = m.vertex(m.lines[2 * static_cast<std::size_t>(l)]);
    const Vec3 b = m.vertex(m.lines[2 * static_cast<std::size_t>(l) + 1]);
    const int tag = m.line_region[static_cast<std::size_t>(l)];
    ++per_tag[tag];
    length += std::hypot(b[0] - a[0], b[1] - a[1]);
    // Counter-clockwise: the outward normal (dy, -dx) points away from the centre.
    const double out = (b[1] - a[1]) * (a[0] - 1.0) - (b[0] - a[0]) * (a[1] - 0.5);
    EXPECT_GT(out, 0.0) << "line " << l;
    switch (tag) {
      case box_region::x_min: EXPECT_TRUE(a[0] == 0.0 && b[0] == 0.0); break;
      case box_region::x_max: EXPECT_TRUE(a[0] == 2.0 && b[0] == 2.0); break;
      case box_region::y_min: EXPECT_TRUE(a[1] == 0.0 && b[1] == 0.0); break;
      case box_region::y_max: EXPECT_TRUE(a[1] == 1.0 && b[1] == 1.0); break;
      default: ADD_FAILURE() << "unexpected line tag " << tag;
    }
  }
  EXPECT_EQ(per_tag[box_region::x_min], 3);
  EXPECT_EQ(per_tag[box_region::x_max], 3);
  EXPECT_EQ(per_tag[box_region::y_min], 4);
  EXPECT_EQ(per_tag[box_region::y_max], 4);
  EXPECT_NEAR(length, 6.0, 1e-12);
  EXPECT_NO_THROW(check_mesh(m, "sheet"));
}

TEST(BoxSheet, SlicesConcatenatedAreGenerateSheet) {
  // Every rank's slice (generate_sheet_slice) in rank order gives back generate_sheet array for array: vertices
  // and coordinates, triangles (ids 2 quad + t), boundary edges and their tags; odd sizes, more ranks than rows,
  // and more ranks than quads (empty blocks).
  const std::array<double, 2> size{2.5, 0.7};
  for (const std::array<int, 2> cells : {std::array<int, 2>{1, 1}, {7, 3}, {5, 8}, {13, 1}, {3, 11}}) {
    const Mesh whole = generate_sheet(size, cells);
    for (int ranks = 1; ranks <= 7; ++ranks) {
      SCOPED_TRACE("cells " + std::to_string(cells[0]) + " x " + std::to_string(cells[1]) + ", " +
                   std::to_string(ranks) + " ranks");
      std::vector<double> coords;
      std::vector<GlobalIndex> triangles, lines;
      std::vector<int> triangle_region, line_region;
      GlobalIndex next_vertex = 0, next_cell = 0;
      for (int r = 0; r < ranks; ++r) {
        const MeshSlice s = generate_sheet_slice(size, cells, r, ranks);
        EXPECT_EQ(s.nodes, 3);
        EXPECT_EQ(s.n_vertices, whole.n_vertices());
        EXPECT_EQ(s.n_cells, whole.n_triangles());
        EXPECT_EQ(s.vertex_begin, next_vertex);
        EXPECT_EQ(s.cell_begin, next_cell);
        EXPECT_EQ(s.vertex_begin, slice_begin(s.n_vertices, r, ranks));
        EXPECT_EQ(s.n_local_cells() % 2, 0);  // whole quads
        next_vertex += s.n_local_vertices();
        next_cell += s.n_local_cells();
        coords.insert(coords.end(), s.coords.begin(), s.coords.end());
        triangles.insert(triangles.end(), s.cells.begin(), s.cells.end());
        triangle_region.insert(triangle_region.end(), s.cell_region.begin(), s.cell_region.end());
        lines.insert(lines.end(), s.facets.begin(), s.facets.end());
        line_region.insert(line_region.end(), s.facet_region.begin(), s.facet_region.end());
      }
      EXPECT_EQ(coords, whole.coords);
      EXPECT_EQ(triangles, std::vector<GlobalIndex>(whole.triangles.begin(), whole.triangles.end()));
      EXPECT_EQ(triangle_region, whole.triangle_region);
      EXPECT_EQ(lines, std::vector<GlobalIndex>(whole.lines.begin(), whole.lines.end()));
      EXPECT_EQ(line_region, whole.line_region);
    }
  }
  EXPECT_THROW(generate_sheet_slice({1, 1}, {0, 3}, 0, 2), InputError);
}

}  // namespace
}  // namespace edgefem
