#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what is missing, build (Release) and run the bundled cantilever example on 2 ranks.
#   scripts/run_example.sh [JOB.yaml] [RANKS]
set -euo pipefail
cd "$(dirname "$0")/.."
build_targets=edgefem source scripts/build.sh
job=${1:-jobs/examples/cantilever.yaml}
ranks=${2:-2}
threads=$(( $(nproc) / ranks )); [ "$threads" -lt 1 ] && threads=1
bind=""; [ "$threads" -gt 1 ] && bind="--bind-to none"  # Open MPI binds a rank to one core for <= 2 ranks
OMP_NUM_THREADS=$threads mpirun -q -n "$ranks" $bind build/edgefem run "$job"
