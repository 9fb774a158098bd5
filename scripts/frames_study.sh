#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The frame-based model's tables (README and docs/theory/design.md "Frame-based models"; issue 47). Needs the build
# (cmake --build build --target edgefem edgefem_frames_study) and, for `speed`, gmsh.
#   scripts/frames_study.sh accuracy   frame-count tables: the slender cantilever and the bent column, each frame
#                                      type / weights / placement against the tet solution of the same mesh and
#                                      the converged tet reference (build/bench/edgefem_frames_study)
#   scripts/frames_study.sh speed [--runs N] [--h H] [--threads T]
#                                      whole-process `edgefem run` and solve-phase times, tets against frames, on the
#                                      time-to-solution cantilever meshed with h (default 0.07: 136,565 tets), 1 rank
#                                      x T threads (default 1: OpenMP threads that wait for a busy core distort the
#                                      times on a shared machine), the median of N (default 5) alternating runs
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
what=${1:-accuracy}
shift || true

# Converged tip |u| (tet solver, Richardson extrapolation in N_T^(-2/3) from the two finest meshes, Gmsh h = 0.1 and
# 0.075 of the same .geo; docs/theory/design.md "Frame-based models"): slender cantilever 47,854 and 111,643 tets (1.43451,
# 1.45440) -> 1.4806, at nu = 0 (1.44737, 1.46629) -> 1.4912; column (column.geo at h = 0.07, 0.05) 43,410 and
# 117,334 tets (0.40560, 0.40964) -> 0.4138.
slender_converged=1.4806
slender_nu0_converged=1.4912
column_converged=0.4138
variants=rigid/hat/farthest,rigid/harmonic/farthest,rigid/diffused/kmeans,affine/hat/kmeans,affine/harmonic/kmeans
variants=$variants,affine/diffused/farthest,affine/diffused/kmeans

if [ "$what" = accuracy ]; then
  build/bench/edgefem_frames_study jobs/experiments/frames/slender_cantilever.yaml --counts 2,4,8,16,32 \
    --variants "$variants" --converged $slender_converged
  echo
  build/bench/edgefem_frames_study jobs/experiments/frames/column_bent.yaml --tip 22 --counts 2,4,8,16,32 \
    --variants "$variants" --converged $column_converged
  echo
  build/bench/edgefem_frames_study jobs/experiments/frames/slender_cantilever_nu0.yaml --counts 2,4,8,16,32 \
    --variants rigid/diffused/kmeans,affine/diffused/kmeans --converged $slender_nu0_converged
  exit 0
fi

[ "$what" = speed ] || { echo "usage: $0 accuracy | speed [--runs N] [--h H] [--threads T]" >&2; exit 2; }
runs=5
h=0.07
threads=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --h) h=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "usage: $0 speed [--runs N] [--h H] [--threads T]" >&2; exit 2 ;;
  esac
done
export OMP_NUM_THREADS=$threads
mesh=jobs/bench/meshes/cantilever_h$h.msh
[ -f "$mesh" ] || command -v gmsh >/dev/null || { echo "frames_study.sh: meshing $mesh needs the gmsh program: ./setup.sh --with-gmsh" >&2; exit 1; }
[ -f "$mesh" ] || gmsh -3 -setnumber h "$h" jobs/bench/meshes/cantilever.geo -format msh41 -bin -o "$mesh" >/dev/null
mkdir -p .bench/frames
sed "s#file: meshes/cantilever_h0.07.msh#file: $(pwd)/$mesh#; s#directory: .*#directory: $(pwd)/.bench/frames/tets#" \
  jobs/bench/cantilever_gravity.yaml > .bench/frames/tets.yaml
for n in 8 16; do
  sed "s#/tets\$#/frames_$n#" .bench/frames/tets.yaml > .bench/frames/frames_$n.yaml
  printf 'discretization: {type: frames, frames: %d, frame_type: affine, weights: diffused, placement: kmeans, sample_grid: [40, 6, 6]}\n' \
    "$n" >> .bench/frames/frames_$n.yaml
done
python3 - "$runs" .bench/frames/tets.yaml .bench/frames/frames_8.yaml .bench/frames/frames_16.yaml <<'EOF'
import re, statistics, subprocess, sys, time
runs, jobs = int(sys.argv[1]), sys.argv[2:]
wall = {j: [] for j in jobs}; solve = {j: [] for j in jobs}; tip = {}
for _ in range(runs):
    for j in jobs:  # alternating, so that both see the same load of the machine
        t0 = time.time()
        out = subprocess.run(["build/edgefem", "run", j], capture_output=True, text=True, check=True).stdout
        wall[j].append(time.time() - t0)
        solve[j].append(float(re.search(r"load steps ([0-9.]+)", out).group(1)))
        tip[j] = re.search(r"largest displacement \|u\| = ([0-9.e+-]+)", out).group(1)
base = jobs[0]
print("| run | largest |u| | whole process (s) | solve phase (s) | speed-up whole | speed-up solve |")
print("|---|---|---|---|---|---|")
for j in jobs:
    w, s = statistics.median(wall[j]), statistics.median(solve[j])
    print(f"| {j.split('/')[-1][:-5]} | {tip[j]} | {w:.2f} | {s:.3f} | {statistics.median(wall[base]) / w:.1f}x | "
          f"{statistics.median(solve[base]) / s:.1f}x |")
EOF
