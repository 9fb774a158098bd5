// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file huge_pages.hpp
/// The process's memory on transparent huge pages. A run allocates hundreds of megabytes to gigabytes (the model's
/// term lists, the matrix, GAMG's hierarchy, the output's buffers) and first touches every page of it; with 4 KiB
/// pages the kernel takes one page fault per 4 KiB, and on a virtual machine a fault costs about 10 us (touching
/// 200 MB: 0.55 s with 4 KiB pages, 0.012-0.05 s with 2 MiB ones; the 136,565-tet cantilever on 2 ranks took 50,000
/// faults per rank, a sixth of its run). Where transparent huge pages are enabled only on request (`madvise`, the
/// Debian and Ubuntu default; `cat /sys/kernel/mm/transparent_hugepage/enabled`), edgefem requests them for its
/// heap, from which glibc's malloc then serves every block, and keeps what is freed there for the next
/// allocations instead of returning it to the system (keep_heap_on_huge_pages). The requests come after each
/// allocation of PETSc (PetscMallocSet) and of edgefem (the executable's operator new, apps/huge_page_new.cpp):
/// advise_huge_pages. Where THP is `always` the advice changes nothing; where it is `never`, neither.
/// EDGEFEM_HUGE_PAGES=0 in the environment turns all of it off (docs/theory/design.md, "Memory").
#include <cstddef>

namespace edgefem {

/// Blocks from this size on are advised one by one, wherever they lie: the heap of an OpenMP thread's own malloc
/// arena (a mapping that advise_huge_pages does not follow) or, without keep_heap_on_huge_pages, a mapping of
/// their own.
inline constexpr std::size_t kHugePageMinBytes = std::size_t{4} << 20;

/// Whether edgefem asks for huge pages (false when EDGEFEM_HUGE_PAGES=0); read once.
bool huge_pages_enabled();

/// After an allocation of n bytes at p, not yet touched: madvise(MADV_HUGEPAGE) on the heap's growth since the last
/// call (from keep_heap_on_huge_pages on) and, if n >= kHugePageMinBytes, on the whole 2 MiB pages inside [p, p + n)
/// unless they lie in the heap advised so.
/// Thread-safe; never fails (the advice is only advice). Does nothing when disabled.
void advise_huge_pages(void* p, std::size_t n);

/// Unless disabled: glibc's malloc serves every block from the heap (M_MMAP_MAX 0: a large block freed and allocated
/// again was a fresh mapping whose pages faulted again), never returns the heap's top to the system (M_TRIM_THRESHOLD
/// -1) and grows the heap by 64 MiB beyond each request (M_TOP_PAD: one advice per 64 MiB); advise_huge_pages
/// advises the heap's growth from here on. Debian's PETSc loads SuperLU_DIST, whose library constructor sets the
/// first two already. The price: the process's resident memory stays at its peak once reached. Part of
/// use_huge_pages; on its own for tests.
void keep_heap_on_huge_pages();

/// Gives the heap's free pages back to the system (glibc's malloc_trim(0): the free chunks' whole pages, wherever they
/// lie, not only the top), so that what a phase freed does not stay resident beside what the next one allocates
/// elsewhere in the heap: called between the model's construction (its topology and term lists' transients) and the
/// solve. Costs the page faults of touching those pages again when they are reused. Returns the bytes the resident
/// set shrank by (0 when unknown).
double return_free_heap();

/// Once, at the start of main, before PetscInitialize (unless disabled): keep_heap_on_huge_pages, and PETSc
/// allocates through malloc + advise_huge_pages (PetscMallocSet; -malloc_debug replaces it with PETSc's tracing
/// allocator).
void use_huge_pages();

}  // namespace edgefem
