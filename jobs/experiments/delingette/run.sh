#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Delingette's pure traction experiment (TVCG 2008, §V-B, Figs. 9-12) with edgefem's four membrane models.
#
#   jobs/experiments/delingette/run.sh [EDGEFEM_BINARY]      (default: build/edgefem of this repository)
#   environment: NP = MPI ranks per run (default 1), RESULTS = output directory (default results/ next to this)
#
# A square membrane (E = 1, h = 1), bottom edge held vertically, a nominal traction p (force per unit
# reference length) on its top edge; z held everywhere (template.yaml). For each run the engineering strains
# eps_x, eps_y (and the shear) are the area average of the displacement gradient over the triangles, read from
# the last step's .vtu pieces (raw appended binary: decoded with od, averaged with awk). Writes:
#   curves_nu0.6_MESH.csv        (a) p(eps_y) and eps_x(eps_y) for nu = 0.6, p/E from -0.2 to +0.5 (Fig. 10)
#   nu_sweep_p-0.1_MESH.csv      (b) (eps_y - eps_y_lin) / eps_y_lin at p = -0.1 for nu = 0, 0.1, ..., 0.9,
#                                    eps_y_lin = p / (E h) (Fig. 11)
#   mesh_independence.csv        (c) strains on the uniform (square.msh) and graded (graded.msh) meshes (Fig. 12)
# for MESH = square (meshes/square.msh, Gmsh Delaunay, h = 1/12: the kind of mesh of Fig. 12 (a)) and sheet (the
# generator's 12 x 12 right-triangle sheet). A run whose Newton iterations fail is kept as a row with its status.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
edgefem=${1:-$root/build/edgefem}
results=${RESULTS:-$here/results}
np=${NP:-1}
[ -x "$edgefem" ] || { echo "run.sh: no edgefem binary at $edgefem (build it, or pass its path)" >&2; exit 1; }
launcher=()
if [ "$np" -gt 1 ]; then launcher=(mpiexec -q -n "$np" --oversubscribe); fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$results"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A mesh_spec=(
  [square]="file: $here/meshes/square.msh"
  [graded]="file: $here/meshes/graded.msh"
  [sheet]="generate: {shape: sheet, size: [1, 1], cells: [12, 12]}"
)

# Area-averaged displacement gradient of one .vtu piece: "sum(A G_xx) sum(A G_yy) sum(A (G_xy + G_yx)) sum(A)".
piece_sums() {
  local vtu=$1 hdr us start
  hdr=$(grep -a -b -o '<AppendedData encoding="raw">' "$vtu" | head -1 | cut -d: -f1)
  us=$(tail -c +"$((hdr + 1))" "$vtu" | head -c 200 | grep -a -b -o '_' | head -1 | cut -d: -f1)
  start=$((hdr + us + 1))  # each array: a UInt64 byte count, then the values
  offset_of() { grep -a -o "<DataArray[^>]*Name=\"$1\"[^>]*>" "$vtu" | head -1 | sed 's/.*offset="\([0-9]*\)".*/\1/'; }
  array() {  # name, od type: the values, one per line
    local off bytes
    off=$(offset_of "$1")
    bytes=$(od -A n -t u8 -j "$((start + off))" -N 8 "$vtu" | tr -d ' ')
    od -A n -v -t "$2" -j "$((start + off + 8))" -N "$bytes" "$vtu" | tr -s ' ' '\n' | sed '/^$/d'
  }
  array Points f8 > "$work/points"
  array displacement f8 > "$work/displacement"
  array connectivity d8 > "$work/connectivity"
  awk -v P="$work/points" -v U="$work/displacement" -v C="$work/connectivity" 'BEGIN {
    n = 0; while ((getline v < P) > 0) X[n++] = v + 0
    n = 0; while ((getline v < U) > 0) D[n++] = v + 0
    n = 0; while ((getline v < C) > 0) T[n++] = v + 0
    for (t = 0; t + 2 < n; t += 3) {
      a = 3 * T[t]; b = 3 * T[t + 1]; c = 3 * T[t + 2]
      e1x = X[b] - X[a]; e1y = X[b + 1] - X[a + 1]; e2x = X[c] - X[a]; e2y = X[c + 1] - X[a + 1]
      d1x = D[b] - D[a]; d1y = D[b + 1] - D[a + 1]; d2x = D[c] - D[a]; d2y = D[c + 1] - D[a + 1]
      det = e1x * e2y - e1y * e2x; area = (det < 0 ? -det : det) / 2
      # grad u = [d1 d2] [e1 e2]^-1
      gxx = (d1x * e2y - d2x * e1y) / det; gxy = (-d1x * e2x + d2x * e1x) / det
      gyx = (d1y * e2y - d2y * e1y) / det; gyy = (-d1y * e2x + d2y * e1x) / det
      sxx += area * gxx; syy += area * gyy; sxy += area * (gxy + gyx); sa += area
    }
    printf "%.17g %.17g %.17g %.17g\n", sxx, syy, sxy, sa
  }'
}

