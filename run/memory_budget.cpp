// SPDX-License-Identifier: BSD-3-Clause
#include "run/memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "partition/collective.hpp"
#include "solver/newton.hpp"

namespace edgefem {
namespace {

constexpr double kMB = 1024.0 * 1024.0;
constexpr double kGB = 1024.0 * kMB;
/// The share of a node's available memory a run may plan to fill (the rest: the OS, MPI buffers, the estimate's
/// error).
constexpr double kUsableFraction = 0.9;

double read_number_file(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return 0;
  try {
    return std::stod(word);
  } catch (const std::exception&) {
    return 0;
  }
}

/// What this process's memory cgroup still allows (limit - usage), or 0 when there is no limit or it cannot be
/// read. cgroup v2: the "0::PATH" line of /proc/self/cgroup; v1: the "N:memory:PATH" line.
double cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  double best = 0;
  while (std::getline(in, line)) {
    const std::size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    double limit = 0, usage = 0;
    if (controllers.empty()) {  // v2
      limit = read_number_file("/sys/fs/cgroup" + path + "/memory.max");
      usage = read_number_file("/sys/fs/cgroup" + path + "/memory.current");
    } else if (controllers == "memory") {  // v1
      for (const std::string& root : {"/sys/fs/cgroup/memory" + path, std::string("/sys/fs/cgroup/memory")}) {
        limit = read_number_file(root + "/memory.limit_in_bytes");
        usage = read_number_file(root + "/memory.usage_in_bytes");
        if (limit > 0) break;
      }
    }
    // v1 reports "no limit" as a huge number (2^63 rounded to pages).
    if (limit <= 0 || limit > 1e18) continue;
    const double headroom = std::max(0.0, limit - usage);
    best = best == 0 ? headroom : std::min(best, headroom);
  }
  return best;
}

bool option_in(const std::string& options, const char* name) { return options.find(name) != std::string::npos; }

/// Bytes as "12.3 GB", or "456 MB" below a gigabyte.
std::string gb(double bytes) {
  char text[32];
  if (bytes < kGB)
    std::snprintf(text, sizeof text, "%.0f MB", bytes / kMB);
  else
    std::snprintf(text, sizeof text, "%.1f GB", bytes / kGB);
  return text;
}

}  // namespace

double available_node_bytes() {
  // An explicit figure (MB) overrides what the node reports: for tests of the plan, and for machines whose
  // /proc and cgroup do not show a scheduler's limit.
  if (const char* forced = std::getenv("EDGEFEM_NODE_MEMORY_MB")) {
    try {
      return std::stod(forced) * kMB;
    } catch (const std::exception&) {
      throw InputError(std::string("EDGEFEM_NODE_MEMORY_MB: expected a number of megabytes, got '") + forced + "'");
    }
  }
  std::ifstream in("/proc/meminfo");
  std::string key;
  double value = 0, available = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") available = value * 1024.0;
  }
  const double cgroup = cgroup_headroom();
  if (cgroup > 0) available = available > 0 ? std::min(available, cgroup) : cgroup;
  return available;
}

double resident_bytes() {
  std::ifstream in("/proc/self/statm");
  double size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}

