// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file summary.hpp
/// The machine-readable record of one `edgefem run`: DIR/summary.json (schema "edgefem-summary/1", README
/// "Run summary"). `RunSummary` is plain data that the program fills while it runs; `to_json` writes it with
/// nlohmann-json (strings escaped, bytes that are not UTF-8 replaced by U+FFFD), numbers rounded to 17 significant
/// digits (9 for seconds), null for what is not known or not finite. `write_summary` puts it in place atomically.
#include <mpi.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "io/output_timing.hpp"

namespace edgefem {

/// Smallest, largest and mean of one value over the ranks.
struct Spread {
  double min = 0.0, max = 0.0, mean = 0.0;
};

/// Collective: the spread of `value` over the ranks of `comm` (every rank gets it).
Spread spread_over_ranks(MPI_Comm comm, double value);

/// Collective: every rank's `value`, in rank order, on rank 0 (empty on the others).
std::vector<double> gather_on_rank0(MPI_Comm comm, double value);

/// Which program produced a result and where it ran (run/provenance.hpp fills it).
struct Provenance {
  std::string version;       ///< edgefem's: project(VERSION)
  std::string git_describe;  ///< `git describe --always --dirty` at build time, "unknown" without git
  std::string petsc, mpi, vtk, metis;  ///< the libraries' versions (MPI: its library version string)
  std::vector<std::string> hosts;      ///< the ranks' host names, unique, sorted
  int ranks = 1;
  int threads_per_rank = 1;
};

struct RunSummary {
  std::string version;  ///< edgefem's
  std::optional<Provenance> provenance;
  std::string job;      ///< the job file's path
  int exit_code = 0;
  bool stopped = false;              ///< stopped by SIGTERM/SIGUSR1 after a step (status "stopped")
  std::optional<std::string> error;  ///< the message of the error that ended the run
  std::string started;               ///< ISO-8601 UTC, e.g. 2026-11-26T14:20:07Z
  std::string command;               ///< the command line, arguments joined by spaces
  int ranks = 1;
  int threads_per_rank = 1;
  bool oversubscribed = false;

  struct Mesh {
    std::string source;  ///< the mesh file's path, or "generated box" / "generated sheet"
    long long vertices = 0, cells = 0;
    std::string cell_kind;  ///< "tet" | "triangle"
    long long dofs = 0;
  };
  std::optional<Mesh> mesh;

  struct Partition {
    std::string method = "metis";
    Spread owned_vertices, ghost_vertices;
    std::optional<Spread> cells;  ///< each rank's own cells (the kernels' work)
  };
  std::optional<Partition> partition;

  /// `analysis`: "type" first, then the keys the analysis fills (static: load steps; dynamic: time steps, dt...).
  /// Values are JSON text already (use json_number, json_string, ...).
  std::string analysis_type;
  std::vector<std::pair<std::string, std::string>> analysis;

  /// Wall-clock seconds on this rank (the file shows rank 0's; a collective phase also holds the waits in it).
  struct Phases {
    std::optional<double> job, read, partition, distribute, setup, assembly, pc_setup, ksp, output, total;
    /// Seconds from the start of `run` (after MPI's and PETSc's start-up) to the end of the set-up: everything
    /// before the first load or time step (job + read + partition + distribute + setup, and the gaps between them).
    std::optional<double> before_steps;
  } phases_s;
  /// This rank's split of phases_s.setup, in setup_split_names()' order (core/setup_laps.hpp); empty when the run
  /// stopped before its set-up ended. The laps add up to phases_s.setup.
  std::vector<double> setup_split_s;
  /// The process CPU seconds (all threads) of the same laps: the work without the waits for a core on a shared
  /// machine (MPI's busy waits count as work).
  std::vector<double> setup_split_cpu_s;
  /// This rank's first preconditioner set-up (in the first Newton iteration; part of phases_s.pc_setup).
  std::optional<double> first_pc_setup;
  /// This rank's split of phases_s.assembly (solver/assembly_times.hpp): local work, matrix insertion, exchanges,
  /// and the diagnostic barriers (EDGEFEM_ASSEMBLY_BARRIERS=1, else unset).
  struct AssemblySplit {
    std::optional<double> local, local_cpu, insertion, exchange, barrier_wait;
  } assembly_split_s;
  /// Every rank's phases by name (rank_phase_names()), in rank order, NaN for unknown; filled on rank 0 by
  /// write_summary_collectively, empty when not gathered.
  std::vector<std::vector<double>> phases_per_rank_s;

  struct Solver {
    int newton_iterations = 0, ksp_iterations = 0, pc_setups = 0;
    std::string preconditioner;
  };
  std::optional<Solver> solver;

  std::vector<double> peak_mb_per_rank;  ///< empty when not gathered (a run aborted on one rank)
  /// The memory plan's estimate of the largest rank's peak (run/memory_budget.hpp), made before the model.
  std::optional<double> estimated_peak_mb;
  /// The memory account (run/memory_account.hpp), gathered on rank 0: every structure's bytes summed over the ranks,
  /// in MB, and each rank's account total next to its measured peak.
  struct MemoryAccount {
    double start_up_mb = 0;                                   ///< resident at start-up, summed over the ranks
    std::vector<std::pair<std::string, double>> structures;  ///< name, MB summed over the ranks (in order)
    double transients_mb = 0;        ///< freed heap left resident (construction and output transients)
    double libraries_mb = 0;  ///< libraries' pages and shared memory resident since start-up
    double unaccounted_heap_mb = 0;  ///< heap in use that no structure above names (not in the total)
    std::vector<double> total_mb_per_rank;  ///< start-up + structures + transients, per rank
    struct Phase {
      std::string name;
      std::vector<double> resident_mb, heap_allocated_mb;  ///< per rank at the phase's end
    };
    std::vector<Phase> phases;
    long long tets = 0;  ///< global cells (for the per-cell figures)
  };
  std::optional<MemoryAccount> memory_account;

