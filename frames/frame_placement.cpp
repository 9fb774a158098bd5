// SPDX-License-Identifier: BSD-3-Clause
/// \file frame_placement.cpp
/// Frame placement: positions, farthest-point sampling, k-means; anchors on the fixed regions (frame_placement.hpp).
#include "frames/frame_placement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.hpp"

namespace edgefem {
namespace {

using frames::distance2;
using frames::Vec3;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Among every rank's candidate (value, file index), the one with the largest value (`largest`) or the smallest,
/// ties to the lowest file index; returns its coordinates and index. Candidates with index < 0 take no part.
struct Pick {
  double value;
  GlobalIndex file_vertex;
  Vec3 x;
};
Pick agree_on_pick(MPI_Comm comm, Pick mine, bool largest) {
  const double none = largest ? -kInf : kInf;
  double v = mine.file_vertex >= 0 ? mine.value : none, best = 0.0;
  MPI_Allreduce(&v, &best, 1, MPI_DOUBLE, largest ? MPI_MAX : MPI_MIN, comm);
  long long idx = (mine.file_vertex >= 0 && v == best) ? mine.file_vertex : std::numeric_limits<long long>::max();
  long long chosen = 0;
  MPI_Allreduce(&idx, &chosen, 1, MPI_LONG_LONG, MPI_MIN, comm);
  double x[3], out[3];
  for (int c = 0; c < 3; ++c) x[c] = idx == chosen && mine.file_vertex == chosen ? mine.x[c] : kInf;
  MPI_Allreduce(x, out, 3, MPI_DOUBLE, MPI_MIN, comm);
  return {best, static_cast<GlobalIndex>(chosen), {out[0], out[1], out[2]}};
}

/// The vertex of best `score(v)` over all ranks (largest or smallest; a non-finite score takes no part), among the
/// local vertices `among` (all local vertices when null). Collective. file_vertex < 0 when there is none.
template <class Score>
Pick best_vertex(MPI_Comm comm, const LocalMesh& mesh, Score&& score, bool largest,
                 const std::vector<LocalIndex>* among = nullptr) {
  Pick mine{largest ? -kInf : kInf, -1, {}};
  const double* X = mesh.mesh.coords.data();
  const LocalIndex n = among ? static_cast<LocalIndex>(among->size()) : mesh.n_local();
  for (LocalIndex k = 0; k < n; ++k) {
    const LocalIndex v = among ? (*among)[k] : k;
    const double s = score(v);
    if (!std::isfinite(s)) continue;
    const GlobalIndex f = mesh.original_vertex[v];
    const bool better = mine.file_vertex < 0 || (largest ? s > mine.value : s < mine.value);
    if (better || (s == mine.value && f < mine.file_vertex)) mine = {s, f, {X[3 * v], X[3 * v + 1], X[3 * v + 2]}};
  }
  return agree_on_pick(comm, mine, largest);
}

std::string where(const Job& job) { return job.job_file + ":" + std::to_string(job.discretization.line) + ": "; }

/// Per job.boundary entry: the anchor vertex of a fixed region (file_vertex -1 when the entry is not one).
std::vector<Pick> fixed_region_vertices(MPI_Comm comm, const LocalMesh& mesh, const Job& job, const Model& model) {
  std::vector<Pick> out;
  const double* X = mesh.mesh.coords.data();
  for (std::size_t b = 0; b < job.boundary.size(); ++b) {
    const auto& fix = job.boundary[b].fix;
    const std::vector<LocalIndex>* vertices = b < model.boundary_vertices.size() ? &model.boundary_vertices[b]
                                                                                 : nullptr;
    if (!(fix[0] && fix[1] && fix[2]) || vertices == nullptr) {
      out.push_back({0.0, -1, {}});
      continue;
    }
    double sum[4] = {0, 0, 0, 0};  // owned vertices only: each vertex counted once
    for (const LocalIndex v : *vertices) {
      for (int c = 0; c < 3; ++c) sum[c] += X[3 * v + c];
      sum[3] += 1.0;
    }
    MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_DOUBLE, MPI_SUM, comm);
    if (sum[3] == 0.0) {
      out.push_back({0.0, -1, {}});
      continue;
    }
    const Vec3 centre{sum[0] / sum[3], sum[1] / sum[3], sum[2] / sum[3]};
    out.push_back(best_vertex(
        comm, mesh, [&](LocalIndex v) { return distance2(X + 3 * v, centre); }, false, vertices));
  }
  return out;
}

/// The longest tet edge over all ranks: every point of the body lies within it of a mesh vertex (a point of a tet is
/// a convex combination of its vertices, so no farther from one of them than its longest edge).
double longest_tet_edge(MPI_Comm comm, const LocalMesh& mesh) {
  double longest = 0.0;
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t) {
    const LocalIndex* v = &mesh.mesh.tets[4 * static_cast<std::size_t>(t)];
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        const double* p = mesh.mesh.point(v[a]);
        const Vec3 q{mesh.mesh.point(v[b])[0], mesh.mesh.point(v[b])[1], mesh.mesh.point(v[b])[2]};
        longest = std::max(longest, std::sqrt(distance2(p, q)));
      }
  }
  MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return longest;
}

