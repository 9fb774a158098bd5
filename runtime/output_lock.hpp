// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file output_lock.hpp
/// One run per output folder. `edgefem run` takes `output.directory`/.edgefem.lock before it writes anything there:
/// a file created exclusively (open with O_CREAT | O_EXCL, atomic on local disks and on NFS v3+ and Lustre) that
/// holds the run's id, host, process id and start time. A second run on the folder finds it and is refused with a
/// message naming the run that holds it. The lock is removed at every exit the program sees: the end of the run, an
/// error (every rank's, or one rank's before MPI_Abort), and a stop signal (SIGTERM/SIGUSR1 stop the run after a step,
/// runtime/stop_signal.hpp). A process killed outright (SIGKILL, a crashed node) leaves it behind: a lock whose
/// process no longer runs on this host is stale and the next run takes it over with a warning (so `--restart` of the
/// folder after a crash works), as is one left by an earlier attempt of the same Slurm job (the same SLURM_JOB_ID
/// with a lower SLURM_RESTART_COUNT: a requeued job may land on another node; two steps of one attempt may not share
/// a folder). A lock of another host cannot be checked from here: it is
/// reported with its host and age, and refused.
#include <mpi.h>

#include <string>

namespace edgefem {

/// A lock file's content: who holds the folder.
struct LockOwner {
  std::string run_id;   ///< the scheduler's job id (SLURM_JOB_ID, PBS_JOBID), else host:pid:start
  std::string host;     ///< gethostname
  long long pid = 0;
  long long pid_start = 0;  ///< the process's start (clock ticks since boot, /proc/PID/stat), 0 when unknown
  long long started = 0;    ///< Unix time the lock was taken
  std::string job;      ///< the job file
  bool scheduler_id = false;  ///< run_id is a scheduler's job id
  long long attempt = 0;      ///< the scheduler's count of restarts of the job (SLURM_RESTART_COUNT), else 0
};

/// This process as a lock owner, for `job`.
LockOwner this_process(const std::string& job);

/// The lock file of `directory`.
std::string lock_path(const std::string& directory);

/// What taking a lock came to (not collective).
struct LockAttempt {
  bool taken = false;
  std::string warning;  ///< taken over from a stale lock: what was taken over
  std::string problem;  ///< not taken: the message (names the run that holds it, or why the file cannot be made)
};

/// Takes the lock of `directory` (which must exist) for `me`: creates it, or takes over a stale one (see above).
/// Not collective; never throws.
LockAttempt try_lock_directory(const std::string& directory, const LockOwner& me);

/// Removes the lock of `directory` when it is `me`'s (its pid and start match). Not collective; never throws.
void unlock_directory(const std::string& directory, const LockOwner& me);

/// The lock of a run's output folder, held from construction to release() or destruction (whichever comes first).
/// Collective construction: rank 0 creates the folder and takes the lock, prints a take-over's warning, and every
/// rank throws InputError when it is refused. Release is rank 0's alone (no MPI: safe on an abort path).
class OutputLock {
 public:
  OutputLock(MPI_Comm comm, const std::string& directory, const std::string& job);
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock() { release(); }
  void release() noexcept;

 private:
  std::string directory_;
  LockOwner me_;
  bool held_ = false;
};

}  // namespace edgefem
