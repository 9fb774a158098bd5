// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_contact.cpp
/// The position-based integrator's contact constraints (pbd_contact.hpp).
#include "pbd/pbd_contact.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "linalg/petsc_util.hpp"
#include "partition/collective.hpp"
#include "solver/obstacles.hpp"

namespace edgefem {

using contact::Vec3;
using contact::operator+;
using contact::operator-;
using contact::operator*;

PbdContact::PbdContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Vec work)
    : comm_(comm), job_(job) {
  run_collectively(comm_, [&] { obstacles_ = make_obstacles(job_); });
  candidates_ = contact_candidates(mesh, model, work, 0);
  moves_.assign(3 * obstacles_.size(), 0.0);
  double extent[6] = {-1e300, -1e300, -1e300, -1e300, -1e300, -1e300};  // -min, max per axis
  for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(mesh.n_owned); ++i)
    extent[i % 3] = std::max(extent[i % 3], -mesh.mesh.coords[i]),
              extent[3 + i % 3] = std::max(extent[3 + i % 3], mesh.mesh.coords[i]);
  MPI_Allreduce(MPI_IN_PLACE, extent, 6, MPI_DOUBLE, MPI_MAX, comm_);
  double diagonal = 0.0;
  for (int d = 0; d < 3; ++d) diagonal += (extent[3 + d] + extent[d]) * (extent[3 + d] + extent[d]);
  reach_floor_ = 2e-2 * std::sqrt(diagonal);
}

void PbdContact::begin_step(double t0, double t1, Vec x_n, Vec x_pred) {
  const auto clock = std::chrono::steady_clock::now();
  for (std::size_t o = 0; o < obstacles_.size(); ++o) {
    const auto a = obstacle_offset(job_, job_.obstacles[o], t0), b = obstacle_offset(job_, job_.obstacles[o], t1);
    for (int d = 0; d < 3; ++d) moves_[3 * o + static_cast<std::size_t>(d)] = b[d] - a[d];
  }
  place_obstacles(job_, obstacles_, t1);
  VecArray start(x_n, true), predicted(x_pred, true);
  auto at = [](const VecArray& a, std::int32_t v) { return contact::load3(&a.span()[3 * static_cast<std::size_t>(v)]); };
  double reach = reach_floor_;
  for (const std::int32_t v : candidates_) reach = std::max(reach, contact::norm(at(predicted, v) - at(start, v)));
  MPI_Allreduce(MPI_IN_PLACE, &reach, 1, MPI_DOUBLE, MPI_MAX, comm_);
  contacts_.clear();
  group_.assign(1, 0);
  for (const std::int32_t v : candidates_) {
    const Vec3 p = at(predicted, v), p_n = at(start, v);
    const double moved = contact::norm(p - p_n);
    for (std::size_t o = 0; o < obstacles_.size(); ++o) {
      const Vec3 move = contact::load3(&moves_[3 * o]);
      contact::Proximity prox;
      if (!obstacles_[o]->proximity(p, moved + contact::norm(move) + reach, false, prox)) continue;
      Contact c{v, static_cast<std::int32_t>(o), p_n + move, Vec3{}, 0.0};
      if (obstacles_[o]->convex()) {
        contact::Proximity start;
        obstacles_[o]->proximity(p_n, std::numeric_limits<double>::infinity(), false, start);
        c.plane_point = start.point, c.plane_normal = start.normal;
      }
      contacts_.push_back(c);
    }
    if (contacts_.size() > group_.back()) group_.push_back(contacts_.size());
  }
  seconds_.step_limit += std::chrono::duration<double>(std::chrono::steady_clock::now() - clock).count();
}