/// A position farther than `tolerance` from every vertex (or too far to measure) lies outside the body: refused.
void check_near_body(const Job& job, std::size_t i, const Pick& p, double tolerance) {
  const Vec3& x = job.discretization.positions[i];
  const double distance = std::sqrt(p.value);
  const bool measured = std::isfinite(distance);  // not when the squared distance overflows at every vertex
  if (measured && distance <= tolerance) return;
  std::ostringstream msg;
  msg << where(job) << "discretization.positions[" << i << "] = [" << x[0] << ", " << x[1] << ", " << x[2] << "] ";
  if (measured)
    msg << "is " << distance << " from the nearest mesh vertex (file index " << p.file_vertex << " at " << p.x[0]
        << ", " << p.x[1] << ", " << p.x[2] << ")";
  else
    msg << "is too far from the mesh to measure";
  msg << ": expected a point of the body, within " << tolerance
      << " of a vertex (the mesh's longest tet edge; every point of the body is that close to one)";
  throw InputError(msg.str());
}

/// Positions snapped to vertices; the anchor of a fixed region is the frame nearest to its anchor vertex.
void place_at_positions(MPI_Comm comm, const LocalMesh& mesh, const Job& job, const std::vector<Pick>& fixed,
                        FramePlacement& out) {
  const auto& positions = job.discretization.positions;
  const double* X = mesh.mesh.coords.data();
  const double tolerance = longest_tet_edge(comm, mesh);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Vec3 target = positions[i];
    const Pick p = best_vertex(
        comm, mesh, [&](LocalIndex v) { return distance2(X + 3 * v, target); }, false);
    check_near_body(job, i, p, tolerance);
    for (std::size_t j = 0; j < out.file_vertices.size(); ++j)
      if (out.file_vertices[j] == p.file_vertex) {
        std::ostringstream msg;
        msg << where(job) << "discretization.positions[" << i << "] and positions[" << j
            << "] snap to the same mesh vertex (file index " << p.file_vertex << " at " << p.x[0] << ", " << p.x[1]
            << ", " << p.x[2] << "): expected frames at distinct vertices";
        throw InputError(msg.str());
      }
    out.origins.push_back(p.x);
    out.file_vertices.push_back(p.file_vertex);
  }
  for (std::size_t b = 0; b < fixed.size(); ++b) {
    if (fixed[b].file_vertex < 0) continue;
    int nearest = 0;
    for (std::size_t i = 1; i < out.origins.size(); ++i)
      if (distance2(fixed[b].x.data(), out.origins[i]) < distance2(fixed[b].x.data(), out.origins[nearest]))
        nearest = static_cast<int>(i);
    out.anchors[b] = nearest;
  }
}

/// The anchors' vertices as the first frames (one frame per distinct vertex).
void place_anchors(const std::vector<Pick>& fixed, FramePlacement& out) {
  for (std::size_t b = 0; b < fixed.size(); ++b) {
    if (fixed[b].file_vertex < 0) continue;
    const auto same = std::find(out.file_vertices.begin(), out.file_vertices.end(), fixed[b].file_vertex);
    out.anchors[b] = static_cast<int>(same - out.file_vertices.begin());
    if (same == out.file_vertices.end()) {
      out.origins.push_back(fixed[b].x);
      out.file_vertices.push_back(fixed[b].file_vertex);
    }
  }
}

/// Farthest-point sampling over the vertices up to `count` frames, from the frames already placed.
void place_farthest(MPI_Comm comm, const LocalMesh& mesh, int count, FramePlacement& out) {
  const LocalIndex n_local = mesh.n_local();
  const double* X = mesh.mesh.coords.data();
  std::vector<double> nearest(static_cast<std::size_t>(n_local), kInf);
  for (const Vec3& o : out.origins)
    for (LocalIndex v = 0; v < n_local; ++v) nearest[v] = std::min(nearest[v], distance2(X + 3 * v, o));
  while (static_cast<int>(out.origins.size()) < count) {
    Pick p;
    if (out.origins.empty()) {
      const auto box = global_bounding_box(comm, mesh);
      const Vec3 centre{0.5 * (box[0] + box[3]), 0.5 * (box[1] + box[4]), 0.5 * (box[2] + box[5])};
      p = best_vertex(
          comm, mesh, [&](LocalIndex v) { return distance2(X + 3 * v, centre); }, true);
    } else {
      p = best_vertex(
          comm, mesh, [&](LocalIndex v) { return nearest[v]; }, true);
    }
    out.origins.push_back(p.x);
    out.file_vertices.push_back(p.file_vertex);
    for (LocalIndex v = 0; v < n_local; ++v) nearest[v] = std::min(nearest[v], distance2(X + 3 * v, p.x));
  }
}

