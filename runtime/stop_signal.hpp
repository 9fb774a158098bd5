// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file stop_signal.hpp
/// A scheduler's warning before the wall time as a request to stop cleanly. Slurm (`--signal`), PBS and
/// `mpirun`/`srun` forwarding send SIGUSR1 or SIGTERM some time before they kill a job; `edgefem run` then
/// finishes the step it is computing, writes what a restart needs and exits with one of the codes below.
///
/// The handler only stores the signal number in a `volatile std::sig_atomic_t` (nothing else is safe in a
/// handler). The ranks agree on it once per completed step (`agree_on_stop`, one MPI_Allreduce MAX), so a signal
/// delivered to some ranks only stops every rank after the same step; no collective is ever called from the
/// handler. The handler stays installed: a second signal while the checkpoint is written only sets the flag
/// again (and interrupted system calls restart, SA_RESTART), so it cannot cut the file short.
#include <mpi.h>

namespace edgefem {

/// `edgefem run` exit status: stopped by SIGTERM/SIGUSR1 after a completed time step, with a checkpoint of that
/// step written; `edgefem run JOB --restart DIR` continues it. Distinct from 0, 1 (error), 2 (abort), from
/// what mpirun/srun add (they pass the ranks' status on) and from the shells' 126, 127 and 128 + signal.
inline constexpr int kExitStoppedRestartable = 85;
/// `edgefem run` exit status: a static (load-stepping) run stopped by SIGTERM/SIGUSR1 after a completed load
/// step, its outputs written up to that step. Static runs have no checkpoints: it cannot be continued, only
/// run again from the start (a scheduler must not simply requeue it).
inline constexpr int kExitStoppedNotRestartable = 86;

/// Catch SIGTERM and SIGUSR1 (replacing PETSc's handlers, so call it after PetscInitialize). Not collective.
void install_stop_handlers();

/// The last stop signal this rank received since install_stop_handlers (0: none). Not collective.
int stop_signal_received();

/// Forget a received signal (tests). Not collective.
void clear_stop_signal();

/// Collective (one MPI_Allreduce MAX over `comm`): the largest stop signal number any rank received (0: none);
/// the same value on every rank.
int agree_on_stop(MPI_Comm comm);

/// "SIGTERM", "SIGUSR1", else "signal N".
const char* stop_signal_name(int signal_number);

}  // namespace edgefem
