#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What each part of the Newton strategy saves (README): the benchmark cantilever (136,565 tets, 1 rank) solved
# with the defaults and with one part switched off at a time, through job keys or PETSc options. Prints a
# Markdown table (median of RUNS whole runs). Needs gmsh (./setup.sh --with-gmsh).
#   scripts/bench_strategy.sh [RUNS] [RANKS]
set -euo pipefail
cd "$(dirname "$0")/.."
build_targets=edgefem source scripts/build.sh >&2
runs=${1:-3}
ranks=${2:-1}
threads=$(( $(nproc) / ranks )); [ "$threads" -lt 1 ] && threads=1
bind=""; [ "$threads" -gt 1 ] && bind="--bind-to none"  # Open MPI binds a rank to one core for <= 2 ranks
mesh=jobs/bench/meshes/cantilever_h0.07.msh
[ -f "$mesh" ] || command -v gmsh >/dev/null || { echo "bench_strategy.sh: meshing $mesh needs the gmsh program: ./setup.sh --with-gmsh" >&2; exit 1; }
[ -f "$mesh" ] || gmsh -3 -setnumber h 0.07 jobs/bench/meshes/cantilever.geo -format msh41 -bin -o "$mesh" >/dev/null
mkdir -p .bench/strategy
job=jobs/bench/cantilever_gravity.yaml
# variant NAME NEWTON_KEYS LINEAR_KEYS PETSC_OPTIONS
variants=(
  "all parts on (the defaults)|||"
  "no predictor (last converged state)|predictor: none||"
  "fixed linear tolerance 1e-8 (no Eisenstat-Walker)|forcing: fixed||"
  "preconditioner rebuilt every iteration||reuse: false|"
  "GAMG interpolation rebuilt too|||-pc_gamg_reuse_interpolation false"
  "critical-point line search (old default)|line_search: cp||"
  "GAMG graph threshold 0.02|||-pc_gamg_threshold 0.02"
)
echo "| variant | Newton its | KSP its | PC set-ups | wall s (median of $runs) |"
echo "|---|---|---|---|---|"
source scripts/stats.sh  # median
for v in "${variants[@]}"; do
  IFS='|' read -r name newton linear options <<<"$v"
  file=.bench/strategy/job.yaml
  sed "s#file: meshes/#file: $(pwd)/jobs/bench/meshes/#" "$job" > "$file"
  [ -n "$newton" ] && sed -i "s#max_it: 30}#max_it: 30, $newton}#" "$file"
  [ -n "$linear" ] && sed -i "s#^solver:#solver:\n  linear: {$linear}#" "$file"
  walls=()
  for ((r = 0; r < runs; r++)); do
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=$threads mpirun -q -n "$ranks" $bind build/edgefem run "$file" --output .bench/strategy/out $options \
      > .bench/strategy/log 2>&1
    walls+=("$(echo "$(date +%s.%N) - $t0" | bc)")
  done
  read -r n k p <<<"$(awk '/^  solver:/ {for (i = 1; i <= NF; i++) {if ($(i+1) == "Newton") n = $i; if ($(i+1) == "KSP" && k == "") k = $i;
                                                                      if ($(i+1) == "preconditioner") p = $i}}
                          END {print n, k, p}' .bench/strategy/log)"
  printf '| %s | %s | %s | %s | %.2f |\n' "$name" "$n" "$k" "$p" "$(printf '%s\n' "${walls[@]}" | median)"
done