RankEstimate estimate_rank_bytes(long long tets, long long triangles, long long vertices, int ranks, SolveKind kind,
                                 int frames) {
  // Bytes per local cell, measured with /proc/self/statm samples and valgrind massif on generated StVK boxes
  // (docs/theory/design.md, "Memory"): 2600 per tet from the distribution to the first solve, of which massif saw the
  // edge/TSEP kernel data ~0.9 KB, the COO hand-over ~0.58 KB, the matrix ~0.29 KB and vectors ~0.16 KB; since
  // the hand-over writes into the matrix itself (AijInsertion: no PETSc COO maps) 350 less (the rest:
  // the model's other arrays, maps, PETSc's bookkeeping, counted with the model). Smoothed-aggregation GAMG: ~1 KB
  // per tet on one rank, ~3.4 KB on two (PETSc's parallel Galerkin product's intermediates); with our own Galerkin
  // products (GAMG under our multigrid products, linalg/galerkin.hpp) ~1.2 KB on any number of ranks (the 1.2M-tet
  // box on 2 ranks: 4.17 KB per tet at the peak, 2,404 MiB per rank, of which the rest of this plan counts 3.0 KB).
  // Triangles: a membrane cell
  // has about as many matrix entries as a tet (more vertices and edges per cell) but a smaller kernel.
  RankEstimate e;
  const double t = static_cast<double>(tets), s = static_cast<double>(triangles), v = static_cast<double>(vertices);
  e.model = 1550.0 * t + 800.0 * s;
  e.vectors = 180.0 * t + 150.0 * s;
  e.output = 400.0 * t + 300.0 * s;
  switch (kind) {
    case SolveKind::newton:
      e.system = 520.0 * t + 500.0 * s;
      e.smoothed = (ranks > 1 ? 3400.0 : 1200.0) * (t + s);
      e.smoothed_own_products = 1200.0 * (t + s);
      e.unsmoothed = 400.0 * (t + s);
      // The BAIJ copy the incomplete factorizations use: the matrix's values and a block index per 9 (AIJ: an
      // index per value). Multigrid's own product keeps the upper triangle instead (linalg/symmetric_blocks.hpp:
      // each off-diagonal block once, with its column and its transpose's position; 119 bytes per tet on the
      // 136,565-tet cantilever, whose Gmsh mesh has 1.27 edges per tet), the ghost columns' blocks whole.
      e.block_copy = 221.0 * t + 200.0 * s;
      e.symmetric_copy = 125.0 * t + 115.0 * s;
      // Under GAMG our own products copy the interpolations' and the coarse operators' values by blocks (the
      // 136,565-tet cantilever's peak in double precision: +18 MB on 1 rank, +14 MB on the larger of 2 ranks: 130
      // and 206 per tet; in single precision since, half). Unsmoothed aggregation's levels hold far fewer entries
      // (an interpolation row is one aggregate's 6 entries: about 15 bytes per tet; its coarse operators about a
      // fifth of the matrix's entries: about 20). The rebuilds' Galerkin products (linalg/galerkin.hpp) keep P again
      // in single precision and the product's positions, and an update holds a share of C per thread: the
      // cantilever's peak +12 MB on 1 rank x 2 threads, +8 MB on the larger of 2 ranks (88 and 117 bytes per tet);
      // for unsmoothed aggregation (one block per row of P) a quarter of that, estimated. The corotational
      // interpolation (solver.linear.corotational) keeps the finest interpolation's values as GAMG made them, in
      // double precision: the cantilever's peak +11.6 MB on the larger of 2 ranks (170 bytes per tet); unsmoothed
      // about 15, estimated from its entry count.
      e.coarse_copies = 390.0 * (t + s);
      e.coarse_copies_unsmoothed = 85.0 * (t + s);
      break;
    case SolveKind::position_based:
      // Per constraint (a cell): 4 vertex ids, the rest shape (9 + 1 doubles), material, XPBD multiplier and the
      // consistent XPBD contribution (12 doubles), sorted by colour: ~220 bytes (pbd/pbd_sweep.hpp).
      e.own = 220.0 * (t + s);
      break;
    case SolveKind::frames: {
      // One sample per tet (centroid, volume, Lame constants ~50 bytes, an influence of ~40 bytes per frame: the
      // harmonic weights are nowhere zero); per vertex a weight per frame and the scalar Laplace system of the
      // harmonic weights with its GAMG (a ninth of the 3-dof system's bytes: ~400 per vertex). Not measured since
      // issue 47: affine frames keep a 4x3 B per influence (~100 bytes more), but a frames job builds no tet
      // formulation (the ~900 bytes per tet of the edge/TSEP kernel data counted in `model` above), and the voxel
      // grid of the placement and the diffused weights is at most 40,000 cells (frames/voxel_grid.hpp).
      const double n = std::max(1, frames);
      e.own = (50.0 + 40.0 * n) * t + (8.0 * n + 400.0) * v;
      break;
    }
  }
  return e;
}

