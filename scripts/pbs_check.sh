#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A dry run of jobs/cluster/pbs.sh without a PBS server (ctest: pbs.dry_run): the script runs as PBS would run it
# (PBS_JOBID, PBS_O_WORKDIR; qstat and qsub are stand-ins in a temporary PATH folder: qstat reports the walltime
# the check chooses, qsub records its arguments) on tests/data/dyn_signal_stop.yaml made 2 times as long (200 steps)
# on a mesh 27 times as fine (36 x 6 x 6 cells, 7,776 tets; about 11 s uncontended on 2 ranks (400 steps: 42 s of CPU
# for both ranks at e4107f1), so that the alarm, 3 s in, lands mid-run however fast the machine: the original 288 tets
# took 12 s before the solver work of issue 9, 2.8 s after, and finished before the alarm), 2 ranks. Checked:
# the alarm 37 s before the wall time stops edgefem with a checkpoint (85), the script submits its continuation with the
# chain's variables, and each continuation, run with those variables, restarts from the last checkpoint, until one
# finishes (energy.csv then holds every step once). Not checked here: PBS itself (select, mpiprocs, kill_delay).
#   scripts/pbs_check.sh [--edgefem PATH]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
edgefem=${EDGEFEM:-$root/build/edgefem}
[ "${1:-}" = "--edgefem" ] && edgefem=$2
fail() { echo "pbs_check: FAILED: $*"; exit 1; }
command -v mpirun >/dev/null || { echo "pbs_check: SKIPPED: no mpirun"; exit 77; }
[ -x "$edgefem" ] || fail "no edgefem program at $edgefem"
source "$root/scripts/env.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/edgefem-pbs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
sed -e 's/^  end_time: 5.0 .*/  end_time: 10.0/' -e 's/cells: \[12, 2, 2\]/cells: [36, 6, 6]/' \
  "$root/tests/data/dyn_signal_stop.yaml" >"$tmp/job.yaml"
grep -q "end_time: 10.0" "$tmp/job.yaml" && grep -q "cells: \[36, 6, 6\]" "$tmp/job.yaml" ||
  fail "could not lengthen tests/data/dyn_signal_stop.yaml"
printf '#!/bin/bash\necho "Job Id: $1"\necho "    Resource_List.walltime = $(cat %s/walltime)"\n' "$tmp" >"$tmp/bin/qstat"
printf '#!/bin/bash\nprintf "%%s\\n" "$@" >"%s/qsub.args"\necho 1002.fake\n' "$tmp" >"$tmp/bin/qsub"
chmod +x "$tmp/bin/qstat" "$tmp/bin/qsub"
export PATH=$tmp/bin:$PATH OMP_NUM_THREADS=1
# OMPI_MCA_odls_base_sigkill_timeout=2: Open MPI 4.1's mpirun lingers twice this timeout after the ranks exit 85 (the
# abort of a job with a non-zero exit: SIGTERM, wait, SIGKILL, wait, though the ranks are gone), 30 s with pbs.sh's
# 15; the SIGTERM path that needs those 15 s is not exercised here (the alarm sends SIGUSR1).
# EDGEFEM_BIND=none: the machine runs other tests beside this one (ctest -j); ranks bound to a core each wait for
# the busier core at every step (in the suite: 121 s, against 21 s alone).
common=(PBS_O_WORKDIR="$root" PBS_JOBNAME=edgefem EDGEFEM_RANKS=2 EDGEFEM="$edgefem"
        OMPI_MCA_odls_base_sigkill_timeout=2 EDGEFEM_BIND=none)

# First job: the alarm fires 37 s before the 40 s walltime, i.e. about 3 s in, mid-run (a run takes 10-30 s).
echo 00:00:40 >"$tmp/walltime"
env "${common[@]}" PBS_JOBID=1001.fake EDGEFEM_LEAD=37 EDGEFEM_JOB="$tmp/job.yaml" \
  EDGEFEM_OUTPUT="$tmp/out" bash "$root/jobs/cluster/pbs.sh" >"$tmp/first.log" 2>&1
status=$?
first=$(cat "$tmp/first.log")
[ "$status" -eq 0 ] || { echo "$first"; fail "the first job exited with $status (expected 0 after resubmitting)"; }
stop=$(grep -o 'stopped by SIGUSR1 after time step [0-9]*' <<<"$first" | grep -o '[0-9]*$')
[ -n "$stop" ] || { echo "$first"; fail "edgefem was not stopped by the alarm"; }
[ -e "$tmp/qsub.args" ] || { echo "$first"; fail "no continuation submitted"; }

# The continuations, each with exactly the variables its predecessor passed to qsub, until one finishes: the
# second gets 47 s (its alarm 10 s in: it may stop again), the later ones 10 minutes.
previous=$stop
jobs=1
while [ -e "$tmp/qsub.args" ]; do
  mapfile -t qsub <"$tmp/qsub.args"
  rm "$tmp/qsub.args"
  [ "${qsub[0]}" = "-v" ] && [ "${qsub[2]}" = "jobs/cluster/pbs.sh" ] || fail "qsub arguments: ${qsub[*]}"
  grep -q "EDGEFEM_CHAIN=1001," <<<"${qsub[1]}" || fail "the continuation does not name the chain: ${qsub[1]}"
  [ "$jobs" -lt 5 ] || fail "still not finished after $jobs jobs"
  jobs=$((jobs + 1))
  if [ "$jobs" -eq 2 ]; then echo 00:00:47 >"$tmp/walltime"; else echo 00:10:00 >"$tmp/walltime"; fi
  IFS=, read -r -a variables <<<"${qsub[1]}"
  env "${common[@]}" PBS_JOBID=100$jobs.fake "${variables[@]}" bash "$root/jobs/cluster/pbs.sh" >"$tmp/job$jobs.log" 2>&1
  status=$?
  log=$(cat "$tmp/job$jobs.log")
  [ "$status" -eq 0 ] || { echo "$log"; fail "job $jobs exited with $status"; }
  grep -q -- "--restart $tmp/out" <<<"$log" || { echo "$log"; fail "job $jobs did not pass --restart"; }
  grep -q "restart from $tmp/out/checkpoint_$(printf %06d "$previous").ckpt" <<<"$log" ||
    { echo "$log"; fail "job $jobs did not continue from step $previous"; }
  previous=$(grep -o 'stopped by SIGUSR1 after time step [0-9]*' <<<"$log" | grep -o '[0-9]*$')
done
grep -q "edgefem finished" <<<"$log" || { echo "$log"; fail "the last job did not finish"; }
steps=$(awk -F, 'NR > 1 { if ($1 != NR - 2) bad = 1; n++ } END { print bad ? "bad" : n }' "$tmp/out/energy.csv")
[ "$steps" = 201 ] || fail "energy.csv after the continuation: $steps rows (expected steps 0..200 once each)"
echo "pbs_check: the alarm stopped edgefem after step $stop (exit 85); $jobs jobs in all, each continuing from the" \
  "last one's checkpoint, finished the run (energy.csv: steps 0..200 once each); PASSED"
