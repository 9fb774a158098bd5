// SPDX-License-Identifier: BSD-3-Clause
#include "run/bench.hpp"

#include <petscksp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <string_view>

#include "mesh/topology.hpp"
#include "partition/collective.hpp"
#include "partition/partition.hpp"
#include "pbd/pbd_sweep.hpp"
#include "run/load_mesh.hpp"
#include "run/memory_account.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"
#include "solver/static_solver.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

namespace edgefem {
namespace {

/// The homogeneous deformation the kernels are timed at: a mix of stretch, compression and shear with
/// det = 0.97 < 1, so that the cubic volumetric penalty is active in every tet (its worst case).
constexpr double deformation[3][3] = {{0.98, 0.04, 0.00}, {0.00, 1.01, 0.03}, {0.02, 0.00, 0.98}};

double det3(const double (&a)[3][3]) {
  return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

/// Best (smallest) over repetitions of the slowest rank's time of op().
template <class Op>
double best_time(MPI_Comm comm, int repeat, Op&& op) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeat; ++r) {
    MPI_Barrier(comm);
    const auto t0 = std::chrono::steady_clock::now();
    op();
    double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    best = std::min(best, slowest);
  }
  return best;
}

/// `x` to 6 significant digits; null when not finite.
nlohmann::ordered_json number(double x) {
  if (!std::isfinite(x)) return nullptr;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

/// Rank 0 reads the whole mesh and counts vertices, edges, faces, tets and TSEPs (into r); returns the mesh there
/// (empty elsewhere). Collective.
Mesh whole_mesh_counts(MPI_Comm comm, const Job& job, BenchResult& r) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Mesh whole;
  std::int64_t counts[5] = {0, 0, 0, 0, 0};
  run_collectively(comm, [&] {
    if (rank != 0) return;
    whole = load_job_mesh(job);
    if (whole.n_tets() == 0) throw InputError(job.job_file + ": mesh: bench needs a tetrahedral mesh");
    const Topology topo = build_topology(whole.n_vertices(), whole.tets);
    counts[0] = whole.n_vertices();
    counts[1] = topo.n_edges();
    counts[2] = topo.n_faces();
    counts[3] = whole.n_tets();
    counts[4] = topo.n_type1 + topo.n_type2;
  });
  MPI_Bcast(counts, 5, MPI_INT64_T, 0, comm);
  r.vertices = counts[0], r.edges = counts[1], r.faces = counts[2], r.tets = counts[3], r.tseps = counts[4];
  return whole;
}

/// The times of f and f + K at x = A X on the owned vertices (f: the internal force there, on return).
void time_assembly(MPI_Comm comm, const LocalMesh& mesh, Assembler& assembler, Vec f, int repeat, BenchResult& r) {
  PetscOwner<Vec, VecDestroy> x = assembler.create_vector();
  {
    PetscScalar* xa = nullptr;
    EDGEFEM_PETSC(VecGetArray(x, &xa));
    for (LocalIndex v = 0; v < mesh.n_owned; ++v)
      for (int i = 0; i < 3; ++i) {
        xa[3 * v + i] = 0;
        for (int j = 0; j < 3; ++j) xa[3 * v + i] += deformation[i][j] * mesh.mesh.coords[3 * v + j];
      }
    EDGEFEM_PETSC(VecRestoreArray(x, &xa));
  }
  Mat K = assembler.matrix();
  // Warm up (first touches of memory), then time.
  assembler.set_positions(x);
  assembler.force_and_stiffness(f, K);
  r.seconds_f = best_time(comm, repeat, [&] {
    assembler.set_positions(x);
    assembler.internal_force(f);
  });
  r.seconds_f_and_K = best_time(comm, repeat, [&] {
    assembler.set_positions(x);
    assembler.force_and_stiffness(f, K);
  });
}

/// PETSc's pc_type of the configured solver (and the factorization package of a direct one).
std::string preconditioner_name(KSP ksp) {
  PC pc = nullptr;
  PCType type = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  EDGEFEM_PETSC(PCGetType(pc, &type));
  std::string name = type ? type : "?";
  PetscBool factor = PETSC_FALSE;
  EDGEFEM_PETSC(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(pc), &factor, PCCHOLESKY, PCLU, ""));
  if (factor) {
    MatSolverType package = nullptr;
    EDGEFEM_PETSC(PCFactorGetMatSolverType(pc, &package));
    if (package) name += std::string(" (") + package + ")";
  }
  return name;
}

