// SPDX-License-Identifier: BSD-3-Clause
/// \file fuzz_run.cpp
/// libFuzzer target: a whole run cut down to its set-up and FIRST step (run/run_job.hpp), serial (an MPI singleton,
/// PETSc on MPI_COMM_SELF). The job reader, the mesh generation and distribution, the model, the solver set-up of
/// every analysis (static, dynamic, position-based, frames) and one load or time step: a crash, a sanitizer report,
/// an exception other than edgefem's every-rank errors (InputError, SolverError, ResourceError, CollectiveError),
/// a hang or a huge allocation is a finding. Seeds: fuzz/corpus/run/, dictionary fuzz/job.dict (fuzz/README.md).
///
/// The budget of one input (inputs over it are skipped, not run; the job reader has still checked them):
/// a generated mesh of at most kMaxCells cells (mesh and curve files: only the scratch directory's), no
/// `solver.petsc` options (they would stay in PETSc's global options database), at most kMaxFrames frames and
/// kMaxSampleCells voxel samples; then the job is cut to one load step (static) or one time step (dynamic), and
/// its iteration counts are capped (Newton 25, position-based sweeps 20, step cuts 2).
#include <petscsys.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "fuzz/scratch_file.hpp"
#include "io/job.hpp"
#include "linalg/edgefem_gamg.hpp"
#include "run/run_job.hpp"

namespace {

constexpr double kMaxCells = 1500;
constexpr int kMaxFrames = 64;
constexpr double kMaxSampleCells = 2e4;

/// Thrown by the budget: the input is not run.
struct OverBudget {};

const edgefem::fuzz::ScratchDirectory& scratch() {
  static const edgefem::fuzz::ScratchDirectory dir;
  static const bool populated = [] {
    // The mesh names the seeds use, each a copy of a tiny mesh of the gmsh corpus (a cube of 24 tets with
    // regions on its faces; a square of triangles).
    const std::filesystem::path corpus = std::filesystem::path(EDGEFEM_SOURCE_DIR) / "fuzz" / "corpus" / "gmsh";
    std::filesystem::create_directories(dir.path() / "meshes");
    for (const char* name : {"mesh.msh", "meshes/column.msh", "meshes/bimaterial.msh", "meshes/cuboid.msh"})
      std::filesystem::copy_file(corpus / "cube_v22_ascii.msh", dir.path() / name);
    std::filesystem::copy_file(corpus / "square_v22_ascii.msh", dir.path() / "sheet.msh");
    std::filesystem::copy_file(corpus / "surface_only.msh", dir.path() / "surface_only.msh");
    std::ofstream(dir.path() / "curve.csv") << "0, 0\n0.1, 10\n0.2, 30\n";
    return true;
  }();
  (void)populated;
  return dir;
}

/// The budget above; then one step, capped iterations, the output in the scratch directory.
void cut_to_first_step(edgefem::Job& job) {
  using namespace edgefem;
  if (job.generate) {
    const auto& c = job.generate->cells;
    const double cells = job.generate->shape == GeneratedShape::box ? 6.0 * c[0] * c[1] * static_cast<double>(c[2])
                                                                    : 2.0 * c[0] * static_cast<double>(c[1]);
    if (cells > kMaxCells) throw OverBudget{};
  }
  if (!job.petsc_options.empty()) throw OverBudget{};
  // Files only from the scratch directory (an absolute path could name a device or a huge file of the machine).
  const std::string inside = scratch().path().string() + "/";
  auto outside = [&](const std::string& file) { return !file.empty() && file.rfind(inside, 0) != 0; };
  if (job.mesh_file && outside(*job.mesh_file)) throw OverBudget{};
  for (const MaterialSpec& m : job.materials)
    if (m.volino && m.volino->curves)
      for (const CurveSpec& curve : *m.volino->curves)
        if (outside(curve.file)) throw OverBudget{};
  const DiscretizationSpec& d = job.discretization;
  if (d.frame_count > kMaxFrames || d.positions.size() > static_cast<std::size_t>(kMaxFrames)) throw OverBudget{};
  if (d.sample_grid && static_cast<double>((*d.sample_grid)[0]) * (*d.sample_grid)[1] * (*d.sample_grid)[2] >
                           kMaxSampleCells)
    throw OverBudget{};
  job.steps = 1;
  job.newton_max_it = std::min(job.newton_max_it, 25);
  if (job.dynamic) {
    job.dynamic->end_time = job.dynamic->dt;
    job.dynamic->max_step_cuts = std::min(job.dynamic->max_step_cuts, 2);
    job.dynamic->position_based.iterations = std::min(job.dynamic->position_based.iterations, 20);
  }
  job.output_directory = (scratch().path() / "out").string();
  job.output_every = 1;
  job.checkpoint_every = 0;
}

}  // namespace

/// No leak check at exit: MPI and PETSc keep their start-up allocations to the end of the process.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // One thread, one rank (an MPI singleton), PETSc on MPI_COMM_SELF, and no PETSc signal handler: a crash is the
  // sanitizers' and libFuzzer's to report. The run's console output goes to /dev/null unless EDGEFEM_FUZZ_VERBOSE.
  setenv("OMP_NUM_THREADS", "1", 1);
  if (!edgefem::fuzz::verbose() && std::freopen("/dev/null", "w", stdout) == nullptr) std::abort();
  MPI_Init(argc, argv);
  PETSC_COMM_WORLD = MPI_COMM_SELF;
  PetscOptionsSetValue(nullptr, "-no_signal_handler", nullptr);
  if (PetscInitializeNoArguments() != 0) std::abort();
  edgefem::register_edgefem_gamg();
  (void)scratch();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch().write("job.yaml", data, size);
  std::error_code ignored;  // a fresh output directory for every input (no earlier run's files to move aside)
  std::filesystem::remove_all(scratch().path() / "out", ignored);
  edgefem::RunOptions options;
  options.path = path;
  options.quiet = false;  // the console output (to /dev/null) is code too: issue 55's segfault was in a step line
  edgefem::SummaryRecord record("fuzz", 0, nullptr);
  try {
    (void)edgefem::run_job(options, record, cut_to_first_step);
  } catch (const OverBudget&) {
    // not run: over the budget of one input
  } catch (const edgefem::Error& e) {
    // An error thrown on every rank is the expected outcome of bad input (or of a step that cannot be solved).
    if (e.scope() != edgefem::ErrorScope::every_rank) {
      std::fprintf(stderr, "fuzz_run: an error of this rank only (a bug): %s\n", e.what());
      std::abort();
    }
    if (edgefem::fuzz::verbose()) std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 0;
}
