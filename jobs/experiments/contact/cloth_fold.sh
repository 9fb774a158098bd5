#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The folding-cloth experiment of issue 53 (cloth_fold.yaml): generates the cloth (meshes/square_cloth.geo, about
# 114,000 triangles; not committed), runs the job on NP ranks (default 2), prints the self-contact's share of the
# steps and the exact intersection counts of the output steps (summary.json), renders the last step.
#   jobs/experiments/contact/cloth_fold.sh [NP] [EDGEFEM] [OUT]   (defaults: 2, build/edgefem, out/contact/cloth_fold)
# A part of it: END_TIME=0.1 (the first 50 steps); the landing alone: HEIGHT=0.402 VELOCITY=-1 (the cloth 2 mm
# above the sphere, thrown down at 1 m/s; meshes/square_cloth_HEIGHT.msh). One OpenMP thread per rank.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
np=${1:-2}
edgefem=${2:-$root/build/edgefem}
out=${3:-$root/out/contact/cloth_fold}
height=${HEIGHT:-0.45}
mesh=$here/meshes/square_cloth.msh
[ "$height" = 0.45 ] || mesh=$here/meshes/square_cloth_$height.msh
[ -f "$mesh" ] || command -v gmsh >/dev/null || { echo "cloth_fold.sh: meshing $mesh needs the gmsh program: ./setup.sh --with-gmsh" >&2; exit 1; }
[ -f "$mesh" ] || gmsh -2 -format msh22 -setnumber h 0.0045 -setnumber height "$height" \
  "$here/meshes/square_cloth.geo" -o "$mesh" > /dev/null
mkdir -p "$out"
job=$out/cloth_fold.yaml  # the job with the mesh's absolute path, END_TIME and VELOCITY
sed -e "s|file: meshes/square_cloth.msh|file: $mesh|" -e "s|end_time: 0.6|end_time: ${END_TIME:-0.6}|" \
  -e "s|directory: .*|directory: $out|" "$here/cloth_fold.yaml" > "$job"
[ -z "${VELOCITY:-}" ] || sed -i "s|  dt: 0.002|  dt: 0.002\n  initial_velocity: [0, 0, $VELOCITY]|" "$job"
. "$root/scripts/env.sh"
uptime
OMP_NUM_THREADS=1 /usr/bin/time -f '%e %U %S' -o "$out/time.txt" \
  mpiexec -n "$np" --oversubscribe "$edgefem" run "$job" --output "$out" > "$out/log.txt" 2>&1
echo "wall, user, system seconds: $(cat "$out/time.txt"); load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["self_contact"]
t = c["seconds"]
part = t["broad_phase"] + t["narrow_phase"] + t["ccd"] + t["assembly"]
closest = c["min_distance"]  # (null: no pair came within the thickness)
print(f"surface vertices {c['surface_vertices']}, most pairs within the thickness {c['max_active']}, "
      f"closest pair {'none within the thickness' if closest is None else f'{closest:.3e}'}")
print(f"rank 0: steps {t['steps']:.1f} s; self-contact {t['total']:.1f} s ({100 * t['total'] / t['steps']:.1f} %): "
      f"broad {t['broad_phase']:.1f} + narrow {t['narrow_phase']:.1f} + ccd {t['ccd']:.1f} + exchange "
      f"{t['exchange']:.1f} + assembly {t['assembly']:.1f}; broad + narrow + ccd + assembly "
      f"{100 * part / t['steps']:.1f} % of the steps")
u = c["cpu_seconds"]
print(f"rank 0 CPU (all threads): steps {u['steps']:.1f} s; self-contact {u['total']:.1f} s "
      f"({100 * u['total'] / u['steps']:.1f} %); the record after each step {u['record']:.2f} s")
n = len(u["per_step"])
for first in range(0, n, 10):  # the share by blocks of 10 steps
    a, b = sum(u["per_step"][first:first + 10]), sum(u["steps_per_step"][first:first + 10])
    print(f"  steps {first + 1}-{min(first + 10, n)}: self-contact {a:.2f} of {b:.2f} CPU s ({100 * a / b:.1f} %), "
          f"broad phase {sum(c['steps']['seconds']['broad_phase'][first:first + 10]):.2f} s wall")
i = c["intersections"]
print(f"intersecting triangle pairs at output steps {i['output_step']}: {i['intersecting_pairs']}")
PY
xvfb-run -a /usr/bin/python3 "$root/scripts/render.py" "$out/solution.pvd" "$out/cloth_fold.png" --size 640x480 \
  > /dev/null 2>&1 && echo "picture: $out/cloth_fold.png" || echo "no picture (xvfb-run or python3-vtk9 missing?)"
