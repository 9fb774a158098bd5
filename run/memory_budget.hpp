// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file memory_budget.hpp
/// Before the model is built: will the run fit in memory? An estimate of every rank's peak from its cell count,
/// summed over the ranks of each node and compared with what the node has available, so that a run too large for
/// its machine stops with a message instead of being killed by the kernel's out-of-memory killer mid-solve.
///
/// The estimate is linear in the rank's cells, with bytes per cell measured on this code (docs/theory/design.md,
/// "Memory"): the model and the assembled system (kernel data, matrix, its COO hand-over), the preconditioner
/// (smoothed-aggregation GAMG builds Galerkin products that are far denser than the fine matrix; unsmoothed
/// aggregation a fraction of that) and the output. When smoothed aggregation would not fit but unsmoothed does,
/// the plan says to use unsmoothed aggregation (`solver.linear.aggregation: auto`, the default).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

#include "io/job.hpp"
#include "partition/partition.hpp"

namespace edgefem {

/// The node's memory a run may still use, in bytes: MemAvailable of /proc/meminfo, or less when this process's
/// memory cgroup (v1 or v2: a Slurm or container limit) leaves less. 0 when neither can be read. The environment
/// variable EDGEFEM_NODE_MEMORY_MB, when set, replaces both (tests; nodes whose limits /proc does not show).
double available_node_bytes();

/// This process's resident set now, in bytes (/proc/self/statm); 0 when unreadable.
double resident_bytes();

/// What a job allocates besides the model, by how it solves (plan_memory picks it from the job).
enum class SolveKind : std::uint8_t {
  newton,          ///< statics and implicit dynamics: the assembled matrix, its COO hand-over, a preconditioner
  position_based,  ///< analysis.integrator position-based: constraints sorted by colour, no matrix, no preconditioner
  frames           ///< discretization.type frames: per-sample data and frame weights, no matrix on the mesh
};

/// Estimated peak bytes of one rank beyond what it holds now, for `tets` and `triangles` local cells and
/// `vertices` local vertices. Parts a job does not allocate are 0 (`kind`; `frames`: the frame count).
struct RankEstimate {
  double model = 0;       ///< the model: kernel data (edges, TSEPs, cells), masses, loads, maps
  double system = 0;      ///< the assembled matrix and its COO hand-over to PETSc (newton only)
  double vectors = 0;     ///< the solver's vectors
  double own = 0;         ///< position-based: constraints by colour; frames: samples, weights, their Laplace solve
  double smoothed = 0;    ///< a smoothed-aggregation GAMG hierarchy (or another AMG: hypre) (newton only)
  double smoothed_own_products = 0;  ///< the same with our Galerkin products (GAMG under our multigrid products)
  double unsmoothed = 0;  ///< an unsmoothed-aggregation GAMG hierarchy (newton only)
  double block_copy = 0;  ///< the BAIJ copy of the matrix the incomplete factorizations use (linalg/block_operator.hpp)
  double symmetric_copy = 0;  ///< the upper triangle multigrid's Krylov method multiplies with (block_operator.hpp)
  double coarse_copies = 0;  ///< smoothed GAMG's coarse levels copied by blocks, the rebuilds' Galerkin products
  double coarse_copies_unsmoothed = 0;  ///< the same for unsmoothed aggregation
  double output = 0;      ///< the VTK piece of one output step
  [[nodiscard]] double base() const { return model + system + vectors + own + output; }
};
RankEstimate estimate_rank_bytes(long long tets, long long triangles, long long vertices, int ranks,
                                 SolveKind kind = SolveKind::newton, int frames = 0);

/// What the job's solver allocates (see SolveKind).
SolveKind solve_kind(const Job& job);

struct MemoryPlan {
  bool fits = true;                       ///< the plan fits every node (by the estimate)
  bool unsmoothed_aggregation = false;    ///< set `-pc_gamg_agg_nsmooths 0`: smoothed aggregation would not fit
  double estimated_peak_mb_max_rank = 0;  ///< current + estimate with the plan's preconditioner, largest rank
  SolveKind kind = SolveKind::newton;     ///< what the estimate is for
  std::string preconditioner;             ///< the preconditioner the estimate counts ("none" without a matrix)
  std::string problem;  ///< when it does not fit: the message (the worst node's need and availability, what to do)
  std::string report;   ///< a line for the run header (rank 0's), empty when there is nothing to say
};

/// Collective. Estimates every rank's peak (only what the job's solver allocates: solve_kind, and for Newton the
/// preconditioner the job or `-pc_type` names, or the automatic choice), sums them per node (MPI_COMM_TYPE_SHARED) against the node's
/// available memory and decides the aggregation when `job.solver.aggregation` is `auto` and no
/// `-pc_gamg_agg_nsmooths` option is given. The same plan on every rank (the caller throws ResourceError with
/// `problem` when it does not fit, unless told to go on).
MemoryPlan plan_memory(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const std::string& cli_petsc_options);

/// A mesh's size before it is read or generated (run/load_mesh.hpp, announced_mesh_size): from `mesh.generate`'s
/// cells or a mesh file's headers. Counts in 64 bits (a 600^3 box has 1.3e9 tets, 2.2e8 vertices).
struct AnnouncedMesh {
  long long tets = 0, triangles = 0, vertices = 0;
  std::string source;  ///< where the counts come from: "JOB: mesh.generate, a box of 600 x 600 x 600 cells", or the file
  std::string verb = "read";  ///< what a refusal spares: "generated" or "read"
};

/// How the mesh is held while it is read: distributed by slices, whole on rank 0 before it is distributed (the
/// serial reader, `edgefem bench`), or whole on one process with its topology and two partition previews (`info`).
enum class InputHolding : std::uint8_t { slices, whole_on_rank0, whole_for_info };

/// Estimated bytes of holding the whole mesh on one process: the serial input's peak (about 400 bytes per tet measured
/// on a 1.3M-tet box, the rank's own piece included), or `edgefem info`'s (about 290 with the topology and the
/// previews).
double whole_mesh_bytes(const AnnouncedMesh& mesh, InputHolding holding);

/// The smallest number of nodes like the worst one (`ranks_per_node` ranks, `usable` bytes each) on which a run of
/// `need_at(ranks)` bytes per rank fits, or 0 when none up to 2^24 nodes does. Pure.
long long nodes_that_fit(int ranks_per_node, double usable, const std::function<double(long long)>& need_at);

/// Collective. The plan made before anything large is read, generated or allocated: every rank's share of the
/// announced mesh (cells split evenly: a lower bound of what the rank will hold) with the leanest preconditioner the
/// plan could choose, and rank 0's whole mesh when `holding` says so, summed per node against the node's available
/// memory. `job` may be null (`edgefem info MESH`: the input alone). When it does not fit, `problem` says what is
/// needed per rank and in all, what the worst node has, and on how many ranks it would fit. The same on every rank.
MemoryPlan plan_memory_before_input(MPI_Comm comm, const Job* job, const AnnouncedMesh& mesh, InputHolding holding,
                                    const std::string& cli_petsc_options);

}  // namespace edgefem
