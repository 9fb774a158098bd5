// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file first_touch.hpp
/// Growing a large std::vector with its new pages first touched by all the OpenMP threads. resize() value-initializes
/// the new elements on the calling thread, which so takes every page fault of the new memory, and a fault of memory
/// the process has not had before is slow: on this project's reference virtual machine about 1.6 ms per MB on
/// transparent huge pages and 3.3 ms per MB on 4 KiB pages (the host backs the guest's memory on demand), against a
/// memset's 0.1-0.2 ms per MB over pages already there. The set-up's term lists are tens of megabytes filled by
/// parallel loops after a serial resize: on one rank with two threads their faults were a third of the set-up.
/// resize_first_touched reserves, touches one byte per 4 KiB page on the threads, then resizes (the
/// value-initialization then runs over mapped pages). The same elements as resize(); with one thread only the order
/// of the faults differs.
#include <cstddef>
#include <vector>

namespace edgefem {

template <class T>
void resize_first_touched(std::vector<T>& v, std::size_t n) {
  if (n > v.capacity()) {
    v.reserve(n);
    // The reserved storage past size() holds no objects yet: written as bytes, then value-initialized by resize().
    unsigned char* bytes = reinterpret_cast<unsigned char*>(v.data());
    constexpr std::size_t kPage = 4096;
    const auto first = static_cast<std::ptrdiff_t>((v.size() * sizeof(T) + kPage - 1) / kPage);
    const auto last = static_cast<std::ptrdiff_t>((n * sizeof(T) + kPage - 1) / kPage);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t p = first; p < last; ++p) bytes[static_cast<std::size_t>(p) * kPage] = 0;
  }
  v.resize(n);
}

}  // namespace edgefem
