// SPDX-License-Identifier: BSD-3-Clause
/// \file info.cpp
/// `edgefem info` (info.hpp).
#include "run/info.hpp"

#include <petscsys.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "mesh/topology.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"

namespace edgefem {
namespace {

bool is_job_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

/// The counts: vertices, edges, faces, tets (their ratios and TSEPs) or, for a membrane, triangles.
void print_counts(const std::string& path, const Mesh& mesh) {
  if (mesh.n_tets() == 0) {
    const std::int64_t n_edges = build_triangle_edges(mesh.triangles).n_edges();
    std::printf("mesh %s (membrane)\n  N_V = %d   N_E = %lld   N_T (triangles) = %d   boundary edges = %d\n",
                path.c_str(), mesh.n_vertices(), static_cast<long long>(n_edges), mesh.n_triangles(), mesh.n_lines());
    return;
  }
  const Topology topo = build_topology(mesh.n_vertices(), mesh.tets);
  const double nt = static_cast<double>(mesh.n_tets());
  std::printf("mesh %s\n", path.c_str());
  std::printf("  N_V = %d   N_E = %lld   N_F = %lld   N_T = %d\n", mesh.n_vertices(),
              static_cast<long long>(topo.n_edges()), static_cast<long long>(topo.n_faces()), mesh.n_tets());
  std::printf("  N_V : N_E : N_F : N_T = %.3f : %.3f : %.3f : 1\n", mesh.n_vertices() / nt, topo.n_edges() / nt,
              topo.n_faces() / nt);
  std::printf("  TSEPs: type 1 = %lld (3 N_F = %lld), type 2 = %lld (3 N_T = %lld)\n",
              static_cast<long long>(topo.n_type1), 3 * static_cast<long long>(topo.n_faces()),
              static_cast<long long>(topo.n_type2), 3 * static_cast<long long>(mesh.n_tets()));
  std::printf("  boundary triangles = %d, lines = %d\n", mesh.n_triangles(), mesh.n_lines());
}

/// What one needs to write selections: the tags with their counts, and the extent.
void print_regions_and_box(const Mesh& mesh) {
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
  if (mesh.n_vertices() == 0) return;
  std::array<double, 6> box{1e300, -1e300, 1e300, -1e300, 1e300, -1e300};
  for (LocalIndex v = 0; v < mesh.n_vertices(); ++v)
    for (int d = 0; d < 3; ++d) {
      const double c = mesh.coords[3 * static_cast<std::size_t>(v) + d];
      box[2 * d] = std::min(box[2 * d], c);
      box[2 * d + 1] = std::max(box[2 * d + 1], c);
    }
  std::printf("  bounding box: [%g, %g] x [%g, %g] x [%g, %g]\n", box[0], box[1], box[2], box[3], box[4], box[5]);
}

/// For a job: the reader and partitioner `run` would use, and why.
void print_run_input(const std::string& path, const Mesh& mesh) {
  const Job job = read_job(path);
  std::string why;
  const MeshReader reader = choose_reader(job, &why);
  const long long n_cells = mesh.n_tets() > 0 ? mesh.n_tets() : mesh.n_triangles();
  std::string partition_why;
  const CellPartitioner partitioner = choose_partitioner(job, n_cells, &partition_why);
  std::printf("run input: %s reader (%s); partition %s (%s)\n", to_string(reader), why.c_str(), to_string(partitioner),
              partition_why.c_str());
}

/// A partition's quality: its time, cut, and the balance of owned and ghost vertices and cells.
void print_quality(const Mesh& mesh, int ranks, const PartitionPlan& plan, const char* name) {
  const PartitionQuality q = partition_quality(mesh, plan);
  std::printf("partition into %d rank%s (%s, dual graph): %.3f s (%s %.3f, owners %.3f, numbering %.3f)\n", ranks,
              ranks == 1 ? "" : "s", name, plan.seconds, name, plan.seconds_cells, plan.seconds_owners,
              plan.seconds - plan.seconds_cells - plan.seconds_owners);
  std::printf("  cut: %lld dual-graph edges (%s between parts), %lld vertices shared by parts\n",
              static_cast<long long>(q.cut_facets), mesh.n_tets() > 0 ? "faces" : "edges",
              static_cast<long long>(q.shared_vertices));
  std::printf("  owned vertices per rank min/mean/max %lld/%.1f/%lld: max/mean %.3f, min/mean %.3f\n",
              static_cast<long long>(q.owned_min), q.owned_mean, static_cast<long long>(q.owned_max),
              q.owned_max / q.owned_mean, q.owned_min / q.owned_mean);
  std::printf("  ghost vertices per rank min/mean/max %lld/%.1f/%lld, largest ghosts/owned %.2f (rank %d)\n",
              static_cast<long long>(q.ghost_min), q.ghost_mean, static_cast<long long>(q.ghost_max), q.max_ghost_ratio,
              q.max_ghost_ratio_part);
  std::printf("  cells per rank max/mean %.3f\n", static_cast<double>(q.cells_max) / q.cells_mean);
}

/// METIS's cells, owned and ghost vertices per rank (up to 32 ranks).
void print_rank_table(int ranks, const PartitionPlan& plan) {
  constexpr int max_table_ranks = 32;
  if (ranks > max_table_ranks) {
    std::printf("  (the table per rank is printed for up to %d ranks)\n", max_table_ranks);
    return;
  }
  std::printf("  %6s %12s %12s %12s\n", "rank", "cells", "owned", "ghost");
  for (int p = 0; p < ranks; ++p) {
    const long long owned = plan.n_owned(p);
    const long long local = static_cast<long long>(plan.part_vertices[p].size());
    std::printf("  %6d %12zu %12lld %12lld\n", p, plan.part_cells[p].size(), owned, local - owned);
  }
}

}  // namespace

int print_info(const RunOptions& options) {
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  if (rank != 0) return 0;
  const int ranks = options.ranks == 0 ? size : options.ranks;  // mpirun -n N edgefem info: the partition it runs with
  const std::string& path = options.path;
  // Before the whole mesh is read or generated here: will it fit (run/memory_budget.hpp)? (This rank alone.)
  const std::optional<Job> job = is_job_file(path) ? std::optional<Job>(read_job(path)) : std::nullopt;
  check_memory_before_input(MPI_COMM_SELF, job ? &*job : nullptr, path, InputHolding::whole_for_info, options);
  const Mesh mesh = job ? load_job_mesh(*job) : load_mesh_file(path);
  print_counts(path, mesh);
  print_regions_and_box(mesh);
  if (is_job_file(path)) print_run_input(path, mesh);
  // The quality of both partitioners (the per-rank table below is METIS's).
  const PartitionPlan scotch_plan = plan_partition(mesh, ranks, CellPartitioner::ptscotch);
  const PartitionPlan plan = plan_partition(mesh, ranks);
  print_quality(mesh, ranks, scotch_plan, "PT-Scotch");
  print_quality(mesh, ranks, plan, "METIS");
  print_rank_table(ranks, plan);
  return 0;
}

}  // namespace edgefem
