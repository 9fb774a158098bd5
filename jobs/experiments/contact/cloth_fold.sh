#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The folding-cloth experiment of issue 53 (cloth_fold.yaml): generates the cloth (meshes/square_cloth.geo, about
# 114,000 triangles; not committed), runs the job on NP ranks (default 2), prints the self-contact's share of the
# steps and the exact intersection counts of the output steps (summary.json), renders the last step.
#   jobs/experiments/contact/cloth_fold.sh [NP] [EDGEFEM] [OUT]   (defaults: 2, build/edgefem, out/contact/cloth_fold)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
np=${1:-2}
edgefem=${2:-$root/build/edgefem}
out=${3:-$root/out/contact/cloth_fold}
mesh=$here/meshes/square_cloth.msh
[ -f "$mesh" ] || gmsh -2 -format msh22 -setnumber h 0.0045 "$here/meshes/square_cloth.geo" -o "$mesh" > /dev/null
mkdir -p "$out"
. "$root/scripts/env.sh"
uptime
/usr/bin/time -f '%e %U %S' -o "$out/time.txt" \
  mpiexec -n "$np" --oversubscribe "$edgefem" run "$here/cloth_fold.yaml" --output "$out" > "$out/log.txt" 2>&1
echo "wall, user, system seconds: $(cat "$out/time.txt"); load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["self_contact"]
t = c["seconds"]
part = t["broad_phase"] + t["narrow_phase"] + t["ccd"] + t["assembly"]
print(f"surface vertices {c['surface_vertices']}, most pairs within the thickness {c['max_active']}, "
      f"closest pair {c['min_distance']:.3e}")
print(f"rank 0: steps {t['steps']:.1f} s; self-contact {t['total']:.1f} s ({100 * t['total'] / t['steps']:.1f} %): "
      f"broad {t['broad_phase']:.1f} + narrow {t['narrow_phase']:.1f} + ccd {t['ccd']:.1f} + exchange "
      f"{t['exchange']:.1f} + assembly {t['assembly']:.1f}; broad + narrow + ccd + assembly "
      f"{100 * part / t['steps']:.1f} % of the steps")
i = c["intersections"]
print(f"intersecting triangle pairs at output steps {i['output_step']}: {i['intersecting_pairs']}")
PY
xvfb-run -a /usr/bin/python3 "$root/scripts/render.py" "$out/solution.pvd" "$out/cloth_fold.png" --size 640x480 \
  > /dev/null 2>&1 && echo "picture: $out/cloth_fold.png" || echo "no picture (xvfb-run or python3-vtk9 missing?)"
