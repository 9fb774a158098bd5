// SPDX-License-Identifier: BSD-3-Clause
/// \file summary_record.cpp
/// summary.json and the error policy (summary_record.hpp).
#include "run/summary_record.hpp"

#include <petscsys.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "core/error.hpp"
#include "run/memory_account.hpp"
#include "run/provenance.hpp"
#include "run/report.hpp"

namespace edgefem {

SummaryRecord::SummaryRecord(const std::string& version, int argc, char** argv) {
  summary.version = version;
  summary.started = iso8601_utc_now();
  for (int i = 0; i < argc; ++i) {
    if (i > 0) summary.command += ' ';
    summary.command += argv[i];
  }
}

void SummaryRecord::started_on(MPI_Comm comm) {
  MPI_Comm_size(comm, &summary.ranks);
  start = std::chrono::steady_clock::now();  // (the total counts from here: MPI's start-up is not the run's)
  summary.threads_per_rank = threads();
  summary.provenance = gather_provenance(comm);
  memory_account().start_up();
  memory_account().phase("start-up");
}

void SummaryRecord::finish(int exit_code, std::optional<std::string> error) {
  summary.exit_code = exit_code;
  summary.error = std::move(error);
  summary.phases_s.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int write_run_summary(MPI_Comm comm, SummaryRecord& record, int code, std::optional<std::string> error) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  record.finish(code, std::move(error));
  int snapshot = memory_account().has_snapshot() ? 1 : 0, every = 0;
  MPI_Allreduce(&snapshot, &every, 1, MPI_INT, MPI_MIN, comm);  // (an error may have ended the run before it)
  if (every == 1) {
    memory_account().phase("end");
    record.summary.memory_account =
        memory_account().gather(comm, record.summary.mesh ? record.summary.mesh->cells : 0);
  }
  try {
    write_summary_collectively(comm, record.directory, record.summary, peak_memory_mb());
  } catch (const Error& e) {
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());
    return code != 0 ? code : 1;
  }
  return code;
}

void abort_run(int rank, const char* what, SummaryRecord& record) {
  std::fprintf(stderr, "edgefem: rank %d: fatal error: %s\n", rank, what);
  std::fflush(stderr);
  if (rank == 0 && !record.directory.empty()) {
    record.summary.peak_mb_per_rank.clear();
    record.finish(2, std::string(what));
    try {
      write_summary(record.directory, record.summary);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "edgefem: rank 0: %s\n", e.what());
    }
  }
  record.output_lock.reset();  // (rank 0's file alone: no MPI)
  MPI_Abort(PETSC_COMM_WORLD, 2);
  std::abort();  // (MPI_Abort does not return)
}

int run_reporting_errors(MPI_Comm comm, SummaryRecord& record, const std::function<int()>& command) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int code = 0;
  std::optional<std::string> error;
  try {
    code = command();
  } catch (const Error& e) {
    if (e.scope() != ErrorScope::every_rank) abort_run(rank, e.what(), record);
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());  // the same message on every rank
    code = 1;
    error = e.what();
  } catch (const std::exception& e) {  // not one of ours: possibly on one rank only
    abort_run(rank, e.what(), record);
  }
  // Every rank gets here (an every-rank error or none), so the summary may gather.
  if (!record.directory.empty()) code = write_run_summary(comm, record, code, std::move(error));
  record.output_lock.reset();
  return code;
}

}  // namespace edgefem