/// One linear solve with the run's default linear solver (the job's and the command line's PETSc options on
/// top): the tangent at rest K(X), which is positive definite for every mesh (the deformed state's need not be:
/// slender meshes buckle under the homogeneous compression), against the job's loads (or, without loads, the
/// internal force f of the deformed state), prescribed rows zeroed. The preconditioner set-up and the Krylov
/// solve are timed apart.
void time_linear_solve(MPI_Comm comm, const Job& job, const std::string& cli_petsc_options, const LocalMesh& mesh,
                       const Model& model, Assembler& assembler, Vec f, BenchResult& r) {
  PetscOwner<Vec, VecDestroy> dx = assembler.create_vector(), rhs = assembler.create_vector();
  assembler.external_force(1.0, rhs);
  PetscReal load_norm = 0.0;
  EDGEFEM_PETSC(VecNorm(rhs, NORM_2, &load_norm));
  if (load_norm == 0.0) EDGEFEM_PETSC(VecCopy(f, rhs));
  {
    VecArray ra(rhs, false);
    for (const auto& d : model.dirichlet) ra.span()[static_cast<std::size_t>(d.dof)] = 0.0;
  }
  Mat K = assembler.matrix();
  assembler.set_positions(assembler.reference());
  assembler.stiffness(K);
  PetscOwner<KSP, KSPDestroy> ksp;
  EDGEFEM_PETSC(KSPCreate(comm, ksp.address()));
  const LinearSystemKind kind = linear_system_kind(comm, mesh, model, job.analysis_type == AnalysisType::dynamics);
  // The run's operators: a BAIJ copy for multigrid's Krylov method or the incomplete factorizations
  // (linalg/block_operator.hpp), as the Newton driver sets them up.
  const LinearOperators ops = set_up_linear_solver(ksp, job, cli_petsc_options, kind, K);
  r.preconditioner = preconditioner_name(ksp);
  EDGEFEM_PETSC(VecSet(dx, 0.0));
  // (edgefem_gamg installs its products and uses our Galerkin products in its set-up, as in a run.)
  r.seconds_pc_setup = best_time(comm, 1, [&] {
    EDGEFEM_PETSC(KSPSetUp(ksp));
    EDGEFEM_PETSC(KSPSetUpOnBlocks(ksp));
  });
  r.seconds_ksp = best_time(comm, 1, [&] { EDGEFEM_PETSC(KSPSolve(ksp, rhs, dx)); });
  r.seconds_solve = r.seconds_pc_setup + r.seconds_ksp;
  PetscInt its = 0;
  KSPConvergedReason reason;
  EDGEFEM_PETSC(KSPGetIterationNumber(ksp, &its));
  EDGEFEM_PETSC(KSPGetConvergedReason(ksp, &reason));
  r.ksp_iterations = static_cast<int>(its);
  r.ksp_reason = KSPConvergedReasons[reason];
  r.ksp_converged = reason > 0;
  // The memory account with every structure of the solve alive (the bench's own vectors: dx, rhs, f).
  PetscInt n = 0;
  EDGEFEM_PETSC(VecGetLocalSize(dx, &n));
  account_linear_solver(mesh, assembler, ksp, nullptr, ops.block ? static_cast<double>(ops.block->bytes()) : 0.0,
                        3.0 * static_cast<double>(n) * sizeof(PetscScalar), 0.0);
  memory_account().phase("solve");
  long long tets = 0, mine = mesh.mesh.n_tets();
  MPI_Allreduce(&mine, &tets, 1, MPI_LONG_LONG, MPI_SUM, comm);
  r.account = memory_account().gather(comm, tets);
  const double peak = heap_state().peak / 1048576.0;
  MPI_Allreduce(&peak, &r.peak_mb_total, 1, MPI_DOUBLE, MPI_SUM, comm);
}

