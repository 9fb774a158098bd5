// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file report.hpp
/// What a run tells the user and summary.json besides its own lines: the phase clock, the state summary (largest
/// displacement, volume change, deformed box, peak memory), the solver counts and the reactions on the boundary
/// entries. Rank 0 prints; the functions that gather are collective.
#include <mpi.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/stopwatch.hpp"
#include "io/job.hpp"
#include "io/summary.hpp"
#include "partition/partition.hpp"
#include "run/output.hpp"
#include "solver/contact.hpp"
#include "solver/newton.hpp"
#include "solver/self_contact.hpp"
#include "solver/time_integrator.hpp"

namespace edgefem {

/// This process's peak resident memory (getrusage), in MB.
double peak_memory_mb();

/// `--quiet`: while an active scope lives, what PetscPrintf would print on stdout is dropped (the header, the summary
/// lines); stderr and the lines printed outside such scopes (warnings, the stop and restart lines) stay. Put it
/// around information only, never around a warning. Not collective; scopes nest.
class QuietScope {
 public:
  explicit QuietScope(bool quiet);
  ~QuietScope();
  QuietScope(const QuietScope&) = delete;
  QuietScope& operator=(const QuietScope&) = delete;

 private:
  bool active_;
};

/// OpenMP threads per rank (1 without OpenMP).
int threads();

/// Wall-clock seconds of the phases before the solve (the time the user waits is read -> partition -> distribute
/// -> set-up -> solve -> write).
struct PhaseClock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), last = start;
  double job = 0.0, read = 0.0, partition = 0.0, distribute = 0.0, setup = 0.0;
  /// Seconds since the last lap (or the start).
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last).count();
    last = now;
    return s;
  }
  [[nodiscard]] double total() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

/// Runs `f` when it goes out of scope, also when an exception unwinds it (what a failed run has done so far).
class AtScopeExit {
 public:
  explicit AtScopeExit(std::function<void()> f) : f_(std::move(f)) {}
  AtScopeExit(const AtScopeExit&) = delete;
  AtScopeExit& operator=(const AtScopeExit&) = delete;
  ~AtScopeExit() {
    try {
      f_();
    } catch (...) {  // (only a failed allocation; the record is then incomplete)
    }
  }

 private:
  std::function<void()> f_;
};

/// Largest displacement, volume change, deformed bounding box, peak memory (collective; rank 0 prints). Returns
/// the largest displacement (every rank). `x`: the positions of the local vertices.
RunSummary::Displacement print_state_summary(MPI_Comm comm, const LocalMesh& mesh, const std::vector<double>& x);

/// The solver lines of the summary: counts, where the solve time went, the preconditioner.
void print_solver_summary(MPI_Comm comm, const NewtonStats& s, const std::string& preconditioner);

/// The end of the set-up (call right after `clock.setup` is taken): ends core/setup_laps.hpp's accounting and records
/// phases_s.setup, this rank's laps and phases_s.before_steps (the seconds since `clock` started).
void record_setup_laps(RunSummary& summary, const PhaseClock& clock);

/// The set-up's line of the summary: each lap's largest time over the ranks (those of 1 ms or more), and the first
/// preconditioner set-up's. Collective.
void print_setup_split(MPI_Comm comm, const RunSummary& summary);

/// The solver's counts and the solve phases of summary.json (the Newton solves' assembly, PC set-up and the rest,
/// KSP and vector work), and the output phase.
void record_solve(RunSummary& summary, const NewtonStats& s, const std::string& preconditioner, double output_seconds);

/// "region 11", "box [0, 0, 0]-[1, 1, 0.1]" or "all vertices": what a boundary entry selected.
std::string describe(const Selection& s);

/// The total internal force on each boundary entry's vertices at the last recorded step: the reaction where they
/// are held.
void print_reactions(MPI_Comm comm, const Job& job, const ReactionLog& reactions);

/// A warning when the total energy of `reports` (kinetic + strain + attachment + contact - the loads' work) grew from
/// `first` by more than all the energy the run was given (first's kinetic, strain, attachment and contact energies
/// and the loads' largest work so far): the step, the growth and what was given; empty if it never did (or an energy
/// is not finite). A converged position-based step keeps or loses energy, so this says a step was not (or that its
/// contact projections added energy).
std::string energy_growth_warning(const EnergyReport& first, const std::vector<TimeStepReport>& reports);

/// Contact (with obstacles): summary.json's `contact` record begun (the method, the activation distance, the
/// obstacles' names).
RunSummary::Contact begin_contact_record(const Job& job, const ContactTerms& contact);
/// The same for the position-based integrator's projection (method "projection", no distance or stiffness).
RunSummary::Contact begin_projection_record(const Job& job);
/// One recorded step's contact (ContactStepReport) and the obstacles' forces on the body (3 each) at it.
void record_contact(RunSummary::Contact& record, long long step, const ContactStepReport& report,
                    std::vector<double> forces);
/// The contact lines of the summary: the deepest penetration, the most active contacts, each obstacle's force, the
/// time in the contact terms (`seconds` go to the record first; null: not measured; method "projection": the
/// position-based contact's generation in step_limit, its projections in residual) against `solve_seconds`.
/// The self-contact record (summary.json's `self_contact`) of `terms`.
RunSummary::SelfContact begin_self_contact_record(const SelfContactTerms& terms);
/// Appends a step: its pairs at the (local, 3 per vertex, owned first) positions and rank 0's cost since the last
/// record. Collective.
void record_self_contact(RunSummary::SelfContact& record, long long step, SelfContactTerms& terms,
                         std::span<const double> local_positions);
/// The end of the run's self-contact lines (and the exchange per rank per Newton iteration into the record).
/// Collective.
void print_self_contact_summary(MPI_Comm comm, RunSummary::SelfContact& record, const SelfContactTerms& terms,
                                long long newton_iterations, double step_seconds);
void print_contact_summary(MPI_Comm comm, RunSummary::Contact& record, const ContactSeconds* seconds,
                           double solve_seconds);

}  // namespace edgefem
