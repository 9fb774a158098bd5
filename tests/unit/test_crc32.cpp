// SPDX-License-Identifier: BSD-3-Clause
// CRC-32 (io/crc32): known values, continuation, and the positioned contributions that the checkpoint files
// combine across ranks (any split of a message gives the CRC of the whole), against a bit-by-bit reference.
#include "io/crc32.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace edgefem {
namespace {

/// Bit by bit, from the definition (no tables).
std::uint32_t reference_crc(const std::vector<unsigned char>& bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> out(n);
  for (auto& b : out) b = static_cast<unsigned char>(rng());
  return out;
}

TEST(Crc32, KnownValues) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32::of(check.data(), check.size()), 0xCBF43926u);
  EXPECT_EQ(crc32::of(nullptr, 0), 0u);
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc32::of(fox.data(), fox.size()), 0x414FA339u);
  const std::vector<unsigned char> zeros(32, 0);
  EXPECT_EQ(crc32::of(zeros.data(), zeros.size()), 0x190A55ADu);  // zlib.crc32(bytes(32))
}

TEST(Crc32, MatchesTheBitwiseDefinitionAndContinues) {
  for (std::size_t n : {1u, 7u, 8u, 9u, 63u, 64u, 1000u, 4099u}) {
    const auto bytes = random_bytes(n, static_cast<unsigned>(n));
    EXPECT_EQ(crc32::of(bytes.data(), n), reference_crc(bytes)) << n;
    for (std::size_t cut : {std::size_t{0}, n / 3, n - 1}) {
      const std::uint32_t first = crc32::of(bytes.data(), cut);
      EXPECT_EQ(crc32::update(first, bytes.data() + cut, n - cut), reference_crc(bytes)) << n << " " << cut;
    }
  }
}

TEST(Crc32, ShiftIsFeedingZeros) {
  // shift(reg, n) equals the raw register after n zero bytes: compare through update, whose register is ~crc.
  for (std::uint64_t n : {1u, 100u, 256u, 257u, 5000u, 123457u}) {
    const std::vector<unsigned char> zeros(static_cast<std::size_t>(n), 0);
    const std::uint32_t crc = 0x12345678u;
    EXPECT_EQ(~crc32::shift(~crc, n), crc32::update(crc, zeros.data(), zeros.size())) << n;
  }
  EXPECT_EQ(crc32::shift(0xDEADBEEFu, 0), 0xDEADBEEFu);
  EXPECT_EQ(crc32::shift(0u, 999999), 0u);
}

TEST(Crc32, PositionedPartsOfAnySplitCombineToTheWholeMessage) {
  const std::size_t n = 24 * 5000 + 16;
  const auto bytes = random_bytes(n, 7);
  const std::uint32_t whole = reference_crc(bytes);
  std::mt19937 rng(11);
  for (int parts : {1, 2, 3, 7}) {
    // Runs of random lengths (1 byte .. 3000 bytes) dealt to the parts at random: each part sees its runs in order.
    std::vector<crc32::Positioned> part(static_cast<std::size_t>(parts), crc32::Positioned(n));
    for (std::size_t offset = 0; offset < n;) {
      const std::size_t size = std::min<std::size_t>(n - offset, 1 + rng() % 3000);
      part[rng() % static_cast<unsigned>(parts)].add(offset, bytes.data() + offset, size);
      offset += size;
    }
    std::uint32_t sum = 0;
    for (const auto& p : part) sum ^= p.contribution();
    EXPECT_EQ(crc32::Positioned::finish(sum, n), whole) << parts << " parts";
  }
  // A part that holds nothing contributes nothing; the empty message has CRC 0.
  EXPECT_EQ(crc32::Positioned(n).contribution(), 0u);
  EXPECT_EQ(crc32::Positioned::finish(0, 0), 0u);
  // One flipped bit anywhere changes the result.
  auto damaged = bytes;
  damaged[n / 2] ^= 0x10;
  crc32::Positioned one(n);
  one.add(0, damaged.data(), n);
  EXPECT_NE(crc32::Positioned::finish(one.contribution(), n), whole);
}

}  // namespace
}  // namespace edgefem
