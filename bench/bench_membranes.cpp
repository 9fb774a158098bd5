// SPDX-License-Identifier: BSD-3-Clause
// Membrane kernel costs per triangle (Google Benchmark): W, f and f + K of Delingette's membranes (springs, trqs,
// trbs, linear-membrane) and of Volino's membrane (isotropic, isotropic with the eigenvalue clamp, curves) on a
// curved 224 x 224 patch of 100,352 triangles, 1 OpenMP thread, randomly deformed; the membranes with row-major and
// with shuffled vertex numbering. These were the disabled unit tests MembraneTiming.DISABLED_CostPerTriangle and
// VolinoTiming.DISABLED_CostPerTriangle (same meshes, materials and deformation). Time = this thread's CPU time per
// call; counters: ns/triangle (mean) and best_ns/triangle (the fastest call, robust on a loaded machine). Run:
//   OMP_NUM_THREADS=1 build/bench/edgefem_bench_membranes [--benchmark_filter=volino]
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "materials/curve.hpp"
#include "materials/membrane.hpp"
#include "materials/volino.hpp"
#include "tests/support/meshes.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using namespace edgefem;
using testing::TriMesh;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// The patch and its deformation, built once per numbering.
struct Patch {
  TriMesh mesh;
  std::vector<double> x;
  std::vector<std::int32_t> ids;
};
const Patch& patch(bool shuffled) {
  static std::unique_ptr<Patch> cached[2];
  auto& p = cached[shuffled ? 1 : 0];
  if (!p) {
    p = std::make_unique<Patch>();
    p->mesh = testing::triangle_patch(224, 224, 0.3, 1, shuffled);  // 100352 triangles
    p->x = testing::deform_triangles(p->mesh, "random", 1);
    p->ids.assign(p->mesh.n_tris(), 0);
  }
  return *p;
}

/// One material as tests/support/membrane_testing.hpp's random_materials(1, 2): E in [1, 5], nu in [-0.3, 0.9],
/// h in [0.01, 0.2] drawn from std::mt19937(2).
std::vector<MembraneMaterial> random_membrane_material() {
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> E(1.0, 5.0), nu(-0.3, 0.9), h(0.01, 0.2);
  MembraneMaterial m;
  m.young = E(rng);
  m.poisson = nu(rng);
  m.thickness = h(rng);
  return {m};
}

/// Volino materials of the former timing test (tests/support/volino_testing.hpp's curves).
std::vector<VolinoMaterial> volino_material(bool curves) {
  std::vector<VolinoMaterial> vm(1);
  vm[0].thickness = 0.1;
  if (curves)
    vm[0].law = VolinoLaw::curves(StressCurve({{0.01, 0.4}, {0.05, 2.5}, {0.1, 7.0}, {0.2, 25.0}}, "weft"),
                                  StressCurve({{0.02, 1.0}, {0.06, 3.5}, {0.1, 9.0}, {0.15, 20.0}, {0.3, 80.0}}, "warp"),
                                  StressCurve({{0.05, 0.05}, {0.2, 0.3}, {0.5, 2.0}}, "shear"));
  else
    vm[0].law = VolinoLaw::isotropic(2.0, 0.3);
  return vm;
}

using Factory = std::function<std::unique_ptr<TetFormulation>(const Patch&)>;
enum class Kernel { energy, force, force_and_stiffness };

void run(benchmark::State& state, const Factory& make, bool shuffled, Kernel kernel) {
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  const Patch& p = patch(shuffled);
  const auto form = make(p);
  std::vector<double> f(p.x.size()), blocks(9 * form->block_pattern().size());
  auto call = [&] {
    switch (kernel) {
      case Kernel::energy: benchmark::DoNotOptimize(form->energy(p.x)); break;
      case Kernel::force: form->force(p.x, f); break;
      case Kernel::force_and_stiffness: form->force_and_stiffness(p.x, f, blocks); break;
    }
    benchmark::ClobberMemory();
  };
  call();  // first touches outside the timing
  double total = 0.0, best = 1e30;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    call();
    const double t = thread_cpu_seconds() - t0;
    state.SetIterationTime(t);
    total += t;
    best = std::min(best, t);
  }
  const double n = static_cast<double>(p.mesh.n_tris());
  state.counters["triangles"] = n;
  state.counters["ns/triangle"] = 1e9 * total / static_cast<double>(state.iterations()) / n;
  state.counters["best_ns/triangle"] = 1e9 * best / n;
}

void register_all() {
  const std::pair<const char*, Kernel> kernels[] = {
      {"f_and_K", Kernel::force_and_stiffness}, {"f", Kernel::force}, {"W", Kernel::energy}};
  std::vector<std::tuple<std::string, Factory, std::vector<bool>>> models;
  for (const char* model : {"springs", "trqs", "trbs", "linear-membrane"})
    models.emplace_back(model,
                        [model](const Patch& p) {
                          return make_membrane(model, p.mesh.coords, p.mesh.tris, random_membrane_material(), p.ids);
                        },
                        std::vector<bool>{false, true});
  // The Volino timing's own trbs reference: E = 2, nu = 0.3, h = 0.1 (row-major numbering only).
  models.emplace_back("trbs_volino_reference",
                      [](const Patch& p) {
                        const std::vector<MembraneMaterial> mm = {{2.0, 0.3, 0.1}};
                        return make_membrane("trbs", p.mesh.coords, p.mesh.tris, mm, p.ids);
                      },
                      std::vector<bool>{false});
  const std::pair<const char*, std::pair<bool, VolinoStabilization>> volinos[] = {
      {"volino_isotropic", {false, VolinoStabilization::none}},
      {"volino_isotropic_eigen_clamp", {false, VolinoStabilization::eigen_clamp}},
      {"volino_curves", {true, VolinoStabilization::none}}};
  for (const auto& [name, v] : volinos) {
    const auto [curves, stab] = v;
    models.emplace_back(name,
                        [curves, stab](const Patch& p) -> std::unique_ptr<TetFormulation> {
                          return make_volino(p.mesh.coords, p.mesh.tris, volino_material(curves), p.ids, stab);
                        },
                        std::vector<bool>{false});
  }
  for (const auto& [model, make, numberings] : models)
    for (bool shuffled : numberings)
      for (const auto& [kernel_name, kernel] : kernels) {
        const std::string name = model + "/" + kernel_name + (shuffled ? "/shuffled" : "/row_major");
        benchmark::RegisterBenchmark(name.c_str(), [make, shuffled, kernel](benchmark::State& s) {
          run(s, make, shuffled, kernel);
        })->UseManualTime()->Unit(benchmark::kMillisecond);
      }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
