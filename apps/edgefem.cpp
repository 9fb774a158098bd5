// edgefem: the command-line program.
//   edgefem run JOB.yaml [--quiet|--verbose] [PETSc options]   solve a job (under mpirun for several ranks)
//   edgefem info MESH|JOB.yaml [--ranks N]             mesh statistics and a partition preview
#include <petscsys.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "frames/frames_solver.hpp"
#include "io/checkpoint.hpp"
#include "io/checkpoint_series.hpp"
#include "io/job.hpp"
#include "io/summary.hpp"
#include "io/vtk_output.hpp"
#include "mesh/topology.hpp"
#include "partition/collective.hpp"
#include "partition/partition.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/bench.hpp"
#include "run/load_mesh.hpp"
#include "run/memory_budget.hpp"
#include "run/output.hpp"
#include "run/time_loop.hpp"
#include "runtime/huge_pages.hpp"
#include "runtime/mpi_startup.hpp"
#include "runtime/placement.hpp"
#include "runtime/stop_signal.hpp"
#include "solver/assembly_times.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using namespace edgefem;

constexpr const char* version = "0.1.0";

constexpr const char* usage =
    "usage:\n"
    "  edgefem run JOB.yaml [--quiet | --verbose] [--output DIR] [--restart CHECKPOINT|DIR]\n"
    "              [--ignore-memory-estimate] [PETSc options, e.g. -ksp_type gmres -pc_type hypre -log_view]\n"
    "              (--verbose: a line per Newton iteration too; --ignore-memory-estimate: run even when the\n"
    "              estimate says the mesh is too large for the nodes' memory)\n"
    "  edgefem info MESH.msh|JOB.yaml [--ranks N]\n"
    "  edgefem bench JOB.yaml [--repeat N] [--json FILE] [PETSc options]\n"
    "  edgefem --help | --version\n"
    "exit status of run: 0 done, 1 error, 2 a rank's fatal error; SIGTERM or SIGUSR1 stop it after the current step:\n"
    "  85 with a checkpoint of that step (dynamic; --restart DIR continues), 86 without (static: run it again)\n";

