#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The convergence tables of docs/theory/design.md, "Position-based integrator" (issue 47): one step from rest of the
# 10 x 1 x 1 box clamped at x = 0 under gravity (0, 0, -2), StVK nu 0.3, density 1, the coloured XPBD sweep against
# the Newton solver's backward-Euler step (bench/pbd_convergence.cpp: one row per run).
#   bench/pbd_tables.sh [BUILD_DIR] > tables.log      (about 30 min on 2 cores)
# Sections (environment variables select them; all by default):
#   TABLE=sweeps   distance after 1, 5, 20, 100, 500, 1000 sweeps for 8, 16, 32, 64 cells along the length,
#                  E = 1e2 .. 1e6, dt = 0.002 and 0.02, on RANKS (default "1 2 3")
#   TABLE=gmsh     the same on jobs/examples/meshes/beam.msh (unstructured, 3603 tets), dt = 0.002
#   TABLE=chebyshev sweeps and seconds to 1e-6 with acceleration: chebyshev, spectral_radius 0.8, 0.85, 0.9
set -e
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/env.sh"
export OMP_NUM_THREADS=1
run() { mpirun -n "$1" --oversubscribe "$build/bench/edgefem_pbd_convergence" "${@:2}" | tail -1; }
cells_list=("8,2,2" "16,2,2" "32,4,4" "64,4,4")
if [ -z "$TABLE" ] || [ "$TABLE" = sweeps ]; then
  echo "# distance |x - x_BE| / |x_BE - X| after 1 5 20 100 500 1000 sweeps"
  for dt in 0.002 0.02; do
    for young in 1e2 1e3 1e4 1e5 1e6; do
      for cells in "${cells_list[@]}"; do
        for np in ${RANKS:-1 2 3}; do run "$np" cells="$cells" young="$young" dt="$dt"; done
      done
    done
  done
fi
if [ -z "$TABLE" ] || [ "$TABLE" = gmsh ]; then
  echo "# unstructured beam.msh (clamped region 21)"
  for young in 1e2 1e3 1e4 1e5 1e6; do
    for np in ${RANKS:-1 2 3}; do
      run "$np" mesh="$root/jobs/examples/meshes/beam.msh" clamp=21 young="$young" dt=0.002
    done
  done
fi
if [ -z "$TABLE" ] || [ "$TABLE" = chebyshev ]; then
  echo "# Chebyshev acceleration: sweeps and seconds to 1e-6 (1 rank)"
  for cfg in "16,2,2 1e5 0.002" "32,4,4 1e4 0.002" "32,4,4 1e5 0.002" "64,4,4 1e5 0.002" "32,4,4 1e6 0.002" \
             "64,4,4 1e6 0.002" "64,4,4 1e4 0.02"; do
    set -- $cfg
    run 1 cells="$1" young="$2" dt="$3" sweeps=1,3000
    for rho in 0.8 0.85 0.9; do
      run 1 cells="$1" young="$2" dt="$3" sweeps=1,3000 acceleration=chebyshev spectral_radius="$rho"
    done
  done
fi
