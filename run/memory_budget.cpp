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

/// One rank's cells and vertices, and the whole mesh's vertices: what the estimates take.
struct PlanCounts {
  long long tets = 0, triangles = 0, local_vertices = 0, global_vertices = 0;
};

int frame_count(const Job& job) {
  return job.discretization.frame_count > 0 ? job.discretization.frame_count
                                            : static_cast<int>(job.discretization.positions.size());
}

bool option_in(const std::string& options, const char* name) { return options.find(name) != std::string::npos; }

/// Bytes as "12.3 GB", or "456 MB" below a gigabyte.
std::string gb(double bytes) {
  char text[32];
  if (bytes < kGB)
    std::snprintf(text, sizeof text, "%.0f MB", bytes / kMB);
  else if (bytes >= 1024.0 * kGB)
    std::snprintf(text, sizeof text, "%.1f TB", bytes / (1024.0 * kGB));
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
      // Issue 56 (the memory account, run/memory_account.hpp, on the 136,565-tet cantilever): the stvk K(E) TSEP
      // terms' coefficients in single precision took the kernel data from 813 to 690 bytes per tet (the matrix's
      // terms; position-based and frame jobs build none).
      e.model -= 120.0 * t;
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
      // interpolation (solver.linear.corotational) keeps the finest interpolation's values as GAMG made them (in
      // double precision then: the cantilever's peak +11.6 MB on the larger of 2 ranks, 170 bytes per tet); unsmoothed
      // about 15, estimated from its entry count.
      // Issue 56: the rest values in single precision since (the account: 99 -> 50 bytes per tet on 1 rank).
      e.coarse_copies = 340.0 * (t + s);
      e.coarse_copies_unsmoothed = 80.0 * (t + s);
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

namespace {

/// What a frames job holds whole on every rank besides the per-tet and per-vertex data of estimate_rank_bytes: the
/// dense frame system (frames/frames_solver.cpp: the Hessian, its reduction buffer, the free block and its LDLT, the
/// dynamics' mass and step matrices: ~6 (d n)^2 doubles, d = 6 rigid or 12 affine unknowns a frame) and, with a
/// `sample_grid`, the voxel sums (per grid cell 6 + 4 n values, rigid, or 6 + 12 n, affine). Issue 55: a frame count
/// or a sample grid far beyond the machine is refused by the plan, not met by std::bad_alloc.
double frames_dense_bytes(const DiscretizationSpec& d, int frames) {
  const double n = std::max(1, frames);
  const double dofs = (d.frame_type == FrameType::affine ? 12.0 : 6.0) * n;
  double bytes = 6.0 * 8.0 * dofs * dofs;
  if (d.sample_grid) {
    const auto& g = *d.sample_grid;
    bytes += 8.0 * static_cast<double>(g[0]) * g[1] * g[2] * (6.0 + (d.frame_type == FrameType::affine ? 12 : 4) * n);
  }
  return bytes;
}

}  // namespace

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
SolverSpec::Preconditioner automatic_preconditioner(const Job& job, const PlanCounts& mesh, int ranks,
                                                    const RankEstimate& e, const std::string& options,
                                                    const std::string& user_pc, PreconditionerEstimate& out) {
  using P = SolverSpec::Preconditioner;
  const long long tets = mesh.tets;
  const long long triangles = mesh.triangles;
  LinearSystemKind system;  // as linear_system_kind() will describe it
  system.global_dofs = 3 * mesh.global_vertices;
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
    pc_other += 31.0 * 8.0 * 3.0 * static_cast<double>(mesh.local_vertices);
  out.name = out.amg                 ? (pc == P::hypre ? "hypre" : "gamg")
             : pc == P::block_jacobi ? "bjacobi"
             : pc == P::schwarz      ? "asm"
                                     : "direct";
  return pc;
}

/// Which preconditioner the estimate is for (Newton only) and its bytes: an AMG when the job or `-pc_type` names
/// one, or the automatic choice (automatic_preconditioner) is one. Point Jacobi, SOR and none hold a few vectors.
PreconditionerEstimate estimate_preconditioner(const Job& job, const PlanCounts& mesh, int ranks, const RankEstimate& e,
                                               SolveKind kind, const std::string& cli_petsc_options) {
  const long long tets = mesh.tets;
  const long long triangles = mesh.triangles;
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

/// A frames job whose dense parts (frames_dense_bytes, held whole on every rank) alone do not fit on some node:
/// `problem` names the keys instead (more nodes would not help; fewer frames or a coarser sample grid do).
/// Collective.
void frames_problem(MPI_Comm comm, const Job& job, int frames, int ranks_on_node, double usable,
                    std::string& problem) {
  const double dense = frames_dense_bytes(job.discretization, frames);
  int over = usable > 0 && dense * ranks_on_node > usable ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm);
  if (!over) return;
  const DiscretizationSpec& d = job.discretization;
  std::ostringstream s;
  s << "memory: " << job.job_file << ":" << d.line << ": discretization: " << frames << " "
    << to_string(d.frame_type) << " frames";
  if (d.sample_grid)
    s << " with sample_grid [" << (*d.sample_grid)[0] << ", " << (*d.sample_grid)[1] << ", " << (*d.sample_grid)[2]
      << "]";
  s << " need about " << gb(dense) << " on every rank (the dense frame system" << (d.sample_grid ? " and the voxel sums" : "")
    << ", held whole by each rank), more than a node's " << gb(usable / std::max(1, ranks_on_node))
    << " per rank can hold: use fewer frames" << (d.sample_grid ? " or a coarser sample_grid" : "")
    << " (more nodes do not help). docs/theory/design.md, \"Memory\"; --ignore-memory-estimate runs anyway";
  problem = s.str();
}

}  // namespace

