// SPDX-License-Identifier: BSD-3-Clause
// Kernel benchmarks: force (f) and force + stiffness (f + K) of each tetrahedral formulation on generated
// box meshes, 1 thread and all threads, at the homogeneous deformation x = A X of `edgefem bench`
// (det A = 0.97: the cubic volumetric penalty is active in every tet, its worst case; --penalty none
// benchmarks plain StVK). Counters: Mtet/s and the tets of the mesh. No MPI/PETSc in the timed loop: these
// are the kernels alone (`edgefem bench JOB.yaml` times the full hand-over to PETSc).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "materials/registry.hpp"
#include "mesh/box.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using namespace edgefem;

constexpr double deformation[3][3] = {{0.98, 0.04, 0.00}, {0.00, 1.01, 0.03}, {0.02, 0.00, 0.98}};
VolumetricPenalty penalty = VolumetricPenalty::cubic;

/// One formulation on one box, kept between benchmarks of the same (cells, model) and dropped after.
struct Case {
  int cells = 0;
  std::string model;
  Mesh mesh;
  std::unique_ptr<TetFormulation> formulation;
  std::vector<double> x, f, blocks;
};

Case& get_case(int cells, const std::string& model) {
  static Case current;
  if (current.cells == cells && current.model == model) return current;
  current = Case{};
  current.cells = cells;
  current.model = model;
  current.mesh = generate_box({1, 1, 1}, {cells, cells, cells});
  const Mesh& m = current.mesh;
  MaterialTables tables;
  tables.tet = {TetMaterial::isotropic_material(1.0e4, 0.4, penalty)};
  const std::vector<std::int32_t> ids(static_cast<std::size_t>(m.n_tets()), 0);
  current.formulation = model_named(model).make({m.coords, m.tets, ids, tables});
  current.x.resize(m.coords.size());
  for (std::size_t v = 0; v < m.coords.size() / 3; ++v)
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int j = 0; j < 3; ++j) s += deformation[i][j] * m.coords[3 * v + j];
      current.x[3 * v + i] = s;
    }
  current.f.resize(m.coords.size());
  current.blocks.resize(9 * current.formulation->block_pattern().size());
  return current;
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_num_procs();
#else
  return 1;
#endif
}

void run(benchmark::State& state, const std::string& model, bool with_stiffness) {
  const int cells = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  Case& c = get_case(cells, model);
  // Warm-up outside the timing: first touches of the formulation's scratch memory and of the outputs.
  if (with_stiffness)
    c.formulation->force_and_stiffness(c.x, c.f, c.blocks);
  else
    c.formulation->force(c.x, c.f);
  for (auto _ : state) {
    if (with_stiffness)
      c.formulation->force_and_stiffness(c.x, c.f, c.blocks);
    else
      c.formulation->force(c.x, c.f);
    benchmark::DoNotOptimize(c.f.data());
    benchmark::ClobberMemory();
  }
  const double tets = c.mesh.n_tets();
  state.counters["tets"] = tets;
  state.counters["threads"] = threads;
  state.counters["Mtet/s"] = benchmark::Counter(tets * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/tet"] = static_cast<double>(c.formulation->bytes()) / tets;
  state.SetLabel(model + (with_stiffness ? " f+K" : " f"));
}

void register_all() {
  // cells^3 * 6 tets: 12 -> 10,368; 26 -> 105,456; 55 -> 998,250; 70 -> 2,058,000.
  const int sizes[] = {12, 26, 55, 70};
  // Every tetrahedral model of the registry.
  std::vector<std::string> models;
  for (const ModelInfo& m : edgefem::models())
    if (m.cell == CellKind::tetrahedron) models.emplace_back(m.name);
  for (int cells : sizes)
    for (const std::string& model : models)
      for (bool stiffness : {false, true})
        for (int threads : {1, max_threads()}) {
          const std::string name = model + (stiffness ? "/f_and_K" : "/f");
          benchmark::RegisterBenchmark(name.c_str(),
                                       [model, stiffness](benchmark::State& s) { run(s, model, stiffness); })
              ->Args({cells, threads})
              ->ArgNames({"cells", "threads"})
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
          if (max_threads() == 1) break;
        }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--penalty=none") == 0) penalty = VolumetricPenalty::none;
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