struct Arguments {
  std::string command, path;
  bool quiet = false;
  bool verbose = false;                 // run: one line per Newton iteration too
  bool ignore_memory_estimate = false;  // run: go on when the memory estimate says the run does not fit
  std::string output;                   // overrides the job's output.directory
  std::string restart;                  // run: checkpoint file (or output directory: its newest checkpoint)
  int ranks = 0;                        // info: parts of the partition preview (0: the number of ranks it runs on)
  int repeat = 5;
  std::string json;           // bench: write the result here
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
    } else if (arg == "--verbose") {
      a.verbose = true;
    } else if (arg == "--ignore-memory-estimate") {
      a.ignore_memory_estimate = true;
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
    } else if (arg == "--restart") {
      if (i + 1 >= argc) throw InputError("--restart: missing checkpoint file or output directory");
      a.restart = argv[++i];
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

int command_info(const Arguments& arguments) {
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  if (rank != 0) return 0;
  Arguments args = arguments;
  if (args.ranks == 0) args.ranks = size;  // mpirun -n N edgefem info: preview the partition it would run with
  const Mesh mesh = is_job_file(args.path) ? load_job_mesh(read_job(args.path)) : load_mesh_file(args.path);
  if (mesh.n_tets() == 0) {
    const std::int64_t n_edges = build_triangle_edges(mesh.triangles).n_edges();
    std::printf("mesh %s (membrane)\n  N_V = %d   N_E = %lld   N_T (triangles) = %d   boundary edges = %d\n",
                args.path.c_str(), mesh.n_vertices(), static_cast<long long>(n_edges), mesh.n_triangles(),
                mesh.n_lines());
  } else {
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
  }
  // What one needs to write selections: the tags and the extent.
  auto print_regions = [](const char* what, const std::vector<int>& regions) {
    if (regions.empty()) return;
    std::map<int, long long> count;
    for (const int r : regions) ++count[r];
    std::printf("  %s regions:", what);
    for (const auto& [tag, n] : count) std::printf("  %d (%lld)", tag, n);
    std::printf("\n");
  };
  print_regions(mesh.n_tets() > 0 ? "tetrahedron" : "triangle (cell)",
                mesh.n_tets() > 0 ? mesh.tet_region : mesh.triangle_region);
  if (mesh.n_tets() > 0) print_regions("boundary triangle", mesh.triangle_region);
  print_regions(mesh.n_tets() > 0 ? "line" : "boundary edge", mesh.line_region);
  if (mesh.n_vertices() > 0) {
    std::array<double, 6> box{1e300, -1e300, 1e300, -1e300, 1e300, -1e300};
    for (LocalIndex v = 0; v < mesh.n_vertices(); ++v)
      for (int d = 0; d < 3; ++d) {
        const double c = mesh.coords[3 * static_cast<std::size_t>(v) + d];
        box[2 * d] = std::min(box[2 * d], c);
        box[2 * d + 1] = std::max(box[2 * d + 1], c);
      }
    std::printf("  bounding box: [%g, %g] x [%g, %g] x [%g, %g]\n", box[0], box[1], box[2], box[3], box[4], box[5]);
  }
  if (is_job_file(args.path)) {
    const Job job = read_job(args.path);
    std::string why;
    const MeshReader reader = choose_reader(job, &why);
    const long long n_cells = mesh.n_tets() > 0 ? mesh.n_tets() : mesh.n_triangles();
    std::string partition_why;
    const CellPartitioner partitioner = choose_partitioner(job, n_cells, &partition_why);
    std::printf("run input: %s reader (%s); partition %s (%s)\n", to_string(reader), why.c_str(),
                to_string(partitioner), partition_why.c_str());
  }
  // The quality of both partitioners (the per-rank table below is METIS's).
  const PartitionPlan scotch_plan = plan_partition(mesh, args.ranks, CellPartitioner::ptscotch);
  const PartitionPlan plan = plan_partition(mesh, args.ranks);
  auto print_quality = [&](const PartitionPlan& plan, const char* name) {
    const PartitionQuality q = partition_quality(mesh, plan);
    std::printf("partition into %d rank%s (%s, dual graph): %.3f s (%s %.3f, owners %.3f, numbering %.3f)\n",
                args.ranks, args.ranks == 1 ? "" : "s", name, plan.seconds, name, plan.seconds_cells,
                plan.seconds_owners, plan.seconds - plan.seconds_cells - plan.seconds_owners);
    std::printf("  cut: %lld dual-graph edges (%s between parts), %lld vertices shared by parts\n",
                static_cast<long long>(q.cut_facets), mesh.n_tets() > 0 ? "faces" : "edges",
                static_cast<long long>(q.shared_vertices));
    std::printf("  owned vertices per rank min/mean/max %lld/%.1f/%lld: max/mean %.3f, min/mean %.3f\n",
                static_cast<long long>(q.owned_min), q.owned_mean, static_cast<long long>(q.owned_max),
                q.owned_max / q.owned_mean, q.owned_min / q.owned_mean);
    std::printf("  ghost vertices per rank min/mean/max %lld/%.1f/%lld, largest ghosts/owned %.2f (rank %d)\n",
                static_cast<long long>(q.ghost_min), q.ghost_mean, static_cast<long long>(q.ghost_max),
                q.max_ghost_ratio, q.max_ghost_ratio_part);
    std::printf("  cells per rank max/mean %.3f\n", static_cast<double>(q.cells_max) / q.cells_mean);
  };
  print_quality(scotch_plan, "PT-Scotch");
  print_quality(plan, "METIS");
  constexpr int max_table_ranks = 32;
  if (args.ranks > max_table_ranks) {
    std::printf("  (the table per rank is printed for up to %d ranks)\n", max_table_ranks);
    return 0;
  }
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
  warn_if_oversubscribed(comm);
  const BenchResult r = run_bench(comm, job, args.repeat, args.petsc_options);
  if (r.position_based) {
    PetscPrintf(comm,
                "bench %s: position-based, model %s, %d rank%s x %d thread%s, best of %d\n"
                "  mesh: N_V = %lld, N_T = %lld, %d colours\n"
                "  sweep    %10.6f s  (%s%s): %.3f Mtet projections/s, %.3f M/s per core (wall); CPU %.6f s: "
                "%.3f M projections per CPU second\n"
                "  memory   %10.1f bytes/tet (constraint data)\n",
                job.job_file.c_str(), r.model.c_str(), r.ranks, r.ranks == 1 ? "" : "s", r.threads,
                r.threads == 1 ? "" : "s", r.repeat, static_cast<long long>(r.vertices), static_cast<long long>(r.tets),
                r.pbd_colors, r.seconds_pbd_sweep, r.pbd_sweep.c_str(), r.pbd_xpbd ? ", xpbd" : "",
                r.tets / r.seconds_pbd_sweep / 1e6, r.projections_per_core() / 1e6, r.cpu_seconds_pbd_sweep,
                r.tets / r.cpu_seconds_pbd_sweep / 1e6, r.pbd_bytes / r.tets);
    if (!args.json.empty())
      run_collectively(comm, [&] {
        if (rank == 0) write_file_atomically(args.json, to_json(r) + "\n");
      });
    return 0;
  }
  PetscPrintf(comm,
              "bench %s: model %s, %d rank%s x %d thread%s, best of %d\n"
              "  mesh: N_V = %lld, N_E = %lld, N_F = %lld, N_T = %lld, TSEPs = %lld\n"
              "  f        %10.6f s  %8.3f Mtet/s  %8.1f FLOP/tet (formula)\n"
              "  f + K    %10.6f s  %8.3f Mtet/s  %8.1f FLOP/tet (formula)\n"
              "  solve    %10.6f s  (PC set-up %.6f s + KSP %.6f s: %d iterations, %s; %s)\n"
              "  memory   %10.1f bytes/tet (kernel data %.1f, COO values and maps %.1f, matrix %.1f)\n",
              job.job_file.c_str(), r.model.c_str(), r.ranks, r.ranks == 1 ? "" : "s", r.threads,
              r.threads == 1 ? "" : "s", r.repeat, static_cast<long long>(r.vertices), static_cast<long long>(r.edges),
              static_cast<long long>(r.faces), static_cast<long long>(r.tets), static_cast<long long>(r.tseps),
              r.seconds_f, r.tets / r.seconds_f / 1e6, r.flops_f, r.seconds_f_and_K, r.tets / r.seconds_f_and_K / 1e6,
              r.flops_f_and_K, r.seconds_solve, r.seconds_pc_setup, r.seconds_ksp, r.ksp_iterations,
              r.ksp_reason.c_str(), r.preconditioner.c_str(), r.bytes_per_tet(), r.kernel_bytes / r.tets,
              r.coo_bytes / r.tets, r.matrix_bytes / r.tets);
  if (!r.ksp_converged)
    PetscPrintf(comm, "warning: the linear solve FAILED (%s after %d iterations): its time is not a result\n",
                r.ksp_reason.c_str(), r.ksp_iterations);
  if (!args.json.empty())
    run_collectively(comm, [&] {
      if (rank == 0) write_file_atomically(args.json, to_json(r) + "\n");
    });
  return 0;
}

/// Largest displacement, volume change, deformed bounding box, peak memory (collective; rank 0 prints). Returns
/// the largest displacement (every rank).
RunSummary::Displacement print_state_summary(MPI_Comm comm, const LocalMesh& mesh, const std::vector<double>& x) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
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
  // Volume (reference and deformed, from the signed tet volumes) or, for a membrane, area; and the deformed
  // bounding box.
  const bool solid = mesh.mesh.n_tets() > 0 || mesh.mesh.n_triangles() == 0;
  auto measure = [&](const double* p, LocalIndex t) {
    const LocalIndex* v = (solid ? mesh.mesh.tets.data() + 4 * static_cast<std::size_t>(t)
                                 : mesh.mesh.triangles.data() + 3 * static_cast<std::size_t>(t));
    double a[3], b[3], c[3] = {0, 0, 0};
    for (int d = 0; d < 3; ++d) {
      a[d] = p[3 * v[1] + d] - p[3 * v[0] + d];
      b[d] = p[3 * v[2] + d] - p[3 * v[0] + d];
      if (solid) c[d] = p[3 * v[3] + d] - p[3 * v[0] + d];
    }
    const double n[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return solid ? (n[0] * c[0] + n[1] * c[1] + n[2] * c[2]) / 6.0
                 : 0.5 * std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  };
  double volumes[2] = {0, 0}, volumes_sum[2] = {0, 0};
  for (LocalIndex t = 0; t < (solid ? mesh.mesh.n_tets() : mesh.mesh.n_triangles()); ++t) {
    volumes[0] += measure(mesh.mesh.coords.data(), t);
    volumes[1] += measure(x.data(), t);
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
  PetscPrintf(comm,
              "  largest displacement |u| = %.9e at reference point (%.6g, %.6g, %.6g), u = (%.9e, %.9e, %.9e)\n"
              "  %s: reference %.9g, deformed %.9g (change %+.4f %%)\n"
              "  deformed bounding box: [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g]\n"
              "  peak memory: %.1f MB on the largest rank, %.1f MB in all\n",
              global_max.value, where[0], where[1], where[2], where[3], where[4], where[5], solid ? "volume" : "area",
              volumes_sum[0], volumes_sum[1], 100.0 * (volumes_sum[1] / volumes_sum[0] - 1.0), gmin[0], gmax[0],
              gmin[1], gmax[1], gmin[2], gmax[2], memory_max, memory_sum);
  return {global_max.value, {where[0], where[1], where[2]}, {where[3], where[4], where[5]}};
}

/// Wall-clock seconds of the phases before the solve (the time the user waits is read -> partition -> distribute
/// -> set-up -> solve -> write).
struct PhaseClock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), last = start;
  double read = 0.0, partition = 0.0, distribute = 0.0, setup = 0.0;
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last).count();
    last = now;
    return s;
  }
  [[nodiscard]] double total() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

