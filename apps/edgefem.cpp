// edgefem: the command-line program.
//   edgefem run JOB.yaml [--quiet] [PETSc options]     solve a job (under mpirun for several ranks)
//   edgefem info MESH|JOB.yaml [--ranks N]             mesh statistics and a partition preview
#include <petscsys.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/error.hpp"
#include "io/job.hpp"
#include "mesh/topology.hpp"
#include "partition/collective.hpp"
#include "partition/partition.hpp"
#include "solver/bench.hpp"
#include "io/vtk_output.hpp"
#include "solver/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/output.hpp"
#include "solver/static_solver.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using namespace edgefem;

constexpr const char* usage =
    "usage:\n"
    "  edgefem run JOB.yaml [--quiet] [--output DIR] [PETSc options, e.g. -ksp_type gmres -pc_type hypre -log_view]\n"
    "  edgefem info MESH.msh|JOB.yaml [--ranks N]\n"
    "  edgefem bench JOB.yaml [--repeat N] [--json FILE] [PETSc options]\n"
    "  edgefem --help | --version\n";

struct Arguments {
  std::string command, path;
  bool quiet = false;
  std::string output;  // overrides the job's output.directory
  int ranks = 1;
  int repeat = 5;
  std::string json;  // bench: write the result here
  std::string petsc_options;  // the PETSc options given on the command line, to re-apply after the job's
};

Arguments parse_arguments(int argc, char** argv) {
  Arguments a;
  if (argc < 2) throw InputError(std::string("missing command\n") + usage);
  a.command = argv[1];
  if (a.command != "run" && a.command != "info" && a.command != "bench")
    throw InputError("unknown command '" + a.command + "' (expected run, info or bench)\n" + usage);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--output") {
      if (i + 1 >= argc) throw InputError("--output: missing directory");
      a.output = argv[++i];
    } else if (arg == "--ranks" || arg == "--repeat") {
      if (i + 1 >= argc) throw InputError(arg + ": missing value (expected a positive integer)");
      const std::string value = argv[++i];
      std::size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(value, &used);
      } catch (...) {
        used = 0;
      }
      if (used != value.size() || n < 1) throw InputError(arg + ": expected a positive integer, got '" + value + "'");
      (arg == "--ranks" ? a.ranks : a.repeat) = n;
    } else if (arg == "--json") {
      if (i + 1 >= argc) throw InputError("--json: missing file name");
      a.json = argv[++i];
    } else if (arg.rfind("--", 0) == 0) {
      throw InputError("unknown option '" + arg + "'\n" + usage);
    } else if (arg.size() > 1 && arg[0] == '-') {
      // A PETSc option and, unless the next token is another option, its value.
      a.petsc_options += " " + arg;
      if (i + 1 < argc && (argv[i + 1][0] != '-' || std::isdigit(static_cast<unsigned char>(argv[i + 1][1]))))
        a.petsc_options += std::string(" ") + argv[++i];
    } else if (a.path.empty()) {
      a.path = arg;
    } else {
      throw InputError("unexpected argument '" + arg + "' (only one " +
                       (a.command == "info" ? "mesh or job file" : "job file") + " is taken)\n" + usage);
    }
  }
  if (a.path.empty())
    throw InputError("edgefem " + a.command + ": missing " + (a.command == "info" ? "MESH or JOB.yaml" : "JOB.yaml") +
                     "\n" + usage);
  return a;
}

double peak_memory_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

int threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

bool is_job_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

int command_info(const Arguments& args) {
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  const Mesh mesh = is_job_file(args.path) ? load_job_mesh(read_job(args.path)) : load_mesh_file(args.path);
  if (mesh.n_tets() == 0) throw InputError(args.path + ": the mesh has no tetrahedra (membrane meshes come later)");
  const Topology topo = build_topology(mesh.n_vertices(), mesh.tets);
  const double nt = static_cast<double>(mesh.n_tets());
  std::printf("mesh %s\n", args.path.c_str());
  std::printf("  N_V = %d   N_E = %lld   N_F = %lld   N_T = %d\n", mesh.n_vertices(),
              static_cast<long long>(topo.n_edges()), static_cast<long long>(topo.n_faces()), mesh.n_tets());
  std::printf("  N_V : N_E : N_F : N_T = %.3f : %.3f : %.3f : 1\n", mesh.n_vertices() / nt, topo.n_edges() / nt,
              topo.n_faces() / nt);
  std::printf("  TSEPs: type 1 = %lld (3 N_F = %lld), type 2 = %lld (3 N_T = %lld)\n",
              static_cast<long long>(topo.n_type1), 3 * static_cast<long long>(topo.n_faces()),
              static_cast<long long>(topo.n_type2), 3 * static_cast<long long>(mesh.n_tets()));
  std::printf("  boundary triangles = %d, lines = %d\n", mesh.n_triangles(), mesh.n_lines());
  const PartitionPlan plan = plan_partition(mesh, args.ranks);
  std::printf("partition into %d rank%s (METIS, dual graph)\n", args.ranks, args.ranks == 1 ? "" : "s");
  std::printf("  %6s %12s %12s %12s\n", "rank", "cells", "owned", "ghost");
  for (int p = 0; p < args.ranks; ++p) {
    const long long owned = plan.n_owned(p);
    const long long local = static_cast<long long>(plan.part_vertices[p].size());
    std::printf("  %6d %12zu %12lld %12lld\n", p, plan.part_cells[p].size(), owned, local - owned);
  }
  return 0;
}

