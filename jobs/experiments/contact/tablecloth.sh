#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Delingette's Fig. 13 (TVCG 2008, §V-C): the tablecloth on a table, five membranes side by side.
#   jobs/experiments/contact/tablecloth.sh [EDGEFEM] [OUT]     (defaults: build/edgefem, out/contact/tablecloth)
# Runs the five tablecloth_*.yaml jobs serially (1 rank), prints each one's time to solution (wall and CPU seconds
# of the run, from /usr/bin/time; the load average beside them), Newton iterations, contacts and smallest gap
# (summary.json), renders the last step of each (scripts/render.py, VTK under xvfb-run) and puts the five pictures
# side by side in OUT/tablecloth.png (scripts/montage.py).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
edgefem=${1:-$root/build/edgefem}
out=${2:-$root/out/contact/tablecloth}
mkdir -p "$out"
printf '%-22s %8s %8s %7s %9s %9s %s\n' job wall_s cpu_s newton contacts min_gap load
for job in trbs_nu95 trqs_nu95 trbs_nu3 trqs_nu3 springs_nu3; do
  dir=$out/$job
  rm -rf "$dir"
  /usr/bin/time -f '%e %U %S' -o "$out/$job.time" "$edgefem" run "$here/tablecloth_$job.yaml" --quiet --output "$dir" \
    > "$out/$job.log" 2>&1 || { echo "$job failed: see $out/$job.log"; continue; }
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/python3 - "$dir/summary.json" "$out/$job.time" "$job" "$load" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall, user, system = (float(x) for x in open(sys.argv[2]).read().split())
c = s["contact"]
print(f"{sys.argv[3]:<22} {wall:8.1f} {user + system:8.1f} {s['solver']['newton_iterations']:7d} "
      f"{c['max_active']:9d} {min(c['steps']['min_gap']):9.2e} {sys.argv[4]}")
PY
  xvfb-run -a /usr/bin/python3 "$root/scripts/render.py" "$dir/solution.pvd" "$out/$job.png" --size 480x360 \
    > /dev/null 2>&1 || echo "$job: no picture (xvfb-run or python3-vtk9 missing?)"
done
/usr/bin/python3 "$root/scripts/montage.py" "$out/tablecloth.png" \
  "$out/trbs_nu95.png:trbs, nu 0.95" "$out/trqs_nu95.png:trqs, nu 0.95" "$out/trbs_nu3.png:trbs, nu 0.3" \
  "$out/trqs_nu3.png:trqs, nu 0.3" "$out/springs_nu3.png:springs, nu 0.3" && echo "picture: $out/tablecloth.png"
