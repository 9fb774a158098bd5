/// \file frames_setup.cpp
/// Frame placement, weights and held frames (frames_setup.hpp).
#include "frames/frames_setup.hpp"

#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {
namespace {

using frames::Vec3;

double distance2(const double* a, const Vec3& b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}

/// Among every rank's candidate (value, file index), the one with the largest value (`largest`) or the smallest,
/// ties to the lowest file index; returns its coordinates and index. Candidates with index < 0 take no part.
struct Pick {
  double value;
  GlobalIndex file_vertex;
  Vec3 x;
};
Pick agree_on_pick(MPI_Comm comm, Pick mine, bool largest) {
  const double none = largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  double v = mine.file_vertex >= 0 ? mine.value : none, best = 0.0;
  MPI_Allreduce(&v, &best, 1, MPI_DOUBLE, largest ? MPI_MAX : MPI_MIN, comm);
  long long idx = (mine.file_vertex >= 0 && v == best) ? mine.file_vertex : std::numeric_limits<long long>::max();
  long long chosen = 0;
  MPI_Allreduce(&idx, &chosen, 1, MPI_LONG_LONG, MPI_MIN, comm);
  double x[3], out[3];
  for (int c = 0; c < 3; ++c)
    x[c] = idx == chosen && mine.file_vertex == chosen ? mine.x[c] : std::numeric_limits<double>::infinity();
  MPI_Allreduce(x, out, 3, MPI_DOUBLE, MPI_MIN, comm);
  return {best, static_cast<GlobalIndex>(chosen), {out[0], out[1], out[2]}};
}

std::array<double, 6> bounding_box(MPI_Comm comm, const LocalMesh& mesh) {
  double lo[3], hi[3];
  for (int c = 0; c < 3; ++c) lo[c] = std::numeric_limits<double>::infinity(), hi[c] = -lo[c];
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

}  // namespace

FramePlacement place_frames(MPI_Comm comm, const LocalMesh& mesh, const DiscretizationSpec& spec,
                            const std::string& job_file) {
  FramePlacement out;
  const LocalIndex n_local = mesh.n_local();
  const double* X = mesh.mesh.coords.data();
  auto local_best = [&](auto&& score, bool largest) {
    Pick mine{largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity(), -1, {}};
    for (LocalIndex v = 0; v < n_local; ++v) {
      const double s = score(v);
      const GlobalIndex f = mesh.original_vertex[v];
      const bool better = largest ? s > mine.value : s < mine.value;
      if (better || (s == mine.value && mine.file_vertex >= 0 && f < mine.file_vertex)) {
        mine = {s, f, {X[3 * v], X[3 * v + 1], X[3 * v + 2]}};
      }
    }
    return agree_on_pick(comm, mine, largest);
  };
  if (!spec.positions.empty()) {
    for (std::size_t i = 0; i < spec.positions.size(); ++i) {
      const Vec3 target = spec.positions[i];
      const Pick p = local_best([&](LocalIndex v) { return distance2(X + 3 * v, target); }, false);
      for (std::size_t j = 0; j < out.file_vertices.size(); ++j)
        if (out.file_vertices[j] == p.file_vertex) {
          std::ostringstream msg;
          msg << job_file << ":" << spec.line << ": discretization.positions[" << i << "] and positions[" << j
              << "] snap to the same mesh vertex (file index " << p.file_vertex << " at " << p.x[0] << ", " << p.x[1]
              << ", " << p.x[2] << "): expected frames at distinct vertices";
          throw InputError(msg.str());
        }
      out.origins.push_back(p.x);
      out.file_vertices.push_back(p.file_vertex);
    }
    return out;
  }
  if (spec.frame_count > mesh.n_global_vertices) {
    throw InputError(job_file + ":" + std::to_string(spec.line) + ": discretization.frames: expected at most " +
                     std::to_string(mesh.n_global_vertices) + " (the mesh's vertex count), got " +
                     std::to_string(spec.frame_count));
  }
  const auto box = bounding_box(comm, mesh);
  const Vec3 centre{0.5 * (box[0] + box[3]), 0.5 * (box[1] + box[4]), 0.5 * (box[2] + box[5])};
  std::vector<double> nearest(static_cast<std::size_t>(n_local), std::numeric_limits<double>::infinity());
  Pick p = local_best([&](LocalIndex v) { return distance2(X + 3 * v, centre); }, true);
  for (int k = 0; k < spec.frame_count; ++k) {
    if (k > 0) p = local_best([&](LocalIndex v) { return nearest[v]; }, true);
    out.origins.push_back(p.x);
    out.file_vertices.push_back(p.file_vertex);
    for (LocalIndex v = 0; v < n_local; ++v) nearest[v] = std::min(nearest[v], distance2(X + 3 * v, p.x));
  }
  return out;
}

namespace {

std::vector<double> hat_weights(MPI_Comm comm, const LocalMesh& mesh, const DiscretizationSpec& spec,
                                const FramePlacement& frames) {
  const int n = static_cast<int>(frames.origins.size());
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (spec.positions.empty()) {  // placed by count: sort along the longest bounding-box axis
    const auto box = bounding_box(comm, mesh);
    int axis = 0;
    for (int c = 1; c < 3; ++c)
      if (box[3 + c] - box[c] > box[3 + axis] - box[axis]) axis = c;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return frames.origins[a][axis] < frames.origins[b][axis]; });
  }
  const LocalIndex n_local = mesh.n_local();
  std::vector<double> w(static_cast<std::size_t>(n_local) * n, 0.0);
  for (LocalIndex v = 0; v < n_local; ++v) {
    const double* x = &mesh.mesh.coords[3 * static_cast<std::size_t>(v)];
    if (n == 1) {
      w[static_cast<std::size_t>(v)] = 1.0;
      continue;
    }
    double best = std::numeric_limits<double>::infinity(), best_s = 0.0;
    int best_seg = 0;
    for (int s = 0; s + 1 < n; ++s) {
      const Vec3& a = frames.origins[order[s]];
      const Vec3& b = frames.origins[order[s + 1]];
      double ab[3], ax[3], ab2 = 0.0, t = 0.0;
      for (int c = 0; c < 3; ++c) ab[c] = b[c] - a[c], ax[c] = x[c] - a[c], ab2 += ab[c] * ab[c], t += ab[c] * ax[c];
      t = std::clamp(t / ab2, 0.0, 1.0);
      double d2 = 0.0;
      for (int c = 0; c < 3; ++c) {
        const double r = ax[c] - t * ab[c];
        d2 += r * r;
      }
      if (d2 < best) best = d2, best_s = t, best_seg = s;
    }
    w[static_cast<std::size_t>(v) * n + order[best_seg]] = 1.0 - best_s;
    w[static_cast<std::size_t>(v) * n + order[best_seg + 1]] = best_s;
  }
  return w;
}

