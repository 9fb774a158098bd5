// SPDX-License-Identifier: BSD-3-Clause
// The distributed path (mesh/slice.hpp, partition/distributed.hpp) against the rank-0 path: with METIS every
// rank's LocalMesh equals distribute_mesh's array for array; the block generator gives the slices of
// generate_box; PT-Scotch partitions solve to the serial solution; bad slices fail on every rank; the renumbering
// for locality (partition/locality.hpp) keeps each piece and numbers ghosts as their owners do. Run under
// mpiexec with 1, 2 and 3 ranks (CTest: mpi.slices.npN).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/gmsh.hpp"
#include "io/gmsh_parallel.hpp"
#include "io/job.hpp"
#include "mesh/box.hpp"
#include "mesh/slice.hpp"
#include "partition/distributed.hpp"
#include "partition/locality.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/dynamics_testing.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_slices {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

std::string source(const std::string& relative) { return std::string(EDGEFEM_SOURCE_DIR) + "/" + relative; }

void expect_same_local_mesh(const LocalMesh& a, const LocalMesh& b) {
  EXPECT_EQ(a.n_owned, b.n_owned);
  EXPECT_EQ(a.first_owned, b.first_owned);
  EXPECT_EQ(a.n_global_vertices, b.n_global_vertices);
  EXPECT_EQ(a.n_global_cells, b.n_global_cells);
  EXPECT_EQ(a.mesh.coords, b.mesh.coords);
  EXPECT_EQ(a.mesh.tets, b.mesh.tets);
  EXPECT_EQ(a.mesh.tet_region, b.mesh.tet_region);
  EXPECT_EQ(a.mesh.triangles, b.mesh.triangles);
  EXPECT_EQ(a.mesh.triangle_region, b.mesh.triangle_region);
  EXPECT_EQ(a.mesh.lines, b.mesh.lines);
  EXPECT_EQ(a.mesh.line_region, b.mesh.line_region);
  EXPECT_EQ(a.global_vertex, b.global_vertex);
  EXPECT_EQ(a.original_vertex, b.original_vertex);
  EXPECT_EQ(a.cell_global, b.cell_global);
  EXPECT_EQ(a.vertex_region_offsets, b.vertex_region_offsets);
  EXPECT_EQ(a.vertex_regions, b.vertex_regions);
}

/// The whole mesh on every rank (test only), distributed both ways.
void check_metis_equals_distribute_mesh(const Mesh& whole) {
  const LocalMesh expected = distribute_mesh(MPI_COMM_WORLD, world_rank() == 0 ? whole : Mesh{});
  const LocalMesh got = distribute_slices(MPI_COMM_WORLD, slice_of(whole, world_rank(), world_size()),
                                          CellPartitioner::metis);
  ASSERT_GT(got.n_owned, 0);
  expect_same_local_mesh(got, expected);
}

TEST(Slices, MetisEqualsDistributeMeshBox) { check_metis_equals_distribute_mesh(generate_box({3, 1, 1}, {6, 3, 2})); }

TEST(Slices, MetisEqualsDistributeMeshGmshRegions) {
  // Tags on cells and file triangles (bottom, top, side), file triangles that are boundary facets.
  check_metis_equals_distribute_mesh(load_mesh_file(source("jobs/examples/meshes/bimaterial.msh")));
}

TEST(Slices, MetisEqualsDistributeMeshSheet) { check_metis_equals_distribute_mesh(generate_sheet({2, 1}, {8, 5})); }

TEST(Slices, BoxSliceIsGenerateBoxBlock) {
  const std::array<double, 3> size{2.5, 1, 0.7};
  const std::array<int, 3> cells{5, 3, 4};
  const MeshSlice expected = slice_of(generate_box(size, cells), world_rank(), world_size());
  const MeshSlice got = generate_box_slice(size, cells, world_rank(), world_size());
  EXPECT_EQ(got.n_vertices, expected.n_vertices);
  EXPECT_EQ(got.n_cells, expected.n_cells);
  EXPECT_EQ(got.vertex_begin, expected.vertex_begin);
  EXPECT_EQ(got.coords, expected.coords);
  EXPECT_EQ(got.cells.size(),
            24u * (slice_begin(60, world_rank() + 1, world_size()) - slice_begin(60, world_rank(), world_size())));
  // Cells: the generator's blocks are of hexahedra (6 tets each), slice_of's of tets; compare by id.
  const GlobalIndex lo = std::max(got.cell_begin, expected.cell_begin);
  const GlobalIndex hi = std::min(got.cell_begin + got.n_local_cells(), expected.cell_begin + expected.n_local_cells());
  for (GlobalIndex c = lo; c < hi; ++c)
    for (int k = 0; k < 4; ++k)
      ASSERT_EQ(got.cells[4 * (c - got.cell_begin) + k], expected.cells[4 * (c - expected.cell_begin) + k]) << c;
  EXPECT_EQ(got.facets, expected.facets);
  EXPECT_EQ(got.facet_region, expected.facet_region);
  // Every rank's block of hexahedra: the cells of all ranks cover the mesh once.
  long long n = got.n_local_cells(), total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, 6LL * 5 * 3 * 4);
}

