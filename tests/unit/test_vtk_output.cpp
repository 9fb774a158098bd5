// SPDX-License-Identifier: BSD-3-Clause
// Unit tests for io/vtk_output: every file is read back with VTK's own XML readers (pieces, .pvtu, .pvd, atomic
// writes and their errors). PvdCollection::load and truncate_after: test_vtk_pvd.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLPUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include "core/error.hpp"
#include "io/vtk_output.hpp"
#include "tests/support/vtk_output_testing.hpp"

namespace fs = std::filesystem;
using edgefem::DataArray;
using edgefem::VtuPiece;
using edgefem::testing::read_text;
using edgefem::testing::VtkOutput;

namespace {

// Deterministic, non-trivial values (distinct per piece, tuple and component; not exactly
// representable in few digits, so a lossy writer would be caught).
double point_value(int piece, int point, int comp) { return 0.1 * (piece + 1) + point / 3.0 + comp * 1e-7; }
double cell_value(int piece, int cell, int comp) { return -1.0 / 7.0 * (piece + 2) + cell * 10.0 + comp * 0.01; }
std::int32_t node_id(int piece, int point) { return 1000 * piece + point; }

/// Two tetrahedra sharing a face, shifted by `piece` along x (points duplicated between pieces).
VtuPiece make_tet_piece(int piece) {
  VtuPiece p;
  const double base[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  for (const auto& b : base) {
    p.points.push_back(b[0] + piece);
    p.points.push_back(b[1]);
    p.points.push_back(b[2] + 0.25);
  }
  p.connectivity = {0, 1, 2, 3, 1, 2, 3, 4};
  p.nodes_per_cell = 4;
  const int n_points = 5;
  const int n_cells = 2;

  DataArray u{"displacement", 3, {}, {}, false};
  for (int i = 0; i < n_points; ++i)
    for (int c = 0; c < 3; ++c) u.values.push_back(point_value(piece, i, c));
  DataArray id{"node_id", 1, {}, {}, true};
  for (int i = 0; i < n_points; ++i) id.int_values.push_back(node_id(piece, i));
  p.point_data = {u, id};

  DataArray stress{"stress", 9, {}, {}, false};
  for (int e = 0; e < n_cells; ++e)
    for (int c = 0; c < 9; ++c) stress.values.push_back(cell_value(piece, e, c));
  DataArray region{"region", 1, {}, {}, true};
  for (int e = 0; e < n_cells; ++e) region.int_values.push_back(7 + piece * 10 + e);
  p.cell_data = {stress, region};
  return p;
}

std::vector<std::string> files_ending_with(const fs::path& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(e.path().string());
    }
  }
  return out;
}

vtkSmartPointer<vtkUnstructuredGrid> read_vtu(const fs::path& p) {
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(p.c_str());
  reader->Update();
  EXPECT_EQ(reader->GetErrorCode(), 0UL) << p;
  return reader->GetOutput();
}

vtkSmartPointer<vtkUnstructuredGrid> read_pvtu(const fs::path& p) {
  vtkNew<vtkXMLPUnstructuredGridReader> reader;
  reader->SetFileName(p.c_str());
  reader->Update();
  EXPECT_EQ(reader->GetErrorCode(), 0UL) << p;
  return reader->GetOutput();
}

