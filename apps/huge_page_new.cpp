// SPDX-License-Identifier: BSD-3-Clause
/// \file huge_page_new.cpp
/// The edgefem executable's global operator new: malloc, with transparent huge pages requested for the heap's
/// growth and for large blocks (runtime/huge_pages.hpp) before anything touches them. delete is free, as in
/// libstdc++. The aligned and nothrow forms keep libstdc++'s definitions (the nothrow ones call these).
#include <cstdlib>
#include <new>

#include "runtime/huge_pages.hpp"

namespace {

void* allocate(std::size_t n) {
  if (n == 0) n = 1;
  void* p = std::malloc(n);
  if (p == nullptr) throw std::bad_alloc();
  edgefem::advise_huge_pages(p, n);
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
