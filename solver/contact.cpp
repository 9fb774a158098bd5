// SPDX-License-Identifier: BSD-3-Clause
/// \file contact.cpp
/// One rank's contact with the obstacles and its collective parts (contact.hpp).
#include "solver/contact.hpp"

#include <petscmat.h>
#include <petscsys.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "contact/barrier.hpp"
#include "core/error.hpp"
#include "partition/collective.hpp"
#include "solver/obstacles.hpp"

namespace edgefem {
namespace {

/// The diagonal of the whole body's bounding box (collective).
double box_diagonal(MPI_Comm comm, const LocalMesh& mesh) {
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (LocalIndex v = 0; v < mesh.n_local(); ++v)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], mesh.mesh.coords[3 * static_cast<std::size_t>(v) + d]);
      hi[d] = std::max(hi[d], mesh.mesh.coords[3 * static_cast<std::size_t>(v) + d]);
    }
  double glo[3], ghi[3];
  MPI_Allreduce(lo, glo, 3, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(hi, ghi, 3, MPI_DOUBLE, MPI_MAX, comm);
  return std::sqrt((ghi[0] - glo[0]) * (ghi[0] - glo[0]) + (ghi[1] - glo[1]) * (ghi[1] - glo[1]) +
                   (ghi[2] - glo[2]) * (ghi[2] - glo[2]));
}

}  // namespace

std::vector<std::int32_t> contact_candidates(const LocalMesh& mesh, const Model& model, Vec work, int max_prescribed) {
  const LocalIndex n_owned = mesh.n_owned;
  std::vector<int> prescribed(static_cast<std::size_t>(n_owned), 0);
  for (const auto& d : model.dirichlet) ++prescribed[static_cast<std::size_t>(d.dof / 3)];
  std::vector<char> boundary(static_cast<std::size_t>(n_owned), 1);
  if (model.nodes_per_cell == 4) {  // the vertices of the boundary faces, wherever the faces are
    EDGEFEM_PETSC(VecSet(work, 0.0));
    {
      LocalForm f(work, false);
      for (const LocalIndex v : mesh.mesh.triangles) f.span()[3 * static_cast<std::size_t>(v)] = 1.0;
    }
    EDGEFEM_PETSC(VecGhostUpdateBegin(work, ADD_VALUES, SCATTER_REVERSE));
    EDGEFEM_PETSC(VecGhostUpdateEnd(work, ADD_VALUES, SCATTER_REVERSE));
    VecArray marks(work, true);
    for (LocalIndex v = 0; v < n_owned; ++v) boundary[v] = marks.span()[3 * static_cast<std::size_t>(v)] > 0.0;
  }
  std::vector<std::int32_t> candidates;
  for (LocalIndex v = 0; v < n_owned; ++v)
    if (boundary[v] && prescribed[v] <= max_prescribed) candidates.push_back(v);
  return candidates;
}

