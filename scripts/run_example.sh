#!/usr/bin/env bash
# Install what is missing, build (Release) and run the bundled cantilever example on 2 ranks.
#   scripts/run_example.sh [JOB.yaml] [RANKS]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build.sh
job=${1:-jobs/examples/cantilever.yaml}
ranks=${2:-2}
threads=$(( $(nproc) / ranks )); [ "$threads" -lt 1 ] && threads=1
OMP_NUM_THREADS=$threads mpirun -n "$ranks" build/edgefem run "$job"