/// The frame whose ball holds each local vertex (-1: none): a frame's own vertex, and with several frames the
/// vertices within a quarter of the distance to the nearest other frame.
std::vector<int> frame_balls(const LocalMesh& mesh, const FramePlacement& frames) {
  const int n = static_cast<int>(frames.origins.size());
  const LocalIndex n_local = mesh.n_local();
  const double* X = mesh.mesh.coords.data();
  // Balls: radius a quarter of the distance to the nearest other frame.
  std::vector<double> radius2(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) radius2[i] = std::min(radius2[i], distance2(frames.origins[i].data(), frames.origins[j]) / 16.0);
  std::vector<int> ball(static_cast<std::size_t>(n_local), -1);  // frame whose ball holds the vertex
  for (LocalIndex v = 0; v < n_local; ++v)
    for (int i = 0; i < n; ++i)
      if (mesh.original_vertex[v] == frames.file_vertices[i] ||
          (n > 1 && distance2(X + 3 * v, frames.origins[i]) <= radius2[i]))
        ball[v] = i;
  return ball;
}

/// P1 Laplacian, COO over the local tets in global numbering (PETSc sums the partial rows).
PetscOwner<Mat, MatDestroy> laplacian(MPI_Comm comm, const LocalMesh& mesh) {
  const LocalIndex n_owned = mesh.n_owned;
  const double* X = mesh.mesh.coords.data();
  PetscOwner<Mat, MatDestroy> K;
  EDGEFEM_PETSC(MatCreate(comm, K.address()));
  EDGEFEM_PETSC(MatSetSizes(K, n_owned, n_owned, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(K, MATAIJ));
  const LocalIndex n_tets = mesh.mesh.n_tets();
  std::vector<PetscInt> rows, cols;
  std::vector<PetscScalar> values;
  rows.reserve(16 * static_cast<std::size_t>(n_tets));
  for (LocalIndex t = 0; t < n_tets; ++t) {
    const LocalIndex* v = &mesh.mesh.tets[4 * static_cast<std::size_t>(t)];
    double d[3][3];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) d[i][c] = X[3 * v[i + 1] + c] - X[3 * v[0] + c];
    auto cross = [](const double* a, const double* b, double* r) {
      r[0] = a[1] * b[2] - a[2] * b[1];
      r[1] = a[2] * b[0] - a[0] * b[2];
      r[2] = a[0] * b[1] - a[1] * b[0];
    };
    double g[4][3];
    cross(d[1], d[2], g[1]);
    cross(d[2], d[0], g[2]);
    cross(d[0], d[1], g[3]);
    const double det = d[0][0] * g[1][0] + d[0][1] * g[1][1] + d[0][2] * g[1][2];
    for (int i = 1; i < 4; ++i)
      for (int c = 0; c < 3; ++c) g[i][c] /= det;
    for (int c = 0; c < 3; ++c) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    const double volume = std::abs(det) / 6.0;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        rows.push_back(static_cast<PetscInt>(mesh.global_vertex[v[a]]));
        cols.push_back(static_cast<PetscInt>(mesh.global_vertex[v[b]]));
        values.push_back(volume * (g[a][0] * g[b][0] + g[a][1] * g[b][1] + g[a][2] * g[b][2]));
      }
  }
  EDGEFEM_PETSC(MatSetPreallocationCOO(K, static_cast<PetscCount>(rows.size()), rows.data(), cols.data()));
  EDGEFEM_PETSC(MatSetValuesCOO(K, values.data(), ADD_VALUES));
  return K;
}

