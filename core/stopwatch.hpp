// SPDX-License-Identifier: BSD-3-Clause
// Elapsed wall-clock time for the phase timings (summary.json, the console report); time stamps.
#pragma once

#include <chrono>
#include <cstdint>

namespace edgefem {

/// Seconds since `t0` (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Nanoseconds since the Unix epoch (system clock): the time stamps written into checkpoints.
inline std::int64_t unix_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace edgefem
