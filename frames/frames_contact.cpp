// SPDX-License-Identifier: BSD-3-Clause
/// \file frames_contact.cpp
/// Contact of the frame-based model (frames_contact.hpp).
#include "frames/frames_contact.hpp"

#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "contact/barrier.hpp"
#include "core/error.hpp"
#include "linalg/petsc_util.hpp"
#include "partition/collective.hpp"
#include "solver/obstacles.hpp"

namespace edgefem {
namespace {
using contact::operator+;
using contact::operator-;
using contact::operator*;

/// The bounding-box diagonal and the mean tet size cbrt(V / n) of the body, over the ranks.
std::array<double, 2> body_scales(MPI_Comm comm, const LocalMesh& mesh) {
  double box[6] = {-1e300, -1e300, -1e300, -1e300, -1e300, -1e300};  // -min, max
  for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(mesh.n_local()); ++i)
    box[i % 3] = std::max(box[i % 3], -mesh.mesh.coords[i]), box[3 + i % 3] = std::max(box[3 + i % 3], mesh.mesh.coords[i]);
  MPI_Allreduce(MPI_IN_PLACE, box, 6, MPI_DOUBLE, MPI_MAX, comm);
  double volume[2] = {0.0, static_cast<double>(mesh.mesh.n_tets())};
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t) {
    const LocalIndex* v = &mesh.mesh.tets[4 * static_cast<std::size_t>(t)];
    const contact::Vec3 x0 = contact::load3(&mesh.mesh.coords[3 * static_cast<std::size_t>(v[0])]);
    const contact::Vec3 a = contact::load3(&mesh.mesh.coords[3 * static_cast<std::size_t>(v[1])]) - x0;
    const contact::Vec3 b = contact::load3(&mesh.mesh.coords[3 * static_cast<std::size_t>(v[2])]) - x0;
    const contact::Vec3 c = contact::load3(&mesh.mesh.coords[3 * static_cast<std::size_t>(v[3])]) - x0;
    volume[0] += std::abs(contact::dot(a, contact::cross(b, c))) / 6.0;
  }
  MPI_Allreduce(MPI_IN_PLACE, volume, 2, MPI_DOUBLE, MPI_SUM, comm);
  double diagonal = 0.0;
  for (int d = 0; d < 3; ++d) diagonal += (box[3 + d] + box[d]) * (box[3 + d] + box[d]);
  return {std::sqrt(diagonal), volume[1] > 0.0 ? std::cbrt(volume[0] / volume[1]) : std::sqrt(diagonal)};
}

/// A ghosted block-3 vector of the mesh's owned vertices (their ghosts the mesh's). Collective.
PetscOwner<Vec, VecDestroy> vertex_vector(MPI_Comm comm, const LocalMesh& mesh) {
  std::vector<PetscInt> ghosts;
  for (LocalIndex v = mesh.n_owned; v < mesh.n_local(); ++v) ghosts.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
  PetscOwner<Vec, VecDestroy> work;
  EDGEFEM_PETSC(VecCreateGhostBlock(comm, 3, 3 * static_cast<PetscInt>(mesh.n_owned), PETSC_DECIDE,
                                    static_cast<PetscInt>(ghosts.size()), ghosts.data(), work.address()));
  return work;
}

}  // namespace

FrameContact::FrameContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model,
                           std::span<const double> weights, int n_frames)
    : comm_(comm), method_(job.contact.method), job_(job), work_(vertex_vector(comm, mesh)) {
  run_collectively(comm_, [&] { obstacles_ = make_obstacles(job_); });
  place(0.0);
  // Owned boundary vertices not held in all three components.
  candidates_ = contact_candidates(mesh, model, work_.get(), 2);
  const std::vector<std::int32_t>& candidates = candidates_;
  for (const std::int32_t v : candidates) {
    const std::size_t k = 3 * static_cast<std::size_t>(v);
    points_.point.push_back({mesh.mesh.coords[k], mesh.mesh.coords[k + 1], mesh.mesh.coords[k + 2]});
    reference_.insert(reference_.end(), &mesh.mesh.coords[k], &mesh.mesh.coords[k] + 3);
    for (int i = 0; i < n_frames; ++i) {
      const double w = weights[static_cast<std::size_t>(v) * static_cast<std::size_t>(n_frames) + static_cast<std::size_t>(i)];
      weights_.push_back(w);
      if (w == 0.0) continue;
      frames::Influence in;
      in.frame = i;
      in.c[0] = w;
      points_.influences.push_back(in);
    }
    points_.offsets.push_back(static_cast<int>(points_.influences.size()));
  }
  const auto [diagonal, size] = body_scales(comm, mesh);
  dh_ = job.contact.distance > 0.0 ? job.contact.distance : 1e-3 * diagonal;
  double young = 0.0;
  for (const MaterialSpec& m : job.materials) young = std::max(young, m.young);
  const double k = young * size;  // the order of a vertex's stiffness in the tet model
  stiffness_ = job.contact.stiffness > 0.0 ? job.contact.stiffness
               : barrier()                 ? k / contact::barrier_second_derivative(0.5 * dh_, dh_)
                                           : 100.0 * k;
  friction_velocity_ = job.contact.friction_velocity > 0.0 ? job.contact.friction_velocity : 1e-3 * diagonal;
  check_contact_start(comm, job, mesh, obstacles_, candidates, mesh.mesh.coords, barrier());
  std::vector<std::int32_t> indices(points_.size());
  std::iota(indices.begin(), indices.end(), 0);
  terms_ = std::make_unique<contact::ContactPotential>(obstacles_, std::move(indices));
  terms_->set_method(method_);
  terms_->set_activation_distance(dh_);
  terms_->set_stiffness(stiffness_);
  potential_ = [this](std::size_t k, const frames::Vec3& p, double* g, double* h) {
    contact::Vec3 gradient{};
    contact::Mat3 hessian{};
    const double energy = terms_->point_terms(k, p, &gradient, h ? &hessian : nullptr);
    for (int c = 0; c < 3; ++c) g[c] += gradient[c];
    if (h)
      for (int c = 0; c < 9; ++c) h[c] += hessian[c];
    return energy;
  };
}

