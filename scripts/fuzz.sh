#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets of fuzz/ with clang (build-fuzz/): the readers (gmsh, job: the readers and yaml-cpp
# only) and a run's set-up and first step (run: the whole library, serial), replays the committed corpus, then fuzzes
# each target for a while. A crash, a sanitizer report, an exception other than
# InputError, a hang (> 10 s on one input) or an allocation over the limits is a finding: the input is saved in
# the build directory (artifacts/) and the script fails.
#   scripts/fuzz.sh                    20 s per target (the test suite runs `--seconds 15`)
#   scripts/fuzz.sh --seconds 3600     the long run: an hour per target
#   scripts/fuzz.sh --seconds 0        replay the committed corpus only
# Options: --build-dir DIR (default build-fuzz), --target gmsh|job|run (default all three; repeatable),
#   --optimize 0|1 (default 1: the library at -O1, the most executions per second for long runs; the suite's smoke
#   test uses 0: every folder but frames/ and materials/ at -O0, which clang compiles 2-3x faster (stvk_tsep.cpp:
#   6.8 s of CPU at -O1 -g, 2.3 s at -O0 -g), line tables only (-g1: sanitizer reports keep file:line), libFuzzer's
#   coverage only in io/ and run/ (fuzz/CMakeLists.txt, EDGEFEM_FUZZ_QUICK).
#   --prebuilt DIR: link the Release build DIR's libraries (made first: `scripts/build.sh`) for every folder but
#   io/ and run/, uninstrumented, and compile only those two here (the suite's smoke test: fuzz/CMakeLists.txt).
# New inputs found go to DIR/corpus/<target>/ (not the committed fuzz/corpus/); see fuzz/README.md for how to
# add the interesting ones to the committed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=20
build=build-fuzz
targets=()
optimize=1
prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --optimize) optimize="$2"; shift 2 ;;
    --prebuilt) prebuilt="$2"; shift 2 ;;
    *) echo "fuzz.sh: unknown argument '$1' (expected --seconds N, --build-dir DIR, --target gmsh|job|run, --optimize 0|1, --prebuilt DIR)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(gmsh job run)
case "$optimize" in
  0|1) ;;
  *) echo "fuzz.sh: --optimize '$optimize': expected 0 or 1" >&2; exit 2 ;;
esac
if [ -n "$prebuilt" ]; then
  prebuilt=$(cd "$prebuilt" 2>/dev/null && pwd) || { echo "fuzz.sh: --prebuilt '$prebuilt': no such directory" >&2; exit 2; }
  for library in core mesh materials contact partition linalg runtime solver pbd frames; do
    [ -n "$(ls "$library"/*.cpp 2>/dev/null)" ] || continue
    [ -f "$prebuilt/libedgefem_$library.a" ] ||
      { echo "fuzz.sh: --prebuilt $prebuilt: no libedgefem_$library.a (build it first: scripts/build.sh)" >&2; exit 2; }
  done
fi
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ and libFuzzer (Debian packages clang, libclang-rt-dev) are needed: run ./setup.sh" >&2
  exit 1
fi

start=$(date +%s)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DEDGEFEM_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 $([ "$optimize" = 0 ] && echo -g1 || echo -g)" \
      -DEDGEFEM_FUZZ_QUICK=$([ "$optimize" = 0 ] && echo ON || echo OFF) -DEDGEFEM_FUZZ_PREBUILT="$prebuilt" \
      "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null
echo "fuzz.sh: built ${targets[*]/#/fuzz_} in $(( $(date +%s) - start )) s ($build/)"

# Findings beyond sanitizer reports: libFuzzer's own limits.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -print_final_stats=1)
status=0
for target in "${targets[@]}"; do
  binary="$build/fuzz_$target"
  seeds="fuzz/corpus/$target"
  # The job reader and the run share their seeds: every job seed is a run to set up, every run seed a job to read.
  more_seeds=()
  [ "$target" = run ] && more_seeds=(fuzz/corpus/job)
  [ "$target" = job ] && more_seeds=(fuzz/corpus/run)
  dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  # The run target reads job files (the job dictionary); MPI and PETSc keep memory to the end of the process (no
  # leak checks: they would report the libraries' start-up allocations).
  extra=()
  [ "$target" = run ] && dict=(-dict=fuzz/job.dict) && extra=(-detect_leaks=0)
  mkdir -p "$build/corpus/$target" "$build/artifacts/$target"
  log="$build/fuzz_$target.log"
  # Replay: every committed input once (the regression inputs of past findings are among them).
  if ! "$binary" "${limits[@]}" "${extra[@]}" -runs=0 -artifact_prefix="$build/artifacts/$target/" "$seeds" "${more_seeds[@]}" >"$log" 2>&1; then
    echo "fuzz.sh: $target: FAILED replaying $seeds (log: $log)" >&2
    tail -n 40 "$log" >&2
    status=1
    continue
  fi
  echo "fuzz.sh: $target: replayed $(find "$seeds" "${more_seeds[@]}" -type f | wc -l) committed inputs"
  [ "$seconds" -gt 0 ] || continue
  if ! "$binary" "${limits[@]}" "${extra[@]}" "${dict[@]}" -max_total_time="$seconds" \
        -artifact_prefix="$build/artifacts/$target/" "$build/corpus/$target" "$seeds" "${more_seeds[@]}" >"$log" 2>&1; then
    echo "fuzz.sh: $target: FINDING (input saved in $build/artifacts/$target/; log: $log)" >&2
    tail -n 60 "$log" >&2
    status=1
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  done_line=$(grep -E '^#[0-9]+\s+DONE' "$log" | tail -n 1)
  cov=$(sed -nE 's/.* cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+).*/cov \1, features \2, corpus \3/p' <<<"$done_line")
  echo "fuzz.sh: $target: ${seconds} s, ${runs:-?} executions (${rate:-?}/s), ${cov:-coverage not reported}, no finding"
done
echo "fuzz.sh: done in $(( $(date +%s) - start )) s"
exit $status