void expect_piece_matches(vtkUnstructuredGrid* grid, int piece, vtkIdType point_offset, vtkIdType cell_offset) {
  const VtuPiece ref = make_tet_piece(piece);
  for (vtkIdType i = 0; i < 5; ++i) {
    double x[3];
    grid->GetPoint(point_offset + i, x);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(x[c], ref.points[3 * i + c]);
  }
  vtkDataArray* u = grid->GetPointData()->GetArray("displacement");
  vtkDataArray* id = grid->GetPointData()->GetArray("node_id");
  ASSERT_NE(u, nullptr);
  ASSERT_NE(id, nullptr);
  for (int i = 0; i < 5; ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(u->GetComponent(point_offset + i, c), point_value(piece, i, c));
    EXPECT_EQ(id->GetComponent(point_offset + i, 0), node_id(piece, i));
  }
  vtkDataArray* s = grid->GetCellData()->GetArray("stress");
  vtkDataArray* r = grid->GetCellData()->GetArray("region");
  ASSERT_NE(s, nullptr);
  ASSERT_NE(r, nullptr);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(grid->GetCellType(cell_offset + e), VTK_TETRA);
    for (int c = 0; c < 9; ++c) EXPECT_EQ(s->GetComponent(cell_offset + e, c), cell_value(piece, e, c));
    EXPECT_EQ(r->GetComponent(cell_offset + e, 0), 7 + piece * 10 + e);
    vtkNew<vtkIdList> ids;
    grid->GetCellPoints(cell_offset + e, ids);
    ASSERT_EQ(ids->GetNumberOfIds(), 4);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(ids->GetId(k), point_offset + ref.connectivity[4 * e + k]);
  }
}

/// Writes pieces (under a subdirectory), the .pvtu and returns the .pvtu's name relative to dir.
std::string write_step(const fs::path& dir, int step, int n_pieces = 2) {
  const std::string sub = "step" + std::to_string(step);
  fs::create_directories(dir / sub);
  std::vector<std::string> pieces;
  for (int r = 0; r < n_pieces; ++r) {
    const std::string rel = sub + "/piece_" + std::to_string(r) + ".vtu";
    edgefem::write_vtu_piece((dir / rel).string(), make_tet_piece(r + step));
    pieces.push_back(rel);
  }
  const std::string pvtu = "solution_" + std::to_string(step) + ".pvtu";
  edgefem::write_pvtu((dir / pvtu).string(), pieces, make_tet_piece(0));
  return pvtu;
}

}  // namespace

TEST_F(VtkOutput, PieceRoundTripsThroughVtkReader) {
  const fs::path file = dir_ / "piece.vtu";
  edgefem::write_vtu_piece(file.string(), make_tet_piece(1));

  auto grid = read_vtu(file);
  ASSERT_EQ(grid->GetNumberOfPoints(), 5);
  ASSERT_EQ(grid->GetNumberOfCells(), 2);
  EXPECT_EQ(grid->GetPoints()->GetDataType(), VTK_DOUBLE);

  ASSERT_EQ(grid->GetPointData()->GetNumberOfArrays(), 2);
  vtkDataArray* u = grid->GetPointData()->GetArray("displacement");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->GetDataType(), VTK_DOUBLE);
  EXPECT_EQ(u->GetNumberOfComponents(), 3);
  EXPECT_EQ(u->GetNumberOfTuples(), 5);
  vtkDataArray* id = grid->GetPointData()->GetArray("node_id");
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->GetDataType(), VTK_INT);
  EXPECT_EQ(id->GetNumberOfComponents(), 1);

  ASSERT_EQ(grid->GetCellData()->GetNumberOfArrays(), 2);
  vtkDataArray* s = grid->GetCellData()->GetArray("stress");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->GetDataType(), VTK_DOUBLE);
  EXPECT_EQ(s->GetNumberOfComponents(), 9);
  EXPECT_EQ(s->GetNumberOfTuples(), 2);
  vtkDataArray* r = grid->GetCellData()->GetArray("region");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->GetDataType(), VTK_INT);

  // One value spelled out, then everything against the generator.
  EXPECT_EQ(s->GetComponent(1, 4), -1.0 / 7.0 * 3 + 10.0 + 0.04);
  expect_piece_matches(grid, 1, 0, 0);

  // Binary appended, raw: the XML header says so and there is no ASCII data array.
  const std::string text = read_text(file);
  EXPECT_NE(text.find("<AppendedData encoding=\"raw\">"), std::string::npos);
  EXPECT_EQ(text.find("format=\"ascii\""), std::string::npos);
}

