// SPDX-License-Identifier: BSD-3-Clause
#include "run/load_mesh.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "frames/frame_placement.hpp"
#include "io/gmsh.hpp"
#include "io/gmsh_counts.hpp"
#include "io/gmsh_parallel.hpp"
#include "mesh/box.hpp"
#include "partition/collective.hpp"
#include "partition/distributed.hpp"
#include "partition/locality.hpp"

namespace edgefem {

Mesh load_mesh_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".msh")
    throw InputError(path + ": unsupported mesh format '" + ext + "' (expected a Gmsh .msh file, format 2.2 or 4.1)");
  Mesh mesh = read_gmsh(path);
  check_mesh(mesh, path);
  return mesh;
}

Mesh load_job_mesh(const Job& job) {
  if (job.mesh_file) return load_mesh_file(*job.mesh_file);
  const GenerateSpec& g = *job.generate;
  Mesh mesh;
  switch (g.shape) {
    case GeneratedShape::box: mesh = generate_box(g.size, g.cells); break;
    case GeneratedShape::sheet: mesh = generate_sheet({g.size[0], g.size[1]}, {g.cells[0], g.cells[1]}); break;
  }
  check_mesh(mesh, job.job_file + " (generated " + std::string(to_string(g.shape)) + ")");
  return mesh;
}

std::optional<AnnouncedMesh> announced_mesh_file_size(const std::string& path, bool membranes) {
  const std::optional<GmshCounts> c = gmsh_header_counts(path);
  if (!c) return std::nullopt;
  AnnouncedMesh m;
  m.vertices = c->nodes;
  if (c->by_type) {
    m.tets = c->tets;
    m.triangles = c->tets > 0 ? 0 : c->triangles;
  } else {
    (membranes ? m.triangles : m.tets) = c->elements;
  }
  m.source = path;
  return m;
}

std::optional<AnnouncedMesh> announced_mesh_size(const Job& job) {
  if (job.mesh_file) {
    bool membranes = false;
    for (const auto& material : job.materials) membranes = membranes || material.model->cell == CellKind::triangle;
    return announced_mesh_file_size(*job.mesh_file, membranes);
  }
  const GenerateSpec& g = *job.generate;
  const long long nx = g.cells[0], ny = g.cells[1], nz = g.cells[2];
  AnnouncedMesh m;
  m.verb = "generated";
  if (g.shape == GeneratedShape::box) {
    m.tets = 6 * nx * ny * nz;
    m.vertices = (nx + 1) * (ny + 1) * (nz + 1);
    m.source = job.job_file + ": mesh.generate, a box of " + std::to_string(nx) + " x " + std::to_string(ny) + " x " +
               std::to_string(nz) + " cells";
  } else {
    m.triangles = 2 * nx * ny;
    m.vertices = (nx + 1) * (ny + 1);
    m.source = job.job_file + ": mesh.generate, a sheet of " + std::to_string(nx) + " x " + std::to_string(ny) +
               " cells";
  }
  return m;
}

namespace {

/// The announced mesh of `job` (or of the file `path`) on every rank: a generated one from the job, a file's from its
/// headers read by rank 0. Nothing when the headers cannot be read. Collective.
std::optional<AnnouncedMesh> announced_on_every_rank(MPI_Comm comm, const Job* job, const std::string& path) {
  if (job != nullptr && job->generate) return announced_mesh_size(*job);
  const std::string& file = job != nullptr ? *job->mesh_file : path;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  long long counts[4] = {0, 0, 0, 0};  // known, tets, triangles, vertices
  run_collectively(comm, [&] {
    if (rank != 0) return;
    const auto m = job != nullptr ? announced_mesh_size(*job) : announced_mesh_file_size(file);
    if (m) counts[0] = 1, counts[1] = m->tets, counts[2] = m->triangles, counts[3] = m->vertices;
  });
  MPI_Bcast(counts, 4, MPI_LONG_LONG, 0, comm);
  if (counts[0] == 0) return std::nullopt;
  AnnouncedMesh m;
  m.tets = counts[1], m.triangles = counts[2], m.vertices = counts[3];
  m.source = file;
  return m;
}

}  // namespace