/// The solver lines of the summary: counts, where the solve time went, the preconditioner.
void print_solver_summary(MPI_Comm comm, const NewtonStats& s, const std::string& preconditioner) {
  PetscPrintf(comm,
              "  solver: %d Newton iterations, %d KSP iterations, %d preconditioner set-ups (%s); assembly %.3f s, "
              "PC set-up %.3f s, KSP and vector work %.3f s\n",
              s.newton_iterations, s.ksp_iterations, s.pc_setups, preconditioner.c_str(), s.seconds_assembly,
              s.seconds_pc_setup, std::max(0.0, s.seconds - s.seconds_assembly - s.seconds_pc_setup));
}

/// Runs `f` when it goes out of scope, also when an exception unwinds it (what a failed run has done so far).
class AtScopeExit {
 public:
  explicit AtScopeExit(std::function<void()> f) : f_(std::move(f)) {}
  AtScopeExit(const AtScopeExit&) = delete;
  AtScopeExit& operator=(const AtScopeExit&) = delete;
  ~AtScopeExit() {
    try {
      f_();
    } catch (...) {  // (only a failed allocation; the record is then incomplete)
    }
  }

 private:
  std::function<void()> f_;
};

/// The solver's counts and the solve phases of summary.json (the Newton solves' assembly, PC set-up and the rest,
/// KSP and vector work), and the output phase.
void record_solve(RunSummary& summary, const NewtonStats& s, const std::string& preconditioner, double output_seconds) {
  summary.solver = RunSummary::Solver{s.newton_iterations, s.ksp_iterations, s.pc_setups, preconditioner};
  summary.phases_s.assembly = s.seconds_assembly;
  summary.phases_s.pc_setup = s.seconds_pc_setup;
  summary.phases_s.ksp = std::max(0.0, s.seconds - s.seconds_assembly - s.seconds_pc_setup);
  summary.phases_s.output = output_seconds;
  summary.assembly_split_s = {s.assembly_parts.local, s.assembly_parts.local_cpu, s.assembly_parts.insertion,
                              s.assembly_parts.exchange,
                              assembly_barriers() ? std::optional<double>(s.assembly_parts.barrier_wait) : std::nullopt};
}