int command_bench(const Arguments& args) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Job job;
  run_collectively(comm, [&] { job = read_job(args.path); });
  const BenchResult r = run_bench(comm, job, args.repeat, args.petsc_options);
  PetscPrintf(comm,
              "bench %s: model %s, %d rank%s x %d thread%s, best of %d\n"
              "  mesh: N_V = %lld, N_E = %lld, N_F = %lld, N_T = %lld, TSEPs = %lld\n"
              "  f        %10.6f s  %8.3f Mtet/s  %8.1f FLOP/tet (formula)\n"
              "  f + K    %10.6f s  %8.3f Mtet/s  %8.1f FLOP/tet (formula)\n"
              "  solve    %10.6f s  (%d KSP iterations, %s)\n"
              "  memory   %10.1f bytes/tet (kernel data %.1f, COO values %.1f, matrix %.1f)\n",
              job.job_file.c_str(), r.model.c_str(), r.ranks, r.ranks == 1 ? "" : "s", r.threads,
              r.threads == 1 ? "" : "s", r.repeat, static_cast<long long>(r.vertices), static_cast<long long>(r.edges),
              static_cast<long long>(r.faces), static_cast<long long>(r.tets), static_cast<long long>(r.tseps),
              r.seconds_f, r.tets / r.seconds_f / 1e6, r.flops_f, r.seconds_f_and_K, r.tets / r.seconds_f_and_K / 1e6,
              r.flops_f_and_K, r.seconds_solve, r.ksp_iterations, r.ksp_reason.c_str(), r.bytes_per_tet(),
              r.kernel_bytes / r.tets, r.coo_bytes / r.tets, r.matrix_bytes / r.tets);
  if (!args.json.empty())
    run_collectively(comm, [&] {
      if (rank == 0) write_file_atomically(args.json, to_json(r) + "\n");
    });
  return 0;
}

