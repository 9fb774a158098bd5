// SPDX-License-Identifier: BSD-3-Clause
// Files written before issue 49 (the hand-written CRC-32 and .pvd reader) read the same with today's code
// (zlib's crc32 / crc32_combine, VTK's XML parser): tests/data/old_checkpoint/ holds a checkpoint and the
// solution.pvd that the edgefem of commit 5c4b6a1 wrote for the job next to them (two tets along x, Newmark, 4 steps
// of 0.05). The checksums below are Python's zlib.crc32 of the file's parts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/crc32.hpp"
#include "io/vtk_output.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;

const fs::path data_dir = fs::path(EDGEFEM_SOURCE_DIR) / "tests" / "data" / "old_checkpoint";

std::vector<unsigned char> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint32_t u32_at(const std::vector<unsigned char>& b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

TEST(OldCheckpoint, ChecksumsOfTheOldFileAreZlibs) {
  const std::vector<unsigned char> b = bytes_of(data_dir / "checkpoint_000004.ckpt");
  ASSERT_EQ(b.size(), 3056u);
  const std::size_t trailer = b.size() - 64;
  // The trailer as the old code wrote it (zlib.crc32 in Python gives the same numbers).
  EXPECT_EQ(u32_at(b, trailer), 0x6ae52046u);
  EXPECT_EQ(crc32::of(b.data(), 512), 0x6ae52046u);
  const std::uint32_t fields[6] = {0x4de6dffdu, 0x348cd36au, 0x43a2b533u, 0xebf26a52u, 0xb2455b9fu, 0x5f9db452u};
  const std::size_t n = 12, field_bytes = n * 24, first_field = trailer - 6 * field_bytes;
  for (std::size_t f = 0; f < 6; ++f) {
    EXPECT_EQ(u32_at(b, trailer + 8 + 4 * f), fields[f]) << f;
    EXPECT_EQ(crc32::of(b.data() + first_field + f * field_bytes, field_bytes), fields[f]) << f;
    // The positioned contributions (two "ranks" splitting the field unevenly) give the same CRC.
    crc32::Positioned a(field_bytes), c(field_bytes);
    a.add(0, b.data() + first_field + f * field_bytes, 40);
    c.add(40, b.data() + first_field + f * field_bytes + 40, field_bytes - 40);
    EXPECT_EQ(crc32::Positioned::finish(a.contribution() ^ c.contribution(), field_bytes), fields[f]) << f;
  }
  EXPECT_EQ(u32_at(b, trailer + 40), crc32::of(b.data() + trailer, 40));
}

TEST(OldCheckpoint, ReadsAndVerifies) {
  const std::string path = (data_dir / "checkpoint_000004.ckpt").string();
  const CheckpointInfo info = read_checkpoint_info(path);
  EXPECT_EQ(info.format_version, 2u);
  EXPECT_EQ(info.step, 4);
  EXPECT_DOUBLE_EQ(info.time, 0.2);
  std::vector<std::int64_t> owned(12);
  std::iota(owned.begin(), owned.end(), 0);
  const CheckpointState s = read_checkpoint(MPI_COMM_WORLD, path, 12, owned);  // every CRC checked
  EXPECT_EQ(s.integrator, "newmark");
  EXPECT_DOUBLE_EQ(s.dt, 0.05);
  ASSERT_EQ(s.fields.size(), 6u);
  EXPECT_EQ(s.field_names.front(), "position");
  ASSERT_EQ(s.fields[0].size(), 36u);
  EXPECT_NE(s.job_text.find("newmark"), std::string::npos);
  // Vertex 0 is on the clamped face x = 0: it has not moved.
  EXPECT_EQ(s.fields[0][0], 0.0);
}

class OldPvd : public testing::DirectoryTest {
 protected:
  OldPvd() : DirectoryTest("edgefem_old_pvd") {}
};

TEST_F(OldPvd, LoadsWithExactTimesAndRewritesByteForByte) {
  const fs::path copy = dir_ / "solution.pvd";
  fs::copy_file(data_dir / "solution.pvd", copy);
  const PvdCollection pvd = PvdCollection::load(copy.string());
  ASSERT_EQ(pvd.entries().size(), 3u);
  EXPECT_EQ(pvd.entries()[0], (std::pair<double, std::string>{0.0, "step_000000.pvtu"}));
  EXPECT_EQ(pvd.entries()[1], (std::pair<double, std::string>{0.1, "step_000002.pvtu"}));
  EXPECT_EQ(pvd.entries()[2], (std::pair<double, std::string>{0.2, "step_000004.pvtu"}));
  pvd.write();
  EXPECT_EQ(bytes_of(copy), bytes_of(data_dir / "solution.pvd"));
}

}  // namespace
}  // namespace edgefem
