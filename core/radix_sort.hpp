// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file radix_sort.hpp
/// Sorting unsigned integer keys below 2^bits by their digits (least significant first, a counting sort per digit of
/// at most 13 bits: at most 8,192 counts, which stay in cache): O(n) per pass, where std::sort's comparisons cost
/// O(n log n) and mispredicted branches. The self-contact broad phase sorts its ~10^5-10^6 pair keys per step this way
/// (contact/self_potential.cpp).
#include <algorithm>
#include <cstdint>
#include <vector>

namespace edgefem {

/// Sorts `keys` (each < 2^bits, bits <= 64) into increasing order; `scratch` is a buffer the passes reuse.
inline void radix_sort(std::vector<std::uint64_t>& keys, int bits, std::vector<std::uint64_t>& scratch) {
  if (keys.size() < 2 || bits <= 0) return;
  const int passes = (bits + 12) / 13;
  const int width = (bits + passes - 1) / passes;
  const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
  std::vector<std::size_t> count((std::size_t{1} << width) + 1);
  scratch.resize(keys.size());
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * width;
    std::fill(count.begin(), count.end(), 0);
    for (const std::uint64_t k : keys) ++count[((k >> shift) & mask) + 1];
    if (count[((keys.front() >> shift) & mask) + 1] == keys.size()) continue;  // (one digit for all: nothing moves)
    for (std::size_t d = 1; d < count.size(); ++d) count[d] += count[d - 1];
    for (const std::uint64_t k : keys) scratch[count[(k >> shift) & mask]++] = k;
    keys.swap(scratch);
  }
}

}  // namespace edgefem