int command_run(const Arguments& args) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto t_start = std::chrono::steady_clock::now();

  Job job;
  run_collectively(comm, [&] { job = read_job(args.path); });
  if (!args.output.empty()) job.output_directory = args.output;
  if (job.analysis_type != "static")
    throw InputError(job.job_file + ": analysis.type: '" + job.analysis_type + "' is not supported yet (expected static)");

  Mesh whole;
  run_collectively(comm, [&] {
    if (rank == 0) whole = load_job_mesh(job);
  });
  const LocalMesh mesh = distribute_mesh(comm, whole);
  whole = Mesh{};
  long long local_tets = mesh.mesh.n_tets(), any_tets = 0;
  MPI_Allreduce(&local_tets, &any_tets, 1, MPI_LONG_LONG, MPI_SUM, comm);
  if (any_tets == 0)
    throw InputError(job.job_file + ": mesh: the mesh has no tetrahedra (membrane meshes are not supported yet)");

  Model model = build_model(comm, job, mesh);
  PetscPrintf(comm, "edgefem: %s\n  mesh: %lld vertices, %lld tetrahedra on %d rank%s x %d thread%s\n",
              job.job_file.c_str(), static_cast<long long>(mesh.n_global_vertices),
              static_cast<long long>(mesh.n_global_cells), size, size == 1 ? "" : "s", threads(),
              threads() == 1 ? "" : "s");

  StaticSolver solver(comm, job, mesh, std::move(model), args.petsc_options, args.quiet);
  ResultWriter writer(comm, job.output_directory, mesh, solver.model());
  PetscLogStage stage_output = 0;
  PetscLogStageRegister("Output", &stage_output);
  double output_seconds = 0;
  const auto reports = solver.run([&](int step, double load_factor) {
    if (step % job.output_every != 0 && step != job.steps && step != 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    PetscLogStagePush(stage_output);
    const std::vector<double> x = solver.local_positions();
    const std::vector<double> f = solver.local_internal_force();
    writer.write(step, load_factor, x, f);
    PetscLogStagePop();
    output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });

  // Summary: iterations, times, largest displacement, memory.
  const std::vector<double> x = solver.local_positions();
  struct {
    double value;
    int rank;
  } local_max{0.0, rank}, global_max{};
  std::array<double, 6> where{};  // reference point and displacement of the largest displacement
  for (LocalIndex v = 0; v < mesh.n_owned; ++v) {
    double u2 = 0;
    for (int d = 0; d < 3; ++d) u2 += std::pow(x[3 * v + d] - mesh.mesh.coords[3 * v + d], 2);
    if (std::sqrt(u2) > local_max.value) {
      local_max.value = std::sqrt(u2);
      for (int d = 0; d < 3; ++d) {
        where[d] = mesh.mesh.coords[3 * v + d];
        where[3 + d] = x[3 * v + d] - mesh.mesh.coords[3 * v + d];
      }
    }
  }
  MPI_Allreduce(&local_max, &global_max, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  MPI_Bcast(where.data(), 6, MPI_DOUBLE, global_max.rank, comm);
  // Volume (reference and deformed, from the signed tet volumes) and the deformed bounding box.
  auto tet_volume = [&](const double* p, LocalIndex t) {
    const LocalIndex* v = mesh.mesh.tets.data() + 4 * static_cast<std::size_t>(t);
    double a[3], b[3], c[3];
    for (int d = 0; d < 3; ++d) {
      a[d] = p[3 * v[1] + d] - p[3 * v[0] + d];
      b[d] = p[3 * v[2] + d] - p[3 * v[0] + d];
      c[d] = p[3 * v[3] + d] - p[3 * v[0] + d];
    }
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
            a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
  };
  double volumes[2] = {0, 0}, volumes_sum[2] = {0, 0};
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t) {
    volumes[0] += tet_volume(mesh.mesh.coords.data(), t);
    volumes[1] += tet_volume(x.data(), t);
  }
  MPI_Allreduce(volumes, volumes_sum, 2, MPI_DOUBLE, MPI_SUM, comm);
  double box_min[3] = {1e300, 1e300, 1e300}, box_max[3] = {-1e300, -1e300, -1e300}, gmin[3], gmax[3];
  for (LocalIndex v = 0; v < mesh.n_owned; ++v)
    for (int d = 0; d < 3; ++d) {
      box_min[d] = std::min(box_min[d], x[3 * v + d]);
      box_max[d] = std::max(box_max[d], x[3 * v + d]);
    }
  MPI_Allreduce(box_min, gmin, 3, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(box_max, gmax, 3, MPI_DOUBLE, MPI_MAX, comm);
  double memory = peak_memory_mb(), memory_max = 0, memory_sum = 0;
  MPI_Allreduce(&memory, &memory_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&memory, &memory_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  int newton = 0, ksp = 0;
  double solve_seconds = 0;
  for (const auto& r : reports) newton += r.newton_iterations, ksp += r.ksp_iterations, solve_seconds += r.seconds;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  PetscPrintf(comm,
              "summary: %zu load steps, %d Newton iterations, %d KSP iterations\n"
              "  time: total %.3f s, load steps %.3f s, output %.3f s\n"
              "  largest displacement |u| = %.9e at reference point (%.6g, %.6g, %.6g), u = (%.9e, %.9e, %.9e)\n"
              "  volume: reference %.9g, deformed %.9g (change %+.4f %%)\n"
              "  deformed bounding box: [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g]\n"
              "  peak memory: %.1f MB on the largest rank, %.1f MB in all\n"
              "  output: %s\n",
              reports.size(), newton, ksp, total, solve_seconds, output_seconds, global_max.value, where[0], where[1],
              where[2], where[3], where[4], where[5], volumes_sum[0], volumes_sum[1],
              100.0 * (volumes_sum[1] / volumes_sum[0] - 1.0), gmin[0], gmax[0], gmin[1], gmax[1], gmin[2], gmax[2], memory_max, memory_sum, writer.pvd_path().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("edgefem %s: distributed edge/TSEP StVK solver\n%s", "0.1.0", usage);
      return 0;
    }
    if (arg == "--version") {
      std::printf("edgefem 0.1.0\n");
      return 0;
    }
  }
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 2;
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  int code = 0;
  try {
    const Arguments args = parse_arguments(argc, argv);
    if (args.command == "run")
      code = command_run(args);
    else if (args.command == "bench")
      code = command_bench(args);
    else
      code = command_info(args);
  } catch (const InputError& e) {  // thrown identically on every rank
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());
    code = 1;
  } catch (const CollectiveError& e) {
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());
    code = 1;
  } catch (const SolverError& e) {
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());
    code = 1;
  } catch (const std::exception& e) {  // possibly on one rank only: abort so that no rank hangs
    std::fprintf(stderr, "edgefem: rank %d: fatal error: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(PETSC_COMM_WORLD, 2);
  }
  PetscFinalize();
  return code;
}