SolveKind solve_kind(const Job& job) {
  if (job.discretization.type == DiscretizationType::frames) return SolveKind::frames;
  if (job.analysis_type == AnalysisType::dynamics && job.dynamic &&
      job.dynamic->integrator == Integrator::position_based)
    return SolveKind::position_based;
  return SolveKind::newton;
}

namespace {

/// The value of the last `-pc_type` in `options`, or "" when none.
std::string pc_type_option(const std::string& options) {
  std::istringstream in(options);
  std::string word, value;
  while (in >> word)
    if (word == "-pc_type" && !(in >> value)) value.clear();
  return value;
}

/// The preconditioner an estimate is for and its bytes on this rank, with the richest plan (smoothed aggregation
/// for an AMG) and the leanest (unsmoothed aggregation).
struct PreconditionerEstimate {
  std::string name;
  bool amg = false;
  bool can_choose = false;  ///< the plan may switch GAMG to unsmoothed aggregation
  bool lean_only = false;   ///< the job asks for unsmoothed aggregation
  double other = 0;         ///< the bytes of a preconditioner that is not an AMG
  double rich = 0, lean = 0;
};

/// The preconditioner newton.hpp's chosen_preconditioner picks (not a direct factorization of a small system, not
/// additive Schwarz for dynamic membranes), returned, with its name, whether it is an AMG, and the bytes of a
/// non-AMG one in `out` (block Jacobi's and additive Schwarz's incomplete factorizations copy the local matrix, ~300
/// bytes per cell; a direct factorization, small systems only, on every rank for time steps on several, is counted
/// as unsmoothed aggregation).
SolverSpec::Preconditioner automatic_preconditioner(const Job& job, const LocalMesh& mesh, int ranks,
                                                    const RankEstimate& e, const std::string& options,
                                                    const std::string& user_pc, PreconditionerEstimate& out) {
  using P = SolverSpec::Preconditioner;
  const long long tets = mesh.mesh.n_tets();
  const long long triangles = tets > 0 ? 0 : mesh.mesh.n_triangles();
  LinearSystemKind system;  // as linear_system_kind() will describe it
  system.global_dofs = 3 * static_cast<long long>(mesh.n_global_vertices);
  system.dynamic = job.analysis_type == AnalysisType::dynamics;
  system.local_preconditioner = system.dynamic && tets == 0;
  system.newton_solves = !(system.dynamic && job.dynamic && job.dynamic->integrator == Integrator::linearized_euler);
  system.ranks = ranks;
  const P pc = chosen_preconditioner(job.solver, system);
  out.amg = pc == P::gamg || pc == P::hypre;
  const bool local = pc == P::block_jacobi || pc == P::schwarz;
  double& pc_other = out.other;
  pc_other = local ? 300.0 * static_cast<double>(tets + triangles) : e.unsmoothed;
  // Membranes' incomplete factorizations and a small time step's factorization work on a BAIJ copy of the matrix
  // (solver/linear_solver.cpp, factors_block_copy).
  if (job.solver.block_operator && user_pc.empty()) {
    if (local && system.local_preconditioner && !option_in(options, "-sub_pc_type")) pc_other += e.block_copy;
    if (pc == P::direct && system.dynamic && job.solver.preconditioner == P::automatic &&
        !option_in(options, "-redundant_pc_type"))
      pc_other += e.block_copy;
  }
  // Membranes' additive Schwarz on several ranks runs under GMRES(30) (solver/linear_solver.cpp): 31 more vectors of the local dofs.
  if (pc == P::schwarz && ranks > 1 && system.local_preconditioner && system.newton_solves &&
      !option_in(options, "-ksp_type"))
    pc_other += 31.0 * 8.0 * 3.0 * static_cast<double>(mesh.n_local());
  out.name = out.amg                 ? (pc == P::hypre ? "hypre" : "gamg")
             : pc == P::block_jacobi ? "bjacobi"
             : pc == P::schwarz      ? "asm"
                                     : "direct";
  return pc;
}

/// Which preconditioner the estimate is for (Newton only) and its bytes: an AMG when the job or `-pc_type` names
/// one, or the automatic choice (automatic_preconditioner) is one. Point Jacobi, SOR and none hold a few vectors.
PreconditionerEstimate estimate_preconditioner(const Job& job, const LocalMesh& mesh, int ranks, const RankEstimate& e,
                                               SolveKind kind, const std::string& cli_petsc_options) {
  const long long tets = mesh.mesh.n_tets();
  const long long triangles = tets > 0 ? 0 : mesh.mesh.n_triangles();
  const std::string options = job.petsc_options + " " + cli_petsc_options;
  const std::string user_pc = pc_type_option(options);
  PreconditionerEstimate pc;
  const SolverSpec::Preconditioner chosen = automatic_preconditioner(job, mesh, ranks, e, options, user_pc, pc);
  double& pc_other = pc.other;
  if (!user_pc.empty()) {
    pc.name = user_pc;
    pc.amg = user_pc == "edgefem_gamg" || user_pc == "gamg" || user_pc == "hypre" || user_pc == "ml";
    if (user_pc == "bjacobi" || user_pc == "asm" || user_pc == "ilu" || user_pc == "icc")
      pc_other = 300.0 * static_cast<double>(tets + triangles);
    else if (user_pc == "lu" || user_pc == "cholesky")
      pc_other = e.unsmoothed;
    else
      pc_other = 0;  // jacobi, sor, none, shell, ...
  }
  if (kind != SolveKind::newton) {  // no matrix, no preconditioner
    pc.amg = false;
    pc_other = 0;
    pc.name = "none";
  }
  pc.can_choose = pc.amg && user_pc.empty() && chosen != SolverSpec::Preconditioner::hypre &&
                  job.solver.aggregation == SolverSpec::Aggregation::automatic &&
                  !option_in(options, "-pc_gamg_agg_nsmooths");
  pc.lean_only = job.solver.aggregation == SolverSpec::Aggregation::unsmoothed;
  // Multigrid (not hypre, which keeps its own matrix) multiplies with a BAIJ copy of the matrix.
  const bool multigrid = pc.amg && pc.name != "hypre" && job.solver.block_operator;
  const double copy = multigrid ? e.symmetric_copy : 0.0;
  // Our GAMG (edgefem_gamg: the defaults' "gamg") computes its Galerkin products with ours (linalg/edgefem_gamg.hpp);
  // a user's plain -pc_type gamg is PETSc's.
  const bool own_gamg = user_pc.empty() ? pc.name == "gamg" : user_pc == "edgefem_gamg";
  const double smoothed = multigrid && own_gamg ? e.smoothed_own_products + e.coarse_copies
                                                : e.smoothed + (multigrid ? e.coarse_copies : 0.0);
  const double unsmoothed = e.unsmoothed + (multigrid ? e.coarse_copies_unsmoothed : 0.0);
  pc.rich = pc.amg ? (pc.lean_only ? unsmoothed : smoothed) + copy : pc_other;
  pc.lean = pc.amg ? unsmoothed + copy : pc_other;
  return pc;
}

/// The sums over the ranks of a node (MPI_COMM_TYPE_SHARED) of `mine`, the node's available bytes and its rank count.
struct NodeTotals {
  double sums[3] = {0, 0, 0};
  double available = 0;
  int size = 1;
};

NodeTotals node_totals(MPI_Comm comm, const double (&mine)[3]) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  NodeTotals t;
  MPI_Allreduce(mine, t.sums, 3, MPI_DOUBLE, MPI_SUM, node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &t.size);
  run_collectively(comm, [&] { t.available = node_rank == 0 ? available_node_bytes() : 0; });  // (a bad variable)
  MPI_Bcast(&t.available, 1, MPI_DOUBLE, 0, node);
  MPI_Comm_free(&node);
  return t;
}

