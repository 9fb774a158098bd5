// SPDX-License-Identifier: BSD-3-Clause
// Elapsed wall-clock time for the phase timings (summary.json, the console report).
#pragma once

#include <chrono>

namespace edgefem {

/// Seconds since `t0` (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace edgefem
