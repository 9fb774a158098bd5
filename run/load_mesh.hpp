// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file load_mesh.hpp
/// The mesh a job names: read from its file (Gmsh .msh) or generated, then checked; and the distributed
/// LocalMesh of every rank, by the path that keeps the largest rank's memory in check.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>

#include "io/job.hpp"
#include "mesh/mesh.hpp"
#include "partition/partition.hpp"
#include "run/memory_budget.hpp"
#include "run/run_options.hpp"

namespace edgefem {

/// Read or generate the job's mesh and check it (check_mesh). Throws InputError.
Mesh load_job_mesh(const Job& job);

/// The size of the job's mesh before it is read or generated: `mesh.generate`'s cells, or the mesh file's headers
/// (gmsh_header_counts; MSH 2.2 files count their elements together: taken as the cells). Nothing when the file's
/// headers cannot be read (the reader then says what is wrong).
std::optional<AnnouncedMesh> announced_mesh_size(const Job& job);
/// The same for a mesh file alone (`edgefem info MESH`).
std::optional<AnnouncedMesh> announced_mesh_file_size(const std::string& path, bool membranes = false);

/// Collective over comm: the memory plan made before anything large is read or generated
/// (plan_memory_before_input) for the mesh of `job`, or of the file `path` when `job` is null. Throws ResourceError
/// (every rank) when it does not fit, unless options.ignore_memory_estimate (then rank 0 warns on stderr).
/// `estimated_peak_mb` (optional): set to the plan's estimate of the largest rank's peak (summary.json).
void check_memory_before_input(MPI_Comm comm, const Job* job, const std::string& path, InputHolding holding,
                               const RunOptions& options, double* estimated_peak_mb = nullptr);

/// Read a mesh file by extension (.msh) and check it. Throws InputError.
Mesh load_mesh_file(const std::string& path);

/// `partition.method: automatic` picks PT-Scotch (on the distributed dual graph) from this many cells on, METIS
/// on rank 0 below (docs/guide/large-meshes.md "Large meshes": measured).
inline constexpr std::int64_t kPtScotchMinCells = 500000;
/// MSH 4.1 binary files from this size on are read in parallel (read_gmsh_slice), smaller ones on rank 0
/// (docs/guide/large-meshes.md "Large meshes": measured). The environment variable EDGEFEM_PARALLEL_READ_MIN_BYTES overrides it.
inline constexpr std::int64_t kParallelReadMinBytes = 16 << 20;

/// How the mesh reached the ranks.
enum class MeshReader : std::uint8_t {
  serial,          ///< rank 0 read (or generated) the whole mesh
  parallel_gmsh,   ///< every rank read its slice of a MSH 4.1 binary file
  generated_block  ///< every rank generated its block of the box or sheet
};
const char* to_string(MeshReader reader);

/// The reader `run` uses for the job's mesh and why (`edgefem info` prints it). Any rank. The environment
/// variable EDGEFEM_INPUT=serial forces the rank-0 path (for comparisons: the path of edgefem before the slices).
MeshReader choose_reader(const Job& job, std::string* why = nullptr);

/// The partitioner for `n_cells` cells under the job's partition.method, and why (`why`, optional: what `run` and
/// `edgefem info` print). With membrane bending the mesh is partitioned on rank 0, which finds the hinge stencils
/// (distribute_mesh): `ptscotch` runs PT-Scotch there on one process, `automatic` is METIS.
CellPartitioner choose_partitioner(const Job& job, std::int64_t n_cells, std::string* why = nullptr);

/// Collective: how the input will hold the job's mesh (choose_reader on rank 0): by slices, or whole on rank 0.
InputHolding input_holding(MPI_Comm comm, const Job& job);

struct DistributedJobMesh {
  LocalMesh mesh;
  MeshReader reader = MeshReader::serial;
  CellPartitioner partitioner = CellPartitioner::metis;
  double seconds_read = 0, seconds_partition = 0, seconds_distribute = 0;  ///< this rank's wall times
  /// A line for the run header when the partitioner is not the usual one (membrane bending: rank 0 partitions),
  /// saying which was used and why; empty otherwise.
  std::string partition_notice;
};

/// Collective: the job's mesh read (or generated), partitioned and distributed over comm: MSH 4.1 binary files of
/// kParallelReadMinBytes and more and generated boxes and sheets by slices (distribute_slices: no rank holds the whole
/// mesh), other meshes on rank 0 (distribute_mesh, or scattered slices for PT-Scotch). Throws CollectiveError
/// (InputError messages) on every rank.
DistributedJobMesh load_distributed_job_mesh(MPI_Comm comm, const Job& job);

}  // namespace edgefem