void check_contact_start(MPI_Comm comm, const Job& job, const LocalMesh& mesh,
                         const std::vector<std::unique_ptr<contact::Obstacle>>& obstacles,
                         std::span<const std::int32_t> candidates, std::span<const double> reference, bool barrier) {
  // The lowest-numbered (in the mesh file) boundary vertex on or inside an obstacle, over the ranks.
  long long first = LLONG_MAX, count = 0;
  double details[5] = {0, 0, 0, 0, 0};  // obstacle, distance, x, y, z
  for (const std::int32_t v : candidates) {
    const contact::Vec3 x = contact::load3(&reference[3 * static_cast<std::size_t>(v)]);
    for (std::size_t o = 0; o < obstacles.size(); ++o) {
      const double d = obstacles[o]->signed_distance(x);
      if (barrier ? d > 0.0 : d >= 0.0) continue;
      ++count;
      const long long id = mesh.original_vertex[static_cast<std::size_t>(v)];
      if (id < first) first = id, details[0] = static_cast<double>(o), details[1] = d, details[2] = x[0],
                      details[3] = x[1], details[4] = x[2];
      break;
    }
  }
  long long global_first = LLONG_MAX, global_count = 0;
  MPI_Allreduce(&first, &global_first, 1, MPI_LONG_LONG, MPI_MIN, comm);
  MPI_Allreduce(&count, &global_count, 1, MPI_LONG_LONG, MPI_SUM, comm);
  if (global_count == 0) return;
  int rank = 0, owner = 0, mine = 0;
  MPI_Comm_rank(comm, &rank);
  mine = first == global_first ? rank : INT_MAX;
  MPI_Allreduce(&mine, &owner, 1, MPI_INT, MPI_MIN, comm);
  MPI_Bcast(details, 5, MPI_DOUBLE, owner, comm);
  const ObstacleSpec& spec = job.obstacles[static_cast<std::size_t>(details[0])];
  char text[640];
  std::snprintf(text, sizeof text,
                "%s:%d: %s (%s): mesh vertex %lld (0-based, in the mesh's order) at (%.9g, %.9g, %.9g) is %s the "
                "obstacle at the start, %.6g deep (%lld boundary vertices are)",
                job.job_file.c_str(), spec.line, spec.key.c_str(), spec.name.c_str(), global_first, details[2],
                details[3], details[4], details[1] < 0.0 ? "inside" : "on the surface of", details[1] < 0.0 ? -details[1] : 0.0,
                global_count);
  if (barrier)
    throw InputError(std::string(text) +
                     "; the barrier method needs every boundary vertex outside every obstacle at the start: move the "
                     "obstacle or the body, or use contact method penalty");
  PetscPrintf(comm, "warning: %s; the penalty pushes them out\n", text);
}

ContactTerms::ContactTerms(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model,
                           Assembler& assembler, double dt)
    : comm_(comm), job_(job), mesh_(mesh), assembler_(assembler) {
  run_collectively(comm_, [&] { obstacles_ = make_obstacles(job_); });
  work_ = assembler_.create_vector();
  potential_ = std::make_unique<contact::ContactPotential>(obstacles_, contact_candidates(mesh_, model, work_, 2));
  potential_->set_method(job_.contact.method);
  const double diagonal = box_diagonal(comm_, mesh_);
  potential_->set_activation_distance(job_.contact.distance > 0.0 ? job_.contact.distance : 1e-3 * diagonal);
  friction_velocity_ = job_.contact.friction_velocity > 0.0 ? job_.contact.friction_velocity : 1e-3 * diagonal;
  adaptive_ = job_.contact.stiffness == 0.0 && barrier();
  potential_->set_stiffness(job_.contact.stiffness > 0.0 ? job_.contact.stiffness : automatic_stiffness(model, dt));
  max_stiffness_ = 1e4 * potential_->stiffness();
  last_min_gap_ = std::numeric_limits<double>::infinity();
  moves_.assign(3 * obstacles_.size(), 0.0);
  gradient_.assign(3 * static_cast<std::size_t>(mesh_.n_owned), 0.0);
  check_start(mesh_.mesh.coords);
}

double mean_vertex_stiffness(MPI_Comm comm, const Model& model, Vec diagonal, const std::vector<double>& lumped_mass,
                             std::span<const std::int32_t> vertices, double dt) {
  std::set<LocalIndex> prescribed;
  for (const auto& d : model.dirichlet) prescribed.insert(d.dof);
  double local[2] = {0.0, 0.0}, global[2] = {0.0, 0.0};
  {
    VecArray diag(diagonal, true);
    for (const std::int32_t v : vertices)
      for (int c = 0; c < 3; ++c) {
        const LocalIndex dof = 3 * v + c;
        if (prescribed.contains(dof)) continue;
        const auto i = static_cast<std::size_t>(dof);
        local[0] += diag.span()[i] + (dt > 0.0 ? lumped_mass[i] / (dt * dt) : 0.0);
        local[1] += 1.0;
      }
  }
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
  return global[1] > 0.0 && global[0] > 0.0 ? global[0] / global[1] : 1.0;
}

