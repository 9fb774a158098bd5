#pragma once
/// \file hot_clones.hpp
/// EDGEFEM_HOT_CLONES on a function compiles it twice, for x86-64-v3 (AVX2 and FMA; GCC then fuses multiply-adds)
/// and for the baseline x86-64, and the dynamic loader picks the clone the CPU can run (GCC's `target_clones`, an
/// ifunc; OpenMP regions inside are cloned with it). The binary stays portable, which EDGEFEM_NATIVE (the whole
/// code for the build machine's CPU) does not. Used where it measurably pays: the finest level's symmetric product
/// (symmetric_blocks.cpp; docs/solver.md has the figures). Empty for Clang and other CPUs.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EDGEFEM_HOT_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define EDGEFEM_HOT_CLONES
#endif
