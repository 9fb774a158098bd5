#!/usr/bin/env bash
# Install what is missing, build (Release) and run the whole test suite (unit + MPI tests on 1, 2, 3 ranks).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build.sh
ctest --test-dir build --output-on-failure -j 2 --timeout 900
