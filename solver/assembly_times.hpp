// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file assembly_times.hpp
/// Where this process's assembly time goes: wall seconds accumulated since the start, per rank (never reduced).
/// The Assembler adds to it; NewtonDriver keeps the share spent inside its residual and Jacobian callbacks
/// (NewtonStats::assembly_parts), which summary.json reports per rank (docs/guide/running.md "Run summary").
/// Diagnostic mode (environment EDGEFEM_ASSEMBLY_BARRIERS=1): an MPI_Barrier before each exchange of an assembly,
/// timed as `barrier_wait`, so that `exchange` and `insertion` hold the communication alone and `barrier_wait` the
/// ranks' arrival skew (imbalance of the local work before, or of what preceded the assembly).
#include <mpi.h>

#include <ctime>

#include "core/stopwatch.hpp"

namespace edgefem {

struct AssemblyTimes {
  double local = 0.0;         ///< element kernels, value scaling, vector copies: no communication
  double local_cpu = 0.0;     ///< the process CPU time of `local` (all threads): its work without a busy core's theft
  double insertion = 0.0;     ///< AijInsertion::insert: the values into the matrix, with the entries of other ranks' rows
  double exchange = 0.0;      ///< ghost updates (positions, forces), MatAssembly: communication and waits in it
  double barrier_wait = 0.0;  ///< diagnostic mode only: the barriers before the exchanges
  AssemblyTimes& operator+=(const AssemblyTimes& o) {
    local += o.local, local_cpu += o.local_cpu, insertion += o.insertion, exchange += o.exchange, barrier_wait += o.barrier_wait;
    return *this;
  }
  [[nodiscard]] AssemblyTimes operator-(const AssemblyTimes& o) const {
    return {local - o.local, local_cpu - o.local_cpu, insertion - o.insertion, exchange - o.exchange, barrier_wait - o.barrier_wait};
  }
};

/// This process's running totals.
AssemblyTimes& assembly_times();

/// Whether EDGEFEM_ASSEMBLY_BARRIERS=1 (read once).
bool assembly_barriers();

/// Adds the wall time of its scope to a counter.
class ScopeSeconds {
 public:
  explicit ScopeSeconds(double& to) : to_(to), start_(MPI_Wtime()) {}
  ScopeSeconds(const ScopeSeconds&) = delete;
  ScopeSeconds& operator=(const ScopeSeconds&) = delete;
  ~ScopeSeconds() { to_ += MPI_Wtime() - start_; }

 private:
  double& to_;
  double start_;
};


/// Adds the wall and the process CPU time of its scope to assembly_times().local and .local_cpu.
class LocalWorkSeconds {
 public:
  LocalWorkSeconds() : start_(MPI_Wtime()), cpu_start_(process_cpu_seconds()) {}
  LocalWorkSeconds(const LocalWorkSeconds&) = delete;
  LocalWorkSeconds& operator=(const LocalWorkSeconds&) = delete;
  ~LocalWorkSeconds() { stop(); }
  void stop();  ///< adds the time so far (once)

 private:
  double start_, cpu_start_;
  bool stopped_ = false;
};

/// Diagnostic mode: a barrier on `comm`, timed as barrier_wait; otherwise nothing.
void barrier_before_exchange(MPI_Comm comm);

}  // namespace edgefem