// Issue 56: the run's pieces view the mesh's points and cells (no copies) and keep a symmetric tensor as its 6
// components; the file still has every component of the 3 x 3 (row-major), and Int32 connectivity.
TEST_F(VtkOutput, ViewsAndSymmetricTensorsWriteTheWholeTensor) {
  const VtuPiece full = make_tet_piece(2);
  VtuPiece p;
  p.points_view = full.points;
  p.connectivity_view = full.connectivity;
  p.nodes_per_cell = 4;
  // XX, YY, ZZ, XY, YZ, XZ, component after component (2 cells): value 10 c + cell + 0.125.
  DataArray sym{"green_strain", 9, {}, {}, false, true};
  for (int c = 0; c < 6; ++c)
    for (int e = 0; e < 2; ++e) sym.values.push_back(10.0 * c + e + 0.125);
  p.cell_data.push_back(sym);
  const fs::path file = dir_ / "views.vtu";
  edgefem::write_vtu_piece(file.string(), p);

  auto grid = read_vtu(file);
  ASSERT_EQ(grid->GetNumberOfPoints(), 5);
  ASSERT_EQ(grid->GetNumberOfCells(), 2);
  vtkDataArray* e = grid->GetCellData()->GetArray("green_strain");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->GetNumberOfComponents(), 9);
  const int stored[9] = {0, 3, 5, 3, 1, 4, 5, 4, 2};  // row-major 3 x 3 from XX, YY, ZZ, XY, YZ, XZ
  for (int cell = 0; cell < 2; ++cell) {
    vtkNew<vtkIdList> ids;
    grid->GetCellPoints(cell, ids);
    ASSERT_EQ(ids->GetNumberOfIds(), 4);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(ids->GetId(k), full.connectivity[static_cast<std::size_t>(4 * cell + k)]);
    for (int c = 0; c < 9; ++c) EXPECT_EQ(e->GetComponent(cell, c), 10.0 * stored[c] + cell + 0.125) << cell << " " << c;
  }
  for (vtkIdType i = 0; i < 5; ++i) {
    double x[3];
    grid->GetPoint(i, x);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(x[c], full.points[static_cast<std::size_t>(3 * i + c)]);
  }
  const std::string text = read_text(file);
  EXPECT_NE(text.find("type=\"Int32\" Name=\"connectivity\""), std::string::npos);

  // A symmetric array holds 6 values per tuple: 9 per tuple is an error naming the file.
  VtuPiece nine = p;
  nine.cell_data[0].values.assign(18, 1.0);
  try {
    edgefem::write_vtu_piece(file.string(), nine);
    ADD_FAILURE() << "no exception for 9 values per tuple of a symmetric tensor";
  } catch (const std::runtime_error& err) {
    EXPECT_NE(std::string(err.what()).find("green_strain"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("2 x 6 = 12"), std::string::npos) << err.what();
  }
}

TEST_F(VtkOutput, TrianglePieceUsesVtkTriangle) {
  VtuPiece p;
  p.points = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
  p.connectivity = {0, 1, 2, 1, 3, 2};
  p.nodes_per_cell = 3;
  p.cell_data.push_back(DataArray{"thickness", 1, {0.5, 0.25}, {}, false});
  const fs::path file = dir_ / "membrane.vtu";
  edgefem::write_vtu_piece(file.string(), p);

  auto grid = read_vtu(file);
  ASSERT_EQ(grid->GetNumberOfPoints(), 4);
  ASSERT_EQ(grid->GetNumberOfCells(), 2);
  EXPECT_EQ(grid->GetCellType(0), VTK_TRIANGLE);
  EXPECT_EQ(grid->GetCellType(1), VTK_TRIANGLE);
  vtkNew<vtkIdList> ids;
  grid->GetCellPoints(1, ids);
  ASSERT_EQ(ids->GetNumberOfIds(), 3);
  EXPECT_EQ(ids->GetId(0), 1);
  EXPECT_EQ(ids->GetId(1), 3);
  EXPECT_EQ(ids->GetId(2), 2);
  vtkDataArray* t = grid->GetCellData()->GetArray("thickness");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->GetComponent(1, 0), 0.25);
}

