#pragma once
/// \file huge_pages.hpp
/// Large arrays on transparent huge pages. A large mesh's run allocates gigabytes (the model's term lists, the
/// matrix, GAMG's hierarchy, the output's page cache) and first touches every page of it; with 4 KiB pages the
/// kernel takes one page fault per 4 KiB. Where transparent huge pages are enabled only on request (`madvise`, the
/// Debian and Ubuntu default; `cat /sys/kernel/mm/transparent_hugepage/enabled`), edgefem requests them for every
/// allocation of at least kHugePageMinBytes: PETSc's arrays through PetscMallocSet, edgefem's own through the
/// executable's operator new (apps/huge_page_new.cpp). Where THP is `always` this changes nothing; where it is
/// `never`, neither. EDGEFEM_HUGE_PAGES=0 in the environment turns the request off (README, "Measured performance").
#include <cstddef>

namespace edgefem {

/// Allocations below this size are left alone. A huge page is 2 MiB and is zeroed whole at its first touch, also
/// where the program touches a few bytes of it, and with glibc every block this large is a fresh mapping of its own:
/// at 4 MiB the 136,565-tet cantilever spent 0.55 s more system time on 2 ranks (0.39 -> 0.94 s) and ran x1.06
/// longer than without huge pages; at 64 MiB it runs as without them, while the 1.2M-tet box keeps their gain
/// (set-up 2.3 -> 1.8-1.9 s on 2 ranks; README, "Measured performance").
inline constexpr std::size_t kHugePageMinBytes = std::size_t{64} << 20;

/// Whether edgefem asks for huge pages (false when EDGEFEM_HUGE_PAGES=0); read once.
bool huge_pages_enabled();

/// madvise(MADV_HUGEPAGE) on the whole 2 MiB pages inside [p, p + n) if n >= kHugePageMinBytes and enabled; for
/// memory not yet touched (a fresh allocation). Never fails (the advice is only advice).
void advise_huge_pages(void* p, std::size_t n);

/// Makes PETSc allocate through malloc + advise_huge_pages (PetscMallocSet); call once, before PetscInitialize.
/// PETSc's -malloc_debug still replaces it with PETSc's tracing allocator.
void use_huge_pages_in_petsc();

}  // namespace edgefem