bool ContactTerms::moving() const {
  return std::any_of(job_.obstacles.begin(), job_.obstacles.end(), [](const ObstacleSpec& s) {
    return s.motion && s.motion->translate != std::array<double, 3>{0.0, 0.0, 0.0};
  });
}

double ContactTerms::automatic_stiffness(const Model& model, double dt) {
  assembler_.set_positions(assembler_.reference());
  assembler_.stiffness(assembler_.matrix());
  EDGEFEM_PETSC(MatGetDiagonal(assembler_.matrix(), work_));
  const double k =
      mean_vertex_stiffness(comm_, model, work_, assembler_.lumped_mass(), potential_->vertices(), dt);
  // The barrier's stiffness kappa b''(d) at half the activation distance equals the body's at a boundary vertex;
  // the penalty is a hundred times stiffer than the body there.
  const double dh = potential_->activation_distance();
  return barrier() ? k / contact::barrier_second_derivative(0.5 * dh, dh) : 100.0 * k;
}

void ContactTerms::check_start(const std::vector<double>& reference) {
  check_contact_start(comm_, job_, mesh_, obstacles_, potential_->vertices(), reference, barrier());
}

std::array<double, 3> ContactTerms::saved_state() const {
  return {potential_->stiffness(), stiffen_ ? 1.0 : 0.0, std::min(last_min_gap_, 1e300)};
}

void ContactTerms::restore_state(const std::array<double, 3>& state) {
  if (!(state[0] > 0.0)) return;
  potential_->set_stiffness(state[0]);
  stiffen_ = state[1] != 0.0;
  last_min_gap_ = state[2] >= 1e300 ? std::numeric_limits<double>::infinity() : state[2];
}

void ContactTerms::begin_step(Vec x, double t0, double t1, double slip_step) {
  if (stiffen_) potential_->set_stiffness(std::min(2.0 * potential_->stiffness(), max_stiffness_));
  stiffen_ = false;
  place_obstacles(job_, obstacles_, t0);
  for (std::size_t o = 0; o < obstacles_.size(); ++o) {
    const auto a = obstacle_offset(job_, job_.obstacles[o], t0), b = obstacle_offset(job_, job_.obstacles[o], t1);
    for (int d = 0; d < 3; ++d) moves_[3 * o + static_cast<std::size_t>(d)] = b[d] - a[d];
  }
  potential_->set_slip(friction_velocity_ * std::max(slip_step, 1e-12));
  const bool friction = std::any_of(obstacles_.begin(), obstacles_.end(), [](const auto& o) { return o->friction() > 0; });
  if (friction) {
    VecArray xa(x, true);
    potential_->lag_friction(xa.span(), moves_);
  }
  t0_ = t0, t1_ = t1;
  place_obstacles(job_, obstacles_, t1);
}

void ContactTerms::carry_along(Vec x) {
  if (std::all_of(moves_.begin(), moves_.end(), [](double m) { return m == 0.0; })) return;
  place_obstacles(job_, obstacles_, t0_);
  {
    VecArray xa(x, false);
    potential_->carry_along(xa.span(), moves_, kFraction);
  }
  place_obstacles(job_, obstacles_, t1_);
}

void ContactTerms::limit_prediction(Vec start, Vec x) {
  if (!barrier()) return;
  VecArray from(start, true), to(x, false);
  potential_->limit_motion(from.span(), to.span(), kFraction);
}

std::string contact_progress(const ContactStepReport& report) {
  char text[128];
  std::snprintf(text, sizeof text, "  contacts %lld  min gap %.3e  penetration %.3e", report.active, report.min_gap,
                report.penetration);
  return text;
}