TEST(Slices, BoxSlicesDistributeLikeGenerateBox) {
  const std::array<double, 3> size{10, 1, 1};
  const std::array<int, 3> cells{20, 2, 2};
  const LocalMesh expected = distribute_mesh(MPI_COMM_WORLD, world_rank() == 0 ? generate_box(size, cells) : Mesh{});
  const LocalMesh got = distribute_slices(MPI_COMM_WORLD, generate_box_slice(size, cells, world_rank(), world_size()),
                                          CellPartitioner::metis);
  expect_same_local_mesh(got, expected);
}

TEST(Slices, SheetSlicesDistributeLikeGenerateSheet) {
  // Odd sizes: the blocks of quads, vertices and boundary edges end mid-row.
  for (const std::array<int, 2> cells : {std::array<int, 2>{9, 5}, {4, 13}}) {
    const std::array<double, 2> size{1.5, 0.9};
    const LocalMesh expected = distribute_mesh(MPI_COMM_WORLD,
                                               world_rank() == 0 ? generate_sheet(size, cells) : Mesh{});
    const LocalMesh got = distribute_slices(MPI_COMM_WORLD,
                                            generate_sheet_slice(size, cells, world_rank(), world_size()),
                                            CellPartitioner::metis);
    ASSERT_GT(got.mesh.n_triangles(), 0);
    expect_same_local_mesh(got, expected);
  }
}

/// Displacements of a static solve on `mesh`, gathered on rank 0 of comm in original vertex order.
std::vector<double> solve(MPI_Comm comm, const Job& job, const LocalMesh& mesh) {
  StaticSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  solver.run([](int, double) {});
  const std::vector<double> x = solver.local_positions();
  std::vector<double> u(3 * static_cast<std::size_t>(mesh.n_owned));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = x[i] - mesh.mesh.coords[i];
  return mpitest::gather_by_original_vertex(comm, mesh, {u})[0];
}

TEST(Slices, PtScotchSolveEqualsSerialSolve) {
  const Job job = read_job(source("tests/data/cantilever_small.yaml"));
  const GenerateSpec& g = *job.generate;
  const LocalMesh mesh = distribute_slices(MPI_COMM_WORLD,
                                           generate_box_slice(g.size, g.cells, world_rank(), world_size()),
                                           CellPartitioner::ptscotch);
  // Every rank gets cells; the parts cover the mesh once.
  EXPECT_GT(mesh.mesh.n_tets(), 0);
  long long n = mesh.mesh.n_tets(), total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, 6LL * g.cells[0] * g.cells[1] * g.cells[2]);
  const std::vector<double> distributed = solve(MPI_COMM_WORLD, job, mesh);
  double relative = 0;
  if (world_rank() == 0) {
    const LocalMesh whole = distribute_mesh(MPI_COMM_SELF, load_job_mesh(job));
    const std::vector<double> serial = solve(MPI_COMM_SELF, job, whole);
    ASSERT_EQ(serial.size(), distributed.size());
    double diff = 0, largest = 0;
    for (std::size_t i = 0; i < serial.size(); ++i) {
      diff = std::max(diff, std::abs(serial[i] - distributed[i]));
      largest = std::max(largest, std::abs(serial[i]));
    }
    relative = diff / largest;
    EXPECT_GT(largest, 0.5);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  MPI_Bcast(&relative, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (world_rank() == 0) std::printf("ptscotch on %d ranks: relative difference %.3e\n", world_size(), relative);
  EXPECT_LT(relative, 1e-8);
}

/// The largest |a - b| over the largest |b| (rank 0; `b` the reference).
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, largest = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    largest = std::max(largest, std::abs(b[i]));
  }
  EXPECT_GT(largest, 0.0);
  return diff / largest;
}

