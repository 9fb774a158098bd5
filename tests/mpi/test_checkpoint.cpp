// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint files (io/checkpoint): written on the ranks of MPI_COMM_WORLD with one ownership of the
// vertices, read back with another, every value compared bit for bit; damaged files and failed writes.
// Run under mpiexec with 1, 2 and 3 ranks (CTest: mpi.checkpoint.npN); every assertion holds on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/checkpoint.hpp"
#include "io/checkpoint_series.hpp"
#include "io/crc32.hpp"
#include "partition/collective.hpp"
#include "tests/support/checkpoint_files.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_checkpoint {  // one per file: the distributed test files share unity batches

namespace fs = std::filesystem;

using mpitest::world_rank;
using mpitest::world_size;

constexpr std::int64_t n_vertices = 1001;

/// Deterministic values, distinct per field, vertex and component, with a few special ones (signed zero,
/// subnormal, infinity, NaN with a payload) that only a bit-exact round trip preserves.
double value(std::size_t field, std::int64_t vertex, int comp, double salt = 0.0) {
  if (vertex == 3 && comp == 0) return -0.0;
  if (vertex == 5 && comp == 1) return std::numeric_limits<double>::denorm_min() * static_cast<double>(field + 1);
  if (vertex == 7 && comp == 2) return -std::numeric_limits<double>::infinity();
  if (vertex == 11 && comp == 0) return std::bit_cast<double>(std::uint64_t{0x7ff8000000000000} + 12345 + field);
  return salt + 1000.0 * static_cast<double>(field + 1) + static_cast<double>(vertex) / 7.0 + comp * 1e-9 - 1.0 / 3.0;
}

/// This rank's owned vertices: scheme 0 gives vertex i to rank (7 i) % P and shuffles each rank's list;
/// scheme 1 gives the lower half to the last rank, the upper half to rank 0 (rank 1 of 3 owns nothing),
/// in descending order; scheme 2 gives rank r the ascending block [r N / P, (r + 1) N / P).
/// (Of the ranks of `comm`.)
std::vector<std::int64_t> ownership_in(MPI_Comm comm, int scheme, std::int64_t n = n_vertices) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> owned;
  for (std::int64_t i = 0; i < n; ++i) {
    int owner = 0;
    if (scheme == 0) {
      owner = static_cast<int>((i * 7) % size);
    } else if (scheme == 1) {
      owner = i < n / 2 ? size - 1 : 0;
    } else {
      owner = static_cast<int>(i * size / n);
    }
    if (owner == rank) owned.push_back(i);
  }
  if (scheme == 0) {
    std::mt19937 rng(static_cast<unsigned>(12345 + rank));
    std::shuffle(owned.begin(), owned.end(), rng);
  } else if (scheme == 1) {
    std::reverse(owned.begin(), owned.end());
  }
  return owned;
}

std::vector<std::int64_t> ownership(int scheme, std::int64_t n = n_vertices) {
  return ownership_in(MPI_COMM_WORLD, scheme, n);
}