void check_memory_before_input(MPI_Comm comm, const Job* job, const std::string& path, InputHolding holding,
                               const RunOptions& options, double* estimated_peak_mb) {
  const std::optional<AnnouncedMesh> mesh = announced_on_every_rank(comm, job, path);
  if (!mesh) return;  // headers unreadable: the reader says why
  // More frames than vertices: said as such (issue 55), not as a memory estimate of that many frames.
  if (job != nullptr && job->discretization.type == DiscretizationType::frames && mesh->vertices > 0)
    check_frame_count(*job, mesh->vertices);
  const MemoryPlan plan = plan_memory_before_input(comm, job, *mesh, holding, options.petsc_options);
  if (estimated_peak_mb != nullptr) *estimated_peak_mb = plan.estimated_peak_mb_max_rank;
  if (plan.fits) return;
  if (!options.ignore_memory_estimate) throw ResourceError(plan.problem);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) std::fprintf(stderr, "edgefem:%s\n", plan.report.substr(1).c_str());
}

const char* to_string(MeshReader reader) {
  switch (reader) {
    case MeshReader::serial: return "serial";
    case MeshReader::parallel_gmsh: return "parallel";
    case MeshReader::generated_block: return "generated by blocks";
  }
  return "?";
}

namespace {

std::int64_t parallel_read_min_bytes() {
  if (const char* env = std::getenv("EDGEFEM_PARALLEL_READ_MIN_BYTES"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != nullptr && *end == '\0' && v >= 0) return v;
  }
  return kParallelReadMinBytes;
}

}  // namespace

MeshReader choose_reader(const Job& job, std::string* why) {
  if (const char* input = std::getenv("EDGEFEM_INPUT"); input != nullptr && std::string(input) == "serial") {
    if (why != nullptr) *why = "EDGEFEM_INPUT=serial";
    return MeshReader::serial;
  }
  if (any_bending(job)) {  // the hinge stencils are found on the whole mesh (distribute_mesh)
    if (why != nullptr) *why = "membrane bending: the hinge stencils are found on the whole mesh on rank 0";
    return MeshReader::serial;
  }
  if (job.generate) {
    if (why != nullptr)
      *why = std::string("each rank generates its block of the ") + std::string(to_string(job.generate->shape));
    return MeshReader::generated_block;
  }
  const std::string& path = *job.mesh_file;
  std::error_code ec;
  const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
  const std::int64_t limit = parallel_read_min_bytes();
  if (!is_gmsh41_binary(path)) {
    if (why != nullptr) *why = "not a MSH 4.1 binary file (8-byte size_t, this byte order)";
    return MeshReader::serial;
  }
  if (ec || bytes < limit) {
    if (why != nullptr)
      *why = "MSH 4.1 binary, " + std::to_string(bytes) + " bytes < " + std::to_string(limit) +
             " (parallel from there)";
    return MeshReader::serial;
  }
  if (why != nullptr) *why = "MSH 4.1 binary, " + std::to_string(bytes) + " bytes >= " + std::to_string(limit);
  return MeshReader::parallel_gmsh;
}

InputHolding input_holding(MPI_Comm comm, const Job& job) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int serial = 0;
  if (rank == 0) serial = choose_reader(job) == MeshReader::serial ? 1 : 0;
  MPI_Bcast(&serial, 1, MPI_INT, 0, comm);
  return serial != 0 ? InputHolding::whole_on_rank0 : InputHolding::slices;
}

CellPartitioner choose_partitioner(const Job& job, std::int64_t n_cells, std::string* why) {
  const bool bending = any_bending(job);
  std::string reason;
  CellPartitioner method = CellPartitioner::metis;
  switch (job.partition_method) {
    case PartitionMethod::metis: reason = "partition.method metis"; break;
    case PartitionMethod::ptscotch:
      method = CellPartitioner::ptscotch;
      reason = bending ? "partition.method ptscotch; membrane bending: sequential PT-Scotch on rank 0, which holds the "
                         "whole mesh to find the hinge stencils"
                       : "partition.method ptscotch";
      break;
    case PartitionMethod::automatic:
      if (bending) {
        reason =
            "automatic; membrane bending: METIS on rank 0, which holds the whole mesh to find the hinge "
            "stencils (partition: {method: ptscotch} for sequential PT-Scotch there)";
      } else {
        method = n_cells >= kPtScotchMinCells ? CellPartitioner::ptscotch : CellPartitioner::metis;
        reason = "automatic: METIS below " + std::to_string(kPtScotchMinCells) + " cells, PT-Scotch from there on";
      }
      break;
  }
  if (why != nullptr) *why = reason;
  return method;
}

