/// \file huge_pages.cpp
/// Transparent huge pages for large allocations (huge_pages.hpp).
#include "solver/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <petscsys.h>

namespace edgefem {
namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

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
  if (n < kHugePageMinBytes || !huge_pages_enabled()) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void use_huge_pages_in_petsc() {
  if (huge_pages_enabled()) PetscMallocSet(huge_malloc, huge_free, huge_realloc);
}

}  // namespace edgefem
