#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what is missing, build (Release) and run the whole test suite (unit + MPI tests on 1, 2, 3 ranks).
#   scripts/test.sh              as CI runs it (build/)
#   scripts/test.sh --sanitize   the whole suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#                                (build-asan/, -O1 -g; options and suppressions in scripts/sanitizers/); too slow
#                                for CI's budget, run it by hand after changes to memory handling or the readers
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  ./setup.sh
  source scripts/env.sh
  source scripts/sanitizers/env.sh
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
        -DEDGEFEM_SANITIZE=ON "${launcher[@]}" >/dev/null
  cmake --build build-asan -j "$(nproc)"
  # Every test: the unit tests run one process per file (tests/unit/*.cpp -> unit.<topic>), so the sanitized
  # start-up (PETSc + MPI initialisation, seconds to minutes each) is paid 41 times, not once per test case.
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 3600
  exit
fi
source scripts/build.sh
# -j 4 on 2 cores: most tests spend much of their time starting MPI, waiting for mpiexec or for a signal's moment, or
# (the serial reference of a distributed test) with all ranks but rank 0 asleep; a 3-rank test then runs beside a
# 1-rank one. `ctest -L quick` took 146/154 s at -j 3 and 122/127 s at -j 4 (paired, the same CPU time).
ctest --test-dir build --output-on-failure -j 4 --timeout 900