CheckpointState make_state(const std::vector<std::int64_t>& owned, double salt = 0.0) {
  CheckpointState s;
  s.step = 123456789012;
  s.time = 0.1 * 3;
  s.dt = 1e-7 / 3;
  s.integrator = "newmark-average-acceleration";  // 28 characters
  s.job_text = "analysis:\n  type: dynamic\n  steps: 10\n# no trailing newline, length not a multiple of 8";
  s.field_names = {"position", "velocity", "acceleration_name_of_31_chars__"};
  for (std::size_t f = 0; f < s.field_names.size(); ++f) {
    std::vector<double> values;
    for (const std::int64_t v : owned) {
      for (int c = 0; c < 3; ++c) values.push_back(value(f, v, c, salt));
    }
    s.fields.push_back(std::move(values));
  }
  return s;
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// Every value of every field of `read` (for `owned`) equals the generator, bit for bit.
void expect_values(const CheckpointState& read, const std::vector<std::int64_t>& owned, std::size_t n_fields,
                   double salt = 0.0) {
  ASSERT_EQ(read.fields.size(), n_fields);
  for (std::size_t f = 0; f < n_fields; ++f) {
    ASSERT_EQ(read.fields[f].size(), 3 * owned.size());
    int mismatches = 0;
    for (std::size_t k = 0; k < owned.size(); ++k) {
      for (int c = 0; c < 3; ++c) {
        const double expected = value(f, owned[k], c, salt);
        if (bits(read.fields[f][3 * k + c]) != bits(expected) && ++mismatches <= 5) {
          ADD_FAILURE() << "field " << f << " vertex " << owned[k] << " component " << c << ": "
                        << read.fields[f][3 * k + c] << " != " << expected;
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << "field " << f;
  }
}

void expect_header(const CheckpointState& read, const CheckpointState& written) {
  EXPECT_EQ(read.step, written.step);
  EXPECT_EQ(bits(read.time), bits(written.time));
  EXPECT_EQ(bits(read.dt), bits(written.dt));
  EXPECT_EQ(read.integrator, written.integrator);
  EXPECT_EQ(read.job_text, written.job_text);
  EXPECT_EQ(read.field_names, written.field_names);
}

/// Runs f on every rank; every rank must throw E with a message containing `needle`.
template <class E, class F>
void expect_throw_everywhere(F&& f, const std::string& needle) {
  bool right = false;
  std::string message = "no exception";
  try {
    f();
  } catch (const E& e) {
    message = e.what();
    right = message.find(needle) != std::string::npos;
  } catch (const std::exception& e) {
    message = std::string("exception of another type: ") + e.what();
  }
  EXPECT_TRUE(right) << "rank " << world_rank() << ": expected '" << needle << "', got: " << message;
  if (!right && world_rank() != 0) {  // GoogleTest prints on rank 0 only
    std::fprintf(stderr, "rank %d: expected '%s', got: %s\n", world_rank(), needle.c_str(), message.c_str());
  }
  int all = right ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(all, 1) << "not every rank threw the expected error";
}

std::uint64_t expected_file_size(const CheckpointState& s) {
  return 512 + (s.job_text.size() + 7) / 8 * 8 + s.fields.size() * static_cast<std::uint64_t>(n_vertices) * 24 + 48 +
         16;
}

/// A directory shared by all ranks (created by rank 0, name broadcast), removed after the test.
class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name;
    if (world_rank() == 0) {
      const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
      const fs::path dir = fs::temp_directory_path() / ("edgefem_ckpt_" + std::to_string(::getpid()) + "_" +
                                                        std::to_string(world_size()) + "_" + info->name());
      fs::remove_all(dir);
      fs::create_directories(dir);
      name = dir.string();
    }
    int length = static_cast<int>(name.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    name.resize(static_cast<std::size_t>(length));
    MPI_Bcast(name.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    dir_ = name;
    file_ = (dir_ / "run.ckpt").string();
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /// Rank 0 modifies the file once every rank is done with it (e.g. has taken its size); every rank
  /// then waits for the modification.
  template <class F>
  void on_rank0(F&& f) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) f();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void patch(std::uint64_t offset, const std::string& bytes) {
    on_rank0([&] {
      std::fstream io(file_, std::ios::in | std::ios::out | std::ios::binary);
      io.seekp(static_cast<std::streamoff>(offset));
      io.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    });
  }
  void write_good() {
    const auto owned = ownership(0);
    write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, make_state(owned));
  }
  CheckpointState read_scheme(int scheme, std::int64_t n = n_vertices) {
    const auto owned = ownership(scheme, std::min(n, n_vertices));
    return read_checkpoint(MPI_COMM_WORLD, file_, n, owned);
  }

  fs::path dir_;
  std::string file_;
};

TEST_F(Checkpoint, RoundTripAcrossDifferentOwnerships) {
  for (const int write_scheme : {0, 2}) {
    const auto written_owned = ownership(write_scheme);
    const CheckpointState written = make_state(written_owned, write_scheme);
    write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, written_owned, written);

    EXPECT_EQ(fs::file_size(file_), expected_file_size(written));
    EXPECT_FALSE(fs::exists(file_ + ".tmp"));

    for (const int scheme : {1, 0, 2}) {
      SCOPED_TRACE("written with ownership scheme " + std::to_string(write_scheme) + ", read with scheme " +
                   std::to_string(scheme));
      const auto owned = ownership(scheme);
      const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned);
      expect_header(read, written);
      expect_values(read, owned, written.fields.size(), write_scheme);
    }
  }
}

// Cell fields (format version 3): 6 doubles per cell in global cell order, after the vertex fields, written with
// one ownership of the cells and read with others (bit for bit), checksummed; version 2 when there are none.
TEST_F(Checkpoint, CellFieldsRoundTripAcrossOwnershipsAndAreChecksummed) {
  constexpr std::int64_t n_cells = 2503;
  const auto owned = ownership(0);
  CheckpointState s = make_state(owned);
  s.n_cells = n_cells;
  s.owned_cells = ownership(0, n_cells);
  s.cell_field_names = {"plastic_strain"};
  std::vector<double> cell_values;
  for (const std::int64_t c : s.owned_cells)
    for (int k = 0; k < 6; ++k) cell_values.push_back(value(7, c, k % 3, 0.5 * k));
  s.cell_fields = {cell_values};
  write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s);
  EXPECT_EQ(fs::file_size(file_), expected_file_size(s) + static_cast<std::uint64_t>(n_cells) * 48);
  std::uint32_t version = 0;
  {
    std::ifstream in(file_, std::ios::binary);
    in.seekg(16);
    in.read(reinterpret_cast<char*>(&version), 4);
  }
  EXPECT_EQ(version, 3u);
  for (const int scheme : {1, 0, 2}) {
    SCOPED_TRACE("cells read with scheme " + std::to_string(scheme));
    const auto cells = ownership(scheme, n_cells);
    const CheckpointState read =
        read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(scheme), CellOwnership{n_cells, cells});
    EXPECT_EQ(read.format_version, 3u);
    expect_values(read, ownership(scheme), s.fields.size());
    ASSERT_EQ(read.cell_field_names, s.cell_field_names);
    ASSERT_EQ(read.cell_fields.size(), 1u);
    ASSERT_EQ(read.cell_fields[0].size(), 6 * cells.size());
    int mismatches = 0;
    for (std::size_t i = 0; i < cells.size(); ++i)
      for (int k = 0; k < 6; ++k)
        if (bits(read.cell_fields[0][6 * i + k]) != bits(value(7, cells[i], k % 3, 0.5 * k))) ++mismatches;
    EXPECT_EQ(mismatches, 0);
  }
  // Without cells: the vertex fields only.
  const CheckpointState vertices_only = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(2));
  EXPECT_TRUE(vertices_only.cell_fields.empty());
  expect_values(vertices_only, ownership(2), s.fields.size());
  // Another cell count, and a damaged cell value.
  const auto fewer = ownership(2, n_cells - 1);
  expect_throw_everywhere<InputError>(
      [&] { (void)read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(2), CellOwnership{n_cells - 1, fewer}); },
      "checkpoint has 2503 cells, the job's mesh has 2502");
  const std::uint64_t cell_start = expected_file_size(s) - 64;  // after the vertex fields
  patch(cell_start + 48 * 100 + 8, "\x01");
  const auto cells = ownership(1, n_cells);
  expect_throw_everywhere<DamagedCheckpoint>(
      [&] { (void)read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(1), CellOwnership{n_cells, cells}); },
      "damaged checkpoint: cell field 'plastic_strain' fails its CRC-32 check");
  // A file without cell fields stays version 2.
  write_good();
  {
    std::ifstream in(file_, std::ios::binary);
    in.seekg(16);
    in.read(reinterpret_cast<char*>(&version), 4);
  }
  EXPECT_EQ(version, 2u);
}

