// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file crc32.hpp
/// CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF): the CRC of
/// zlib's crc32(), Python's zlib.crc32 and `gzip`, computed by zlib (crc32_z, crc32_combine).
///
/// The checkpoint files (io/checkpoint.hpp) need the CRC of a field whose bytes are spread over the ranks in
/// runs at arbitrary offsets. The CRC register is linear over GF(2), so each rank computes the contribution of
/// its own runs, placed where they lie in the field (`Positioned`), the contributions are XORed (MPI_BXOR), and
/// `finish` turns the sum into the CRC of the whole field: the value does not depend on how the bytes were split.
/// (zlib's crc32_combine does the shifting.)
#include <cstddef>
#include <cstdint>

namespace edgefem::crc32 {

/// The CRC-32 of `size` bytes at `data`, continuing `crc` (the CRC of the bytes before them; 0 to start), as
/// zlib's crc32(crc, data, size): crc32(crc32(0, a), b) is the CRC of a followed by b. crc32(0, "123456789")
/// is 0xCBF43926.
std::uint32_t update(std::uint32_t crc, const void* data, std::size_t size);

/// The CRC-32 of `size` bytes at `data`.
inline std::uint32_t of(const void* data, std::size_t size) { return update(0, data, size); }

/// The raw register (no initial value, no final XOR) after `zeros` zero bytes, starting from `reg`:
/// reg * x^(8 zeros) mod P, in O(log zeros) for long runs of zeros.
std::uint32_t shift(std::uint32_t reg, std::uint64_t zeros);

/// One rank's contribution to the CRC of a message of `length` bytes of which it holds some runs: add them in
/// increasing offset order, disjoint; the other bytes count as zero here (another rank adds them).
class Positioned {
 public:
  explicit Positioned(std::uint64_t length) : length_(length) {}

  /// The `size` bytes at `data` are the message's bytes [offset, offset + size). offset >= the end of the
  /// previous run and offset + size <= length (not checked).
  void add(std::uint64_t offset, const void* data, std::size_t size);

  /// The contribution: the raw register of this rank's bytes, zeros elsewhere. XOR the contributions of all
  /// parts of the message, then `finish`.
  [[nodiscard]] std::uint32_t contribution() const { return shift(reg_, length_ - end_); }

  /// The CRC-32 of a message of `length` bytes whose parts' contributions XOR to `sum`.
  static std::uint32_t finish(std::uint32_t sum, std::uint64_t length);

 private:
  std::uint64_t length_;
  std::uint64_t end_ = 0;  ///< the end of the last run added
  std::uint32_t reg_ = 0;  ///< raw register of the bytes [0, end_)
};

}  // namespace edgefem::crc32
