#pragma once
/// \file timing.hpp
/// Kernel timings of the (disabled) cost tests. Test-only, header-only.
#include <time.h>

#include <algorithm>

namespace edgefem::testing {

/// This thread's CPU time in seconds.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// The best of `repeats` calls of fn in thread CPU time (seconds): with one thread the calls run on this thread,
/// and the best is robust to a loaded machine.
template <class F>
double best_thread_cpu_seconds(F&& fn, int repeats = 15) {
  double best = 1e30;
  for (int rep = 0; rep < repeats; ++rep) {
    const double t0 = thread_cpu_seconds();
    fn();
    best = std::min(best, thread_cpu_seconds() - t0);
  }
  return best;
}

}  // namespace edgefem::testing