TEST_F(Checkpoint, RankOwningNothingWritesAndAllOfTheFileIsInVertexOrder) {
  const auto owned = ownership(1);  // on 3 ranks rank 1 owns no vertex
  if (world_size() == 3 && world_rank() == 1) {
    EXPECT_TRUE(owned.empty());
  }
  const CheckpointState written = make_state(owned, 0.5);
  write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, written);

  // The file itself: vertex-major fields in original order, right after the padded job text.
  if (world_rank() == 0) {
    std::ifstream in(file_, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_EQ(bytes.size(), expected_file_size(written));
    EXPECT_EQ(std::string(bytes.data(), 16), std::string("EDGEFEM-CKPT\0\0\0\0", 16));
    EXPECT_EQ(std::string(bytes.data() + bytes.size() - 16, 16), std::string("EDGEFEM-END\0\0\0\0\0", 16));
    const std::size_t data = 512 + (written.job_text.size() + 7) / 8 * 8;
    EXPECT_EQ(std::string(bytes.data() + 512, written.job_text.size()), written.job_text);
    for (std::size_t f = 0; f < 3; ++f) {
      for (std::int64_t v : {std::int64_t{0}, std::int64_t{3}, std::int64_t{500}, n_vertices - 1}) {
        for (int c = 0; c < 3; ++c) {
          double x = 0;
          std::memcpy(&x, bytes.data() + data + (f * n_vertices + v) * 24 + c * 8, 8);
          EXPECT_EQ(bits(x), bits(value(f, v, c, 0.5))) << f << " " << v << " " << c;
        }
      }
    }
  }
  const auto read_owned = ownership(0);
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, read_owned);
  expect_header(read, written);
  expect_values(read, read_owned, 3, 0.5);
}

TEST_F(Checkpoint, NoFieldsAndEmptyStrings) {
  const auto owned = ownership(0);
  CheckpointState s;
  s.step = -1;
  s.time = -0.0;
  write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s);
  EXPECT_EQ(fs::file_size(file_), 512u + 48u + 16u);
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(1));
  expect_header(read, s);
  EXPECT_TRUE(read.fields.empty());
}

TEST_F(Checkpoint, OverwritesAndIgnoresAStaleTemporary) {
  write_good();
  // A killed writer left a longer PATH.tmp behind: it must not leak into the next checkpoint.
  on_rank0([&] {
    std::ofstream junk(file_ + ".tmp", std::ios::binary);
    junk << std::string(200000, 'x');
  });
  const auto owned = ownership(1);
  CheckpointState second = make_state(owned, 2.0);
  second.step = 7;
  second.field_names.pop_back();
  second.fields.pop_back();
  write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, second);
  EXPECT_EQ(fs::file_size(file_), expected_file_size(second));
  EXPECT_FALSE(fs::exists(file_ + ".tmp"));
  const auto read_owned = ownership(0);
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, read_owned);
  expect_header(read, second);
  expect_values(read, read_owned, 2, 2.0);
}

TEST_F(Checkpoint, TruncatedFileFailsOnEveryRank) {
  write_good();
  const auto full = fs::file_size(file_);
  on_rank0([&] { fs::resize_file(file_, full - 3); });
  expect_throw_everywhere<DamagedCheckpoint>([&] { read_scheme(0); },
                                             file_ + ": truncated checkpoint: the header announces " +
                                                 std::to_string(full) + " bytes, the file has " +
                                                 std::to_string(full - 3));
  on_rank0([&] { fs::resize_file(file_, 100); });
  expect_throw_everywhere<DamagedCheckpoint>(
      [&] { read_scheme(1); }, file_ + ": truncated checkpoint: the file has 100 bytes, less than the 512-byte header");
  on_rank0([&] { fs::resize_file(file_, 0); });
  expect_throw_everywhere<DamagedCheckpoint>([&] { read_scheme(0); },
                                             file_ + ": truncated checkpoint: the file is empty");
}

TEST_F(Checkpoint, LongerFileOrDamagedEndMarkerFails) {
  write_good();
  const auto full = fs::file_size(file_);
  on_rank0([&] { fs::resize_file(file_, full + 8); });
  expect_throw_everywhere<InputError>([&] { read_scheme(0); }, file_ + ": corrupt checkpoint: the header announces " +
                                                                   std::to_string(full) + " bytes, the file has " +
                                                                   std::to_string(full + 8));
  on_rank0([&] { fs::resize_file(file_, full); });
  patch(full - 16, "EDGEFEM-XYZ");
  expect_throw_everywhere<InputError>([&] { read_scheme(0); },
                                      file_ + ": truncated or corrupt checkpoint: the end marker");
}

TEST_F(Checkpoint, WrongMagicAndVersionFail) {
  write_good();
  patch(3, "X");
  expect_throw_everywhere<InputError>([&] { read_scheme(0); },
                                      file_ + ": not an edgefem checkpoint (wrong magic number)");
  patch(3, "E");
  // Another version, checksums in order (a newer edgefem's file) ...
  patch(16, std::string("\x04\0\0\0", 4));
  on_rank0([&] { ckptfile::reseal(file_); });
  expect_throw_everywhere<InputError>([&] { read_scheme(0); },
                                      file_ + ": checkpoint format version 4, this edgefem reads versions 1 to 3");
  // ... and a version 2 file whose version bytes were damaged: the header's checksum tells.
  patch(16, std::string("\x02\0\0\0", 4));
  on_rank0([&] { ckptfile::reseal(file_); });
  (void)read_scheme(0);
  patch(16, std::string("\x06\0\0\0", 4));
  expect_throw_everywhere<DamagedCheckpoint>([&] { read_scheme(0); },
                                             file_ + ": damaged checkpoint: the header fails its CRC-32 check");
  // A short file that is not a checkpoint is "not a checkpoint", not "truncated".
  on_rank0([&] {
    std::ofstream out(file_, std::ios::binary | std::ios::trunc);
    out << "mesh";
  });
  expect_throw_everywhere<InputError>([&] { read_scheme(0); }, file_ + ": not an edgefem checkpoint");
}

