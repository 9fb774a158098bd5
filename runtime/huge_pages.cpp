// SPDX-License-Identifier: BSD-3-Clause
/// \file huge_pages.cpp
/// The process's memory on transparent huge pages (huge_pages.hpp).
#include "runtime/huge_pages.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <petscsys.h>

namespace edgefem {
namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

/// The heap advised as it grows: [heap_begin, heap_advised), both 0 until keep_heap_on_huge_pages.
std::atomic<std::uintptr_t> heap_begin{0}, heap_advised{0};

/// The heap's growth since the last call: advised before its first touch (glibc has written the new top chunk's
/// header there, one 4 KiB page, which keeps its 2 MiB neighbourhood on small pages).
void advise_heap_growth() {
  auto done = heap_advised.load(std::memory_order_relaxed);
  if (done == 0) return;
  const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));  // glibc's cached break: no system call
  if (top <= done || !heap_advised.compare_exchange_strong(done, top)) return;  // none, or another thread has it
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = done & ~(page - 1);
  madvise(reinterpret_cast<void*>(begin), top - begin, MADV_HUGEPAGE);
}

// PETSc's allocator interface (PetscMallocSet): the default's contract, with the advice added.
PetscErrorCode huge_malloc(std::size_t n, PetscBool clear, int, const char[], const char[], void** result) {
  *result = nullptr;
  if (n == 0) return 0;
  void* p = nullptr;
  if (posix_memalign(&p, PETSC_MEMALIGN, n) != 0 || p == nullptr) return PETSC_ERR_MEM;
  advise_huge_pages(p, n);
  if (clear) std::memset(p, 0, n);
  *result = p;
  return 0;
}

PetscErrorCode huge_free(void* p, int, const char[], const char[]) {
  std::free(p);
  return 0;
}

PetscErrorCode huge_realloc(std::size_t n, int, const char[], const char[], void** result) {
  if (n == 0) {
    std::free(*result);
    *result = nullptr;
    return 0;
  }
  void* p = std::realloc(*result, n);
  if (p == nullptr) return PETSC_ERR_MEM;
  if (reinterpret_cast<std::uintptr_t>(p) % PETSC_MEMALIGN != 0) {  // realloc keeps malloc's alignment only
    void* aligned = nullptr;
    if (posix_memalign(&aligned, PETSC_MEMALIGN, n) != 0 || aligned == nullptr) return PETSC_ERR_MEM;
    std::memcpy(aligned, p, n);
    std::free(p);
    p = aligned;
  }
  *result = p;
  return 0;
}

}  // namespace

bool huge_pages_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("EDGEFEM_HUGE_PAGES");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void advise_huge_pages(void* p, std::size_t n) {
  advise_heap_growth();
  if (n < kHugePageMinBytes || !huge_pages_enabled()) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(kHugePage - 1);
  const auto heap = heap_begin.load(std::memory_order_relaxed);
  if (heap != 0 && heap <= begin && end <= heap_advised.load(std::memory_order_relaxed)) return;  // advised already
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void keep_heap_on_huge_pages() {
  if (!huge_pages_enabled()) return;
  mallopt(M_MMAP_MAX, 0);         // every block from the heap, none a mapping of its own
  mallopt(M_TRIM_THRESHOLD, -1);  // the heap's top is never returned to the system
  mallopt(M_TOP_PAD, 64 << 20);   // the heap grows by 64 MiB more than asked
  const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));
  auto expected = std::uintptr_t{0};
  if (heap_advised.compare_exchange_strong(expected, top)) heap_begin.store(top);
}

double return_free_heap() {
  const auto resident = [] {
    long pages = 0, size = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld %ld", &size, &pages) != 2) pages = 0;
      std::fclose(f);
    }
    return static_cast<double>(pages) * static_cast<double>(sysconf(_SC_PAGESIZE));
  };
  const double before = resident();
  malloc_trim(0);
  return before - resident();
}

void use_huge_pages() {
  if (!huge_pages_enabled()) return;
  keep_heap_on_huge_pages();
  PetscMallocSet(huge_malloc, huge_free, huge_realloc);
}

}  // namespace edgefem
