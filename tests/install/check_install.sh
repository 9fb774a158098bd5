#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The test install.consumer: `cmake --install` edgefem's build into a temporary prefix, check what is there, then
# configure, build and run tests/install (an outside program: find_package(edgefem) -> edgefem::edgefem) against
# that prefix, and compile it once more through pkg-config. The prefix is removed afterwards (--keep keeps it).
#   check_install.sh BUILD_DIR SOURCE_DIR [--keep]
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
prefix=$(mktemp -d "${TMPDIR:-/tmp}/edgefem_install.XXXXXX")
[[ "${3:-}" == "--keep" ]] || trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix/install.log"
for f in bin/edgefem include/edgefem/io/job.hpp include/edgefem/edgefem/version.hpp lib/libedgefem_run.a \
         lib/cmake/edgefem/edgefemConfig.cmake lib/cmake/edgefem/edgefem-targets.cmake lib/pkgconfig/edgefem.pc \
         share/edgefem/scripts/render.py share/edgefem/cluster/slurm.sbatch share/edgefem/examples/cantilever.yaml; do
  [[ -e "$prefix/$f" ]] || { echo "check_install: $f not installed"; exit 1; }
done
"$prefix/bin/edgefem" --version | head -1
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$source/tests/install" -B "$prefix/consumer" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" > "$prefix/consumer.log" || { cat "$prefix/consumer.log"; exit 1; }
cmake --build "$prefix/consumer" >> "$prefix/consumer.log" || { cat "$prefix/consumer.log"; exit 1; }
"$prefix/consumer/edgefem_consumer" "$prefix/share/edgefem/examples/cantilever.yaml"
# pkg-config: the flags it gives compile and link the same program.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
mpicxx -std=c++20 "$source/tests/install/main.cpp" $(pkg-config --cflags --libs edgefem) -o "$prefix/pc_consumer"
"$prefix/pc_consumer" "$prefix/share/edgefem/examples/cantilever.yaml" > /dev/null
echo "check_install: installed package OK ($prefix)"
