#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what is missing and build edgefem (Release) in build/. Sourced by the other scripts; those that need
# only the program set build_targets=edgefem first (the tests and benchmarks take most of the build time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./setup.sh
source scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" ${build_targets:+--target $build_targets}
