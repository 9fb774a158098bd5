// SPDX-License-Identifier: BSD-3-Clause
/// \file crc32.cpp
/// CRC-32 through zlib (crc32.hpp): crc32_z for the bytes, crc32_combine for the zero runs. zlib's
/// crc32_combine(a, b, n) is a * x^(8n) mod P xor b on the finished CRCs; with b = 0 it moves a raw register past
/// n zero bytes, which is `shift`.
#include "io/crc32.hpp"

#include <zlib.h>

#include <limits>

namespace edgefem::crc32 {

namespace {

/// The raw register after `size` bytes, starting from `reg` (no inversions): zlib's crc32 inverts on entry and exit.
std::uint32_t raw_update(std::uint32_t reg, const void* data, std::size_t size) {
  return ~update(~reg, data, size);
}

}  // namespace

std::uint32_t update(std::uint32_t crc, const void* data, std::size_t size) {
  return static_cast<std::uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), size));
}

std::uint32_t shift(std::uint32_t reg, std::uint64_t zeros) {
  static_assert(sizeof(z_off_t) >= 8, "a 64-bit z_off_t for fields beyond 2 GiB");
  if (zeros == 0 || reg == 0) return reg;
  return static_cast<std::uint32_t>(crc32_combine(reg, 0, static_cast<z_off_t>(zeros)));
}

void Positioned::add(std::uint64_t offset, const void* data, std::size_t size) {
  reg_ = raw_update(shift(reg_, offset - end_), data, size);
  end_ = offset + size;
}

std::uint32_t Positioned::finish(std::uint32_t sum, std::uint64_t length) {
  // crc(M) = ~raw(~0 followed by M) and raw is affine: raw(r, M) = shift(r, |M|) ^ raw(0, M).
  return ~(shift(0xFFFFFFFFu, length) ^ sum);
}

}  // namespace edgefem::crc32