TEST_F(Checkpoint, WrongVertexCountFails) {
  write_good();
  expect_throw_everywhere<InputError>([&] { read_scheme(0, n_vertices + 1); },
                                      file_ + ": checkpoint has 1001 vertices, the job's mesh has 1002");
  expect_throw_everywhere<InputError>([&] { read_scheme(1, 500); },
                                      file_ + ": checkpoint has 1001 vertices, the job's mesh has 500");
}

TEST_F(Checkpoint, MissingFileFails) {
  expect_throw_everywhere<InputError>([&] { read_scheme(0); }, file_ + ": cannot open the checkpoint: no such file");
}

TEST_F(Checkpoint, FailedWriteLeavesThePreviousCheckpoint) {
  write_good();
  const auto size_before = fs::file_size(file_);
  const int last = world_size() - 1;

  // The last rank passes a field one value short.
  {
    const auto owned = ownership(1);
    CheckpointState s = make_state(owned, 9.0);
    if (world_rank() == last) s.fields[1].push_back(1.0);
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             file_ + ": field 'velocity' on rank " + std::to_string(last) + " has ");
  }
  // The last rank misses a vertex (the counts do not add up).
  {
    auto owned = ownership(0);
    if (world_rank() == last && !owned.empty()) owned.pop_back();
    const CheckpointState s = make_state(owned, 9.0);
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             file_ + ": the ranks own 1000 vertices in total, the mesh has 1001");
  }
  // An index out of range, and a vertex listed twice on one rank.
  {
    auto owned = ownership(0);
    if (world_rank() == last) owned.back() = n_vertices;
    const CheckpointState s = make_state(ownership(0), 9.0);
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             "has original index 1001, outside [0, 1001)");
    owned = ownership(0);
    if (world_rank() == last) owned.back() = owned.front();
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             "rank " + std::to_string(last) + " lists vertex");
  }
  // Two ranks own the same vertex (and so another vertex is owned by none).
  if (world_size() > 1) {
    auto owned = ownership(0);
    if (world_rank() == 1) owned.back() = 0;  // vertex 0 belongs to rank 0
    const CheckpointState s = make_state(owned, 9.0);
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             "is owned by more than one rank");
  }
  // Bad header values on rank 0.
  {
    const auto owned = ownership(0);
    CheckpointState s = make_state(owned, 9.0);
    s.field_names[0] = std::string(32, 'p');
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             "is longer than 31 characters");
    s = make_state(owned, 9.0);
    for (int k = 0; k < 6; ++k) {
      s.field_names.push_back("extra" + std::to_string(k));
      s.fields.push_back(s.fields[0]);
    }
    expect_throw_everywhere<CollectiveError>([&] { write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s); },
                                             file_ + ": 9 fields, a checkpoint holds at most 8");
  }
  // The directory of the target does not exist.
  {
    const auto owned = ownership(0);
    const std::string elsewhere = (dir_ / "missing" / "x.ckpt").string();
    expect_throw_everywhere<CollectiveError>(
        [&] { write_checkpoint(MPI_COMM_WORLD, elsewhere, n_vertices, owned, make_state(owned)); }, "does not exist");
  }

  // The first checkpoint is intact and no temporary is left behind.
  EXPECT_FALSE(fs::exists(file_ + ".tmp"));
  EXPECT_EQ(fs::file_size(file_), size_before);
  const auto owned = ownership(1);
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned);
  expect_header(read, make_state(ownership(0)));
  expect_values(read, owned, 3);
}

// ---- checksums (format version 2) ----------------------------------------------------------------------

/// CRC-32 bit by bit from the definition (no tables: independent of io/crc32).
std::uint32_t bitwise_crc(const std::vector<char>& bytes, std::size_t offset, std::size_t size) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = offset; i < offset + size; ++i) {
    c ^= static_cast<unsigned char>(bytes[i]);
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

TEST_F(Checkpoint, TheTrailerHoldsTheCrc32OfEachPartOfTheFile) {
  write_good();
  if (world_rank() == 0) {
    const std::vector<char> bytes = ckptfile::read_bytes(file_);
    const ckptfile::Offsets o = ckptfile::offsets(bytes);
    ASSERT_EQ(o.n_fields, 3u);
    ASSERT_EQ(bytes.size(), o.end + 16);
    auto u32 = [&](std::size_t offset) { return ckptfile::get<std::uint32_t>(bytes, offset); };
    EXPECT_EQ(u32(16), 2u) << "format version";
    EXPECT_EQ(u32(o.checksums), bitwise_crc(bytes, 0, 512)) << "header";
    EXPECT_EQ(u32(o.checksums + 4), bitwise_crc(bytes, 512, o.job_padded)) << "job text";
    for (std::size_t f = 0; f < 8; ++f) {
      const std::uint32_t expected = f < 3 ? bitwise_crc(bytes, o.fields + f * o.field_bytes, o.field_bytes) : 0;
      EXPECT_EQ(u32(o.checksums + 8 + 4 * f), expected) << "field " << f;
    }
    EXPECT_EQ(u32(o.checksums + 40), bitwise_crc(bytes, o.checksums, 40)) << "the checksums' own";
    EXPECT_EQ(u32(o.checksums + 44), 0u);
    EXPECT_EQ(std::string(bytes.data() + o.end, 16), std::string("EDGEFEM-END\0\0\0\0\0", 16));
  }
}

/// MPI_COMM_WORLD's first `n` ranks (MPI_COMM_NULL on the others).
MPI_Comm first_ranks(int n) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < n ? 0 : MPI_UNDEFINED, world_rank(), &comm);
  return comm;
}