/// Memory: the kernels' precomputed data, the COO value array with the insertion's maps and the assembled CSR
/// matrix, summed over ranks.
void measure_memory(MPI_Comm comm, Assembler& assembler, BenchResult& r) {
  double local[2] = {static_cast<double>(assembler.kernel_bytes()),
                     static_cast<double>(assembler.coo_entries() * sizeof(double) + assembler.insertion_bytes())};
  double global[2] = {0, 0};
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
  r.kernel_bytes = global[0];
  r.coo_bytes = global[1];
  MatInfo info;
  Mat K = assembler.matrix();
  EDGEFEM_PETSC(MatGetInfo(K, MAT_GLOBAL_SUM, &info));
  PetscInt rows = 0;
  EDGEFEM_PETSC(MatGetSize(K, &rows, nullptr));
  r.matrix_bytes = info.nz_used * (sizeof(PetscScalar) + sizeof(PetscInt)) +
                   static_cast<double>(rows) * sizeof(PetscInt);
}

/// The job's models, named "a+b" in r.model, and the largest of their FLOP formulas (from the registry).
void job_models_and_flops(const Job& job, BenchResult& r) {
  std::map<std::string_view, const ModelInfo*> models;
  for (const auto& m : job.materials) models[m.model->name] = m.model;
  const MeshCounts counts{static_cast<double>(r.vertices), static_cast<double>(r.edges), static_cast<double>(r.faces),
                          static_cast<double>(r.tets)};
  r.model.clear();
  r.flops_f = r.flops_f_and_K = 0;
  for (const auto& [name, info] : models) {
    if (!r.model.empty()) r.model += '+';
    r.model += name;
    const FlopCounts flops = info->flops ? info->flops(counts) : FlopCounts{};
    r.flops_f = std::max(r.flops_f, flops.f);
    r.flops_f_and_K = std::max(r.flops_f_and_K, flops.f_and_K);
  }
}

/// Position-based jobs: one sweep over all constraints from the homogeneously deformed mesh, best of `repeat`.
void time_pbd_sweep(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, int repeat,
                    BenchResult& r) {
  const PositionBasedSpec& spec = job.dynamic->position_based;
  PbdConstraints constraints(comm, mesh, model);
  constraints.set_time_step(job.dynamic->dt, spec.xpbd);
  constraints.set_inversion_handling(spec.inversion == PbdInversion::svd);
  PetscOwner<Vec, VecDestroy> x = constraints.create_vector();
  auto deform = [&] {
    LocalForm xl(x, false);
    const auto& X = mesh.mesh.coords;
    for (std::size_t v = 0; v < X.size() / 3; ++v)
      for (int i = 0; i < 3; ++i)
        xl.span()[3 * v + i] = deformation[i][0] * X[3 * v] + deformation[i][1] * X[3 * v + 1] +
                               deformation[i][2] * X[3 * v + 2];
  };
  double best = std::numeric_limits<double>::infinity(), best_cpu = best;
  for (int k = 0; k < repeat; ++k) {
    deform();
    constraints.reset_multipliers();
    MPI_Barrier(comm);
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    if (spec.sweep == PbdSweep::colored)
      constraints.colored_sweep(x);
    else
      constraints.jacobi_sweep(x);
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    double cpu_sum = 0;
    MPI_Allreduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    best = std::min(best, slowest);
    best_cpu = std::min(best_cpu, cpu_sum);
  }
  r.position_based = true;
  r.pbd_sweep = std::string(to_string(spec.sweep));
  r.pbd_xpbd = spec.xpbd;
  r.pbd_colors = constraints.n_colors();
  r.seconds_pbd_sweep = best;
  r.cpu_seconds_pbd_sweep = best_cpu;
  const double mine = static_cast<double>(constraints.bytes());
  MPI_Allreduce(&mine, &r.pbd_bytes, 1, MPI_DOUBLE, MPI_SUM, comm);
}

}  // namespace