void contact_vertex_fields(const contact::ContactPotential& potential, std::span<const double> x,
                           std::span<const std::int32_t> owned_vertex, std::span<const double> x_local, Vec work,
                           std::vector<double>& gap, std::vector<double>& force) {
  const std::size_t n_local = x_local.size() / 3;
  gap.assign(n_local, 0.0);
  for (std::size_t v = 0; v < n_local; ++v) gap[v] = potential.nearest_distance(contact::load3(&x_local[3 * v]));
  std::vector<double> candidate_force(x.size(), 0.0);
  potential.measure(x, candidate_force);
  EDGEFEM_PETSC(VecSet(work, 0.0));
  {
    VecArray fa(work, false);
    const std::span<double> f = fa.span();
    for (std::size_t i = 0; 3 * i + 2 < candidate_force.size(); ++i) {
      const std::size_t v = owned_vertex.empty() ? i : static_cast<std::size_t>(owned_vertex[i]);
      for (std::size_t d = 0; d < 3; ++d) f[3 * v + d] = candidate_force[3 * i + d];
    }
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(work, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(work, INSERT_VALUES, SCATTER_FORWARD));
  LocalForm f(work, true);
  force.assign(f.span().begin(), f.span().end());
}

ContactStepReport ContactTerms::end_step(Vec x) {
  contact::ContactMeasure m;
  {
    VecArray xa(x, true);
    m = potential_->measure(xa.span());
  }
  ContactStepReport r;
  r.stiffness = potential_->stiffness();
  MPI_Allreduce(&m.active, &r.active, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  MPI_Allreduce(&m.min_gap, &r.min_gap, 1, MPI_DOUBLE, MPI_MIN, comm_);
  r.penetration = std::max(0.0, -r.min_gap);
  // The stiffness grows at the next step's start (begin_step): this step's forces are reported with the
  // stiffness they were solved with.
  const double dh = potential_->activation_distance();
  stiffen_ = adaptive_ && r.min_gap < 1e-2 * dh && r.min_gap < last_min_gap_;
  last_min_gap_ = r.min_gap;
  return r;
}

void ContactTerms::add_residual(Vec x, Vec r) {
  const double t0 = MPI_Wtime();
  {
    VecArray xa(x, true), ra(r, false);
    potential_->evaluate(xa.span(), ra.span(), nullptr);
  }
  seconds_.residual += MPI_Wtime() - t0;
}

std::span<const contact::VertexBlock> ContactTerms::blocks(Vec x) {
  const double t0 = MPI_Wtime();
  {
    VecArray xa(x, true);
    potential_->evaluate(xa.span(), {}, &blocks_);
  }
  seconds_.hessian += MPI_Wtime() - t0;
  return blocks_;
}

double ContactTerms::step_limit(Vec x, Vec y) {
  const double t0 = MPI_Wtime();
  double local = 1.0, global = 1.0;
  if (barrier()) {
    VecArray xa(x, true), ya(y, true);
    local = potential_->step_limit(xa.span(), ya.span(), kFraction);
  }
  seconds_.step_limit += MPI_Wtime() - t0;  // (this rank's work, not the reduction's wait)
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MIN, comm_);
  return global;
}

double ContactTerms::energy(Vec x) {
  double local = 0.0, global = 0.0;
  {
    VecArray xa(x, true);
    local = potential_->normal_energy(xa.span());
  }
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return global;
}

void ContactTerms::vertex_fields(Vec x, std::span<const double> x_local, std::vector<double>& gap,
                                 std::vector<double>& force) {
  VecArray xa(x, true);
  contact_vertex_fields(*potential_, xa.span(), {}, x_local, work_, gap, force);
}

std::vector<double> ContactTerms::obstacle_forces(Vec x) {
  contact::ContactMeasure m;
  {
    VecArray xa(x, true);
    m = potential_->measure(xa.span());
  }
  std::vector<double> total(m.obstacle_force.size(), 0.0);
  MPI_Allreduce(m.obstacle_force.data(), total.data(), static_cast<int>(total.size()), MPI_DOUBLE, MPI_SUM, comm_);
  return total;
}

}  // namespace edgefem