/// The node with the largest shortfall, for the message (every rank): its need, availability, rank count and name.
struct WorstNode {
  double need = 0, available = 0, ranks = 0;
  std::string host;
};

WorstNode worst_node(MPI_Comm comm, double need, double usable, const NodeTotals& node) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    double shortfall;
    int rank;
  } worst_local{need - usable, rank}, worst{};
  MPI_Allreduce(&worst_local, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  double worst_need[3] = {need, node.available, static_cast<double>(node.size)};
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  MPI_Bcast(worst_need, 3, MPI_DOUBLE, worst.rank, comm);
  MPI_Bcast(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, worst.rank, comm);
  return {worst_need[0], worst_need[1], worst_need[2], host};
}

/// The message of a run that does not fit: the worst node's need and availability, and what to do.
std::string problem_text(long long n_cells, const PreconditionerEstimate& pc, const WorstNode& worst) {
  return std::string("memory: by the estimate from the mesh size (") + std::to_string(n_cells) +
         " cells), this run needs" + (pc.can_choose ? ", even with unsmoothed aggregation, " : " ") + gb(worst.need) +
         " more on node " + worst.host + " (" + std::to_string(static_cast<int>(worst.ranks)) + " rank" +
         (worst.ranks == 1 ? "" : "s") + "; beyond the memory in use now), which has " + gb(worst.available) +
         " available: run it on more nodes (ranks sharing a node share its memory)" +
         (pc.amg && !pc.can_choose && !pc.lean_only ? ", or with `solver: {linear: {aggregation: unsmoothed}}`" : "") +
         ". docs/theory/design.md, \"Memory\", says how the estimate is made; --ignore-memory-estimate runs anyway";
}

}  // namespace