BenchResult run_bench(MPI_Comm comm, const Job& job, int repeat, const std::string& cli_petsc_options) {
  BenchResult r;
  MPI_Comm_size(comm, &r.ranks);
  r.repeat = repeat;
#ifdef _OPENMP
  r.threads = omp_get_max_threads();
#endif
  // Whole-mesh statistics on rank 0, then the distributed set-up.
  Mesh whole = whole_mesh_counts(comm, job, r);
  const LocalMesh mesh = distribute_mesh(comm, whole, nullptr, any_bending(job));
  whole = Mesh{};
  const Model model = build_model(comm, job, mesh);
  r.deformation_jacobian = det3(deformation);
  if (job.dynamic && job.dynamic->integrator == Integrator::position_based) {
    time_pbd_sweep(comm, job, mesh, model, repeat, r);
    job_models_and_flops(job, r);
    return r;
  }
  Assembler assembler(comm, mesh, model);
  PetscOwner<Vec, VecDestroy> f = assembler.create_vector();
  time_assembly(comm, mesh, assembler, f, repeat, r);
  time_linear_solve(comm, job, cli_petsc_options, mesh, model, assembler, f, r);
  measure_memory(comm, assembler, r);
  job_models_and_flops(job, r);
  return r;
}

std::string to_json(const BenchResult& r) {
  using Json = nlohmann::ordered_json;
  Json o = {{"model", r.model},   {"ranks", r.ranks}, {"threads", r.threads}, {"repeat", r.repeat},
            {"vertices", r.vertices}, {"edges", r.edges}, {"faces", r.faces},  {"tets", r.tets},
            {"tseps", r.tseps}};
  o["seconds"] = {{"f", number(r.seconds_f)},         {"f_and_K", number(r.seconds_f_and_K)},
                  {"solve", number(r.seconds_solve)}, {"pc_setup", number(r.seconds_pc_setup)},
                  {"ksp", number(r.seconds_ksp)}};
  o["ksp_iterations"] = r.ksp_iterations;
  o["ksp_reason"] = r.ksp_reason;
  o["ksp_converged"] = r.ksp_converged;
  o["preconditioner"] = r.preconditioner;
  o["bytes_per_tet"] = number(r.bytes_per_tet());
  Json structures = Json::object();
  for (const auto& [name, mb] : r.account.structures) structures[name] = number(mb);
  const auto& a = r.account;
  o["memory_account_mb"] = {{"start_up", number(a.start_up_mb)},
                            {"structures", structures},
                            {"transients", number(a.transients_mb)},
                            {"libraries_and_shared_memory", number(a.libraries_mb)},
                            {"unaccounted_heap", number(a.unaccounted_heap_mb)},
                            {"peak", number(r.peak_mb_total)}};
  o["bytes"] = {{"kernel", number(r.kernel_bytes)}, {"coo_values", number(r.coo_bytes)}, {"matrix", number(r.matrix_bytes)}};
  o["flops_per_tet"] = {{"f", number(r.flops_f)}, {"f_and_K", number(r.flops_f_and_K)}};
  o["mtets_per_second"] = {{"f", number(r.tets / r.seconds_f / 1e6)}, {"f_and_K", number(r.tets / r.seconds_f_and_K / 1e6)}};
  o["deformation_jacobian"] = number(r.deformation_jacobian);
  if (r.position_based)
    o["position_based"] = {{"sweep", r.pbd_sweep},
                           {"xpbd", r.pbd_xpbd},
                           {"colors", r.pbd_colors},
                           {"seconds_per_sweep", number(r.seconds_pbd_sweep)},
                           {"projections_per_second_per_core", number(r.projections_per_core())},
                           {"cpu_seconds_per_sweep", number(r.cpu_seconds_pbd_sweep)},
                           {"projections_per_cpu_second", number(r.tets / r.cpu_seconds_pbd_sweep)},
                           {"bytes_per_tet", number(r.pbd_bytes / r.tets)}};
  return o.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace edgefem