TEST_F(Checkpoint, WrittenOnAnyNumberOfRanksVerifiesOnAnyOther) {
  // Every (writers, readers) pair up to the world size (on 3 ranks: written on 2, read on 1 and 3, ...): the
  // field checksums are the file's, not the partition's, and every read verifies them.
  std::vector<std::uint32_t> first_crcs;
  for (int writers = 1; writers <= world_size(); ++writers) {
    if (MPI_Comm comm = first_ranks(writers); comm != MPI_COMM_NULL) {
      const auto owned = ownership_in(comm, writers % 2 == 0 ? 0 : 1);
      write_checkpoint(comm, file_, n_vertices, owned, make_state(owned));
      MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
      const std::vector<char> bytes = ckptfile::read_bytes(file_);
      const ckptfile::Offsets o = ckptfile::offsets(bytes);
      std::vector<std::uint32_t> crcs;
      for (std::size_t f = 0; f < 3; ++f) crcs.push_back(ckptfile::get<std::uint32_t>(bytes, o.checksums + 8 + 4 * f));
      if (first_crcs.empty()) first_crcs = crcs;
      EXPECT_EQ(crcs, first_crcs) << "written on " << writers << " ranks";
    }
    for (int readers = 1; readers <= world_size(); ++readers) {
      if (MPI_Comm comm = first_ranks(readers); comm != MPI_COMM_NULL) {
        for (const int scheme : {0, 1, 2}) {
          SCOPED_TRACE("written on " + std::to_string(writers) + " ranks, read on " + std::to_string(readers) +
                       " with scheme " + std::to_string(scheme));
          const auto owned = ownership_in(comm, scheme);
          const CheckpointState read = read_checkpoint(comm, file_, n_vertices, owned);
          EXPECT_EQ(read.format_version, 2u);
          expect_values(read, owned, 3);
        }
        MPI_Comm_free(&comm);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

TEST_F(Checkpoint, LargeFieldsFoldedBySeveralThreadsPerRank) {
  // Enough vertices per rank for the CRC to be split over the OpenMP threads (3 here), owned in scattered runs.
  constexpr std::int64_t n = 240000;
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(3);
  std::vector<std::int64_t> owned;
  for (std::int64_t i = 0; i < n; ++i) {
    if ((i / 7 + i / 1000) % world_size() == world_rank()) owned.push_back(i);
  }
  CheckpointState s;
  s.field_names = {"position"};
  s.fields.emplace_back();
  for (const std::int64_t v : owned) {
    for (int c = 0; c < 3; ++c) s.fields[0].push_back(static_cast<double>(v) * 0.001 + c);
  }
  write_checkpoint(MPI_COMM_WORLD, file_, n, owned, s);
  if (world_rank() == 0) {
    const std::vector<char> bytes = ckptfile::read_bytes(file_);
    const ckptfile::Offsets o = ckptfile::offsets(bytes);
    EXPECT_EQ(ckptfile::get<std::uint32_t>(bytes, o.checksums + 8), bitwise_crc(bytes, o.fields, o.field_bytes));
  }
  std::reverse(owned.begin(), owned.end());
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n, owned);
  ASSERT_EQ(read.fields.size(), 1u);
  EXPECT_EQ(read.fields[0][0], static_cast<double>(owned[0]) * 0.001);
  on_rank0([&] { ckptfile::flip_bit(file_, 512 + 24 * (n - 1), 0); });  // the last vertex's x
  expect_throw_everywhere<DamagedCheckpoint>([&] { (void)read_checkpoint(MPI_COMM_WORLD, file_, n, owned); },
                                             file_ + ": damaged checkpoint: field 'position' fails its CRC-32 check");
  omp_set_num_threads(saved_threads);
}

TEST_F(Checkpoint, AFlippedBitInAnyPartIsRefusedOnEveryRankNamingThePart) {
  write_good();
  std::vector<char> bytes;
  if (world_rank() == 0) bytes = ckptfile::read_bytes(file_);
  // Every rank needs the offsets: rank 0's file, broadcast.
  std::uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(size);
  MPI_Bcast(bytes.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD);
  const ckptfile::Offsets o = ckptfile::offsets(bytes);
  const std::string job_size = std::to_string(make_state({}).job_text.size());
  ASSERT_NE(o.job_padded, make_state({}).job_text.size()) << "the job text should have padding";
  const std::string damaged = file_ + ": damaged checkpoint: ";
  struct Case {
    std::size_t offset;
    int bit;
    std::string needle;
    bool info_sees_it;  ///< read_checkpoint_info checks all but the fields
  };
  const std::vector<Case> cases = {
      {40, 0, damaged + "the header fails its CRC-32 check (the trailer records 0x", true},         // time
      {24, 4, damaged + "the header fails its CRC-32 check", true},                                 // vertex count
      {100, 1, damaged + "the header fails its CRC-32 check", true},                                // a field name
      {370, 7, damaged + "the header fails its CRC-32 check", true},                                // written
      {512 + 3, 2, damaged + "the job text fails its CRC-32 check (the trailer records 0x", true},  // job text
      {o.fields - 1, 0, damaged + "the job text fails its CRC-32 check", true},                     // its padding
      {o.fields, 0, damaged + "field 'position' fails its CRC-32 check (the trailer records 0x", false},
      {o.fields + o.field_bytes + o.field_bytes / 2 + 5, 6, damaged + "field 'velocity' fails its CRC-32 check", false},
      {o.checksums - 1, 3, damaged + "field 'acceleration_name_of_31_chars__' fails its CRC-32 check", false},
      {o.checksums + 12, 0, damaged + "the checksums in the trailer fail their own CRC-32 check", true},
      {o.checksums + 41, 0, damaged + "the checksums in the trailer fail their own CRC-32 check", true},
      {o.end + 2, 1, file_ + ": truncated or corrupt checkpoint: the end marker 'EDGEFEM-END' is missing", true},
  };
  int scheme = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE("bit " + std::to_string(c.bit) + " of byte " + std::to_string(c.offset));
    on_rank0([&] { ckptfile::flip_bit(file_, c.offset, c.bit); });
    expect_throw_everywhere<DamagedCheckpoint>([&] { read_scheme(scheme); }, c.needle);
    if (world_rank() == 0) {
      bool refused = false;
      try {
        (void)read_checkpoint_info(file_);
      } catch (const DamagedCheckpoint& e) {
        refused = std::string(e.what()).find(c.needle) != std::string::npos;
      }
      EXPECT_EQ(refused, c.info_sees_it);
    }
    on_rank0([&] { ckptfile::flip_bit(file_, c.offset, c.bit); });  // repaired: reads again
    const auto owned = ownership(scheme);
    expect_values(read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned), owned, 3);
    scheme = (scheme + 1) % 3;
  }
  // Two bits of one field cancelled by two others would pass; one bit in each field is caught by the first field.
  on_rank0([&] {
    for (std::size_t f = 0; f < 3; ++f) ckptfile::flip_bit(file_, o.fields + f * o.field_bytes + 8, 1);
  });
  expect_throw_everywhere<DamagedCheckpoint>([&] { read_scheme(1); }, damaged + "field 'position'");
}

TEST_F(Checkpoint, ATruncatedVersion2FileIsRefusedAtAnyLength) {
  write_good();
  const auto full = fs::file_size(file_);
  // Cut inside the end marker, the checksums, the last field, the job text.
  for (const std::uint64_t cut :
       {std::uint64_t{1}, std::uint64_t{16}, std::uint64_t{40}, std::uint64_t{64}, std::uint64_t{1000}, full - 600}) {
    SCOPED_TRACE("without the last " + std::to_string(cut) + " bytes");
    on_rank0([&] { fs::resize_file(file_, full - cut); });
    expect_throw_everywhere<DamagedCheckpoint>([&] { read_scheme(2); },
                                               file_ + ": truncated checkpoint: the header announces " +
                                                   std::to_string(full) + " bytes, the file has " +
                                                   std::to_string(full - cut));
    write_good();
  }
}

TEST_F(Checkpoint, Version1FilesAreReadWithoutVerification) {
  write_good();
  on_rank0([&] { ckptfile::to_version1(file_); });
  EXPECT_EQ(fs::file_size(file_), expected_file_size(make_state({})) - 48);  // no checksum block
  const auto owned = ownership(1);
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned);
  EXPECT_EQ(read.format_version, 1u);
  expect_header(read, make_state(owned));
  expect_values(read, owned, 3);
  if (world_rank() == 0) {
    EXPECT_EQ(read_checkpoint_info(file_).format_version, 1u);
  }
}