TEST_F(VtkOutput, PvtuCombinesPieces) {
  const std::string pvtu = write_step(dir_, 0);

  const std::string text = read_text(dir_ / pvtu);
  EXPECT_NE(text.find("type=\"PUnstructuredGrid\""), std::string::npos);
  EXPECT_NE(text.find("<PDataArray type=\"Float64\" Name=\"stress\" NumberOfComponents=\"9\"/>"), std::string::npos);
  EXPECT_NE(text.find("<PDataArray type=\"Int32\" Name=\"node_id\" NumberOfComponents=\"1\"/>"), std::string::npos);
  EXPECT_NE(text.find("<Piece Source=\"step0/piece_1.vtu\"/>"), std::string::npos);

  auto grid = read_pvtu(dir_ / pvtu);
  ASSERT_EQ(grid->GetNumberOfCells(), 4);
  ASSERT_EQ(grid->GetNumberOfPoints(), 10);  // shared points are duplicated per piece
  vtkDataArray* u = grid->GetPointData()->GetArray("displacement");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->GetNumberOfTuples(), 10);
  EXPECT_EQ(u->GetNumberOfComponents(), 3);
  vtkDataArray* id = grid->GetPointData()->GetArray("node_id");
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->GetNumberOfTuples(), 10);
  EXPECT_EQ(id->GetDataType(), VTK_INT);
  vtkDataArray* s = grid->GetCellData()->GetArray("stress");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->GetNumberOfTuples(), 4);
  EXPECT_EQ(s->GetNumberOfComponents(), 9);
  vtkDataArray* r = grid->GetCellData()->GetArray("region");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->GetNumberOfTuples(), 4);

  // Piece 1's second point / first cell come after piece 0's 5 points / 2 cells.
  EXPECT_EQ(u->GetComponent(6, 2), point_value(1, 1, 2));
  EXPECT_EQ(id->GetComponent(6, 0), 1001);
  EXPECT_EQ(r->GetComponent(2, 0), 17);
  expect_piece_matches(grid, 0, 0, 0);
  expect_piece_matches(grid, 1, 5, 2);
}

TEST_F(VtkOutput, PvtuWithEmptyPiece) {
  fs::create_directories(dir_ / "p");
  edgefem::write_vtu_piece((dir_ / "p/a.vtu").string(), make_tet_piece(0));
  VtuPiece empty = make_tet_piece(0);
  empty.points.clear();
  empty.connectivity.clear();
  for (auto& a : empty.point_data) a.values.clear(), a.int_values.clear();
  for (auto& a : empty.cell_data) a.values.clear(), a.int_values.clear();
  edgefem::write_vtu_piece((dir_ / "p/b.vtu").string(), empty);
  edgefem::write_pvtu((dir_ / "all.pvtu").string(), {"p/a.vtu", "p/b.vtu"}, empty);

  auto grid = read_pvtu(dir_ / "all.pvtu");
  ASSERT_EQ(grid->GetNumberOfCells(), 2);
  ASSERT_EQ(grid->GetNumberOfPoints(), 5);
  expect_piece_matches(grid, 0, 0, 0);
}

