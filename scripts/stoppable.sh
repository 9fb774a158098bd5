#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run a launcher (mpirun, srun, ...) so that SIGTERM, SIGINT and SIGHUP to this script end edgefem in its
# documented stop (checkpoint, summary.json "stopped", exit status 85/86) instead of an abort:
#   scripts/stoppable.sh mpirun -q -n 2 build/edgefem run JOB.yaml
# Open MPI 4.1's mpirun does not forward SIGTERM/SIGINT (ess_base_forward_signals refuses them): it aborts the job
# (SIGCONT, odls_base_sigkill_timeout s, SIGTERM, the same again, SIGKILL) and exits 1 whatever the ranks did. It
# does forward SIGUSR1, which edgefem takes as the same stop request: this script turns the signals into that one.
# The exit status is the launcher's.
set -u
if [ $# -eq 0 ]; then echo "usage: scripts/stoppable.sh LAUNCHER ARGS..." >&2; exit 2; fi
"$@" &
launcher=$!
trap 'kill -USR1 "$launcher" 2>/dev/null' TERM INT HUP
status=0
wait "$launcher" || status=$?
while kill -0 "$launcher" 2>/dev/null; do  # wait was interrupted by the trap: wait for the real exit
  status=0
  wait "$launcher" || status=$?
done
exit "$status"