  struct Displacement {
    double magnitude = 0.0;
    std::array<double, 3> reference_point{}, u{};
  };
  std::optional<Displacement> largest_displacement;

  /// With obstacles (solver/contact.hpp): the contact of every step and the obstacles' forces at the end.
  struct Contact {
    std::string method;  ///< "barrier" | "penalty"
    double activation_distance = 0.0;
    double stiffness = 0.0;            ///< the last step's (the barrier's adapts)
    double deepest_penetration = 0.0;  ///< over every step (0 with the barrier)
    long long max_active = 0;          ///< the most vertex-obstacle pairs in contact in a step
    std::vector<std::string> obstacles;
    std::vector<double> forces;  ///< 3 per obstacle: its force on the body at the last recorded step
    /// Per recorded step: its number, active pairs, smallest gap, deepest penetration.
    std::vector<long long> step, active;
    std::vector<double> min_gap, penetration;
    /// Rank 0's wall-clock seconds in the contact terms: gradients, Hessian blocks, the line search's checks.
    double seconds_residual = 0.0, seconds_hessian = 0.0, seconds_step_limit = 0.0;
  };
  std::optional<Contact> contact;

  /// With contact.self (solver/self_contact.hpp): the pairs of every step and where the self-contact's time went.
  struct SelfContact {
    double activation_distance = 0.0, stiffness = 0.0;
    long long surface_vertices = 0, max_active = 0;
    double min_distance = 0.0;  ///< the closest pair over the recorded steps (infinity: none active)
    /// Per recorded step: its number, active pairs, closest pair; rank 0's seconds in the step's broad phase,
    /// narrow phase, CCD, ghost-layer exchange, assembly and all self-contact terms; the pairs it evaluated and
    /// checked (rank 0).
    std::vector<long long> step, active, narrow_pairs, ccd_pairs;
    std::vector<double> min_distances, broad, narrow, ccd, exchange, assembly, total;
    double step_seconds = 0.0;  ///< the steps' wall seconds (the denominator of the share)
    /// Per recorded step: rank 0's process CPU seconds in the self-contact terms and (time-stepping runs) in the
    /// whole step (all threads; MPI's busy waits count): the share without the wall clock's waits for a busy core.
    std::vector<double> cpu, step_cpu;
    /// Per recorded step: rank 0's wall and process CPU seconds in the record itself (the active pairs and the closest
    /// one, counted after the step, outside the steps' seconds).
    std::vector<double> record, record_cpu;
    /// Per rank: the ghost layer's bytes received and point-to-point messages sent per Newton iteration, its
    /// neighbours at the end, layers built; the run's Newton iterations.
    std::vector<double> bytes_per_iteration, messages_per_iteration, neighbours, layers_built, owned_vertices;
    long long newton_iterations = 0;
    /// The self-contact terms' calls (each an evaluation with its exchange): residuals, Jacobians, Krylov products,
    /// step limits, energies, measures, step starts.
    std::array<long long, 7> calls{};
    /// Per output step: its number and the pairs of surface triangles that share no vertex and intersect (the
    /// exact test of contact/self_intersection.hpp over the whole surface).
    std::vector<long long> output_step, intersecting_pairs;
  };
  std::optional<SelfContact> self_contact;

  std::optional<std::string> output;  ///< the .pvd

  /// Where the output's time went (run/output.hpp, ResultWriter::times()): rank 0's wall and thread-CPU seconds per
  /// phase summed over the written steps; writer_* phases ran on the writer thread, beside the run.
  struct OutputSplit {
    std::string format;
    long long written_steps = 0;
    OutputTimes times;
  };
  std::optional<OutputSplit> output_split;
};

/// The names of the per-rank phases, in the order of phases_per_rank_s: phases_s's with "assembly_local",
/// "assembly_local_cpu", "assembly_insertion", "assembly_exchange" and "assembly_barrier_wait" after "assembly".
const std::vector<std::string>& rank_phase_names();
/// The names of setup_split_s (core/setup_laps.hpp's phases); rank_phase_names() holds them as "setup_<name>".
const std::vector<std::string>& setup_split_names();
/// This rank's values of rank_phase_names() (NaN for unknown).
std::vector<double> rank_phase_values(const RunSummary& summary);

/// JSON text of a string (quoted, escaped; bytes that are not UTF-8 become U+FFFD).
std::string json_string(const std::string& s);
/// JSON text of a number with `digits` significant digits; NaN and infinities are `null`.
std::string json_number(double x, int digits = 17);

/// The summary as a JSON document (2-space indentation, keys in the schema's order, a final newline).
std::string to_json(const RunSummary& summary);

/// Writes `summary` to `directory`/summary.json through a temporary file in that directory and a rename (the
/// directory is created if missing). Call on one rank. Throws InputError when the file cannot be written.
void write_summary(const std::string& directory, const RunSummary& summary);

/// Collective: gathers every rank's `peak_mb` into `summary.peak_mb_per_rank` and its phases into
/// `summary.phases_per_rank_s`, and writes the summary on rank 0.
/// A failure to write is thrown on every rank (CollectiveError, run_collectively).
void write_summary_collectively(MPI_Comm comm, const std::string& directory, RunSummary& summary, double peak_mb);

/// The UTC time now as ISO-8601 (seconds, `Z`).
std::string iso8601_utc_now();

}  // namespace edgefem