TEST_F(VtkOutput, PvdCollectionListsStepsWithExactTimes) {
  const std::vector<double> times = {0.0, 0.1, 1.0 / 3.0, 2.5e-7};
  edgefem::PvdCollection pvd((dir_ / "run.pvd").string());
  EXPECT_EQ(pvd.path(), (dir_ / "run.pvd").string());
  std::vector<std::string> files;
  for (std::size_t k = 0; k < times.size(); ++k) {
    files.push_back(write_step(dir_, static_cast<int>(k)));
    pvd.add(times[k], files.back());
    pvd.write();  // rewritten after every step, as the solver does
  }

  vtkNew<vtkXMLDataParser> parser;
  parser->SetFileName((dir_ / "run.pvd").c_str());
  ASSERT_EQ(parser->Parse(), 1);
  vtkXMLDataElement* root = parser->GetRootElement();
  ASSERT_NE(root, nullptr);
  EXPECT_STREQ(root->GetName(), "VTKFile");
  ASSERT_NE(root->GetAttribute("type"), nullptr);
  EXPECT_STREQ(root->GetAttribute("type"), "Collection");
  ASSERT_EQ(root->GetNumberOfNestedElements(), 1);
  vtkXMLDataElement* collection = root->GetNestedElement(0);
  EXPECT_STREQ(collection->GetName(), "Collection");
  ASSERT_EQ(collection->GetNumberOfNestedElements(), static_cast<int>(times.size()));
  for (int k = 0; k < collection->GetNumberOfNestedElements(); ++k) {
    vtkXMLDataElement* ds = collection->GetNestedElement(k);
    EXPECT_STREQ(ds->GetName(), "DataSet");
    const char* ts = ds->GetAttribute("timestep");
    const char* file = ds->GetAttribute("file");
    ASSERT_NE(ts, nullptr);
    ASSERT_NE(file, nullptr);
    EXPECT_EQ(std::strtod(ts, nullptr), times[k]) << ts;  // bit-exact round trip
    EXPECT_EQ(std::string(file), files[k]);
    EXPECT_NE(ds->GetAttribute("part"), nullptr);
    // (vtkXMLDataParser drops empty attributes such as group="", checked in the text below.)

    // Every referenced data set opens and is complete.
    auto grid = read_pvtu(dir_ / file);
    EXPECT_EQ(grid->GetNumberOfCells(), 4);
    EXPECT_EQ(grid->GetNumberOfPoints(), 10);
    vtkDataArray* r = grid->GetCellData()->GetArray("region");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->GetComponent(0, 0), 7 + k * 10);
  }
  const std::string text = read_text(dir_ / "run.pvd");
  EXPECT_NE(text.find("<DataSet timestep=\"0.10000000000000001\" group=\"\" part=\"0\" file=\"solution_1.pvtu\"/>"),
            std::string::npos)
      << text;
}

TEST_F(VtkOutput, NoTemporaryFilesRemainAndOverwriteReplaces) {
  const fs::path file = dir_ / "piece.vtu";
  edgefem::write_vtu_piece(file.string(), make_tet_piece(0));
  ASSERT_EQ(read_vtu(file)->GetCellData()->GetArray("region")->GetComponent(0, 0), 7);

  // Overwrite with different content (different sizes too): the new file replaces the old one.
  VtuPiece bigger = make_tet_piece(3);
  bigger.points.insert(bigger.points.end(), {5, 5, 5});
  for (auto& a : bigger.point_data) {
    if (a.is_int)
      a.int_values.push_back(-1);
    else
      a.values.insert(a.values.end(), static_cast<std::size_t>(a.n_components), 42.0);
  }
  edgefem::write_vtu_piece(file.string(), bigger);
  auto grid = read_vtu(file);
  EXPECT_EQ(grid->GetNumberOfPoints(), 6);
  EXPECT_EQ(grid->GetCellData()->GetArray("region")->GetComponent(0, 0), 37);
  EXPECT_EQ(grid->GetPointData()->GetArray("displacement")->GetComponent(5, 1), 42.0);

  // Text files: overwrite a longer file with a shorter one.
  edgefem::write_pvtu((dir_ / "s.pvtu").string(), {"a.vtu", "b.vtu", "c.vtu"}, make_tet_piece(0));
  edgefem::write_pvtu((dir_ / "s.pvtu").string(), {"piece.vtu"}, make_tet_piece(0));
  const std::string pvtu = read_text(dir_ / "s.pvtu");
  EXPECT_EQ(pvtu.find("a.vtu"), std::string::npos);
  EXPECT_EQ(read_pvtu(dir_ / "s.pvtu")->GetNumberOfCells(), 2);

  edgefem::PvdCollection pvd((dir_ / "run.pvd").string());
  pvd.add(0.0, "s.pvtu");
  pvd.write();
  pvd.add(1.0, "s.pvtu");
  pvd.write();
  const std::string text = read_text(dir_ / "run.pvd");
  EXPECT_NE(text.find("timestep=\"1\""), std::string::npos);
  EXPECT_EQ(text.rfind("</VTKFile>"), text.size() - std::string("</VTKFile>\n").size());

  write_step(dir_, 0);
  EXPECT_TRUE(files_ending_with(dir_, ".tmp").empty());
  // Only the files we asked for exist.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"piece.vtu", "run.pvd", "s.pvtu", "solution_0.pvtu", "step0"}));
}