MemoryPlan plan_memory(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const std::string& cli_petsc_options) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const long long tets = mesh.mesh.n_tets();
  const long long triangles = tets > 0 ? 0 : mesh.mesh.n_triangles();
  const SolveKind kind = solve_kind(job);
  const int frames = job.discretization.frame_count > 0 ? job.discretization.frame_count
                                                        : static_cast<int>(job.discretization.positions.size());
  const RankEstimate e = estimate_rank_bytes(tets, triangles, mesh.n_local(), ranks, kind, frames);
  const PreconditionerEstimate pc = estimate_preconditioner(job, mesh, ranks, e, kind, cli_petsc_options);

  // Sums per node: [0] the extra bytes with the rich preconditioner, [1] with the lean one, [2] the cells.
  const double resident = resident_bytes();
  const double mine[3] = {e.base() + pc.rich, e.base() + pc.lean, static_cast<double>(tets + triangles)};
  const NodeTotals node = node_totals(comm, mine);

  // Fits on every node? Unknown availability (no /proc): assume it fits.
  const double usable = kUsableFraction * node.available;
  const int fits_rich = node.available <= 0 || node.sums[0] <= usable ? 1 : 0;
  const int fits_lean = node.available <= 0 || node.sums[1] <= usable ? 1 : 0;
  int all[2] = {fits_rich, fits_lean}, every[2] = {0, 0};
  MPI_Allreduce(all, every, 2, MPI_INT, MPI_MIN, comm);
  const WorstNode worst = worst_node(comm, pc.can_choose ? node.sums[1] : node.sums[0], usable, node);

  MemoryPlan plan;
  plan.kind = kind;
  plan.preconditioner = pc.name;
  plan.unsmoothed_aggregation = pc.can_choose && every[0] == 0 && every[1] == 1;
  const bool lean = pc.can_choose && every[0] == 0;  // unsmoothed aggregation, or the leanest plan that failed
  const double peak = resident + (lean ? mine[1] : mine[0]);
  MPI_Allreduce(&peak, &plan.estimated_peak_mb_max_rank, 1, MPI_DOUBLE, MPI_MAX, comm);
  plan.estimated_peak_mb_max_rank /= kMB;

  plan.fits = plan.unsmoothed_aggregation || every[0] == 1;
  if (!plan.fits) {
    plan.problem = problem_text(mesh.n_global_cells, pc, worst);
    plan.report = "  warning: " + plan.problem.substr(8);
  } else if (plan.unsmoothed_aggregation) {
    plan.report = "  memory: smoothed-aggregation GAMG would need an estimated " + gb(node.sums[0]) +
                  " more on this node, which has " + gb(node.available) +
                  " available: using unsmoothed aggregation (-pc_gamg_agg_nsmooths 0: more CG iterations, a "
                  "fraction of the memory; estimated peak " +
                  gb(plan.estimated_peak_mb_max_rank * kMB) + " on the largest rank)";
  }
  return plan;
}

}  // namespace edgefem