/// New ghosted vectors in the mesh's layout (owned vertices, then its ghosts by global number).
struct GhostedVectors {
  MPI_Comm comm;
  LocalIndex n_owned;
  std::vector<PetscInt> ghosts;

  GhostedVectors(MPI_Comm c, const LocalMesh& mesh) : comm(c), n_owned(mesh.n_owned) {
    for (LocalIndex v = n_owned; v < mesh.n_local(); ++v)
      ghosts.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
  }
  [[nodiscard]] PetscOwner<Vec, VecDestroy> operator()() const {
    PetscOwner<Vec, VecDestroy> x;
    EDGEFEM_PETSC(VecCreateGhost(comm, n_owned, PETSC_DETERMINE, static_cast<PetscInt>(ghosts.size()), ghosts.data(),
                                 x.address()));
    return x;
  }
};

/// Right-hand sides with the original matrix K, per frame i: b_i = -K x_D,i off the balls, x_D,i on them (x_D,i:
/// 1 on frame i's ball, 0 elsewhere).
std::vector<PetscOwner<Vec, VecDestroy>> ball_rhs(Mat K, const GhostedVectors& ghosted, const std::vector<int>& ball,
                                                  int n) {
  const LocalIndex n_owned = ghosted.n_owned;
  std::vector<PetscOwner<Vec, VecDestroy>> rhs;
  for (int i = 0; i < n; ++i) {
    auto xd = ghosted();
    {
      VecArray a(xd, false);
      for (LocalIndex v = 0; v < n_owned; ++v) a.span()[v] = ball[v] == i ? 1.0 : 0.0;
    }
    auto b = ghosted();
    EDGEFEM_PETSC(MatMult(K, xd, b));
    EDGEFEM_PETSC(VecScale(b, -1.0));
    {
      VecArray ab(b, false);
      VecArray ax(xd, true);
      for (LocalIndex v = 0; v < n_owned; ++v)
        if (ball[v] >= 0) ab.span()[v] = ax.span()[v];
    }
    rhs.push_back(std::move(b));
  }
  return rhs;
}

/// CG with GAMG (options prefix frames_weights_) on K.
PetscOwner<KSP, KSPDestroy> weights_solver(MPI_Comm comm, Mat K) {
  PetscOwner<KSP, KSPDestroy> ksp;
  EDGEFEM_PETSC(KSPCreate(comm, ksp.address()));
  EDGEFEM_PETSC(KSPSetOperators(ksp, K, K));
  EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  EDGEFEM_PETSC(PCSetType(pc, PCGAMG));
  EDGEFEM_PETSC(KSPSetTolerances(ksp, 1e-13, 1e-300, PETSC_DEFAULT, 2000));
  EDGEFEM_PETSC(KSPSetOptionsPrefix(ksp, "frames_weights_"));
  EDGEFEM_PETSC(KSPSetFromOptions(ksp));
  return ksp;
}

