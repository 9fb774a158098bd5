// SPDX-License-Identifier: BSD-3-Clause
/// \file element_energy_batch.cpp
/// The out-of-line batched StVK kernel (element_energy_batch.hpp), compiled for several instruction sets: the
/// loader picks the widest one the CPU has (GCC function multi-versioning), so the portable build still runs the
/// lanes in AVX2 registers where there are any. The AVX2 clone does not enable fused multiply-adds: every clone gives
/// the same results, bit for bit.
#include "materials/element_energy_batch.hpp"

namespace edgefem {

[[gnu::target_clones("avx2", "default")]] void stvk_isotropic_batch(const TetLanes& in, bool inversion,
                                                                    Lanes (&gradient)[12], Lanes& energy,
                                                                    std::int64_t (&principal)[kLanes], Lanes* bound) {
  if (inversion)
    stvk_isotropic_lanes<true>(in, gradient, energy, principal, bound);
  else
    stvk_isotropic_lanes<false>(in, gradient, energy, principal, bound);
}

}  // namespace edgefem
