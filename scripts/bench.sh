#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Reproduce the README's performance tables: build (Release), run the kernel benchmarks (1e4 to 2e6 tets,
# 1 thread and all threads, every formulation) and `edgefem bench` on a 1.2M-tet box for every model.
# Results go to bench-results/ (JSON) and the ratio tables are printed. Takes about 10 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build.sh
mkdir -p bench-results
threads=$(nproc)
OMP_NUM_THREADS=$threads build/bench/edgefem_bench_kernels --benchmark_min_time=1 --benchmark_repetitions=3 \
  --benchmark_out=bench-results/kernels.json --benchmark_out_format=json >/dev/null
OMP_NUM_THREADS=$threads build/bench/edgefem_bench_kernels --penalty=none --benchmark_min_time=1 \
  --benchmark_repetitions=3 --benchmark_out=bench-results/kernels_no_penalty.json --benchmark_out_format=json >/dev/null
echo "== kernels, cubic volumetric penalty active in every tet (J = 0.97)"
python3 bench/ratios.py bench-results/kernels.json
echo "== kernels, no volumetric penalty"
python3 bench/ratios.py bench-results/kernels_no_penalty.json
echo "== edgefem bench (assembly into PETSc and one CG + GAMG solve), 1 rank x $threads threads"
for model in stvk stvk-tl stvk-nsn linear; do
  sed "s/model: stvk$/model: $model/" jobs/bench/box_stvk.yaml > "bench-results/box_$model.yaml"
  OMP_NUM_THREADS=$threads build/edgefem bench "bench-results/box_$model.yaml" --repeat 5 \
    --json "bench-results/bench_$model.json" | tail -n 5
done