/// Lloyd iterations over the voxel grid's cells (their tets' centroid, weighted by their volume); centres
/// [0, n_fixed) do not move. The centres are rounded to a grid of diag 2^-36 so that the rounding of the grid's
/// sums over the ranks does not matter.
std::vector<Vec3> lloyd(const VoxelGrid& grid, std::vector<Vec3> centres, std::size_t n_fixed) {
  const double diag = grid.size * std::sqrt(static_cast<double>(grid.n[0]) * grid.n[0] +
                                            static_cast<double>(grid.n[1]) * grid.n[1] +
                                            static_cast<double>(grid.n[2]) * grid.n[2]);
  const double quantum = diag * std::ldexp(1.0, -36);
  const std::size_t n = centres.size();
  for (int iteration = 0; iteration < 100; ++iteration) {
    std::vector<double> sums(4 * n, 0.0);
    for (std::size_t c = 0; c < grid.cells(); ++c) {
      if (!(grid.volume[c] > 0.0)) continue;
      const double* x = grid.centroid[c].data();
      std::size_t best = 0;
      for (std::size_t i = 1; i < n; ++i)
        if (distance2(x, centres[i]) < distance2(x, centres[best])) best = i;
      for (int d = 0; d < 3; ++d) sums[4 * best + d] += grid.volume[c] * x[d];
      sums[4 * best + 3] += grid.volume[c];
    }
    double moved = 0.0;
    for (std::size_t i = n_fixed; i < n; ++i) {
      if (!(sums[4 * i + 3] > 0.0)) continue;
      Vec3 next;
      for (int d = 0; d < 3; ++d) next[d] = std::round(sums[4 * i + d] / sums[4 * i + 3] / quantum) * quantum;
      moved = std::max(moved, std::sqrt(distance2(next.data(), centres[i])));
      centres[i] = next;
    }
    if (moved <= 1e-6 * diag) break;
  }
  return centres;
}

/// Replaces the free frames [n_fixed, N) by the k-means centres snapped to their nearest vertices not yet taken.
void place_kmeans(MPI_Comm comm, const LocalMesh& mesh, const VoxelGrid& grid, std::size_t n_fixed,
                  FramePlacement& out) {
  const std::vector<Vec3> centres = lloyd(grid, out.origins, n_fixed);
  out.origins.resize(n_fixed);
  out.file_vertices.resize(n_fixed);
  const double* X = mesh.mesh.coords.data();
  for (std::size_t i = n_fixed; i < centres.size(); ++i) {
    const Pick p = best_vertex(
        comm, mesh,
        [&](LocalIndex v) {
          const bool taken = std::find(out.file_vertices.begin(), out.file_vertices.end(), mesh.original_vertex[v]) !=
                             out.file_vertices.end();
          return taken ? kInf : distance2(X + 3 * v, centres[i]);
        },
        false);
    out.origins.push_back(p.x);
    out.file_vertices.push_back(p.file_vertex);
  }
}

}  // namespace

std::array<double, 6> global_bounding_box(MPI_Comm comm, const LocalMesh& mesh) {
  double lo[3], hi[3];
  for (int c = 0; c < 3; ++c) lo[c] = kInf, hi[c] = -kInf;
  for (LocalIndex v = 0; v < mesh.n_local(); ++v)
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], mesh.mesh.coords[3 * v + c]);
      hi[c] = std::max(hi[c], mesh.mesh.coords[3 * v + c]);
    }
  double glo[3], ghi[3];
  MPI_Allreduce(lo, glo, 3, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(hi, ghi, 3, MPI_DOUBLE, MPI_MAX, comm);
  return {glo[0], glo[1], glo[2], ghi[0], ghi[1], ghi[2]};
}

void check_frame_count(const Job& job, GlobalIndex n_global_vertices) {
  const DiscretizationSpec& spec = job.discretization;
  const std::string key = spec.positions.empty() ? "discretization.frames" : "discretization.positions";
  const long long n = spec.positions.empty() ? spec.frame_count : static_cast<long long>(spec.positions.size());
  if (n > n_global_vertices)
    throw InputError(where(job) + key + ": expected at most " + std::to_string(n_global_vertices) +
                     " (the mesh's vertex count: a frame sits at a vertex), got " + std::to_string(n) +
                     (spec.positions.empty() ? "" : " positions"));
}

FramePlacement place_frames(MPI_Comm comm, const LocalMesh& mesh, const Job& job, const Model& model,
                            const VoxelGrid& grid) {
  const DiscretizationSpec& spec = job.discretization;
  FramePlacement out;
  out.anchors.assign(job.boundary.size(), -1);
  check_frame_count(job, mesh.n_global_vertices);
  const std::vector<Pick> fixed = fixed_region_vertices(comm, mesh, job, model);
  if (!spec.positions.empty()) {
    place_at_positions(comm, mesh, job, fixed, out);
    return out;
  }
  place_anchors(fixed, out);
  const std::size_t n_fixed = out.origins.size();
  if (static_cast<std::size_t>(spec.frame_count) < n_fixed)
    throw InputError(where(job) + "discretization.frames: expected at least " + std::to_string(n_fixed) +
                     " (one frame on each fixed region), got " + std::to_string(spec.frame_count));
  place_farthest(comm, mesh, spec.frame_count, out);
  if (spec.placement == FramePlacementRule::kmeans) place_kmeans(comm, mesh, grid, n_fixed, out);
  return out;
}

}  // namespace edgefem