namespace {

/// load_distributed_job_mesh, the vertices of each rank in the order the partition leaves them.
DistributedJobMesh load_in_partition_order(MPI_Comm comm, const Job& job) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  DistributedJobMesh out;
  auto t = std::chrono::steady_clock::now();
  // Rank 0 decides (the file is looked at once), every rank follows.
  int reader = 0;
  if (rank == 0) reader = static_cast<int>(choose_reader(job));
  MPI_Bcast(&reader, 1, MPI_INT, 0, comm);
  out.reader = static_cast<MeshReader>(reader);
  SliceTimes times;
  if (out.reader != MeshReader::serial) {
    MeshSlice slice;
    run_collectively(comm, [&] {
      if (out.reader != MeshReader::generated_block) return;
      const GenerateSpec& g = *job.generate;
      slice = g.shape == GeneratedShape::box
                  ? generate_box_slice(g.size, g.cells, rank, size)
                  : generate_sheet_slice({g.size[0], g.size[1]}, {g.cells[0], g.cells[1]}, rank, size);
    });
    if (out.reader == MeshReader::parallel_gmsh) slice = read_gmsh_slice(comm, *job.mesh_file);
    out.partitioner = choose_partitioner(job, slice.n_cells);
    out.seconds_read = seconds_since(t);
    out.mesh = distribute_slices(comm, std::move(slice), out.partitioner, &times);
    out.seconds_partition = times.partition;
    out.seconds_distribute = times.distribute;
    if (out.reader == MeshReader::parallel_gmsh) {
      // What check_mesh checks of a whole mesh, on each rank's cells (degenerate or inverted tets, ...).
      run_collectively(comm, [&] { check_mesh(out.mesh.mesh, *job.mesh_file + " (this rank's part)"); });
    }
    return out;
  }
  Mesh whole;
  run_collectively(comm, [&] {
    if (rank == 0) whole = load_job_mesh(job);
  });
  long long n_cells = whole.n_tets() > 0 ? whole.n_tets() : whole.n_triangles();
  MPI_Bcast(&n_cells, 1, MPI_LONG_LONG, 0, comm);
  // Membrane bending: rank 0 partitions (METIS, or PT-Scotch on one process) and finds the hinge stencils
  // (distribute_mesh).
  const bool hinges = any_bending(job);
  std::string why;
  out.partitioner = choose_partitioner(job, n_cells, &why);
  if (hinges)
    out.partition_notice = std::string("partition: ") + to_string(out.partitioner) + " on rank 0 (" + why + ")";
  out.seconds_read = seconds_since(t);
  t = std::chrono::steady_clock::now();
  if (out.partitioner == CellPartitioner::metis || hinges) {
    out.mesh = distribute_mesh(comm, whole, &out.seconds_partition, hinges, out.partitioner);
    out.seconds_distribute = std::max(0.0, seconds_since(t) - out.seconds_partition);
    return out;
  }
  MeshSlice slice = scatter_slices(comm, whole);
  whole = Mesh{};
  out.mesh = distribute_slices(comm, std::move(slice), out.partitioner, &times);
  out.seconds_partition = times.partition;
  out.seconds_distribute = seconds_since(t) - times.partition;
  return out;
}

}  // namespace

DistributedJobMesh load_distributed_job_mesh(MPI_Comm comm, const Job& job) {
  DistributedJobMesh out = load_in_partition_order(comm, job);
  if (job.renumber_vertices) {
    const auto t = std::chrono::steady_clock::now();
    renumber_for_locality(comm, out.mesh);
    out.seconds_distribute += seconds_since(t);
  }
  return out;
}

}  // namespace edgefem
