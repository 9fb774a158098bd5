// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file cpu_features.hpp
/// What the CPU running the process can do, for kernels that have a version for it besides the portable one
/// (linalg/symmetric_blocks.cpp, linalg/multigrid_products.cpp): chosen at run time, so that one binary runs
/// everywhere (EDGEFEM_NATIVE builds all of the code for the build machine's CPU instead).
///
/// EDGEFEM_X86_AVX2 is defined where such kernels can be compiled (x86-64, GCC or Clang: intrinsics in functions
/// marked `__attribute__((target("avx2,fma")))`).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EDGEFEM_X86_AVX2 1
#endif

namespace edgefem {

/// Whether the CPU has AVX2 and FMA (always false where EDGEFEM_X86_AVX2 is not defined). Read once.
inline bool cpu_has_avx2_fma() {
#if defined(EDGEFEM_X86_AVX2)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

}  // namespace edgefem
