// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file heap.hpp
/// The heap's free pages given back to the system between phases (glibc's malloc_trim(0): the free chunks' whole
/// pages, wherever they lie, not only the top). runtime/huge_pages.hpp keeps the heap (no trimming by glibc, no
/// mmap), so what a phase freed stays resident until a later allocation reuses it; where a phase frees much and the
/// next allocates large blocks that do not fit its holes (GAMG's full set-up, then the next Jacobian's COO values),
/// the holes and the new blocks are resident together. Trimming there costs the page faults of touching those pages
/// again when they are reused (on huge pages about 0.1 ms per 2 MiB).
#include <malloc.h>

namespace edgefem {

/// Gives the heap's free pages back to the system (glibc only; elsewhere nothing).
inline void trim_free_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace edgefem
