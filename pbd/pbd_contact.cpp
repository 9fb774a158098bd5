// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_contact.cpp
/// The position-based integrator's contact (pbd_contact.hpp).
#include "pbd/pbd_contact.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "linalg/petsc_util.hpp"
#include "partition/collective.hpp"
#include "solver/obstacles.hpp"

namespace edgefem {

PbdContact::PbdContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Vec work)
    : comm_(comm), job_(job) {
  run_collectively(comm_, [&] { obstacles_ = make_obstacles(job_); });
  candidates_ = contact_candidates(mesh, model, work, 0);
  moves_.assign(3 * obstacles_.size(), 0.0);
}

void PbdContact::begin_step(double t0, double t1) {
  for (std::size_t o = 0; o < obstacles_.size(); ++o) {
    const auto a = obstacle_offset(job_, job_.obstacles[o], t0), b = obstacle_offset(job_, job_.obstacles[o], t1);
    for (int d = 0; d < 3; ++d) moves_[3 * o + static_cast<std::size_t>(d)] = b[d] - a[d];
  }
  place_obstacles(job_, obstacles_, t1);
}

long long PbdContact::project(Vec x, Vec x_n) {
  using namespace contact;  // Vec3 and its operators
  VecArray xa(x, false), start(x_n, true);
  long long projected = 0;
  for (const std::int32_t vertex : candidates_) {
    const std::size_t v = 3 * static_cast<std::size_t>(vertex);
    Vec3 p = contact::load3(&xa.span()[v]);
    const Vec3 p_n = contact::load3(&start.span()[v]);
    for (std::size_t o = 0; o < obstacles_.size(); ++o) {
      contact::Proximity prox;
      if (!obstacles_[o]->proximity(p, 0.0, false, prox) || !(prox.distance < 0.0)) continue;
      const double depth = -prox.distance;
      p = p + depth * prox.normal;  // onto the surface
      const double mu = obstacles_[o]->friction();
      if (mu > 0.0) {  // Macklin et al. 2014, (24): the tangential move relative to the obstacle's
        const Vec3 move = p - p_n - contact::load3(&moves_[3 * o]);
        const Vec3 tangential = move - contact::dot(move, prox.normal) * prox.normal;
        const double slip = contact::norm(tangential);
        if (slip > 0.0) p = p - std::min(mu * depth / slip, 1.0) * tangential;
      }
      ++projected;
    }
    for (int k = 0; k < 3; ++k) xa.span()[v + static_cast<std::size_t>(k)] = p[k];
  }
  return projected;
}

ContactStepReport PbdContact::report(Vec x, double touch) {
  double gap = std::numeric_limits<double>::infinity();
  long long active = 0;
  {
    VecArray xa(x, true);
    for (const std::int32_t vertex : candidates_) {
      const contact::Vec3 p = contact::load3(&xa.span()[3 * static_cast<std::size_t>(vertex)]);
      for (const auto& o : obstacles_) {
        const double d = o->signed_distance(p);
        gap = std::min(gap, d);
        active += d <= touch ? 1 : 0;
      }
    }
  }
  ContactStepReport r;
  MPI_Allreduce(&active, &r.active, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  MPI_Allreduce(&gap, &r.min_gap, 1, MPI_DOUBLE, MPI_MIN, comm_);
  r.penetration = std::max(0.0, -r.min_gap);
  return r;
}

std::vector<double> PbdContact::gaps(std::span<const double> x_local) const {
  std::vector<double> out(x_local.size() / 3, std::numeric_limits<double>::infinity());
  for (std::size_t v = 0; v < out.size(); ++v)
    for (const auto& o : obstacles_) out[v] = std::min(out[v], o->signed_distance(contact::load3(&x_local[3 * v])));
  return out;
}

}  // namespace edgefem
