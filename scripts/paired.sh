#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Paired whole-run timing of two commands (the README's "alternating pairs"): runs A, then B, PAIRS times (A and B
# swap places every other pair, so neither always follows the other), each under the wall clock, and prints every
# pair, the medians of A and of B and the median of the ratios B/A. Only bash, date, awk and sort.
#   scripts/paired.sh PAIRS 'COMMAND A' 'COMMAND B'
# Example (the 2-rank cantilever, the base binary against ours; OMPI_ALLOW_RUN_AS_ROOT* when running as root):
#   OMP_NUM_THREADS=1 scripts/paired.sh 11 \
#     'mpirun -n 2 .bench/base-6d2a40c/build/edgefem run jobs/bench/cantilever_gravity.yaml --quiet' \
#     'mpirun -n 2 build/edgefem run jobs/bench/cantilever_gravity.yaml --quiet'
# A run that fails stops the script (its output is in the log file named in the message).
set -euo pipefail
if [ $# -ne 3 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 PAIRS 'COMMAND A' 'COMMAND B'   (PAIRS: a positive integer, got '${1:-}')" >&2
  exit 2
fi
pairs=$1 cmd_a=$2 cmd_b=$3
log=$(mktemp "${TMPDIR:-/tmp}/paired.XXXXXX.log")

# wall seconds of one run of "$1"; its output goes to the log
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  if ! bash -c "$1" >>"$log" 2>&1; then
    echo "paired.sh: '$1' failed (exit status non-zero); its output: $log" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
source "$(dirname "$0")/stats.sh"  # median
median3() { median | awk '{printf "%.3f", $1}'; }

ta=() tb=() ratios=()
echo "A: $cmd_a"
echo "B: $cmd_b"
for ((i = 1; i <= pairs; i++)); do
  if ((i % 2)); then
    a=$(timed "$cmd_a"); b=$(timed "$cmd_b")
  else
    b=$(timed "$cmd_b"); a=$(timed "$cmd_a")
  fi
  ta+=("$a") tb+=("$b")
  ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.4f", b / a}')")
  printf 'pair %2d: A %s s, B %s s, B/A %s\n' "$i" "$a" "$b" "${ratios[-1]}"
done
printf 'medians of %d pairs: A %s s, B %s s, ratio B/A x%s (ratios %s to %s)\n' "$pairs" \
  "$(printf '%s\n' "${ta[@]}" | median3)" "$(printf '%s\n' "${tb[@]}" | median3)" \
  "$(printf '%s\n' "${ratios[@]}" | median3)" \
  "$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)" "$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)"
rm -f "$log"
