// SPDX-License-Identifier: BSD-3-Clause
/// \file laplace_weights.cpp
/// Harmonic and diffused frame weights: PETSc solves on the P1 Laplacian of the tet mesh (laplace_weights.hpp).
#include "frames/laplace_weights.hpp"

#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {
namespace {

using frames::distance2;
using frames::Vec3;

/// Per local vertex: the anchor frame of the fixed region holding it (-1: none). Owned vertices only (the boundary
/// selections are of owned vertices); the Dirichlet rows are owned rows.
std::vector<int> fixed_anchor(const LocalMesh& mesh, const Model& model, const FramePlacement& frames) {
  std::vector<int> anchor(static_cast<std::size_t>(mesh.n_local()), -1);
  for (std::size_t b = 0; b < frames.anchors.size() && b < model.boundary_vertices.size(); ++b)
    if (frames.anchors[b] >= 0)
      for (const LocalIndex v : model.boundary_vertices[b]) anchor[v] = frames.anchors[b];
  return anchor;
}

/// The P1 Laplacian, COO over the local tets in global numbering (PETSc sums the partial rows).
PetscOwner<Mat, MatDestroy> laplacian(MPI_Comm comm, const LocalMesh& mesh) {
  const LocalIndex n_owned = mesh.n_owned, n_tets = mesh.mesh.n_tets();
  const double* X = mesh.mesh.coords.data();
  PetscOwner<Mat, MatDestroy> K;
  EDGEFEM_PETSC(MatCreate(comm, K.address()));
  EDGEFEM_PETSC(MatSetSizes(K, n_owned, n_owned, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(K, MATAIJ));
  std::vector<PetscInt> rows, cols;
  std::vector<PetscScalar> values;
  rows.reserve(16 * static_cast<std::size_t>(n_tets));
  for (LocalIndex t = 0; t < n_tets; ++t) {
    const LocalIndex* v = &mesh.mesh.tets[4 * static_cast<std::size_t>(t)];
    double d[3][3], g[4][3];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) d[i][c] = X[3 * v[i + 1] + c] - X[3 * v[0] + c];
    for (int i = 0; i < 3; ++i) {  // g[i + 1] = d[i + 1] x d[i + 2] (cyclic), the P1 gradients times det
      const double* a = d[(i + 1) % 3];
      const double* b = d[(i + 2) % 3];
      g[i + 1][0] = a[1] * b[2] - a[2] * b[1];
      g[i + 1][1] = a[2] * b[0] - a[0] * b[2];
      g[i + 1][2] = a[0] * b[1] - a[1] * b[0];
    }
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

/// Solves A x = f with x = x_D on the held (owned) vertices: CG + GAMG (options prefix frames_weights_) on A with
/// the held rows and columns eliminated; the right-hand side is f - A x_D off the held vertices, x_D on them.
class DirichletSolve {
 public:
  DirichletSolve(MPI_Comm comm, const LocalMesh& mesh, Mat A, std::vector<char> held)
      : comm_(comm), mesh_(mesh), A_(A), held_(std::move(held)) {
    for (LocalIndex v = mesh.n_owned; v < mesh.n_local(); ++v)
      ghosts_.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
    std::vector<PetscInt> rows;
    for (LocalIndex v = 0; v < mesh.n_owned; ++v)
      if (held_[v]) rows.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
    EDGEFEM_PETSC(MatDuplicate(A, MAT_COPY_VALUES, reduced_.address()));
    EDGEFEM_PETSC(MatZeroRowsColumns(reduced_, static_cast<PetscInt>(rows.size()), rows.data(), 1.0, nullptr, nullptr));
    make_ksp(PCGAMG);
  }

  /// CG with preconditioner `type` on the reduced matrix (options prefix frames_weights_).
  void make_ksp(PCType type) const {
    ksp_.reset();
    EDGEFEM_PETSC(KSPCreate(comm_, ksp_.address()));
    EDGEFEM_PETSC(KSPSetOperators(ksp_, reduced_, reduced_));
    EDGEFEM_PETSC(KSPSetType(ksp_, KSPCG));
    PC pc = nullptr;
    EDGEFEM_PETSC(KSPGetPC(ksp_, &pc));
    EDGEFEM_PETSC(PCSetType(pc, type));
    EDGEFEM_PETSC(KSPSetTolerances(ksp_, kWeightSolveRtol, 1e-300, PETSC_DEFAULT, 2000));
    EDGEFEM_PETSC(KSPSetOptionsPrefix(ksp_, "frames_weights_"));
    EDGEFEM_PETSC(KSPSetFromOptions(ksp_));
  }

  /// f, x_D: per owned vertex. Returns x at every local vertex (owned, then ghosts).
  [[nodiscard]] std::vector<double> solve(std::span<const double> f, std::span<const double> x_D,
                                          const std::string& what) const {
    auto xd = ghosted(), b = ghosted(), x = ghosted();
    set_owned(xd, x_D);
    EDGEFEM_PETSC(MatMult(A_, xd, b));
    {
      VecArray ab(b, false);
      for (LocalIndex v = 0; v < mesh_.n_owned; ++v) ab.span()[v] = held_[v] ? x_D[v] : f[v] - ab.span()[v];
    }
    EDGEFEM_PETSC(KSPSolve(ksp_, b, x));
    KSPConvergedReason reason;
    EDGEFEM_PETSC(KSPGetConvergedReason(ksp_, &reason));
    if (reason == KSP_DIVERGED_PC_FAILED) {
      // GAMG cannot coarsen a system of a handful of free vertices (frames at nearly every vertex): a new CG with
      // Jacobi then, for this and the later solves (the same on every rank: the reason is collective).
      make_ksp(PCJACOBI);
      EDGEFEM_PETSC(KSPSolve(ksp_, b, x));
      EDGEFEM_PETSC(KSPGetConvergedReason(ksp_, &reason));
    }
    if (reason < 0)
      throw SolverError("frame weights: the solve of " + what + " did not converge (" + KSPConvergedReasons[reason] +
                        ")");
    EDGEFEM_PETSC(VecGhostUpdateBegin(x, INSERT_VALUES, SCATTER_FORWARD));
    EDGEFEM_PETSC(VecGhostUpdateEnd(x, INSERT_VALUES, SCATTER_FORWARD));
    Vec local = nullptr;
    EDGEFEM_PETSC(VecGhostGetLocalForm(x, &local));
    std::vector<double> out;
    {
      VecArray a(local, true);
      out.assign(a.span().begin(), a.span().begin() + mesh_.n_local());
    }
    EDGEFEM_PETSC(VecGhostRestoreLocalForm(x, &local));
    return out;
  }

 private:
  [[nodiscard]] PetscOwner<Vec, VecDestroy> ghosted() const {
    PetscOwner<Vec, VecDestroy> x;
    EDGEFEM_PETSC(VecCreateGhost(comm_, mesh_.n_owned, PETSC_DETERMINE, static_cast<PetscInt>(ghosts_.size()),
                                 ghosts_.data(), x.address()));
    return x;
  }
  void set_owned(Vec x, std::span<const double> values) const {
    VecArray a(x, false);
    std::copy(values.begin(), values.begin() + mesh_.n_owned, a.span().begin());
  }

  MPI_Comm comm_;
  const LocalMesh& mesh_;
  Mat A_;
  std::vector<char> held_;
  std::vector<PetscInt> ghosts_;
  PetscOwner<Mat, MatDestroy> reduced_;
  mutable PetscOwner<KSP, KSPDestroy> ksp_;  ///< (mutable: solve() replaces a GAMG that failed)
};

/// Frame i's Dirichlet set for every local vertex (-1: none): its ball and the fixed regions anchored to it.
std::vector<int> dirichlet_sets(const LocalMesh& mesh, const std::vector<int>& anchor, const FramePlacement& frames) {
  const int n = static_cast<int>(frames.origins.size());
  const double* X = mesh.mesh.coords.data();
  std::vector<double> radius2(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) radius2[i] = std::min(radius2[i], distance2(frames.origins[i].data(), frames.origins[j]) / 16.0);
  std::vector<int> set(static_cast<std::size_t>(mesh.n_local()), -1);
  for (LocalIndex v = 0; v < mesh.n_local(); ++v) {
    for (int i = 0; i < n; ++i)
      if (mesh.original_vertex[v] == frames.file_vertices[i] ||
          (n > 1 && distance2(X + 3 * v, frames.origins[i]) <= radius2[i]))
        set[v] = i;
    if (anchor[v] >= 0) set[v] = anchor[v];
  }
  return set;
}

}  // namespace

std::vector<double> harmonic_weights(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                     const FramePlacement& frames) {
  const int n = static_cast<int>(frames.origins.size());
  const std::vector<int> set = dirichlet_sets(mesh, fixed_anchor(mesh, model, frames), frames);
  const PetscOwner<Mat, MatDestroy> K = laplacian(comm, mesh);
  std::vector<char> held(static_cast<std::size_t>(mesh.n_local()));
  for (std::size_t v = 0; v < held.size(); ++v) held[v] = set[v] >= 0;
  const DirichletSolve solver(comm, mesh, K, held);
  const std::vector<double> zero(static_cast<std::size_t>(mesh.n_owned), 0.0);
  std::vector<double> w(static_cast<std::size_t>(mesh.n_local()) * n), x_D(zero.size());
  for (int i = 0; i < n; ++i) {
    for (LocalIndex v = 0; v < mesh.n_owned; ++v) x_D[v] = set[v] == i ? 1.0 : 0.0;
    const std::vector<double> x = solver.solve(zero, x_D, "the Laplace equation of frame " + std::to_string(i));
    for (std::size_t v = 0; v < x.size(); ++v) w[v * n + i] = x[v];
  }
  return w;
}

std::vector<int> vertex_anchors(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                const FramePlacement& frames) {
  const std::vector<int> owned = fixed_anchor(mesh, model, frames);
  std::vector<PetscInt> ghosts;
  for (LocalIndex v = mesh.n_owned; v < mesh.n_local(); ++v)
    ghosts.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
  PetscOwner<Vec, VecDestroy> x;
  EDGEFEM_PETSC(VecCreateGhost(comm, mesh.n_owned, PETSC_DETERMINE, static_cast<PetscInt>(ghosts.size()), ghosts.data(),
                               x.address()));
  {
    VecArray a(x, false);
    for (LocalIndex v = 0; v < mesh.n_owned; ++v) a.span()[v] = owned[v];
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(x, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x, INSERT_VALUES, SCATTER_FORWARD));
  Vec local = nullptr;
  EDGEFEM_PETSC(VecGhostGetLocalForm(x, &local));
  std::vector<int> anchor(owned.size());
  {
    VecArray a(local, true);
    for (std::size_t v = 0; v < anchor.size(); ++v) anchor[v] = static_cast<int>(std::lround(a.span()[v]));
  }
  EDGEFEM_PETSC(VecGhostRestoreLocalForm(x, &local));
  return anchor;
}

}  // namespace edgefem
