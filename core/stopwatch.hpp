// SPDX-License-Identifier: BSD-3-Clause
// Elapsed wall-clock and CPU time for the phase timings (summary.json, the console report); time stamps.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace edgefem {

/// Seconds since `t0` (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// This process's CPU seconds so far (all its threads; MPI's busy waits count).
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Nanoseconds since the Unix epoch (system clock): the time stamps written into checkpoints.
inline std::int64_t unix_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace edgefem