TEST(Slices, MembraneJobBySheetBlocksSolvesLikeTheRankZeroPath) {
  // jobs/examples/membrane_traction.yaml (a generated 16 x 16 sheet, trbs, static): run's path generates the sheet
  // by blocks; with METIS and with PT-Scotch the displacements equal those of the rank-0 path (EDGEFEM_INPUT=serial)
  // on one rank to round-off.
  Job job = read_job(source("jobs/examples/membrane_traction.yaml"));
  std::vector<double> reference;
  if (world_rank() == 0) {
    ::setenv("EDGEFEM_INPUT", "serial", 1);
    const DistributedJobMesh serial = load_distributed_job_mesh(MPI_COMM_SELF, job);
    ::unsetenv("EDGEFEM_INPUT");
    EXPECT_EQ(serial.reader, MeshReader::serial);
    reference = solve(MPI_COMM_SELF, job, serial.mesh);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  for (const PartitionMethod method : {PartitionMethod::metis, PartitionMethod::ptscotch}) {
    job.partition_method = method;
    const DistributedJobMesh loaded = load_distributed_job_mesh(MPI_COMM_WORLD, job);
    EXPECT_EQ(loaded.reader, MeshReader::generated_block);
    EXPECT_EQ(loaded.partitioner,
              method == PartitionMethod::metis ? CellPartitioner::metis : CellPartitioner::ptscotch);
    EXPECT_TRUE(loaded.partition_notice.empty());
    EXPECT_EQ(loaded.mesh.n_global_cells, 2 * 16 * 16);
    const std::vector<double> distributed = solve(MPI_COMM_WORLD, job, loaded.mesh);
    double relative = 0;
    if (world_rank() == 0) relative = relative_difference(distributed, reference);
    MPI_Bcast(&relative, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (world_rank() == 0)
      std::printf("membrane by sheet blocks, %s, %d ranks: relative difference %.3e\n", to_string(loaded.partitioner),
                  world_size(), relative);
    EXPECT_LT(relative, 1e-8);
  }
}

TEST(Slices, PtScotchPartitionIsBalanced) {
  const LocalMesh mesh = distribute_slices(MPI_COMM_WORLD,
                                           generate_box_slice({4, 2, 2}, {16, 8, 8}, world_rank(), world_size()),
                                           CellPartitioner::ptscotch);
  long long n = mesh.mesh.n_tets(), largest = 0;
  MPI_Allreduce(&n, &largest, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  const double mean = 6.0 * 16 * 8 * 8 / world_size();
  EXPECT_LT(largest / mean, 1.1);
}

TEST(Slices, PtScotchPartitionIsReproducible) {
  // PT-Scotch runs in a deterministic context with a fixed seed (partition/scotch.cpp): the same slices give the
  // same LocalMesh every time (before, two runs of the same job could differ, and so did GAMG's iterations).
  const auto make = [] {
    return distribute_slices(MPI_COMM_WORLD, generate_box_slice({3, 2, 2}, {15, 10, 9}, world_rank(), world_size()),
                             CellPartitioner::ptscotch);
  };
  const LocalMesh first = make();
  for (int repeat = 0; repeat < 3; ++repeat) expect_same_local_mesh(make(), first);
}

TEST(Slices, UnusedVertexFailsOnEveryRank) {
  Mesh whole = generate_box({1, 1, 1}, {2, 2, 2});
  whole.coords.insert(whole.coords.end(), {5, 5, 5});  // the last vertex: in no cell
  const GlobalIndex last = whole.n_vertices();
  try {
    distribute_slices(MPI_COMM_WORLD, slice_of(whole, world_rank(), world_size()), CellPartitioner::metis);
    ADD_FAILURE() << "no error";
  } catch (const CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("vertex " + std::to_string(last) + " belongs to no cell"), std::string::npos)
        << e.what();
  }
}

TEST(Slices, VertexOutOfRangeFailsOnEveryRank) {
  Mesh whole = generate_box({1, 1, 1}, {2, 2, 2});
  MeshSlice s = slice_of(whole, world_rank(), world_size());
  if (world_rank() == world_size() - 1) s.cells.back() = s.n_vertices + 7;
  EXPECT_THROW(distribute_slices(MPI_COMM_WORLD, std::move(s), CellPartitioner::ptscotch), CollectiveError);
}

// ---- the parallel Gmsh reader --------------------------------------------------------------------------------

/// A MSH 4.1 binary file written by gmsh in this test (rank 0), with physical groups on the volume and two faces;
/// empty when gmsh is not installed.
std::string gmsh_binary_file() {
  const std::string dir = mpitest::scratch_dir("slices");
  const std::string msh = dir + "/box.msh";
  int ok = 0;
  if (world_rank() == 0) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/box.geo") << "SetFactory(\"OpenCASCADE\");\nBox(1) = {0, 0, 0, 2, 1, 1};\n"
                                       "Physical Volume(1) = {1};\nPhysical Surface(11) = {1};\n"
                                       "Physical Surface(12) = {2};\nMesh.CharacteristicLengthMax = 0.25;\n";
    const std::string command = "gmsh -3 -format msh41 -bin " + dir + "/box.geo -o " + msh + " > " + dir +
                                "/gmsh.log 2>&1";
    ok = std::system(command.c_str()) == 0 && std::filesystem::exists(msh) ? 1 : 0;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok != 0 ? msh : std::string();
}

/// `path` with `edit` applied to its bytes, written next to it as `name` (rank 0).
std::string edited_copy(const std::string& path, const std::string& name,
                        const std::function<void(std::string&)>& edit) {
  const std::string out = std::filesystem::path(path).parent_path().string() + "/" + name;
  if (world_rank() == 0) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    edit(bytes);
    std::ofstream(out, std::ios::binary) << bytes;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return out;
}

TEST(GmshParallel, BinarySlicesDistributeLikeTheSerialReader) {
  const std::string msh = gmsh_binary_file();
  if (msh.empty()) GTEST_SKIP() << "gmsh is not installed";
  ASSERT_TRUE(is_gmsh41_binary(msh));
  const Mesh whole = load_mesh_file(msh);
  ASSERT_GT(whole.n_tets(), 500);
  const LocalMesh expected = distribute_mesh(MPI_COMM_WORLD, world_rank() == 0 ? whole : Mesh{});
  MeshSlice slice = read_gmsh_slice(MPI_COMM_WORLD, msh);
  // This rank's blocks only: a share of the vertices and cells.
  EXPECT_EQ(slice.n_vertices, whole.n_vertices());
  EXPECT_EQ(slice.n_cells, whole.n_tets());
  EXPECT_LE(slice.n_local_cells(), whole.n_tets() / world_size() + 1);
  EXPECT_EQ(slice.coords, slice_of(whole, world_rank(), world_size()).coords);
  const LocalMesh got = distribute_slices(MPI_COMM_WORLD, std::move(slice), CellPartitioner::metis);
  expect_same_local_mesh(got, expected);
}

TEST(GmshParallel, RunPathReadsInParallelAndSolvesLikeSerial) {
  const std::string msh = gmsh_binary_file();
  if (msh.empty()) GTEST_SKIP() << "gmsh is not installed";
  const std::string yaml = "mesh: {file: " + msh +
                           "}\nmaterials: [{young: 1000, poisson: 0.3}]\n"
                           "boundary:\n  - {select: {region: 11}, fix: [x, y, z]}\n"
                           "loads: {tractions: [{select: {region: 12}, traction: [0, 0, -20]}]}\n";
  const Job job = mpitest::job_from_yaml(mpitest::scratch_dir("slices"), "gmsh_job", yaml);
  ::setenv("EDGEFEM_PARALLEL_READ_MIN_BYTES", "0", 1);
  DistributedJobMesh loaded = load_distributed_job_mesh(MPI_COMM_WORLD, job);
  ::unsetenv("EDGEFEM_PARALLEL_READ_MIN_BYTES");
  EXPECT_EQ(loaded.reader, MeshReader::parallel_gmsh);
  EXPECT_EQ(loaded.partitioner, CellPartitioner::metis);
  const std::vector<double> distributed = solve(MPI_COMM_WORLD, job, loaded.mesh);
  double relative = 0;
  if (world_rank() == 0) {
    const DistributedJobMesh serial_mesh = load_distributed_job_mesh(MPI_COMM_SELF, job);
    EXPECT_EQ(serial_mesh.reader, MeshReader::serial);  // 64 KB < the default threshold
    const std::vector<double> serial = solve(MPI_COMM_SELF, job, serial_mesh.mesh);
    ASSERT_EQ(serial.size(), distributed.size());
    double diff = 0, largest = 0;
    for (std::size_t i = 0; i < serial.size(); ++i) {
      diff = std::max(diff, std::abs(serial[i] - distributed[i]));
      largest = std::max(largest, std::abs(serial[i]));
    }
    relative = diff / largest;
    EXPECT_GT(largest, 0.01);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  MPI_Bcast(&relative, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_LT(relative, 1e-8);
}

/// read_gmsh_slice must throw CollectiveError on every rank with every piece in its message.
void expect_read_error(const std::string& path, const std::vector<std::string>& pieces) {
  try {
    read_gmsh_slice(MPI_COMM_WORLD, path);
    ADD_FAILURE() << "no error reading " << path;
  } catch (const CollectiveError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": byte ", 0), 0u) << message;
    for (const auto& piece : pieces) EXPECT_NE(message.find(piece), std::string::npos) << message;
  }
}

TEST(GmshParallel, TruncatedOrDamagedFileFailsOnEveryRank) {
  const std::string msh = gmsh_binary_file();
  if (msh.empty()) GTEST_SKIP() << "gmsh is not installed";
  // Cut in the middle of the elements: the scan finds a block running past the end.
  expect_read_error(edited_copy(msh, "cut.msh", [](std::string& b) { b.resize(b.size() * 3 / 4); }),
                    {"unexpected end of file (truncated?)", "element block"});
  // Cut in the middle of the nodes.
  expect_read_error(edited_copy(msh, "cut_nodes.msh",
                                [](std::string& b) {
                                  b.resize(b.find("$Nodes") + (b.find("$EndNodes") - b.find("$Nodes")) / 2);
                                }),
                    {"unexpected end of file (truncated?)", "node block"});
  // An element type overwritten: the first element block's type (after the 4 size_t of the header, dim, entity).
  expect_read_error(edited_copy(msh, "bad_type.msh",
                                [](std::string& b) {
                                  const std::size_t at = b.find("$Elements\n") + 10 + 32 + 8;
                                  const std::int32_t bad = 99;
                                  std::memcpy(&b[at], &bad, 4);
                                }),
                    {"unsupported element type 99"});
  // A damaged section end.
  expect_read_error(edited_copy(msh, "bad_end.msh",
                                [](std::string& b) { b.replace(b.find("$EndElements"), 12, "$EndElementz"); }),
                    {"expected '$EndElements'"});
  // A node tag an element references that is not in $Nodes: the last node of the last element.
  expect_read_error(edited_copy(msh, "bad_node.msh",
                                [](std::string& b) {
                                  const std::size_t at = b.find("\n$EndElements") - 8;
                                  const std::uint64_t bad = 1u << 30;
                                  std::memcpy(&b[at], &bad, 8);
                                }),
                    {"references node 1073741824, which is not in $Nodes"});
}

/// Mean |a - b| over the edges of the piece's cells between owned vertices a, b.
double mean_owned_distance(const LocalMesh& piece) {
  double sum = 0.0;
  long long n = 0;
  const std::vector<LocalIndex>& cells = piece.mesh.tets;
  for (std::size_t c = 0; c < cells.size(); c += 4)
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b)
        if (cells[c + a] < piece.n_owned && cells[c + b] < piece.n_owned) {
          sum += std::abs(cells[c + a] - cells[c + b]);
          ++n;
        }
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

/// renumber_for_locality keeps `before`'s piece (the same vertices by file number, with their coordinates and
/// tags, owned or ghost as before; the same cells in the same order) and numbers it consistently across ranks.
void check_renumbered(const LocalMesh& before, const LocalMesh& after) {
  EXPECT_EQ(after.n_owned, before.n_owned);
  EXPECT_EQ(after.first_owned, before.first_owned);
  EXPECT_EQ(after.n_global_vertices, before.n_global_vertices);
  EXPECT_EQ(after.cell_global, before.cell_global);
  EXPECT_EQ(after.mesh.tet_region, before.mesh.tet_region);
  EXPECT_EQ(after.mesh.triangle_region, before.mesh.triangle_region);
  ASSERT_EQ(after.n_local(), before.n_local());
  std::map<GlobalIndex, LocalIndex> old_local;
  for (LocalIndex v = 0; v < before.n_local(); ++v) old_local[before.original_vertex[static_cast<std::size_t>(v)]] = v;
  std::vector<LocalIndex> old_of(static_cast<std::size_t>(after.n_local()));
  for (LocalIndex v = 0; v < after.n_local(); ++v) {
    const auto it = old_local.find(after.original_vertex[static_cast<std::size_t>(v)]);
    ASSERT_NE(it, old_local.end());
    const LocalIndex old = it->second;
    old_of[static_cast<std::size_t>(v)] = old;
    EXPECT_EQ(v < after.n_owned, old < before.n_owned);
    EXPECT_EQ(after.mesh.vertex(v), before.mesh.vertex(old));
    const std::vector<int> tags(after.vertex_regions.begin() + after.vertex_region_offsets[v],
                                after.vertex_regions.begin() + after.vertex_region_offsets[v + 1]);
    const std::vector<int> old_tags(before.vertex_regions.begin() + before.vertex_region_offsets[old],
                                    before.vertex_regions.begin() + before.vertex_region_offsets[old + 1]);
    EXPECT_EQ(tags, old_tags);
    if (v < after.n_owned) {
      EXPECT_EQ(after.global_vertex[static_cast<std::size_t>(v)], after.first_owned + v);
    }
    if (v > after.n_owned) {
      EXPECT_LT(after.global_vertex[static_cast<std::size_t>(v) - 1], after.global_vertex[static_cast<std::size_t>(v)]);
    }
  }
  for (const auto& [cells_after, cells_before] :
       {std::pair{&after.mesh.tets, &before.mesh.tets}, std::pair{&after.mesh.triangles, &before.mesh.triangles}}) {
    ASSERT_EQ(cells_after->size(), cells_before->size());
    for (std::size_t k = 0; k < cells_after->size(); ++k)
      EXPECT_EQ(old_of[static_cast<std::size_t>((*cells_after)[k])], (*cells_before)[k]);
  }
  // Every rank's owned (file number, global number) pairs; each local vertex's global number is its owner's.
  std::vector<long long> mine;
  for (LocalIndex v = 0; v < after.n_owned; ++v)
    mine.insert(mine.end(), {after.original_vertex[static_cast<std::size_t>(v)], after.global_vertex[static_cast<std::size_t>(v)]});
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(world_size())), offsets(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
  std::vector<long long> all(static_cast<std::size_t>(offsets.back() + counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), offsets.data(), MPI_LONG_LONG,
                 MPI_COMM_WORLD);
  std::map<long long, long long> global_of;
  std::set<long long> globals;
  for (std::size_t k = 0; k < all.size(); k += 2) {
    global_of[all[k]] = all[k + 1];
    globals.insert(all[k + 1]);
  }
  EXPECT_EQ(static_cast<GlobalIndex>(globals.size()), after.n_global_vertices);
  for (LocalIndex v = 0; v < after.n_local(); ++v)
    EXPECT_EQ(after.global_vertex[static_cast<std::size_t>(v)],
              global_of.at(after.original_vertex[static_cast<std::size_t>(v)]));
}

TEST(Locality, RenumberingKeepsEveryPieceAndItsGhostsNumbers) {
  for (const Mesh& whole : {load_mesh_file(source("jobs/examples/meshes/bimaterial.msh")),
                            generate_box({3, 1, 1}, {9, 4, 3})}) {
    const LocalMesh before = distribute_mesh(MPI_COMM_WORLD, world_rank() == 0 ? whole : Mesh{});
    LocalMesh after = before;
    renumber_for_locality(MPI_COMM_WORLD, after);
    check_renumbered(before, after);
  }
}

TEST(Locality, RenumberingBringsAGmshMeshsCellVerticesCloser) {
  // The Gmsh column: interior vertices numbered in the mesher's order, far apart (reverse Cuthill-McKee: closer).
  const Mesh whole = world_rank() == 0 ? load_mesh_file(source("jobs/examples/meshes/column.msh")) : Mesh{};
  const LocalMesh before = distribute_mesh(MPI_COMM_WORLD, whole);
  LocalMesh after = before;
  renumber_for_locality(MPI_COMM_WORLD, after);
  check_renumbered(before, after);
  const double was = mean_owned_distance(before), is = mean_owned_distance(after);
  EXPECT_LT(is, 0.5 * was) << "mean |a - b| over owned cell edges " << was << " -> " << is;
}

}  // namespace test_slices
}  // namespace edgefem
