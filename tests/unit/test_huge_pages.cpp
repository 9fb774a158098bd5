// SPDX-License-Identifier: BSD-3-Clause
/// The heap on transparent huge pages (runtime/huge_pages.hpp): glibc serves every block from the heap and keeps
/// freed memory there, and the heap's growth gets MADV_HUGEPAGE.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/huge_pages.hpp"

namespace edgefem {
namespace {

/// The VmFlags of the mapping of /proc/self/smaps that holds address a ("" if none).
std::string vm_flags_at(const void* a) {
  const auto addr = reinterpret_cast<std::uintptr_t>(a);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool advised(const void* a) { return vm_flags_at(a).find(" hg") != std::string::npos; }

#ifdef __SANITIZE_ADDRESS__  // GCC's, which the sanitized build (EDGEFEM_SANITIZE) uses
constexpr bool kSanitizedAllocator = true;
#else
constexpr bool kSanitizedAllocator = false;
#endif

TEST(HugePages, TheHeapServesEveryBlockKeepsWhatIsFreedAndIsAdvisedAsItGrows) {
  if (kSanitizedAllocator) GTEST_SKIP() << "AddressSanitizer replaces glibc's malloc";
  if (!huge_pages_enabled()) GTEST_SKIP() << "EDGEFEM_HUGE_PAGES=0";
  const bool thp = std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled");
  // glibc's defaults, as a process without SuperLU_DIST has them: a dynamic mmap threshold from 128 KiB.
  mallopt(M_MMAP_MAX, 65536);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  keep_heap_on_huge_pages();

  // 40 MiB, more than the heap's free top holds (keepcost): the heap grows for it, by its 64 MiB pad too, and the
  // growth is advised.
  const struct mallinfo2 before = mallinfo2();
  const std::size_t n = before.keepcost + (std::size_t{40} << 20);
  auto* p = static_cast<char*>(std::malloc(n));
  ASSERT_NE(p, nullptr);
  advise_huge_pages(p, n);
  const struct mallinfo2 with = mallinfo2();
  EXPECT_EQ(with.hblkhd, before.hblkhd) << "a block of " << n << " bytes was mapped apart from the heap";
  EXPECT_GE(with.arena, before.arena + (std::size_t{40 + 64} << 20)) << "the heap did not grow by the block and the pad";
  if (thp) {
    for (const char* a : {p + n / 2, p + n + (std::size_t{32} << 20)})  // the block, the pad beyond it
      EXPECT_TRUE(advised(a)) << vm_flags_at(a);
  }
  std::memset(p, 1, n);
  std::free(p);
  EXPECT_EQ(mallinfo2().arena, with.arena) << "the heap's top was returned to the system";
  // The freed block serves the next allocation of its size: no new memory.
  auto* q = static_cast<char*>(std::malloc(n));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(mallinfo2().arena, with.arena);
  std::free(q);
}

}  // namespace
}  // namespace edgefem