MemoryPlan plan_memory(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const std::string& cli_petsc_options) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const long long tets = mesh.mesh.n_tets();
  const long long triangles = tets > 0 ? 0 : mesh.mesh.n_triangles();
  const SolveKind kind = solve_kind(job);
  const int frames = frame_count(job);
  RankEstimate e = estimate_rank_bytes(tets, triangles, mesh.n_local(), ranks, kind, frames);
  if (kind == SolveKind::frames) e.own += frames_dense_bytes(job.discretization, frames);
  const PlanCounts counts{tets, triangles, mesh.n_local(), static_cast<long long>(mesh.n_global_vertices)};
  const PreconditionerEstimate pc = estimate_preconditioner(job, counts, ranks, e, kind, cli_petsc_options);

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
    if (kind == SolveKind::frames) frames_problem(comm, job, frames, node.size, usable, plan.problem);
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

double whole_mesh_bytes(const AnnouncedMesh& mesh, InputHolding holding) {
  const double t = static_cast<double>(mesh.tets), s = static_cast<double>(mesh.triangles),
               v = static_cast<double>(mesh.vertices);
  switch (holding) {
    case InputHolding::slices: return 0;
    case InputHolding::whole_on_rank0: return 360.0 * t + 250.0 * s + 40.0 * v;
    case InputHolding::whole_for_info: return 250.0 * t + 200.0 * s + 40.0 * v;
  }
  return 0;
}

