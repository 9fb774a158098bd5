// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file setup_laps.hpp
/// Where the set-up's seconds go on this rank: the interval from the distributed mesh to the first load or time
/// step, cut into named laps. setup_laps::start() begins the accounting; every setup_laps::mark(phase) gives the
/// seconds since the previous mark (or the start) to `phase`, so the laps add up to the whole interval by
/// construction, whatever code runs between two marks; the run's set-up clock ends at the last mark. The phases are
/// a fixed list (the same on every rank, gathered into summary.json's phases_per_rank_s as "setup_<name>").
/// Marks outside an accounting (start() not called: tests, `bench`, `info`) do nothing. One accounting per process
/// at a time, marked from serial code only (never inside an OpenMP region).
#include <time.h>

#include <array>
#include <chrono>
#include <cstddef>

#include "core/stopwatch.hpp"

namespace edgefem::setup_laps {

enum class Phase : int {
  input_report,     ///< the input phases' records: peak memory, spreads of owned/ghost vertices (collective)
  memory_plan,      ///< run/memory_budget: the estimate of the run's peak
  supports,         ///< solver/free_body: is every part of a static problem held?
  model_cells,      ///< the cells' materials and masses
  topology,         ///< the formulations' edges, faces and TSEPs (materials/topology)
  kernel_data,      ///< the formulations' per-tet coefficients, TSEP/edge term lists and vertex sweeps
  model_loads,      ///< boundary conditions, lumped mass, gravity, tractions, attachments
  header,           ///< the run header lines
  vectors,          ///< the assembler's ghosted vectors (reference positions, loads, lumped mass)
  matrix_pattern,   ///< the assembler's COO pattern (rows and columns of every block)
  matrix_handover,  ///< the pattern handed to PETSc: the matrix's preallocation and insertion plan
  near_null_space,  ///< the rigid-body modes attached to the matrix
  solver,           ///< the Newton solver, its KSP/PC objects and vectors
  integrator,       ///< dynamic runs: the time integrator's own state, a restart
  output_files,     ///< the result writer, reactions.csv, energy.csv, checkpoints' folder
  count
};

inline constexpr std::array<const char*, static_cast<std::size_t>(Phase::count)> kNames = {
    "input_report", "memory_plan", "supports",        "model_cells", "topology",   "kernel_data",
    "model_loads",  "header",      "vectors",         "matrix_pattern", "matrix_handover",
    "near_null_space", "solver",   "integrator",      "output_files"};


struct State {
  bool active = false;
  std::chrono::steady_clock::time_point last{};
  double last_cpu = 0.0;
  std::array<double, static_cast<std::size_t>(Phase::count)> seconds{};
  /// The process CPU seconds of each lap: on a machine shared with other work the wall laps hold the time the
  /// process waited for a core, these only the work (and MPI's busy waits).
  std::array<double, static_cast<std::size_t>(Phase::count)> cpu_seconds{};
  double first_pc_setup = -1.0;  ///< the first preconditioner set-up (inside the first Newton iteration), -1: none
};

inline State& state() {
  static State s;
  return s;
}

/// Begins an accounting now (clears the laps).
inline void start() {
  State& s = state();
  s = State{};
  s.active = true;
  s.last = std::chrono::steady_clock::now();
  s.last_cpu = process_cpu_seconds();
}

/// The seconds since the previous mark (or the start) go to `phase`.
inline void mark(Phase phase) {
  State& s = state();
  if (!s.active) return;
  const auto now = std::chrono::steady_clock::now();
  const double cpu = process_cpu_seconds();
  s.seconds[static_cast<std::size_t>(phase)] += std::chrono::duration<double>(now - s.last).count();
  s.cpu_seconds[static_cast<std::size_t>(phase)] += cpu - s.last_cpu;
  s.last = now;
  s.last_cpu = cpu;
}

/// Ends the accounting (later marks do nothing); the laps stay readable.
inline void stop() { state().active = false; }

/// The seconds of each phase, in kNames' order.
inline const std::array<double, static_cast<std::size_t>(Phase::count)>& seconds() { return state().seconds; }
/// The process CPU seconds of each phase, in kNames' order.
inline const std::array<double, static_cast<std::size_t>(Phase::count)>& cpu_seconds() { return state().cpu_seconds; }

/// The first preconditioner set-up's seconds (kept once per accounting; later ones are not set-up).
inline void note_pc_setup(double s) {
  State& st = state();
  if (st.first_pc_setup < 0) st.first_pc_setup = s;
}
inline double first_pc_setup() { return state().first_pc_setup; }

}  // namespace edgefem::setup_laps
