#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# edgefem under PBS Pro / OpenPBS (Torque: see README.md): MPI ranks x OpenMP threads bound to cores, stopped
# cleanly before the wall time and resubmitted until the job is done. Submit from the edgefem checkout:
#   qsub jobs/cluster/pbs.sh
#   qsub -v EDGEFEM_JOB=jobs/examples/swinging_beam.yaml jobs/cluster/pbs.sh
# jobs/cluster/README.md explains every variable; edit the #PBS lines and the block "edit here".
#
# Wall time: PBS sends SIGTERM only at the limit and SIGKILL a few seconds later (kill_delay), too late to finish
# a step. So this script sets its own alarm LEAD seconds before the limit: SIGUSR1 to the ranks, which finish the
# current step, write a checkpoint and exit with 85. The script then submits itself again (qsub, the same
# variables, EDGEFEM_CHAIN naming the first job) and the next job continues from the checkpoint (--restart).
# A SIGTERM from PBS is forwarded the same way (the ranks stop if the kill delay allows it).
#PBS -N edgefem
#PBS -l select=1:ncpus=2:mpiprocs=2:ompthreads=1
#PBS -l walltime=01:00:00
#PBS -j oe
#PBS -r y

# ---- edit here (or override with qsub -v NAME=value,...) --------------------------------------------------
JOB=${EDGEFEM_JOB:-jobs/examples/swinging_beam.yaml}        # the job file
CHAIN=${EDGEFEM_CHAIN:-${PBS_JOBID%%.*}}                     # first job of the chain (set on resubmission)
OUTPUT=${EDGEFEM_OUTPUT:-out/${PBS_JOBNAME:-edgefem}-$CHAIN}  # output and checkpoint folder
EDGEFEM=${EDGEFEM:-build/edgefem}                            # the program (edgefem if on the PATH)
LEAD=${EDGEFEM_LEAD:-120}                                    # seconds before the wall time to stop
WALLTIME=${EDGEFEM_WALLTIME:-}                               # HH:MM:SS; empty: asked from qstat
SCRIPT=${EDGEFEM_SCRIPT:-jobs/cluster/pbs.sh}                # this file, for the resubmission
EXTRA_ARGS=${EDGEFEM_ARGS:---quiet}                          # more edgefem arguments (PETSc options, --verbose)
BIND=${EDGEFEM_BIND:-core}                                   # mpirun --bind-to (none: a node shared with other work)
# -----------------------------------------------------------------------------------------------------------

readonly STOPPED_RESTARTABLE=85 STOPPED_NOT_RESTARTABLE=86  # edgefem run's exit codes after SIGTERM/SIGUSR1
cd "${PBS_O_WORKDIR:-.}" || exit 2
ranks=$( [ -n "${PBS_NODEFILE:-}" ] && wc -l <"$PBS_NODEFILE" || echo "${EDGEFEM_RANKS:-1}")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}  # PBS sets it from ompthreads
export OMP_PLACES=cores OMP_PROC_BIND=close
# With LAUNCHER=mpirun: a SIGTERM that reaches mpirun makes it abort the job, SIGKILL after 2 x this many seconds
# (default 1 s each); the ranks need a step and a checkpoint's time to stop (docs/ux-notes.md, item 1). The price: after
# the ranks stop with 85, Open MPI 4.1's mpirun still waits 2 x 15 s before it returns, so LEAD must cover a step, a
# checkpoint and those 30 s (the default 120 s does).
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-15}
mkdir -p "$OUTPUT"

# Restart when the folder holds checkpoints written by this chain of jobs.
arguments=(run "$JOB" --output "$OUTPUT")
marker="$OUTPUT/pbs_chain"
if compgen -G "$OUTPUT/checkpoint_*.ckpt" >/dev/null && [ "$(cat "$marker" 2>/dev/null)" = "$CHAIN" ]; then
  arguments+=(--restart "$OUTPUT")
fi
echo "$CHAIN" >"$marker"
read -r -a extra <<<"$EXTRA_ARGS"
arguments+=("${extra[@]}")
# -q: no Open MPI banner after a rank's non-zero exit (it would bury edgefem's one-line error; other MPIs: drop it)
command=(mpirun -q -n "$ranks" --map-by "slot:PE=$OMP_NUM_THREADS" --bind-to "$BIND" "$EDGEFEM" "${arguments[@]}")
echo "pbs.sh: job ${PBS_JOBID:-} (chain $CHAIN): ${command[*]}"

seconds() { local IFS=:; read -r h m s <<<"$1"; echo $((10#$h * 3600 + 10#$m * 60 + 10#$s)); }
[ -n "$WALLTIME" ] || WALLTIME=$(qstat -f "${PBS_JOBID:-}" 2>/dev/null | sed -n 's/.*Resource_List.walltime = //p')
"${command[@]}" &
launcher=$!
alarm=""
if [ -n "$WALLTIME" ]; then
  # The alarm counts from the job's start; PBS counts from about the same moment.
  delay=$(($(seconds "$WALLTIME") - LEAD - SECONDS))
  [ "$delay" -gt 0 ] || delay=1
  (sleep "$delay" && echo "pbs.sh: $LEAD s before the wall time: asking edgefem to checkpoint and stop" &&
    kill -USR1 "$launcher") &
  alarm=$!
else
  echo "pbs.sh: warning: unknown wall time (set EDGEFEM_WALLTIME): no stop before the limit" >&2
fi
trap 'echo "pbs.sh: SIGTERM: asking edgefem to checkpoint and stop"; kill -USR1 "$launcher"' TERM
status=0
wait "$launcher" || status=$?
while kill -0 "$launcher" 2>/dev/null; do  # wait was interrupted by the trap: wait for the real exit
  status=0
  wait "$launcher" || status=$?
done
trap - TERM
[ -z "$alarm" ] || kill "$alarm" 2>/dev/null

case "$status" in
  0) echo "pbs.sh: edgefem finished; results in $OUTPUT" ;;
  "$STOPPED_RESTARTABLE")
    echo "pbs.sh: edgefem stopped with a checkpoint in $OUTPUT; submitting the continuation"
    variables="EDGEFEM_JOB=$JOB,EDGEFEM_CHAIN=$CHAIN,EDGEFEM_OUTPUT=$OUTPUT,EDGEFEM=$EDGEFEM,EDGEFEM_LEAD=$LEAD"
    variables+=",EDGEFEM_SCRIPT=$SCRIPT,EDGEFEM_ARGS=$EXTRA_ARGS"
    [ -z "${EDGEFEM_WALLTIME:-}" ] || variables+=",EDGEFEM_WALLTIME=$EDGEFEM_WALLTIME"
    qsub -v "$variables" "$SCRIPT" && exit 0 ;;
  "$STOPPED_NOT_RESTARTABLE")
    echo "pbs.sh: a static run was stopped before the end; it cannot continue: submit it again with more walltime" ;;
  *) echo "pbs.sh: edgefem failed with exit status $status" ;;
esac
exit "$status"