void FrameContact::begin_step(std::span<const double> x, double slip_step, double t0, double t1) {
  terms_->set_slip(friction_velocity_ * std::max(slip_step, 1e-12));
  place(t0);
  terms_->lag_friction(x, moves(t0, t1));
}

void FrameContact::place(double t) { place_obstacles(job_, obstacles_, t); }

bool FrameContact::moving() const {
  return std::any_of(job_.obstacles.begin(), job_.obstacles.end(), [](const ObstacleSpec& o) { return o.motion.has_value(); });
}

std::vector<double> FrameContact::moves(double a, double b) const {
  std::vector<double> out(3 * obstacles_.size());
  for (std::size_t o = 0; o < obstacles_.size(); ++o) {
    const auto from = obstacle_offset(job_, job_.obstacles[o], a), to = obstacle_offset(job_, job_.obstacles[o], b);
    for (int d = 0; d < 3; ++d) out[3 * o + static_cast<std::size_t>(d)] = to[d] - from[d];
  }
  return out;
}

double FrameContact::advance(std::span<const double> x, double s, double to) {
  if (!moving()) {
    place(to);
    return to;
  }
  double trial = to;
  std::vector<double> copy(x.size());
  for (int halving = 0; halving < 60; ++halving, trial = s + 0.5 * (trial - s)) {
    place(s);
    std::copy(x.begin(), x.end(), copy.begin());
    long long carried = terms_->carry_along(copy, moves(s, trial), kAdvance);
    MPI_Allreduce(MPI_IN_PLACE, &carried, 1, MPI_LONG_LONG, MPI_SUM, comm_);
    if (carried == 0) {
      place(trial);
      return trial;
    }
  }
  place(s);
  throw SolverError("frames: an obstacle's move from t = " + std::to_string(s) + " cannot be followed: a contact "
                    "point stays in its way however small the move (a point held by the fixed frames?)");
}

double FrameContact::step_limit(std::span<const double> x0, std::span<const double> x1) const {
  const double t0 = MPI_Wtime();
  double limit = 1.0;
  if (barrier()) {  // (ContactPotential's: x -> x - t y, y = x0 - x1)
    std::vector<double> y(x0.size());
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = x0[i] - x1[i];
    limit = terms_->step_limit(x0, y, kFraction);
  }
  seconds_.step_limit += MPI_Wtime() - t0;  // (this rank's checks, not the reduction: as the tets')
  MPI_Allreduce(MPI_IN_PLACE, &limit, 1, MPI_DOUBLE, MPI_MIN, comm_);
  return limit;
}

void FrameContact::vertex_fields(std::span<const double> x, std::span<const double> x_local, std::vector<double>& gap,
                                 std::vector<double>& force) const {
  contact_vertex_fields(*terms_, x, candidates_, x_local, work_.get(), gap, force);
}

ContactStepReport FrameContact::report(std::span<const double> x, std::vector<double>& forces) const {
  const contact::ContactMeasure m = terms_->measure(x);  // (normal and friction forces)
  forces = m.obstacle_force;
  ContactStepReport r;
  MPI_Allreduce(&m.active, &r.active, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  MPI_Allreduce(&m.min_gap, &r.min_gap, 1, MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, forces.data(), static_cast<int>(forces.size()), MPI_DOUBLE, MPI_SUM, comm_);
  r.penetration = std::max(0.0, -r.min_gap);
  r.stiffness = stiffness_;
  return r;
}

}  // namespace edgefem
