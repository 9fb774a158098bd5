#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The output formats on one dynamic run (docs/performance.md "Output: VTU against XDMF/HDF5"): a 64 x 16 x 16 box
# (98,304 tets, 18,785 vertices) swinging under gravity, position-based dynamics (5 sweeps: the solver is cheap, so
# the output shows), 100 steps, output every 5th (21 steps written), on NP ranks (default 2). One run per
# configuration: vtu, xdmf, xdmf + gzip, and both formats with `fields: [displacement]`. Prints per configuration
# the bytes of the series on disk, its files, bytes per tet per written step, and edgefem's own output time per
# written step (summary.json phases_s.output over 21: the time loop's output plus the final checkpoint).
# With it, the whole run's time (phases_s.total) and the output's share of it, and the writer's own time in the run
# per written step (summary.json output_split: in_run_wall_s and in_run_cpu_s over written_steps; its phases there).
#   scripts/bench_output.sh [NP] [CELLS_X] [CELLS_YZ]   (build/edgefem must be built; results in bench-results/output/)
# CELLS_YZ (default 16) sets the cross-section's cells: 2 128 36 is the 10^6-tet box (995,328 tets, 176,601 vertices).
# EDGEFEM=path overrides the program (e.g. a copy of an older build, for a before/after table); CONFIGS=... the
# configurations run (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2}
nx=${2:-64}
nyz=${3:-16}
source scripts/env.sh
out=${OUT:-bench-results/output}
edgefem=${EDGEFEM:-build/edgefem}
mkdir -p "$out"
job() {  # job NAME 'OUTPUT KEY: VALUE'...
  local name=$1
  shift
  cat >"$out/$name.yaml" <<JOB
mesh:
  generate: {shape: box, size: [4, 1, 1], cells: [$nx, $nyz, $nyz]}
materials:
  - {model: stvk, young: 1.0e3, poisson: 0.3, density: 1.0}
boundary:
  - {select: {region: 11}, fix: [x, y, z]}
loads:
  gravity: [0, 0, -0.5]
analysis:
  type: dynamic
  dt: 0.005
  end_time: 0.5
  integrator: position-based
  position_based: {iterations: 5, sweep: colored, xpbd: true}
output:
  directory: $name
  every: 5
JOB
  for key in "$@"; do echo "  $key" >>"$out/$name.yaml"; done
}
job vtu "format: vtu"
job xdmf "format: xdmf"
job xdmf_double "format: xdmf" "precision: double"
job xdmf_gzip "format: xdmf" "compression: gzip"
job vtu_displacement "fields: [displacement]"
job xdmf_displacement "format: xdmf" "fields: [displacement]"
# The write-time jobs (20 steps, output at every step: 21 written), for a paired timing of whole runs, e.g.
#   scripts/paired.sh 3 'mpiexec -n 2 build/edgefem run bench-results/output/ab_xdmf.yaml --quiet' \
#                       'mpiexec -n 2 build/edgefem run bench-results/output/ab_vtu.yaml --quiet'
for c in vtu xdmf vtu_displacement xdmf_displacement; do
  sed -e 's/end_time: 0.5/end_time: 0.1/; s/every: 5/every: 1/' -e "s/directory: $c\$/directory: ab_$c/" \
    "$out/$c.yaml" >"$out/ab_$c.yaml"
done
series() { find "$1" -type f \( -name '*.vtu' -o -name '*.pvtu' -o -name '*.pvd' -o -name '*.h5' -o -name '*.xdmf' \) "${@:2}"; }
printf "%-18s %12s %6s %11s %14s %9s %8s %13s %12s\n" config bytes files B/tet/step "output s/step" "run s" "output %" \
  "write s/step" "cpu s/step"
for c in ${CONFIGS:-vtu xdmf xdmf_double xdmf_gzip vtu_displacement xdmf_displacement}; do
  rm -rf "${out:?}/$c"
  mpiexec -n "$np" --oversubscribe "$edgefem" run "$out/$c.yaml" --quiet >"$out/$c.log" 2>&1
  bytes=$(series "$out/$c" -printf '%s\n' | awk '{s += $1} END {print s}')
  files=$(series "$out/$c" | wc -l)
  read -r tets output_s total_s write_s write_cpu < <(python3 -c "import json; s = json.load(open('$out/$c/summary.json')); \
o = s['output_split']; print(s['mesh']['cells'], s['phases_s']['output'], s['phases_s']['total'], \
o['in_run_wall_s'] / o['written_steps'], o['in_run_cpu_s'] / o['written_steps'])")
  awk -v c="$c" -v b="$bytes" -v f="$files" -v t="$tets" -v o="$output_s" -v w="$total_s" -v x="$write_s" -v y="$write_cpu" \
    'BEGIN {printf "%-18s %12d %6d %11.1f %14.4f %9.2f %8.1f %13.4f %12.4f\n", c, b, f, b / t / 21, o / 21, w, 100 * o / w, x, y}'
done
