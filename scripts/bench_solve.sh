#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Time to solution before/after: builds this tree and a base commit (default: the last main before the Newton
# driver), runs each problem with both binaries in turn (median of RUNS runs of the whole process: read,
# partition, set-up, solve, output) and prints a Markdown table with Newton and KSP iterations, preconditioner
# set-ups and the wall times. Needs gmsh for the 136k-tet cantilever mesh (./setup.sh --with-gmsh installs it).
#   scripts/bench_solve.sh [--base REF] [--runs N] [--cases a,b,...] [--big] [--pause SECONDS]
# Cases: cantilever (136,565 tets, 1 and 2 ranks), twist, column, swinging_beam, pulled_beam, hanging_cloth (1 and
# 2 ranks);
# --big adds the 1.2M-tet box of jobs/bench/box_stvk.yaml (one run each, 2 ranks; the base takes many minutes).
# --pause S sleeps S seconds before every run. Without it each run follows the other binary's; on a VM that gives
# freed memory back to its host (free page reporting) a run after a pause of 10 s or more finds its memory unbacked,
# as a user's first run after looking at results does, and both binaries are then measured that way (README,
# "Measured performance").
set -euo pipefail
cd "$(dirname "$0")/.."
base_ref=6d2a40c
runs=3
cases=cantilever,twist,column,swinging_beam,pulled_beam,hanging_cloth
big=0
pause=0
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base_ref=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --big) big=1; shift ;;
    --pause) pause=$2; shift 2 ;;
    *) echo "usage: $0 [--base REF] [--runs N] [--cases a,b,...] [--big] [--pause SECONDS]" >&2; exit 2 ;;
  esac
done
if ! [[ $pause =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "bench_solve: --pause takes seconds (a number), got '$pause'" >&2
  exit 2
fi

build_targets=edgefem source scripts/build.sh >&2
root=$(pwd)
new_bin=$root/build/edgefem
# The base binary, built once per commit in .bench/ (ignored by git).
base_dir=$root/.bench/base-$(git rev-parse --short "$base_ref")
if [ ! -x "$base_dir/build/edgefem" ]; then
  echo "bench_solve: building the base $base_ref in $base_dir" >&2
  rm -rf "$base_dir"
  mkdir -p "$root/.bench"
  git worktree add --detach "$base_dir" "$base_ref" >/dev/null
  cmake -S "$base_dir" -B "$base_dir/build" -DCMAKE_BUILD_TYPE=Release -DEDGEFEM_BUILD_TESTS=OFF \
    -DEDGEFEM_BUILD_BENCH=OFF >/dev/null
  cmake --build "$base_dir/build" -j "$(nproc)" --target edgefem >/dev/null
fi
base_bin=$base_dir/build/edgefem

mesh=jobs/bench/meshes/cantilever_h0.07.msh
if [[ ",$cases," == *",cantilever,"* ]] && [ ! -f "$mesh" ]; then
  command -v gmsh >/dev/null || { echo "bench_solve: gmsh is needed for $mesh: ./setup.sh --with-gmsh" >&2; exit 1; }
  gmsh -3 -setnumber h 0.07 jobs/bench/meshes/cantilever.geo -format msh41 -bin -o "$mesh" >/dev/null
fi

out=$root/.bench/out
mkdir -p "$out"
# run BIN RANKS JOB LOG: one whole run; prints its wall seconds.
run() {
  local bin=$1 ranks=$2 job=$3 log=$4 threads=$(( $(nproc) / $2 ))
  local bind=""; [ "$threads" -gt 1 ] && bind="--bind-to none"  # Open MPI binds a rank to one core for <= 2 ranks
  [ "$threads" -lt 1 ] && threads=1
  local t0 t1
  [ "$pause" = 0 ] || sleep "$pause"
  t0=$(date +%s.%N)
  OMP_NUM_THREADS=$threads mpirun -q -n "$ranks" $bind "$bin" run "$job" --output "$out/run" >"$log" 2>&1 ||
    { echo "bench_solve: $bin failed on $job, see $log" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
source scripts/stats.sh  # median
# Newton, KSP iterations, PC set-ups (- when the binary does not report them) and seconds per step of a log.
counts() {
  awk '/^summary:/ {for (i = 1; i <= NF; i++) {if ($(i+1) ~ /^Newton/) n = $i; if ($(i+1) ~ /^KSP/) k = $i}}
       /^  solver:/ {for (i = 1; i <= NF; i++) if ($(i+1) == "preconditioner") p = $i}
       /per step\)/ {for (i = 1; i <= NF; i++) if ($(i+2) == "per" && $(i+3) ~ /^step\)/) s = $i; gsub(/\(/, "", s)}
       END {printf "%s %s %s %s\n", n, k, (p == "" ? "-" : p), (s == "" ? "-" : s)}' "$1"
}

echo "| problem | ranks | Newton its (before → after) | KSP its | PC set-ups after | s per step (before → after) | wall s, median of runs (before → after) | speed-up |"
echo "|---|---|---|---|---|---|---|---|"
bench_case() {
  local name=$1 job=$2 ranks=$3 n=$4
  local wb=() wa=()
  for ((r = 0; r < n; r++)); do
    wb+=("$(run "$base_bin" "$ranks" "$job" "$out/$name.$ranks.base.log")")
    wa+=("$(run "$new_bin" "$ranks" "$job" "$out/$name.$ranks.new.log")")
  done
  local mb ma
  mb=$(printf '%s\n' "${wb[@]}" | median)
  ma=$(printf '%s\n' "${wa[@]}" | median)
  read -r nb kb _ sb <<<"$(counts "$out/$name.$ranks.base.log")"
  read -r na ka pa sa <<<"$(counts "$out/$name.$ranks.new.log")"
  local per="-"
  [ "$sb" != "-" ] && per="$sb → $sa"
  printf '| %s | %d | %s → %s | %s → %s | %s | %s | %.2f → %.2f | %.2f× |\n' "$name" "$ranks" "$nb" "$na" "$kb" "$ka" \
    "$pa" "$per" "$mb" "$ma" "$(echo "$mb / $ma" | bc -l)"
}
IFS=, read -ra selected <<<"$cases"
for c in "${selected[@]}"; do
  case "$c" in
    cantilever) for p in 1 2; do bench_case cantilever jobs/bench/cantilever_gravity.yaml "$p" "$runs"; done ;;
    twist|column) bench_case "$c" "jobs/examples/$c.yaml" 1 "$runs" ;;
    swinging_beam|pulled_beam|hanging_cloth) for p in 1 2; do bench_case "$c" "jobs/examples/$c.yaml" "$p" "$runs"; done ;;
    *) echo "bench_solve: unknown case '$c'" >&2; exit 2 ;;
  esac
done
if [ "$big" = 1 ]; then
  cp jobs/bench/box_stvk.yaml "$out/box_full.yaml"
  printf 'loads:\n  gravity: [0, 0, -1.0]\nanalysis: {type: static, steps: 1}\noutput: {directory: %s}\n' "$out/box" >> "$out/box_full.yaml"
  bench_case box_1.2M "$out/box_full.yaml" 2 1
fi
echo
echo "median of $runs runs per row$([ "$big" = 1 ] && echo ', the 1.2M box one run')$([ "$pause" = 0 ] || echo ", each after a pause of $pause s")."
echo "before: $base_ref ($base_bin), after: $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'); $(nproc) cores, OMP_NUM_THREADS = cores / ranks"