long long nodes_that_fit(int ranks_per_node, double usable, const std::function<double(long long)>& need_at) {
  const auto fits = [&](long long nodes) { return ranks_per_node * need_at(nodes * ranks_per_node) <= usable; };
  constexpr long long most = 1LL << 24;
  long long hi = 1;
  while (!fits(hi)) {
    if (hi >= most) return 0;
    hi *= 2;
  }
  long long lo = hi / 2;  // does not fit (or 0)
  while (hi - lo > 1) {
    const long long mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

namespace {

/// A rank's bytes when `ranks` ranks share the announced mesh evenly, with the leanest preconditioner the plan may
/// choose; its name in `pc_name`.
double even_share_bytes(const Job& job, const AnnouncedMesh& m, long long ranks, const std::string& cli,
                        std::string* pc_name) {
  const auto share = [&](long long n) { return n / ranks + (n % ranks != 0 ? 1 : 0); };
  const int r = static_cast<int>(std::min<long long>(ranks, 1 << 30));
  const SolveKind kind = solve_kind(job);
  const RankEstimate e =
      estimate_rank_bytes(share(m.tets), share(m.triangles), share(m.vertices), r, kind, frame_count(job));
  const PlanCounts counts{share(m.tets), share(m.triangles), share(m.vertices), m.vertices};
  const PreconditionerEstimate pc = estimate_preconditioner(job, counts, r, e, kind, cli);
  if (pc_name != nullptr)
    *pc_name = pc.name + (pc.amg && (pc.can_choose || pc.lean_only) ? " with unsmoothed aggregation" : "");
  return e.base() + (pc.can_choose ? pc.lean : pc.rich);
}

std::string cell_counts(const AnnouncedMesh& m) {
  std::string text = m.tets > 0 ? std::to_string(m.tets) + " tetrahedra" : std::to_string(m.triangles) + " triangles";
  return text + ", " + std::to_string(m.vertices) + " vertices";
}

/// What an early plan that does not fit says (see plan_memory_before_input).
struct EarlyShortfall {
  double per_rank = 0, in_all = 0, whole = 0;
  int ranks = 1;
  long long nodes = 0;  ///< nodes like the worst one it would fit on (0: none)
  std::string pc;
};

std::string early_problem_text(const AnnouncedMesh& m, InputHolding holding, const EarlyShortfall& f,
                               const WorstNode& worst) {
  const int per_node = static_cast<int>(worst.ranks);
  std::string text = "memory: " + m.source +
                     (m.verb == "generated" ? " (" + cell_counts(m) + ") is"
                                            : ": its headers announce " + cell_counts(m) + ":") +
                     " too large for this machine, by the estimate made before the mesh is " + m.verb + ": ";
  const std::string node = "node " + worst.host + " has " + gb(worst.available) + " available";
  if (holding == InputHolding::whole_for_info)
    return text + "edgefem info holds the whole mesh with its topology on one process, an estimated " + gb(f.whole) +
           ", and " + node + " (`edgefem run` distributes the mesh over its ranks instead" +
           (f.nodes > 0 ? ": by the same estimate it needs " + gb(f.in_all) + " in all and would fit on " +
                              std::to_string(f.nodes) + " ranks at 1 per node)"
                        : ")");
  text += "it needs " + gb(f.per_rank) + " per rank and " + gb(f.in_all) + " in all on " + std::to_string(f.ranks) +
          " rank" + (f.ranks == 1 ? "" : "s") + " (solver: " + f.pc + ")";
  if (f.whole > 0) text += ", rank 0 holding the whole mesh while it is distributed (" + gb(f.whole) + ")";
  text += ", and " + node + " for its " + std::to_string(per_node) + " rank" + (per_node == 1 ? "" : "s") +
          " (a run plans on 90 % of it): ";
  if (f.nodes > 0)
    text += "it would fit on " + std::to_string(f.nodes * per_node) + " ranks at " + std::to_string(per_node) +
            " per node (" + std::to_string(f.nodes) + " nodes like this one)";
  else
    text += "no number of such nodes holds it";
  if (f.whole > 0 && f.whole > kUsableFraction * worst.available)
    text += "; rank 0 alone must hold the whole mesh (`edgefem run` reads MSH 4.1 binary files and generated meshes in "
            "parallel, by slices; `edgefem bench` always on rank 0)";
  return text + ". docs/theory/design.md, \"Memory\", says how the estimate is made; --ignore-memory-estimate runs anyway";
}

}  // namespace

MemoryPlan plan_memory_before_input(MPI_Comm comm, const Job* job, const AnnouncedMesh& mesh, InputHolding holding,
                                    const std::string& cli_petsc_options) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const bool solves = job != nullptr && holding != InputHolding::whole_for_info;
  EarlyShortfall f;
  f.ranks = ranks;
  f.pc = "none";
  const double share = solves ? even_share_bytes(*job, mesh, ranks, cli_petsc_options, &f.pc) : 0.0;
  f.whole = whole_mesh_bytes(mesh, holding);
  const double mine[3] = {share, rank == 0 ? f.whole : 0.0, 0.0};
  const NodeTotals node = node_totals(comm, mine);
  // The input (rank 0's whole mesh) and the solve come one after the other.
  const double need = std::max(node.sums[0], node.sums[1]);
  const double usable = kUsableFraction * node.available;
  const int fits = node.available <= 0 || need <= usable ? 1 : 0;
  int every = 0;
  MPI_Allreduce(&fits, &every, 1, MPI_INT, MPI_MIN, comm);
  MemoryPlan plan;
  plan.kind = job != nullptr ? solve_kind(*job) : SolveKind::newton;
  plan.preconditioner = f.pc;
  const double peak = resident_bytes() + std::max(mine[0], mine[1]);  // (as plan_memory reports it)
  MPI_Allreduce(&peak, &plan.estimated_peak_mb_max_rank, 1, MPI_DOUBLE, MPI_MAX, comm);
  plan.estimated_peak_mb_max_rank /= kMB;
  if (every == 1) return plan;
  plan.fits = false;
  const WorstNode worst = worst_node(comm, need, usable, node);
  MPI_Allreduce(&share, &f.in_all, 1, MPI_DOUBLE, MPI_SUM, comm);
  f.per_rank = share;
  const auto need_at = [&](long long r) { return even_share_bytes(*job, mesh, r, cli_petsc_options, nullptr); };
  if (solves && f.whole <= kUsableFraction * worst.available)
    f.nodes = nodes_that_fit(static_cast<int>(worst.ranks), kUsableFraction * worst.available, need_at);
  if (job != nullptr && !solves) {  // info of a job: what a run would take, one rank a node like this one
    f.nodes = nodes_that_fit(1, kUsableFraction * worst.available, need_at);
    f.in_all = f.nodes > 0 ? static_cast<double>(f.nodes) * need_at(f.nodes) : 0.0;
  }
  plan.problem = early_problem_text(mesh, holding, f, worst);
  plan.report = "  warning: " + plan.problem.substr(8);
  return plan;
}

}  // namespace edgefem