/// The force on each boundary entry's vertices at the last recorded step (the reaction in a static equilibrium).
/// "region 11", "box [0, 0, 0]-[1, 1, 0.1]" or "all vertices": what a boundary entry selected.
std::string describe(const Selection& s) {
  char text[160];
  switch (s.kind) {
    case Selection::Kind::region: return "region " + std::to_string(s.region);
    case Selection::Kind::box:
      std::snprintf(text, sizeof text, "box [%g, %g, %g]-[%g, %g, %g]", s.lo[0], s.lo[1], s.lo[2], s.hi[0], s.hi[1],
                    s.hi[2]);
      return text;
    case Selection::Kind::all: break;
  }
  return "all vertices";
}

/// The total internal force on each boundary entry's vertices at the end: the reaction where they are held.
void print_reactions(MPI_Comm comm, const Job& job, const ReactionLog& reactions) {
  const auto& r = reactions.last();
  for (std::size_t b = 0; 3 * b < r.size(); ++b) {
    const std::string what = b < job.boundary.size() ? " (" + describe(job.boundary[b].select) + ")" : std::string();
    PetscPrintf(comm, "  force on boundary[%zu]%s: (%.9e, %.9e, %.9e)\n", b, what.c_str(), r[3 * b], r[3 * b + 1],
                r[3 * b + 2]);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The first summary lines of a dynamic run: steps and iterations, where the time went, the last energy and
/// its largest change from the first output. Collective (a restart at the end time evaluates the energy).
void print_dynamic_summary(MPI_Comm comm, const DynamicSpec& spec, TimeIntegrator& solver,
                           const std::vector<TimeStepReport>& reports, const EnergyReport& first_energy,
                           const RestartPoint& start, const PhaseClock& clock, double output_seconds) {
  int newton = 0, ksp = 0, cut_steps = 0;
  double step_seconds = 0, max_drift = 0;
  for (const auto& r : reports) {
    newton += r.newton_iterations, ksp += r.ksp_iterations, step_seconds += r.seconds;
    cut_steps += r.substeps > 1;
    max_drift = std::max(max_drift, std::abs(r.energy.total() - first_energy.total()));
  }
  const double total = clock.total();
  const double n = std::max<double>(1.0, static_cast<double>(reports.size()));
  // A restart from the final checkpoint computes nothing: report the state it holds.
  const EnergyReport last_energy = reports.empty() ? solver.energy() : reports.back().energy;
  const std::string integrator(to_string(spec.integrator));
  if (reports.empty() && start.time)
    PetscPrintf(comm, "nothing to compute: %s is at the end time (t = %.9g)\n", start.path.c_str(), solver.time());
  PetscPrintf(comm,
              "summary: %zu time steps of %s (dt %.6g, t = %.6g), %d Newton iterations, %d KSP iterations, "
              "%d steps cut\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + time steps %.3f s "
              "(%.4f s per step) + output and checkpoints %.3f s\n"
              "  energy: kinetic %.9e, strain %.9e, attachment %.9e, external work %.9e; total %.9e "
              "(largest change from the first output %.3e)\n",
              reports.size(), integrator.c_str(), spec.dt, solver.time(), newton, ksp, cut_steps, total, clock.read,
              clock.partition, clock.distribute, clock.setup, step_seconds, step_seconds / n, output_seconds,
              last_energy.kinetic, last_energy.strain, last_energy.attachment, last_energy.external_work,
              last_energy.total(), max_drift);
}

/// The output, energy.csv, reactions and checkpoints of a dynamic run around the time loop (run/time_loop.hpp).
int run_dynamic_with(const Arguments& args, const Job& job, const LocalMesh& mesh, TimeIntegrator& solver,
                     PhaseClock& clock, RunSummary& summary) {
  namespace fs = std::filesystem;
  MPI_Comm comm = PETSC_COMM_WORLD;
  const DynamicSpec& spec = *job.dynamic;
  std::vector<std::int64_t> owned_original(mesh.original_vertex.begin(), mesh.original_vertex.begin() + mesh.n_owned);
  const std::string job_text = read_text(job.job_file);

  const RestartPoint start = restart_if_asked(comm, args.restart, job, owned_original, job_text, solver);
  ResultWriter writer(comm, job.output_directory, mesh, solver.model(), start.time);
  // This run's checkpoints: other runs' ones leave the directory, rotation deletes only this run's.
  CheckpointSeries checkpoints(comm, job.output_directory, start.run);
  for (const std::string& line : checkpoints.set_aside_other_runs()) PetscPrintf(comm, "warning: %s\n", line.c_str());

  // energy.csv and reactions.csv: one row per completed step (a restart drops the rows after its step).
  const std::optional<long long> keep = start.time ? std::optional<long long>(solver.step_number()) : std::nullopt;
  CsvLog energy_log(comm, (fs::path(job.output_directory) / "energy.csv").string(),
                    "step,time,kinetic,strain,attachment,external_work,total", keep);
  ReactionLog reactions(comm, job.output_directory, solver.model(), keep);
  clock.setup += clock.lap();  // the solver, the restart and the output files
  summary.phases_s.setup = clock.setup;

  auto write_checkpoint_now = [&] {
    writer.finish();  // a checkpointed step's output is listed in the .pvd
    CheckpointState state = solver.checkpoint();
    state.job_text = job_text;
    return checkpoints.write(mesh.n_global_vertices, owned_original, std::move(state));
  };

  const PetscLogStage stage_output = log_stage("Output");
  double output_seconds = 0;
  std::string last_checkpoint;
  long long last_checkpoint_step = -1;
  std::vector<TimeStepReport> reports;
  EnergyReport first_energy;
  bool have_first = false;
  const long long first_step = solver.step_number();
  bool completed = false;         // (a failed run's cut steps are not known)
  const AtScopeExit record{[&] {  // summary.json: also what a failed run did
    record_solve(summary, solver.stats(), solver.preconditioner_name(), output_seconds);
    const long long steps = solver.step_number() - first_step;
    long long cut = 0;
    for (const auto& r : reports) cut += r.substeps > 1;
    summary.analysis = {{"integrator", json_string(std::string(to_string(spec.integrator)))},
                        {"dt", json_number(spec.dt)},
                        {"end_time", json_number(spec.end_time)},
                        {"time_steps", std::to_string(solver.n_steps())},
                        {"first_step", std::to_string(first_step)},
                        {"steps", std::to_string(steps)},
                        {"time", json_number(solver.time())},
                        {"steps_cut", completed ? std::to_string(cut) : "null"},
                        {"restart", start.path.empty() ? "null" : json_string(start.path)}};
  }};
  auto on_step = [&](long long step, double time) {
    const auto t0 = std::chrono::steady_clock::now();
    PetscLogStagePush(stage_output);
    const EnergyReport e = solver.energy();
    if (!have_first) first_energy = e, have_first = true;
    char line[256];
    std::snprintf(line, sizeof line, "%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g", step, time, e.kinetic, e.strain,
                  e.attachment, e.external_work, e.total());
    energy_log.row(line);
    const std::vector<double> f = solver.local_internal_force();
    reactions.record(step, time, f);
    if (step % job.output_every == 0 || step == solver.n_steps()) {
      const std::vector<double> x = solver.local_positions();
      const std::vector<double> v = solver.local_velocities();
      for (OutputCellField& field : solver.output_cell_fields())
        writer.add_cell_scalar(std::move(field.name), std::move(field.values));
      writer.write(step, time, x, f, v);
    }
    if (step > 0 && ((job.checkpoint_every > 0 && step % job.checkpoint_every == 0) || step == solver.n_steps()))
      last_checkpoint = write_checkpoint_now(), last_checkpoint_step = step;
    PetscLogStagePop();
    output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  int stop_signal = 0;  // SIGTERM/SIGUSR1 on some rank: stop after the step, with a checkpoint of it
  const auto should_stop = [&] { return (stop_signal = agree_on_stop(comm)) != 0; };
  try {
    reports = run_time_loop(solver, on_step, should_stop);
    completed = true;
    {
      const auto t0 = std::chrono::steady_clock::now();
      writer.finish();
      output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (stop_signal != 0 && last_checkpoint_step != solver.step_number()) {
      const auto t0 = std::chrono::steady_clock::now();
      PetscLogStagePush(stage_output);
      last_checkpoint = write_checkpoint_now(), last_checkpoint_step = solver.step_number();
      PetscLogStagePop();
      output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  } catch (const SolverError& e) {
    // Keep what was computed: a checkpoint of the last completed step (it exists once written), then report.
    std::string saved;
    try {
      const std::string path = write_checkpoint_now();
      saved = "is saved in " + path + " (edgefem run JOB --restart " + path + ")";
    } catch (const std::exception& failed) {  // thrown on every rank
      saved = std::string("could not be saved: ") + failed.what();
    }
    throw SolverError(std::string(e.what()) + "\n  the last converged state (t = " + std::to_string(solver.time()) +
                      ", after " + std::to_string(solver.step_number()) + " complete steps) " + saved);
  }

  print_dynamic_summary(comm, spec, solver, reports, first_energy, start, clock, output_seconds);
  print_solver_summary(comm, solver.stats(), solver.preconditioner_name());
  summary.largest_displacement = print_state_summary(comm, mesh, solver.local_positions());
  summary.output = writer.pvd_path();
  if (!reports.empty()) print_reactions(comm, job, reactions);  // (the reactions of a restart state: reactions.csv)
  PetscPrintf(comm, "  output: %s\n  checkpoint: %s\n", writer.pvd_path().c_str(),
              (last_checkpoint.empty() ? start.path : last_checkpoint).c_str());
  if (stop_signal == 0) return 0;
  summary.stopped = true;
  const std::string output = args.output.empty() ? std::string() : " --output " + args.output;
  PetscPrintf(comm,
              "edgefem: stopped by %s after time step %lld of %lld (t = %.9g), checkpoint %s written; continue with: "
              "edgefem run %s%s --restart %s (exit status %d)\n",
              stop_signal_name(stop_signal), solver.step_number(), solver.n_steps(), solver.time(),
              last_checkpoint.c_str(), args.path.c_str(), output.c_str(), job.output_directory.c_str(),
              kExitStoppedRestartable);
  return kExitStoppedRestartable;
}

int run_dynamic(const Arguments& args, const Job& job, const LocalMesh& mesh, Model model, PhaseClock& clock,
                RunSummary& summary) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  if (job.dynamic->integrator == Integrator::position_based) {
    PbdSolver solver(comm, job, mesh, std::move(model), args.quiet);
    return run_dynamic_with(args, job, mesh, solver, clock, summary);
  }
  DynamicSolver solver(comm, job, mesh, std::move(model), args.petsc_options, args.quiet, args.verbose);
  return run_dynamic_with(args, job, mesh, solver, clock, summary);
}

/// A static run of the frame-based model (`discretization: {type: frames}`, frames/frames_solver.hpp): the skinned
/// mesh as the usual PVTU series (force 0: the frame model has no vertex forces) and the frames as DIR/frames.pvd ->
/// DIR/frames_NNNN.vtp.
int run_frames(const Arguments& args, const Job& job, const LocalMesh& mesh, const Model& model, PhaseClock& clock,
               RunSummary& summary) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  FrameSolver solver(comm, job, mesh, model, args.quiet);
  ResultWriter writer(comm, job.output_directory, mesh, model);
  PvdCollection frames_pvd((std::filesystem::path(job.output_directory) / "frames.pvd").string());
  clock.setup = clock.lap();
  summary.phases_s.setup = clock.setup;
  int held = 0;
  for (const int h : solver.held()) held += h;
  PetscPrintf(comm, "  frames: %d (%d held), %s weights, %lld samples (one per tet), %d unknowns; set-up %.3f s\n",
              solver.n_frames(), held, std::string(to_string(job.discretization.weights)).c_str(),
              solver.n_samples_global(), 6 * (solver.n_frames() - held), clock.setup);
  double output_seconds = 0;
  const std::vector<double> zero(3 * static_cast<std::size_t>(mesh.n_local()), 0.0);
  const bool dynamic = job.analysis_type == AnalysisType::dynamics;
  const int last_step = dynamic ? static_cast<int>(std::lround(job.dynamic->end_time / job.dynamic->dt)) : job.steps;
  const auto on_step = [&](int step, double load_factor) {
    const auto t0 = std::chrono::steady_clock::now();
    if (step % job.output_every == 0 || step == last_step || step == 0) {
      writer.write(step, load_factor, solver.local_positions(), zero);
      if (rank == 0) {
        char name[32];
        std::snprintf(name, sizeof name, "frames_%04d.vtp", step);
        write_frames_vtp((std::filesystem::path(job.output_directory) / name).string(), solver.placement(),
                         solver.poses(), solver.held());
        frames_pvd.add(load_factor, name);
        frames_pvd.write();
      }
    }
    output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (dynamic) {
    const auto steps = solver.run_dynamic(on_step);
    writer.finish();
    double solve_seconds = 0;
    for (const auto& r : steps) solve_seconds += r.seconds;
    summary.solver = RunSummary::Solver{0, 0, 0, "dense LU (frames)"};
    summary.analysis = {{"integrator", json_string("linearized-euler")},
                        {"steps", std::to_string(steps.size())},
                        {"discretization", json_string("frames")},
                        {"frames", std::to_string(solver.n_frames())}};
    PetscPrintf(comm,
                "summary: %zu time steps of linearized-euler (frames, dt %.6g), kinetic energy %.6e, potential %.6e\n"
                "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + time steps %.3f + "
                "output %.3f s\n",
                steps.size(), job.dynamic->dt, steps.empty() ? 0.0 : steps.back().kinetic,
                steps.empty() ? 0.0 : steps.back().potential, clock.total(), clock.read, clock.partition,
                clock.distribute, clock.setup, solve_seconds, output_seconds);
    summary.largest_displacement = print_state_summary(comm, mesh, solver.local_positions());
    summary.output = writer.pvd_path();
    PetscPrintf(comm, "  output: %s, frames: %s\n", writer.pvd_path().c_str(), frames_pvd.path().c_str());
    return 0;
  }
  const auto reports = solver.run(on_step);
  writer.finish();
  int newton = 0;
  double solve_seconds = 0, evaluate_seconds = 0;
  for (const auto& r : reports)
    newton += r.newton_iterations, solve_seconds += r.seconds, evaluate_seconds += r.seconds_evaluate;
  summary.solver = RunSummary::Solver{newton, 0, 0, "dense LDLT (frames)"};
  summary.analysis = {{"load_steps", std::to_string(job.steps)},
                      {"steps", std::to_string(reports.size())},
                      {"discretization", json_string("frames")},
                      {"frames", std::to_string(solver.n_frames())}};
  PetscPrintf(comm,
              "summary: %zu load steps, %d Newton iterations (frames)\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + load steps %.3f "
              "(sample sums %.3f) + output %.3f s\n",
              reports.size(), newton, clock.total(), clock.read, clock.partition, clock.distribute, clock.setup,
              solve_seconds, evaluate_seconds, output_seconds);
  summary.largest_displacement = print_state_summary(comm, mesh, solver.local_positions());
  summary.output = writer.pvd_path();
  PetscPrintf(comm, "  output: %s, frames: %s\n", writer.pvd_path().c_str(), frames_pvd.path().c_str());
  return 0;
}

/// `summary`: filled as the run goes; `summary_directory` is set once the output directory is known (from then
/// on main writes summary.json there, also when the run fails).
int command_run(const Arguments& args, RunSummary& summary, std::string& summary_directory) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PhaseClock clock;
  install_stop_handlers();  // from here SIGTERM/SIGUSR1 stop the run after a step (runtime/stop_signal.hpp)

  Job job;
  run_collectively(comm, [&] { job = read_job(args.path); });
  if (!args.output.empty()) job.output_directory = args.output;
  summary.job = job.job_file;
  summary.analysis_type = job.analysis_type == AnalysisType::dynamics ? "dynamic" : "static";
  summary_directory = job.output_directory;
  if (rank == 0) {  // a summary.json left by an earlier run would describe this one until it ends
    std::error_code ignored;
    std::filesystem::remove(std::filesystem::path(summary_directory) / "summary.json", ignored);
  }
  if (!args.restart.empty() && job.analysis_type != AnalysisType::dynamics)
    throw InputError("--restart: " + job.job_file + " is a static analysis; only dynamic analyses write checkpoints");

  // Read (or generate), partition and distribute: by slices for large binary files and boxes (no rank holds the
  // whole mesh), else on rank 0 (run/load_mesh.hpp).
  DistributedJobMesh loaded = load_distributed_job_mesh(comm, job);
  clock.lap();
  clock.read = loaded.seconds_read;
  clock.partition = loaded.seconds_partition;
  clock.distribute = loaded.seconds_distribute;
  const LocalMesh mesh = std::move(loaded.mesh);
  // The peak memory of read, partition and distribution (rank 0 held the whole mesh on the rank-0 path).
  const double input_peak = peak_memory_mb();
  double input_peak_max = 0, input_peak_sum = 0;
  MPI_Allreduce(&input_peak, &input_peak_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&input_peak, &input_peak_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  summary.phases_s.read = clock.read;
  const std::string cell_kind = mesh.mesh.n_tets() > 0 ? "tet" : "triangle";
  summary.phases_s.partition = clock.partition;
  summary.phases_s.distribute = clock.distribute;
  summary.mesh = RunSummary::Mesh{job.mesh_file ? *job.mesh_file
                                                : "generated " + std::string(to_string(job.generate->shape)),
                                  static_cast<long long>(mesh.n_global_vertices),
                                  static_cast<long long>(mesh.n_global_cells), cell_kind,
                                  3 * static_cast<long long>(mesh.n_global_vertices)};
  summary.partition = RunSummary::Partition{to_string(loaded.partitioner), spread_over_ranks(comm, mesh.n_owned),
                                            spread_over_ranks(comm, mesh.n_ghost()),
                                            spread_over_ranks(comm, static_cast<double>(mesh.cell_global.size()))};
  // Before the model is built: will the run fit in memory (and with which multigrid)?
  const MemoryPlan memory = plan_memory(comm, job, mesh, args.petsc_options);
  summary.estimated_peak_mb = memory.estimated_peak_mb_max_rank;
  if (!memory.fits && !args.ignore_memory_estimate) throw ResourceError(memory.problem);
  if (memory.unsmoothed_aggregation) job.solver.aggregation = SolverSpec::Aggregation::unsmoothed;
  Model model = build_model(comm, job, mesh);
  PetscPrintf(comm, "edgefem: %s\n  mesh: %lld vertices, %lld %s on %d rank%s x %d thread%s\n", job.job_file.c_str(),
              static_cast<long long>(mesh.n_global_vertices), static_cast<long long>(mesh.n_global_cells),
              model.nodes_per_cell == 4 ? "tetrahedra" : "triangles", size, size == 1 ? "" : "s", threads(),
              threads() == 1 ? "" : "s");
  PetscPrintf(comm,
              "  mesh input: %s reader, %s partition; read %.3f s, partition %.3f s, distribute %.3f s; peak memory "
              "so far %.1f MB on the largest rank, %.1f MB mean\n",
              to_string(loaded.reader), to_string(loaded.partitioner), clock.read, clock.partition, clock.distribute,
              input_peak_max, input_peak_sum / size);
  if (!loaded.partition_notice.empty()) PetscPrintf(comm, "  %s\n", loaded.partition_notice.c_str());
  if (!memory.report.empty() && (!args.quiet || !memory.fits)) PetscPrintf(comm, "%s\n", memory.report.c_str());
  summary.oversubscribed = warn_if_oversubscribed(comm);

  if (job.discretization.type == DiscretizationType::frames) return run_frames(args, job, mesh, model, clock, summary);
  if (job.analysis_type == AnalysisType::dynamics) {
    clock.setup = clock.lap();  // the model; run_dynamic adds the solver's set-up, the restart and the output files
    return run_dynamic(args, job, mesh, std::move(model), clock, summary);
  }
  StaticSolver solver(comm, job, mesh, std::move(model), args.petsc_options, args.quiet, args.verbose);
  ResultWriter writer(comm, job.output_directory, mesh, solver.model());
  ReactionLog reactions(comm, job.output_directory, solver.model());
  clock.setup = clock.lap();
  summary.phases_s.setup = clock.setup;
  const PetscLogStage stage_output = log_stage("Output");
  double output_seconds = 0;
  int steps_done = 0;
  double load_factor_done = 0.0;
  const AtScopeExit record{[&] {  // summary.json: also what a failed run did
    record_solve(summary, solver.stats(), solver.preconditioner_name(), output_seconds);
    summary.analysis = {{"load_steps", std::to_string(job.steps)},
                        {"steps", std::to_string(steps_done)},
                        {"load_factor", json_number(load_factor_done)}};
  }};
  int stop_signal = 0;  // SIGTERM/SIGUSR1 on some rank: stop after the load step (outputs written, no checkpoint)
  int last_written = -1;
  const auto should_stop = [&] { return (stop_signal = agree_on_stop(comm)) != 0; };
  const auto reports = solver.run(
      [&](int step, double load_factor) {
        steps_done = step, load_factor_done = load_factor;
        const auto t0 = std::chrono::steady_clock::now();
        PetscLogStagePush(stage_output);
        const std::vector<double> f = solver.local_internal_force();
        reactions.record(step, load_factor, f);
        if (step % job.output_every == 0 || step == job.steps || step == 0) {
          const std::vector<double> x = solver.local_positions();
          writer.write(step, load_factor, x, f);
          last_written = step;
        }
        PetscLogStagePop();
        output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      },
      should_stop);
  {
    const auto t0 = std::chrono::steady_clock::now();
    if (stop_signal != 0 && !reports.empty() && last_written != reports.back().step) {
      // The state the run stopped in is its result: written even between `output.every` steps.
      const std::vector<double> f = solver.local_internal_force();
      writer.write(reports.back().step, reports.back().load_factor, solver.local_positions(), f);
    }
    writer.finish();
    output_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  int newton = 0, ksp = 0;
  double solve_seconds = 0;
  for (const auto& r : reports) newton += r.newton_iterations, ksp += r.ksp_iterations, solve_seconds += r.seconds;
  const double total = clock.total();
  PetscPrintf(comm,
              "summary: %zu load steps, %d Newton iterations, %d KSP iterations\n"
              "  time: total %.3f s = read %.3f + partition %.3f + distribute %.3f + set-up %.3f + load steps %.3f + "
              "output %.3f s\n",
              reports.size(), newton, ksp, total, clock.read, clock.partition, clock.distribute, clock.setup,
              solve_seconds, output_seconds);
  print_solver_summary(comm, solver.stats(), solver.preconditioner_name());
  summary.largest_displacement = print_state_summary(comm, mesh, solver.local_positions());
  summary.output = writer.pvd_path();
  print_reactions(comm, job, reactions);
  PetscPrintf(comm, "  output: %s\n", writer.pvd_path().c_str());
  if (stop_signal == 0) return 0;
  summary.stopped = true;
  // No restart for load stepping: its state is the positions alone, but a continued run would also have to
  // rebuild the predictor's history and splice the .pvd; a static run is short next to a wall time.
  PetscPrintf(comm,
              "edgefem: stopped by %s after load step %zu of %d (load factor %.9g), results up to it written; a "
              "static run has no checkpoints and cannot be continued: run the job again from the start (exit "
              "status %d)\n",
              stop_signal_name(stop_signal), reports.size(), job.steps,
              reports.empty() ? 0.0 : reports.back().load_factor, kExitStoppedNotRestartable);
  return kExitStoppedNotRestartable;
}

/// The run's summary.json (README "Run summary"): filled by command_run, written by main once the output
/// directory is known (`directory` not empty), whether the run succeeds or fails.
struct SummaryRecord {
  RunSummary summary;
  std::string directory;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  void finish(int exit_code, std::optional<std::string> error) {
    summary.exit_code = exit_code;
    summary.error = std::move(error);
    summary.phases_s.total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

/// Collective: writes summary.json with every rank's peak memory. Returns the exit code: `code`, or 1 when the
/// summary could not be written (the message printed).
int write_run_summary(MPI_Comm comm, SummaryRecord& record, int code, std::optional<std::string> error) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  record.finish(code, std::move(error));
  try {
    write_summary_collectively(comm, record.directory, record.summary, peak_memory_mb());
  } catch (const Error& e) {
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());
    return code != 0 ? code : 1;
  }
  return code;
}

/// An error possibly thrown on this rank only: report it and abort every rank so that none waits in a collective.
/// On rank 0 summary.json records it first (without the other ranks' memory: no collective call is safe here).
[[noreturn]] void abort_run(int rank, const char* what, SummaryRecord& record) {
  std::fprintf(stderr, "edgefem: rank %d: fatal error: %s\n", rank, what);
  std::fflush(stderr);
  if (rank == 0 && !record.directory.empty()) {
    record.summary.peak_mb_per_rank.clear();
    record.finish(2, std::string(what));
    try {
      write_summary(record.directory, record.summary);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "edgefem: rank 0: %s\n", e.what());
    }
  }
  MPI_Abort(PETSC_COMM_WORLD, 2);
  std::abort();  // (MPI_Abort does not return)
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("edgefem %s: distributed edge/TSEP StVK solver\n%s", version, usage);
      return 0;
    }
    if (arg == "--version") {
      std::printf("edgefem %s\n", version);
      return 0;
    }
  }
  SummaryRecord record;
  record.summary.version = version;
  record.summary.started = iso8601_utc_now();
  for (int i = 0; i < argc; ++i) {
    if (i > 0) record.summary.command += ' ';
    record.summary.command += argv[i];
  }
  use_huge_pages();
  prefer_ob1_on_one_node();
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 2;
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &record.summary.ranks);
  record.start = std::chrono::steady_clock::now();  // (the total counts from here: MPI's start-up is not the run's)
  record.summary.threads_per_rank = threads();
  int code = 0;
  std::optional<std::string> error;
  try {
    const Arguments args = parse_arguments(argc, argv);
    if (args.command == "run")
      code = command_run(args, record.summary, record.directory);
    else if (args.command == "bench")
      code = command_bench(args);
    else
      code = command_info(args);
  } catch (const Error& e) {
    if (e.scope() != ErrorScope::every_rank) abort_run(rank, e.what(), record);
    if (rank == 0) std::fprintf(stderr, "edgefem: error: %s\n", e.what());  // the same message on every rank
    code = 1;
    error = e.what();
  } catch (const std::exception& e) {  // not one of ours: possibly on one rank only
    abort_run(rank, e.what(), record);
  }
  // Every rank gets here (an every-rank error or none), so the summary may gather.
  if (!record.directory.empty()) code = write_run_summary(PETSC_COMM_WORLD, record, code, std::move(error));
  PetscFinalize();
  return code;
}