void PbdContact::project_one(Contact& c, const Vec3& y, Vec3& share) const {
  using namespace contact;  // Vec3's operators
  const Obstacle& obstacle = *obstacles_[static_cast<std::size_t>(c.obstacle)];
  Proximity prox;
  const bool planar = obstacle.convex();
  const bool near = planar || obstacle.proximity(y, 0.0, false, prox);
  if (planar) prox.distance = dot(y - c.plane_point, c.plane_normal), prox.normal = c.plane_normal;
  if (!near || !(prox.distance < 0.0)) {
    share = Vec3{}, c.normal = 0.0;  // outside: the constraint is inactive
    return;
  }
  const double lambda = -prox.distance;
  share = lambda * prox.normal;
  c.normal = lambda;
  const double mu = obstacle.friction();
  if (!(mu > 0.0)) return;
  const Vec3 slip = y + share - c.start;
  const Vec3 tangential = slip - dot(slip, prox.normal) * prox.normal;
  const double length = norm(tangential);
  if (length > 0.0) share = share - std::min(1.0, mu * lambda / length) * tangential;
}

void PbdContact::project(double* x) {
  const auto clock = std::chrono::steady_clock::now();
  const auto n_groups = static_cast<std::int64_t>(group_.size()) - 1;
#pragma omp parallel for schedule(static)
  for (std::int64_t g = 0; g < n_groups; ++g) {
    const auto first = group_[static_cast<std::size_t>(g)], last = group_[static_cast<std::size_t>(g) + 1];
    double* p = x + 3 * static_cast<std::size_t>(contacts_[first].vertex);
    Vec3 position = contact::load3(p);
    for (std::size_t k = first; k < last; ++k) {
      Contact& c = contacts_[k];
      const Vec3 y = position - c.share;
      project_one(c, y, c.share);
      position = y + c.share;
    }
    for (int d = 0; d < 3; ++d) p[d] = position[d];
  }
  seconds_.residual += std::chrono::duration<double>(std::chrono::steady_clock::now() - clock).count();
}

ContactStepReport PbdContact::report(Vec x) {
  double gap = std::numeric_limits<double>::infinity();
  long long active = 0;
  {
    VecArray xa(x, true);
    for (const std::int32_t vertex : candidates_) {
      const Vec3 p = contact::load3(&xa.span()[3 * static_cast<std::size_t>(vertex)]);
      for (const auto& o : obstacles_) gap = std::min(gap, o->signed_distance(p));
    }
    for (const Contact& c : contacts_) active += c.normal > 0.0 ? 1 : 0;
  }
  ContactStepReport r;
  MPI_Allreduce(&active, &r.active, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  MPI_Allreduce(&gap, &r.min_gap, 1, MPI_DOUBLE, MPI_MIN, comm_);
  r.penetration = std::max(0.0, -r.min_gap);
  return r;
}

std::vector<double> PbdContact::obstacle_forces(std::span<const double> inverse_mass, double dt) {
  std::vector<double> f(3 * obstacles_.size(), 0.0);
  for (const Contact& c : contacts_) {
    const double w = inverse_mass[3 * static_cast<std::size_t>(c.vertex)];
    if (!(w > 0.0)) continue;
    for (int d = 0; d < 3; ++d) f[3 * static_cast<std::size_t>(c.obstacle) + d] += c.share[d] / (w * dt * dt);
  }
  MPI_Allreduce(MPI_IN_PLACE, f.data(), static_cast<int>(f.size()), MPI_DOUBLE, MPI_SUM, comm_);
  return f;
}

void PbdContact::vertex_fields(std::span<const double> x_local, std::span<const double> inverse_mass, double dt,
                               std::vector<double>& gap, std::vector<double>& force) const {
  gap.assign(x_local.size() / 3, std::numeric_limits<double>::infinity());
  force.assign(x_local.size(), 0.0);
  for (std::size_t v = 0; v < gap.size(); ++v)
    for (const auto& o : obstacles_) gap[v] = std::min(gap[v], o->signed_distance(contact::load3(&x_local[3 * v])));
  for (const Contact& c : contacts_) {
    const auto v = 3 * static_cast<std::size_t>(c.vertex);
    if (inverse_mass[v] > 0.0)
      for (int d = 0; d < 3; ++d) force[v + static_cast<std::size_t>(d)] += c.share[d] / (inverse_mass[v] * dt * dt);
  }
}

}  // namespace edgefem
