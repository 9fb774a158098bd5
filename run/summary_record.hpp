// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file summary_record.hpp
/// The run's summary.json (docs/guide/running.md "Run summary") and the program's error policy: the record is filled as the run
/// goes (run/run_job.hpp) and written once the output directory is known, whether the run succeeds or fails; an
/// error thrown on every rank is reported by rank 0 (exit code 1), any other error aborts every rank (exit code 2)
/// so that none waits in a collective.
#include <mpi.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "io/summary.hpp"
#include "runtime/output_lock.hpp"

namespace edgefem {

struct SummaryRecord {
  RunSummary summary;
  std::string directory;  ///< where summary.json goes; empty: no summary (not a run, or failed before the job)
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  /// The lock of `directory` (runtime/output_lock.hpp), taken before anything is written there and released once
  /// summary.json is written, on an abort before MPI_Abort, or when the record goes.
  std::unique_ptr<OutputLock> output_lock;

  /// Before MPI starts: the version, the start time and the command line.
  SummaryRecord(const std::string& version, int argc, char** argv);
  /// Once MPI is up (collective): the ranks and threads, the provenance (run/provenance.hpp), and the total's start (MPI's start-up is not the run's).
  void started_on(MPI_Comm comm);
  /// The exit code, the error (if any) and the total time.
  void finish(int exit_code, std::optional<std::string> error);
};

/// Collective: writes summary.json with every rank's peak memory. Returns the exit code: `code`, or 1 when the
/// summary could not be written (the message printed).
int write_run_summary(MPI_Comm comm, SummaryRecord& record, int code, std::optional<std::string> error);

/// An error possibly thrown on this rank only: report it and abort every rank so that none waits in a collective.
/// On rank 0 summary.json records it first (without the other ranks' memory: no collective call is safe here).
[[noreturn]] void abort_run(int rank, const char* what, SummaryRecord& record);

/// Runs `command` (which returns the exit code) on every rank of `comm` under the error policy above, then writes
/// summary.json when `record.directory` is set and releases the folder's lock. Returns the exit code.
int run_reporting_errors(MPI_Comm comm, SummaryRecord& record, const std::function<int()>& command);

}  // namespace edgefem