# run_case MESH MODEL NU P: prints "eps_y,eps_x,shear,newton_iterations,status".
run_case() {
  local mesh=$1 model=$2 nu=$3 p=$4 steps out log
  steps=$(awk -v p="$p" 'BEGIN { s = int((p < 0 ? -p : p) / 0.02 + 0.999999); print (s < 1 ? 1 : s) }')
  out=$work/out
  rm -rf "$out"
  sed -e "s|@MESH@|${mesh_spec[$mesh]}|" -e "s|@MODEL@|$model|" -e "s|@NU@|$nu|" -e "s|@P@|$p|" \
      -e "s|@STEPS@|$steps|" "$here/template.yaml" > "$work/job.yaml"
  log=$work/log
  if ! "${launcher[@]}" "$edgefem" run "$work/job.yaml" --output "$out" > "$log" 2>&1; then
    local why
    why=$(grep -m1 'error' "$log" | sed 's/^edgefem: error: //; s/,/;/g; s/; try .*//' | cut -c1-160 || true)
    echo ",,,,failed: ${why:-exit code $?}"
    return
  fi
  local newton last sums
  newton=$(sed -n 's/^summary: [0-9]* load steps, \([0-9]*\) Newton iterations.*/\1/p' "$log")
  last=$(ls -d "$out"/step_* | grep -v pvtu | sort | tail -1)
  sums=$(for vtu in "$last"/piece_*.vtu; do piece_sums "$vtu"; done)
  echo "$sums" | awk -v n="$newton" '{ a += $1; b += $2; c += $3; s += $4 }
    END { printf "%.10e,%.10e,%.10e,%s,%s\n", b / s, a / s, c / s, n,
                 (1 + b / s <= 0 ? "inverted: the top edge went below the bottom edge" : "ok") }'
}

models=(trbs trqs springs linear-membrane)
start_time=$SECONDS

# (a) Fig. 10: p(eps_y) and eps_x(eps_y), nu = 0.6. trbs has no equilibrium below p = -2/(3 sqrt 3) = -0.19245
# (the nominal stress l (l^2 - 1) / 2 of the StVK membrane is smallest at l = 1/sqrt 3), so p = -0.2 must fail.
pressures=(-0.2 -0.18 -0.16 -0.14 -0.12 -0.1 -0.08 -0.06 -0.04 -0.02 -0.01 0.01 0.02 0.04 0.06 0.08 0.1 0.15 0.2
           0.25 0.3 0.35 0.4 0.45 0.5)
for mesh in square sheet; do
  csv=$results/curves_nu0.6_$mesh.csv
  echo "model,p_over_Eh,eps_y,eps_x,shear,newton_iterations,status" > "$csv"
  for model in "${models[@]}"; do
    for p in "${pressures[@]}"; do echo "$model,$p,$(run_case "$mesh" "$model" 0.6 "$p")" >> "$csv"; done
  done
  echo "run.sh: wrote $csv ($((SECONDS - start_time)) s)"
done

# (b) Fig. 11: relative difference to the linear strain at p = -0.1 over nu.
for mesh in square sheet; do
  csv=$results/nu_sweep_p-0.1_$mesh.csv
  echo "model,nu,eps_y,eps_x,rel_diff_eps_y_to_linear,status" > "$csv"
  for model in "${models[@]}"; do
    for nu in 0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9; do
      IFS=, read -r ey ex _ _ status <<< "$(run_case "$mesh" "$model" "$nu" -0.1)"
      rel=$( [ -n "$ey" ] && awk -v e="$ey" 'BEGIN { printf "%.6e", (e - (-0.1)) / (-0.1) }' || true)
      echo "$model,$nu,$ey,$ex,$rel,$status" >> "$csv"
    done
  done
  echo "run.sh: wrote $csv ($((SECONDS - start_time)) s)"
done

# (c) Fig. 12: uniform against graded mesh, nu = 0.3.
csv=$results/mesh_independence.csv
echo "model,p_over_Eh,eps_y_uniform,eps_y_graded,rel_diff_eps_y,eps_x_uniform,eps_x_graded,rel_diff_eps_x,status" > "$csv"
for model in "${models[@]}"; do
  for p in -0.15 -0.1 -0.05 -0.01 0.01 0.05 0.1 0.2 0.3 0.5; do
    IFS=, read -r eyu exu _ _ su <<< "$(run_case square "$model" 0.3 "$p")"
    IFS=, read -r eyg exg _ _ sg <<< "$(run_case graded "$model" 0.3 "$p")"
    if [ "$su" = ok ] && [ "$sg" = ok ]; then
      diffs=$(awk -v a="$eyu" -v b="$eyg" -v c="$exu" -v d="$exg" 'BEGIN { printf "%.4e,%.4e", b / a - 1, d / c - 1 }')
      echo "$model,$p,$eyu,$eyg,${diffs%,*},$exu,$exg,${diffs#*,},ok" >> "$csv"
    else
      echo "$model,$p,$eyu,$eyg,,$exu,$exg,,uniform: $su; graded: $sg" >> "$csv"
    fi
  done
done
echo "run.sh: wrote $csv ($((SECONDS - start_time)) s)"