TEST_F(VtkOutput, WriteFileAtomically) {
  const fs::path file = dir_ / "f.txt";
  edgefem::write_file_atomically(file.string(), "first version, rather long\n");
  EXPECT_EQ(read_text(file), "first version, rather long\n");
  edgefem::write_file_atomically(file.string(), "second\n");
  EXPECT_EQ(read_text(file), "second\n");
  edgefem::write_file_atomically(file.string(), "");
  EXPECT_EQ(read_text(file), "");
  EXPECT_TRUE(files_ending_with(dir_, ".tmp").empty());
}

TEST_F(VtkOutput, ErrorsNameThePathAndLeaveNoTemporaries) {
  const std::string missing = (dir_ / "no_such_dir" / "x.vtu").string();
  auto expect_error_with_path = [](auto&& fn, const std::string& path) {
    try {
      fn();
      ADD_FAILURE() << "no exception for " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  expect_error_with_path([&] { edgefem::write_vtu_piece(missing, make_tet_piece(0)); }, missing);
  expect_error_with_path([&] { edgefem::write_pvtu(missing + ".pvtu", {"x.vtu"}, make_tet_piece(0)); },
                         missing + ".pvtu");
  expect_error_with_path([&] { edgefem::write_file_atomically(missing + ".txt", "x"); }, missing + ".txt");
  const std::string pvd_path = (dir_ / "missing" / "run.pvd").string();
  expect_error_with_path(
      [&] {
        edgefem::PvdCollection pvd(pvd_path);
        pvd.add(0.0, "a.pvtu");
        pvd.write();
      },
      pvd_path);
  EXPECT_FALSE(fs::exists(dir_ / "no_such_dir"));

  const std::string good = (dir_ / "bad.vtu").string();
  VtuPiece bad_index = make_tet_piece(0);
  bad_index.connectivity[5] = 5;  // only 5 points
  expect_error_with_path([&] { edgefem::write_vtu_piece(good, bad_index); }, good);
  VtuPiece bad_size = make_tet_piece(0);
  bad_size.cell_data[0].values.pop_back();
  expect_error_with_path([&] { edgefem::write_vtu_piece(good, bad_size); }, good);
  VtuPiece bad_npc = make_tet_piece(0);
  bad_npc.nodes_per_cell = 2;
  expect_error_with_path([&] { edgefem::write_vtu_piece(good, bad_npc); }, good);
  VtuPiece bad_int = make_tet_piece(0);
  bad_int.point_data[1].int_values.clear();
  bad_int.point_data[1].values.assign(5, 1.0);  // is_int but values in the double vector
  expect_error_with_path([&] { edgefem::write_vtu_piece(good, bad_int); }, good);

  // A directory in the way of the target: the rename fails, the temporary is cleaned up.
  fs::create_directories(dir_ / "occupied.vtu" / "child");
  const std::string occupied = (dir_ / "occupied.vtu").string();
  expect_error_with_path([&] { edgefem::write_vtu_piece(occupied, make_tet_piece(0)); }, occupied);
  expect_error_with_path([&] { edgefem::write_file_atomically(occupied, "x"); }, occupied);

  edgefem::PvdCollection nan_pvd((dir_ / "nan.pvd").string());
  nan_pvd.add(std::numeric_limits<double>::quiet_NaN(), "a.pvtu");
  expect_error_with_path([&] { nan_pvd.write(); }, (dir_ / "nan.pvd").string());

  EXPECT_FALSE(fs::exists(good));
  EXPECT_FALSE(fs::exists(dir_ / "nan.pvd"));
  EXPECT_TRUE(files_ending_with(dir_, ".tmp").empty());
}