// ---- run ids and a run's series of checkpoints (io/checkpoint_series) ------------------------------------

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST_F(Checkpoint, RunIdInTheHeaderAndFilesWithoutOne) {
  const auto owned = ownership(0);
  CheckpointState s = make_state(owned);
  s.run_id = 0x0123456789abcdefULL;
  s.run_started = 1700000000123456789;
  s.written = 42;  // ignored: the writer stamps the time
  const std::int64_t before = now_ns();
  write_checkpoint(MPI_COMM_WORLD, file_, n_vertices, owned, s);
  const std::int64_t after = now_ns();
  if (world_rank() == 0) {  // bytes 352, 360, 368 (docs/guide/dynamics.md "Checkpoints and restart")
    std::ifstream in(file_, std::ios::binary);
    std::vector<char> head(512);
    in.read(head.data(), 512);
    std::uint64_t id = 0;
    std::int64_t started = 0, written = 0;
    std::memcpy(&id, head.data() + 352, 8);
    std::memcpy(&started, head.data() + 360, 8);
    std::memcpy(&written, head.data() + 368, 8);
    EXPECT_EQ(id, 0x0123456789abcdefULL);
    EXPECT_EQ(started, 1700000000123456789);
    EXPECT_GE(written, before);
    EXPECT_LE(written, after);
    EXPECT_TRUE(std::all_of(head.begin() + 376, head.end(), [](char c) { return c == 0; }));
    const CheckpointInfo info = read_checkpoint_info(file_);
    EXPECT_EQ(info.path, file_);
    EXPECT_EQ(info.step, s.step);
    EXPECT_EQ(bits(info.time), bits(s.time));
    EXPECT_EQ(info.run_id, s.run_id);
    EXPECT_EQ(info.run_started, s.run_started);
    EXPECT_EQ(info.written, written);
  }
  const CheckpointState read = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(2));
  EXPECT_EQ(read.run_id, s.run_id);
  EXPECT_EQ(read.run_started, s.run_started);
  EXPECT_GE(read.written, before);
  EXPECT_LE(read.written, after);

  // A file of an edgefem without run ids (version 1, those bytes zero) reads as run 0 with all its values.
  on_rank0([&] { ckptfile::to_version1(file_, true); });
  const CheckpointState old = read_checkpoint(MPI_COMM_WORLD, file_, n_vertices, ownership(2));
  EXPECT_EQ(old.format_version, 1u);
  EXPECT_EQ(read.format_version, 2u);
  EXPECT_EQ(old.run_id, 0u);
  EXPECT_EQ(old.run_started, 0);
  EXPECT_EQ(old.written, 0);
  expect_header(old, s);
  expect_values(old, ownership(2), 3);
  if (world_rank() == 0) {
    EXPECT_EQ(read_checkpoint_info(file_).run_id, 0u);
    EXPECT_EQ(describe_run(CheckpointRun{}), "a run without id (an older edgefem)");
    EXPECT_EQ(describe_run(CheckpointRun{0xabcULL, 0}), "run 0000000000000abc");
    EXPECT_EQ(describe_run(CheckpointRun{0xabcULL, 1700000000123456789}),
              "run 0000000000000abc started 2023-11-14 22:13:20 UTC");
  }
}

