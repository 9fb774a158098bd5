#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The split-ring experiment of issue 53 (split_ring.yaml): generates the mesh (meshes/split_ring.geo at h 2 mm, about
# 19,500 tets; not committed), runs the job on NP ranks (default 2), prints each load step's self-contact figures,
# the exact intersection counts (summary.json) and the reaction at the held back (reactions.csv).
#   jobs/experiments/self_contact/split_ring.sh [NP] [EDGEFEM] [OUT]   (defaults: 2, build/edgefem, out/self_contact/split_ring)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
np=${1:-2}
edgefem=${2:-$root/build/edgefem}
out=${3:-$root/out/self_contact/split_ring}
mesh=$here/meshes/split_ring_h002.msh
[ -f "$mesh" ] || command -v gmsh >/dev/null || { echo "split_ring.sh: meshing $mesh needs the gmsh program: ./setup.sh --with-gmsh" >&2; exit 1; }
[ -f "$mesh" ] || gmsh -3 -format msh22 -setnumber h 0.002 "$here/meshes/split_ring.geo" -o "$mesh" > /dev/null
mkdir -p "$out"
. "$root/scripts/env.sh"
uptime
OMP_NUM_THREADS=1 /usr/bin/time -f '%e %U %S' -o "$out/time.txt" \
  mpiexec -n "$np" --oversubscribe "$edgefem" run "$here/split_ring.yaml" --output "$out" > "$out/log.txt" 2>&1
echo "wall, user, system seconds: $(cat "$out/time.txt"); load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E "^step|self-contact|reaction" "$out/log.txt" || true
/usr/bin/python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c = s["self_contact"]
for k, step in enumerate(c["steps"]["step"]):
    closest = c["steps"]["min_distance"][k]  # (null before the ends touch)
    print(f"load step {step}: {c['steps']['active'][k]} pairs within {c['activation_distance']:g}, "
          f"closest {'-' if closest is None else f'{closest:.4e}'}")
i = c["intersections"]
print(f"intersecting triangle pairs at the load steps {i['output_step']}: {i['intersecting_pairs']}")
PY
