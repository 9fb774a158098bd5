// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file simd_pairs.hpp
/// Two doubles in one vector register (SSE2 on x86-64, its baseline; GCC's and Clang's vector extensions) for the
/// block kernels of the multigrid products: GCC left their R x C partial sums scalar, spilled to the stack, and
/// widened each single-precision entry alone (perf annotate of the 3 x 6 interpolation's product); these products
/// were bound by that arithmetic, not by the memory. (The finest level's symmetric 3 x 3 product ran as fast in
/// pairs as in scalars; it has an AVX2 loop of its own instead, symmetric_blocks.cpp.)
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if !defined(__GNUC__)
#error "linalg/simd_pairs.hpp needs GCC's or Clang's vector extensions"
#endif

namespace edgefem::simd {

using Pair = double __attribute__((vector_size(16)));
using FloatPair = float __attribute__((vector_size(8)));

/// p[0], p[1] (any alignment).
inline Pair load(const double* p) {
  Pair v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(double* p, Pair v) { std::memcpy(p, &v, sizeof v); }
/// p[0], p[1] in double precision (one cvtps2pd: GCC 12 lowers __builtin_convertvector of two floats to two scalar
/// conversions and a shuffle).
inline Pair widen(const float* p) {
#if defined(__SSE2__)
  const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return reinterpret_cast<Pair>(_mm_cvtps_pd(_mm_castsi128_ps(two)));
#else
  FloatPair f;
  std::memcpy(&f, p, sizeof f);
  return __builtin_convertvector(f, Pair);
#endif
}
inline Pair both(double x) { return Pair{x, x}; }


}  // namespace edgefem::simd