TEST_F(Checkpoint, InfoOfDamagedFilesFails) {
  write_good();
  on_rank0([&] { fs::resize_file(file_, fs::file_size(file_) - 1); });
  if (world_rank() == 0) {
    try {
      (void)read_checkpoint_info(file_);
      ADD_FAILURE() << "no exception";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(file_ + ": truncated checkpoint: the header announces"), std::string::npos)
          << e.what();
    }
    EXPECT_THROW((void)read_checkpoint_info(file_ + ".none"), InputError);
  }
}

using mpitest::checkpoint_names;

/// make_state() at `step`.
CheckpointState state_at(const std::vector<std::int64_t>& owned, std::int64_t step) {
  CheckpointState s = make_state(owned);
  s.step = step;
  return s;
}

using Names = std::vector<std::string>;

TEST_F(Checkpoint, SeriesRotatesOnlyItsOwnAndSetsOtherRunsAside) {
  const auto owned = ownership(0);
  const std::string dir = dir_.string();
  auto state = [&](std::int64_t step) { return state_at(owned, step); };
  // An earlier run with higher step numbers.
  CheckpointSeries first(MPI_COMM_WORLD, dir, std::nullopt);
  EXPECT_NE(first.run().id, 0u);
  EXPECT_TRUE(first.set_aside_other_runs().empty());
  for (std::int64_t step : {10, 15, 20}) first.write(n_vertices, owned, state(step));
  EXPECT_EQ(checkpoint_names(dir_), (Names{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));

  // A fresh run: a new id on every rank, the earlier run's checkpoints moved aside (the same line on every rank).
  CheckpointSeries second(MPI_COMM_WORLD, dir, std::nullopt);
  std::uint64_t ids[2] = {second.run().id, second.run().id};
  MPI_Allreduce(MPI_IN_PLACE, &ids[0], 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &ids[1], 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_NE(second.run().id, first.run().id);
  EXPECT_GE(second.run().started, first.run().started);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(first.run().id));
  const fs::path aside = dir_ / (std::string("previous_run_") + hex);
  const std::vector<std::string> lines = second.set_aside_other_runs();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "moved 2 checkpoints of another run (" + describe_run(first.run()) + ", steps 15 and 20) from '" +
                          dir + "' to '" + aside.string() + "/'");
  EXPECT_EQ(checkpoint_names(aside), (Names{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));

  // Rotation keeps this run's two newest and never touches a checkpoint of another run, even one that appears
  // in the directory meanwhile with a higher step.
  const std::string path = second.write(n_vertices, owned, state(2));
  EXPECT_EQ(path, (dir_ / "checkpoint_000002.ckpt").string());
  on_rank0([&] { fs::copy_file(aside / "checkpoint_000020.ckpt", dir_ / "checkpoint_000030.ckpt"); });
  second.write(n_vertices, owned, state(5));
  EXPECT_EQ(checkpoint_names(dir_),
            (Names{"checkpoint_000002.ckpt", "checkpoint_000005.ckpt", "checkpoint_000030.ckpt"}));
  second.write(n_vertices, owned, state(10));
  EXPECT_EQ(checkpoint_names(dir_),
            (Names{"checkpoint_000005.ckpt", "checkpoint_000010.ckpt", "checkpoint_000030.ckpt"}));
  EXPECT_EQ(checkpoint_names(aside), (Names{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));

  // --restart DIR: the newest run's newest checkpoint, not the other run's higher step.
  const RestartChoice choice = choose_restart_checkpoint(MPI_COMM_WORLD, dir);
  EXPECT_EQ(choice.path, (dir_ / "checkpoint_000010.ckpt").string());
  EXPECT_TRUE(choice.notes.empty());
  const CheckpointState resumed = read_checkpoint(MPI_COMM_WORLD, choice.path, n_vertices, owned);
  EXPECT_EQ(resumed.step, 10);
  EXPECT_EQ(resumed.run_id, second.run().id);
  EXPECT_EQ(resumed.run_started, second.run().started);

  // Moving aside again: the folder of the same run already holds those names, so a second folder is made.
  on_rank0([&] { fs::copy_file(aside / "checkpoint_000015.ckpt", dir_ / "checkpoint_000015.ckpt"); });
  CheckpointSeries third(MPI_COMM_WORLD, dir, CheckpointRun{second.run()});
  EXPECT_EQ(third.run().id, second.run().id);
  EXPECT_EQ(third.set_aside_other_runs().size(), 1u);
  EXPECT_EQ(checkpoint_names(dir_), (Names{"checkpoint_000005.ckpt", "checkpoint_000010.ckpt"}));
  EXPECT_EQ(checkpoint_names(aside.string() + "_2"), (Names{"checkpoint_000015.ckpt", "checkpoint_000030.ckpt"}));
}

TEST_F(Checkpoint, ARestartFromAnEarlierCheckpointSupersedesTheLaterOnes) {
  const auto owned = ownership(0);
  const std::string dir = dir_.string();
  auto state = [&](std::int64_t step) { return state_at(owned, step); };
  CheckpointSeries first(MPI_COMM_WORLD, dir, std::nullopt);
  for (std::int64_t step : {5, 10}) first.write(n_vertices, owned, state(step));
  // Continued from step 5 (same run): step 6 is newer than the first attempt's step 10.
  CheckpointSeries again(MPI_COMM_WORLD, dir, first.run());
  EXPECT_EQ(again.run().id, first.run().id);
  EXPECT_EQ(again.run().started, first.run().started);
  EXPECT_TRUE(again.set_aside_other_runs().empty());
  again.write(n_vertices, owned, state(6));
  EXPECT_EQ(checkpoint_names(dir_), (Names{"checkpoint_000006.ckpt", "checkpoint_000010.ckpt"}));
  EXPECT_EQ(choose_restart_checkpoint(MPI_COMM_WORLD, dir).path, (dir_ / "checkpoint_000006.ckpt").string());
  again.write(n_vertices, owned, state(7));
  EXPECT_EQ(checkpoint_names(dir_), (Names{"checkpoint_000006.ckpt", "checkpoint_000007.ckpt"}));

  // An unreadable file is skipped with a note; a directory without a complete checkpoint is an input error.
  on_rank0([&] { std::ofstream(dir_ / "checkpoint_000099.ckpt") << "not a checkpoint"; });
  const RestartChoice choice = choose_restart_checkpoint(MPI_COMM_WORLD, dir);
  EXPECT_EQ(choice.path, (dir_ / "checkpoint_000007.ckpt").string());
  ASSERT_EQ(choice.notes.size(), 1u);
  EXPECT_EQ(choice.notes[0], "skipping " + (dir_ / "checkpoint_000099.ckpt").string() +
                                 ": not an edgefem checkpoint (wrong magic number)");
  const std::string empty = (dir_ / "empty").string();
  on_rank0([&] { fs::create_directories(empty); });
  expect_throw_everywhere<CollectiveError>([&] { (void)choose_restart_checkpoint(MPI_COMM_WORLD, empty); },
                                           "--restart: no complete checkpoint_*.ckpt in directory '" + empty + "'");
  // A path that is not a directory is taken as it is (read_checkpoint reports a missing file).
  EXPECT_EQ(choose_restart_checkpoint(MPI_COMM_WORLD, empty + "/x.ckpt").path, empty + "/x.ckpt");
}

TEST_F(Checkpoint, RestartFromADirectoryFallsBackToTheNewestIntactCheckpointAndChangesNothing) {
  const auto owned = ownership(0);
  const std::string dir = dir_.string();
  auto path = [&](const char* name) { return (dir_ / name).string(); };
  // An older run with a higher step, then the newest run's steps 5 and 10 (nothing set aside: both runs here).
  CheckpointSeries older(MPI_COMM_WORLD, dir, std::nullopt);
  older.write(n_vertices, owned, state_at(owned, 20));
  CheckpointSeries newest(MPI_COMM_WORLD, dir, std::nullopt);
  for (std::int64_t step : {5, 10}) newest.write(n_vertices, owned, state_at(owned, step));
  const std::string five = path("checkpoint_000005.ckpt"), ten = path("checkpoint_000010.ckpt");
  const std::string run = describe_run(newest.run());

  // Intact: the newest, no note.
  Restart r = read_restart_checkpoint(MPI_COMM_WORLD, dir, n_vertices, ownership(2));
  EXPECT_EQ(r.path, ten);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(r.state.step, 10);

  // One bit of step 10's velocity: skipped, saying why; step 5 is used (not the other run's step 20).
  std::size_t velocity = 0;
  if (world_rank() == 0) velocity = ckptfile::offsets(ckptfile::read_bytes(ten)).fields + 24 * n_vertices + 100;
  on_rank0([&] { ckptfile::flip_bit(ten, velocity, 3); });
  const auto before = ckptfile::snapshot(dir_);
  r = read_restart_checkpoint(MPI_COMM_WORLD, dir, n_vertices, ownership(1));
  EXPECT_EQ(r.path, five);
  EXPECT_EQ(r.state.step, 5);
  expect_values(r.state, ownership(1), 3);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0].rfind("skipping " + ten + ": damaged checkpoint: field 'velocity' fails its CRC-32 check", 0),
            0u)
      << r.notes[0];
  EXPECT_EQ(r.notes[1], "using " + five + ", the newest intact checkpoint of " + run);

  // --restart FILE with the damaged file: refused with the reason, no fallback.
  expect_throw_everywhere<DamagedCheckpoint>(
      [&] { (void)read_restart_checkpoint(MPI_COMM_WORLD, ten, n_vertices, owned); },
      ten + ": damaged checkpoint: field 'velocity' fails its CRC-32 check");

  // Step 5's header damaged too: no intact checkpoint of the newest run; the other run's is not taken.
  on_rank0([&] { ckptfile::flip_bit(five, 48, 0); });
  expect_throw_everywhere<InputError>([&] { (void)read_restart_checkpoint(MPI_COMM_WORLD, dir, n_vertices, owned); },
                                      "--restart: no intact checkpoint of the newest run (" + run + ") in directory '" +
                                          dir + "'; skipped " + five +
                                          ": damaged checkpoint: the header fails its CRC-32 check");
  expect_throw_everywhere<InputError>([&] { (void)read_restart_checkpoint(MPI_COMM_WORLD, dir, n_vertices, owned); },
                                      "; skipped " + ten +
                                          ": damaged checkpoint: field 'velocity' fails its CRC-32 check");
  on_rank0([&] { ckptfile::flip_bit(five, 48, 0); });
  // Nothing was moved, renamed, deleted or changed by any of these (the failures included).
  if (world_rank() == 0) {
    EXPECT_EQ(ckptfile::snapshot(dir_), before);
    EXPECT_EQ(before.size(), 3u);
  }

  // A version-1 file restarts with a note that it cannot be verified.
  on_rank0([&] { ckptfile::to_version1(five); });
  r = read_restart_checkpoint(MPI_COMM_WORLD, dir, n_vertices, owned);
  EXPECT_EQ(r.path, five);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(r.notes[2],
            five + " is a checkpoint of format version 1, without checksums: its contents cannot be verified");
}

}  // namespace test_checkpoint
}  // namespace edgefem
