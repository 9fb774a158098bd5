#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Preconditioner study (README): one linear solve, CG to rtol 1e-8 on the tangent at rest with gravity as
# right-hand side (`edgefem bench`), on the benchmark cantilever meshed with h = 0.15, 0.1, 0.07 (14,576 to
# 136,565 tets, 9.4x) and on a clamped unit cube (162,000 tets), for GAMG (edgefem's default: PETSc's
# settings), GAMG with a graph threshold, unsmoothed aggregation, hypre BoomerAMG and Trilinos ML. Prints a
# Markdown table. Needs gmsh (./setup.sh --with-gmsh).
#   scripts/pc_study.sh [RANKS]
set -euo pipefail
cd "$(dirname "$0")/.."
build_targets=edgefem source scripts/build.sh >&2
ranks=${1:-1}
threads=$(( $(nproc) / ranks )); [ "$threads" -lt 1 ] && threads=1
bind=""; [ "$threads" -gt 1 ] && bind="--bind-to none"  # Open MPI binds a rank to one core for <= 2 ranks
mkdir -p .bench/study
declare -A options=(
  ["GAMG (default)"]=""
  ["GAMG, threshold 0.02"]="-pc_gamg_threshold 0.02"
  ["GAMG unsmoothed aggregation"]="-pc_gamg_agg_nsmooths 0"
  ["hypre BoomerAMG (HMIS, ext+i, nodal)"]="-pc_type hypre -pc_hypre_boomeramg_strong_threshold 0.5 -pc_hypre_boomeramg_coarsen_type HMIS -pc_hypre_boomeramg_interp_type ext+i -pc_hypre_boomeramg_P_max 4 -pc_hypre_boomeramg_nodal_coarsen 1"
  ["Trilinos ML"]="-pc_type ml"
)
order=("GAMG (default)" "GAMG, threshold 0.02" "GAMG unsmoothed aggregation"
       "hypre BoomerAMG (HMIS, ext+i, nodal)" "Trilinos ML")
for h in 0.15 0.1 0.07; do
  mesh=jobs/bench/meshes/cantilever_h$h.msh
  [ -f "$mesh" ] || command -v gmsh >/dev/null || { echo "pc_study.sh: meshing $mesh needs the gmsh program: ./setup.sh --with-gmsh" >&2; exit 1; }
  [ -f "$mesh" ] || gmsh -3 -setnumber h $h jobs/bench/meshes/cantilever.geo -format msh41 -bin -o "$mesh" >/dev/null
  sed "s#cantilever_h0.07#cantilever_h$h#; s#file: meshes/#file: $(pwd)/jobs/bench/meshes/#" \
    jobs/bench/cantilever_gravity.yaml > .bench/study/cantilever_$h.yaml
done
# The unit cube, clamped at z = 0, under its own weight (30^3 cells, 6 tets each).
sed 's/cells: \[60, 60, 56\]/cells: [30, 30, 30]/' jobs/bench/box_stvk.yaml > .bench/study/cube.yaml
printf 'loads:\n  gravity: [0, 0, -1.0]\n' >> .bench/study/cube.yaml
echo "| preconditioner | mesh | tets | KSP its | PC set-up s | KSP s | s per iteration |"
echo "|---|---|---|---|---|---|---|"
for name in "${order[@]}"; do
  for job in cantilever_0.15 cantilever_0.1 cantilever_0.07 cube; do
    # shellcheck disable=SC2086
    line=$(OMP_NUM_THREADS=$threads mpirun -q -n "$ranks" $bind build/edgefem bench .bench/study/$job.yaml --repeat 1 \
             ${options[$name]} | grep -E "N_T =|solve ")
    echo "$line" | awk -v name="$name" -v mesh="${job%_*}" '/N_T =/ {for (i = 1; i <= NF; i++) if ($i == "N_T") t = $(i+2); sub(",", "", t)}
      /solve / {for (i = 1; i <= NF; i++) {if ($i == "set-up") s = $(i+1); if ($i == "KSP" && $(i+1) ~ /^[0-9]/) k = $(i+1);
                                          if ($i == "iterations,") n = $(i-1); if ($i ~ /^CONVERGED|^DIVERGED/) r = $i}}
      END {sub(";", "", r); printf "| %s | %s | %s | %s%s | %.3f | %.3f | %.4f |\n", name, mesh, t, n, (r ~ /^DIVERGED/ ? " (" r ")" : ""), s, k, k / n}'
  done
done