/// Partition of unity (the sum is harmonic and 1 on every ball): a check of the solves, on every rank.
void check_partition_of_unity(MPI_Comm comm, const std::vector<double>& w, LocalIndex n_local, int n) {
  double worst = 0.0;
  for (LocalIndex v = 0; v < n_local; ++v) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += w[static_cast<std::size_t>(v) * n + i];
    worst = std::max(worst, std::abs(s - 1.0));
  }
  double global_worst = 0.0;
  MPI_Allreduce(&worst, &global_worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (!(global_worst < 1e-8))
    throw SolverError("harmonic frame weights: the weights do not sum to 1 (largest deviation " +
                      std::to_string(global_worst) + "; is every part of the mesh connected to a frame?)");
}

std::vector<double> harmonic_weights(MPI_Comm comm, const LocalMesh& mesh, const FramePlacement& frames) {
  const int n = static_cast<int>(frames.origins.size());
  const LocalIndex n_local = mesh.n_local(), n_owned = mesh.n_owned;
  const std::vector<int> ball = frame_balls(mesh, frames);
  PetscOwner<Mat, MatDestroy> K = laplacian(comm, mesh);
  const GhostedVectors ghosted(comm, mesh);
  std::vector<PetscInt> held;
  for (LocalIndex v = 0; v < n_owned; ++v)
    if (ball[v] >= 0) held.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
  const std::vector<PetscOwner<Vec, VecDestroy>> rhs = ball_rhs(K, ghosted, ball, n);
  EDGEFEM_PETSC(MatZeroRowsColumns(K, static_cast<PetscInt>(held.size()), held.data(), 1.0, nullptr, nullptr));

  PetscOwner<KSP, KSPDestroy> ksp = weights_solver(comm, K);
  std::vector<double> w(static_cast<std::size_t>(n_local) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    auto x = ghosted();
    EDGEFEM_PETSC(KSPSolve(ksp, rhs[i], x));
    KSPConvergedReason reason;
    EDGEFEM_PETSC(KSPGetConvergedReason(ksp, &reason));
    if (reason < 0)
      throw SolverError("harmonic frame weights: the Laplace solve of frame " + std::to_string(i) +
                        " did not converge (" + KSPConvergedReasons[reason] + ")");
    EDGEFEM_PETSC(VecGhostUpdateBegin(x, INSERT_VALUES, SCATTER_FORWARD));
    EDGEFEM_PETSC(VecGhostUpdateEnd(x, INSERT_VALUES, SCATTER_FORWARD));
    Vec local = nullptr;
    EDGEFEM_PETSC(VecGhostGetLocalForm(x, &local));
    {
      VecArray a(local, true);
      for (LocalIndex v = 0; v < n_local; ++v) w[static_cast<std::size_t>(v) * n + i] = a.span()[v];
    }
    EDGEFEM_PETSC(VecGhostRestoreLocalForm(x, &local));
  }
  check_partition_of_unity(comm, w, n_local, n);
  return w;
}

}  // namespace

std::vector<double> frame_weights(MPI_Comm comm, const LocalMesh& mesh, const DiscretizationSpec& spec,
                                  const FramePlacement& frames) {
  if (spec.weights == FrameWeights::hat) return hat_weights(comm, mesh, spec, frames);
  return harmonic_weights(comm, mesh, frames);
}

std::vector<int> held_frames(MPI_Comm comm, const LocalMesh& mesh, const Model& model, const Job& job,
                             const std::vector<double>& weights, int n_frames) {
  std::vector<int> held(static_cast<std::size_t>(n_frames), 0), out(held.size(), 0);
  for (std::size_t b = 0; b < job.boundary.size() && b < model.boundary_vertices.size(); ++b) {
    const auto& fix = job.boundary[b].fix;
    if (!(fix[0] && fix[1] && fix[2])) continue;
    for (const LocalIndex v : model.boundary_vertices[b]) {
      int best = 0;
      for (int i = 1; i < n_frames; ++i)
        if (weights[static_cast<std::size_t>(v) * n_frames + i] >
            weights[static_cast<std::size_t>(v) * n_frames + best])
          best = i;
      held[best] = 1;
    }
  }
  (void)mesh;
  MPI_Allreduce(held.data(), out.data(), n_frames, MPI_INT, MPI_MAX, comm);
  return out;
}

}  // namespace edgefem
