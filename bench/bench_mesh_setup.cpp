// SPDX-License-Identifier: BSD-3-Clause
// Mesh set-up benchmarks (Google Benchmark): generate_box on a 1,999,200-tet box and build_topology on a
// 162,000-tet Kuhn box, wall time. These were the wall-clock limits of two unit tests (BoxGenerator
// .SingleCellAndLargeBox: under 10 s; Topology.LargeBoxCounts: under 5 s), which keep their counts and drop the
// time: a speed target is a figure to read here, not a unit test that fails on a busy machine. Run:
//   build/bench/edgefem_bench_mesh_setup [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include "mesh/box.hpp"
#include "mesh/topology.hpp"
#include "tests/support/meshes.hpp"

namespace {

using namespace edgefem;

// The unit test's box: 70 x 70 x 68 cells of 0.1, 6 tets each.
void generate_large_box(benchmark::State& state) {
  LocalIndex tets = 0;
  for (auto _ : state) {
    const Mesh big = generate_box({7, 7, 6.8}, {70, 70, 68});
    tets = big.n_tets();
    benchmark::DoNotOptimize(big.tets.data());
  }
  state.counters["tets"] = tets;
  state.counters["Mtet/s"] = benchmark::Counter(tets * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(generate_large_box)->Unit(benchmark::kMillisecond)->UseRealTime();

// The unit test's Kuhn box of 30^3 cubes (tests/support/meshes.hpp), the full topology (edges, faces, TSEPs).
void build_large_topology(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const auto mesh = testing::kuhn_box(n, n, n);
  for (auto _ : state) {
    const Topology topo = build_topology(mesh.n_vertices(), mesh.tets);
    benchmark::DoNotOptimize(topo.edges.data());
  }
  state.counters["tets"] = mesh.n_tets();
  state.counters["Mtet/s"] = benchmark::Counter(mesh.n_tets() * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(build_large_topology)->Arg(30)->ArgName("cubes")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
