// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file output_timing.hpp
/// Where a run's output time goes: wall and CPU seconds per named phase (building the arrays, the exchange, the
/// HDF5 datasets, the waits for the writer thread, the flush, the .xdmf or .pvd rewrite...), summed over the
/// written steps, for summary.json's `output_split` (io/summary.cpp).
#include <chrono>
#include <string>
#include <vector>

namespace edgefem {

/// The CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID): its work, without the waits for a core on a
/// shared machine (MPI's busy waits count as work, a blocking wait on a thread or the disk does not).
double thread_cpu_seconds();

class OutputTimes {
 public:
  struct Phase {
    std::string name;
    double wall = 0, cpu = 0;  ///< seconds summed over the calls
    long long calls = 0;
  };
  /// Adds one call of `name` (appended to the order at its first call).
  void add(const std::string& name, double wall, double cpu);
  /// Adds every phase of `other`.
  void merge(const OutputTimes& other);
  [[nodiscard]] const std::vector<Phase>& phases() const { return phases_; }
  [[nodiscard]] bool empty() const { return phases_.empty(); }

 private:
  std::vector<Phase> phases_;
};

/// A lap clock: lap(times, name) adds the wall and CPU seconds since the last lap (or the construction) to `name`.
/// The CPU is the whole process's (the run's threads, OpenMP's included: for the run's own thread, whose output
/// phases never overlap the writer thread's work, as ResultWriter and XdmfSeries wait for it first) or, with
/// `thread_only`, the calling thread's (for the writer thread, which runs beside the run). A wait for the writer
/// (wait_writer) holds the CPU the writer spent meanwhile too.
class OutputLap {
 public:
  explicit OutputLap(bool thread_only = false) : thread_only_(thread_only) { restart(); }
  void restart();
  void lap(OutputTimes& times, const std::string& name);

 private:
  /// The calling thread's CPU seconds (thread_only_) or the whole process's (all its threads).
  [[nodiscard]] double cpu() const;
  bool thread_only_ = false;
  std::chrono::steady_clock::time_point wall_;
  double cpu_ = 0;
};

}  // namespace edgefem
