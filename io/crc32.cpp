// SPDX-License-Identifier: BSD-3-Clause
/// \file crc32.cpp
/// Slice-by-8 CRC-32 (IEEE) and the GF(2) algebra of crc32.hpp (x^(2^k) mod P tables as in zlib's
/// crc32_combine). Little-endian hosts only (io/checkpoint.cpp asserts it for the files).
#include "io/crc32.hpp"

#include <array>
#include <bit>
#include <cstring>

namespace edgefem::crc32 {

namespace {

static_assert(std::endian::native == std::endian::little, "the slice-by-8 CRC assumes a little-endian host");

constexpr std::uint32_t polynomial = 0xEDB88320u;  // reflected x^32 + x^26 + ... + 1

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? (c >> 1) ^ polynomial : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s) {
    for (std::size_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFu];
  }
  return t;
}

constexpr Tables tables = make_tables();

/// The raw register after `size` bytes, starting from `reg` (no inversions).
std::uint32_t raw_update(std::uint32_t reg, const unsigned char* p, std::size_t size) {
  while (size >= 8) {
    std::uint32_t one, two;
    std::memcpy(&one, p, 4);
    std::memcpy(&two, p + 4, 4);
    one ^= reg;
    reg = tables[7][one & 0xFFu] ^ tables[6][(one >> 8) & 0xFFu] ^ tables[5][(one >> 16) & 0xFFu] ^
          tables[4][one >> 24] ^ tables[3][two & 0xFFu] ^ tables[2][(two >> 8) & 0xFFu] ^
          tables[1][(two >> 16) & 0xFFu] ^ tables[0][two >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) reg = tables[0][(reg ^ *p++) & 0xFFu] ^ (reg >> 8);
  return reg;
}

/// a * b mod P (reflected: bit 31 is x^0).
constexpr std::uint32_t multiply(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (std::uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if ((a & m) != 0) {
      product ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    b = (b & 1u) != 0 ? (b >> 1) ^ polynomial : b >> 1;
  }
  return product;
}

/// x^(2^k) mod P for k = 0..31 (x^(2^k) repeats with period 32 in k for this P, as zlib uses).
constexpr std::array<std::uint32_t, 32> make_powers() {
  std::array<std::uint32_t, 32> t{};
  std::uint32_t p = 1u << 30;  // x^1
  t[0] = p;
  for (std::size_t k = 1; k < 32; ++k) t[k] = p = multiply(p, p);
  return t;
}

constexpr std::array<std::uint32_t, 32> powers = make_powers();

/// x^(8 n) mod P.
std::uint32_t x8n(std::uint64_t n) {
  std::uint32_t p = 1u << 31;  // x^0
  for (unsigned k = 3; n != 0; n >>= 1, ++k) {
    if ((n & 1u) != 0) p = multiply(powers[k & 31u], p);
  }
  return p;
}

constexpr std::size_t short_gap = 256;  ///< up to this many zero bytes are fed through the tables
constexpr std::array<unsigned char, short_gap> zero_bytes{};

}  // namespace

std::uint32_t update(std::uint32_t crc, const void* data, std::size_t size) {
  return ~raw_update(~crc, static_cast<const unsigned char*>(data), size);
}

std::uint32_t shift(std::uint32_t reg, std::uint64_t zeros) {
  if (zeros == 0 || reg == 0) return reg;
  if (zeros <= short_gap) return raw_update(reg, zero_bytes.data(), static_cast<std::size_t>(zeros));
  return multiply(x8n(zeros), reg);
}

void Positioned::add(std::uint64_t offset, const void* data, std::size_t size) {
  reg_ = raw_update(shift(reg_, offset - end_), static_cast<const unsigned char*>(data), size);
  end_ = offset + size;
}

std::uint32_t Positioned::finish(std::uint32_t sum, std::uint64_t length) {
  // crc(M) = ~raw(~0 followed by M) and raw is affine: raw(r, M) = shift(r, |M|) ^ raw(0, M).
  return ~(shift(0xFFFFFFFFu, length) ^ sum);
}

}  // namespace edgefem::crc32
