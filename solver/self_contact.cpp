// SPDX-License-Identifier: BSD-3-Clause
/// \file self_contact.cpp
/// Self-contact's collective parts (self_contact.hpp).
#include "solver/self_contact.hpp"

#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "contact/barrier.hpp"
#include "contact/self_intersection.hpp"
#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "solver/contact.hpp"

namespace edgefem {
namespace {

using Triangle = std::array<long long, 3>;

/// Every rank's surface triangles (by original vertex), the same list on every rank: sorted by their sorted vertex
/// triples, each once. Collective.
std::vector<Triangle> all_surface_triangles(MPI_Comm comm, const LocalMesh& mesh) {
  std::vector<long long> local;
  local.reserve(mesh.mesh.triangles.size());
  for (const LocalIndex v : mesh.mesh.triangles) local.push_back(mesh.original_vertex[static_cast<std::size_t>(v)]);
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(local.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displacements(static_cast<std::size_t>(size), 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < size; ++r) displacements[r] = displacements[r - 1] + counts[r - 1];
  std::vector<long long> all(static_cast<std::size_t>(displacements.back() + counts.back()));
  MPI_Allgatherv(local.data(), n, MPI_LONG_LONG, all.data(), counts.data(), displacements.data(), MPI_LONG_LONG, comm);
  std::vector<std::pair<Triangle, Triangle>> keyed;  // (sorted, as given)
  for (std::size_t t = 0; t + 2 < all.size(); t += 3) {
    Triangle given{all[t], all[t + 1], all[t + 2]}, sorted = given;
    std::sort(sorted.begin(), sorted.end());
    keyed.emplace_back(sorted, given);
  }
  std::sort(keyed.begin(), keyed.end());
  keyed.erase(std::unique(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
              keyed.end());
  std::vector<Triangle> triangles;
  triangles.reserve(keyed.size());
  for (const auto& k : keyed) triangles.push_back(k.second);
  return triangles;
}

}  // namespace

SelfContactTerms::SelfContactTerms(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model,
                                   Assembler& assembler, double dt, bool barrier)
    : comm_(comm), assembler_(assembler), barrier_(barrier) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const std::vector<Triangle> triangles = all_surface_triangles(comm_, mesh);
  std::vector<long long> ids;
  for (const Triangle& t : triangles) ids.insert(ids.end(), t.begin(), t.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto surface_index = [&](long long id) {
    return static_cast<int>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  const std::vector<int> owner = set_up_exchange(mesh, ids);
  std::vector<double> rest;  // through the same gather, from the mesh's coordinates
  gather_all(std::span<const double>(mesh.mesh.coords), rest);
  std::vector<std::array<int, 3>> surface_triangles;
  for (const Triangle& t : triangles) surface_triangles.push_back({surface_index(t[0]), surface_index(t[1]), surface_index(t[2])});
  contact::SelfSurface surface = contact::make_self_surface(std::move(surface_triangles), rest);
  for (std::size_t s = 0; s < ids.size(); ++s) surface.point_owned[s] = owner[s] == rank;
  for (std::size_t e = 0; e < surface.edges.size(); ++e)
    surface.edge_owned[e] = owner[static_cast<std::size_t>(surface.edges[e][0])] == rank;
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (std::size_t i = 0; i < rest.size(); ++i) lo[i % 3] = std::min(lo[i % 3], rest[i]), hi[i % 3] = std::max(hi[i % 3], rest[i]);
  const double diagonal = std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                    (hi[2] - lo[2]) * (hi[2] - lo[2]));
  const double dh = job.contact.distance > 0.0 ? job.contact.distance : 1e-3 * diagonal;
  potential_ = std::make_unique<contact::SelfPotential>(std::move(surface), dh, 1.0);
  friction_ = job.contact.self_friction;
  friction_velocity_ = job.contact.friction_velocity > 0.0 ? job.contact.friction_velocity : 1e-3 * diagonal;
  if (barrier)
    potential_->set_stiffness(job.contact.stiffness > 0.0 ? job.contact.stiffness : automatic_stiffness(model, dt, dh));
  gradient_.assign(rest.size(), 0.0);
  {  // the free dofs of the surface vertices, through the same gather
    PetscOwner<Vec, VecDestroy> mask = assembler_.create_vector();
    EDGEFEM_PETSC(VecSet(mask, 1.0));
    {
      VecArray m(mask, false);
      for (const auto& d : model.dirichlet)
        if (d.dof < 3 * mesh.n_owned) m.span()[static_cast<std::size_t>(d.dof)] = 0.0;
    }
    gather_all(mask, free_);
  }
  check_start(job, rest);  // (with the whole surface at hand)
  // The ghost layer: queries inflate boxes by up to dh / 2 + dh (the candidate list's reach); a layer serves
  // while every vertex stays within reach_ of where it was built.
  exchange_ = std::make_unique<SelfExchange>(comm_, owner, potential_->surface().edges, 1.5 * dh);
  potential_->set_known(exchange_->layer()->known);
  reach_ = 4.0 * dh;
}

std::vector<int> SelfContactTerms::set_up_exchange(const LocalMesh& mesh, const std::vector<long long>& ids) {
  int size = 0;
  MPI_Comm_size(comm_, &size);
  const auto surface_index = [&](long long id) {
    return static_cast<int>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  for (LocalIndex v = 0; v < mesh.n_owned; ++v) {
    const long long id = mesh.original_vertex[static_cast<std::size_t>(v)];
    if (!std::binary_search(ids.begin(), ids.end(), id)) continue;
    owned_local_.push_back(v);
    owned_surface_.push_back(surface_index(id));
  }
  const int n_owned = static_cast<int>(owned_local_.size());
  counts_.assign(static_cast<std::size_t>(size), 0);
  displacements_.assign(static_cast<std::size_t>(size), 0);
  MPI_Allgather(&n_owned, 1, MPI_INT, counts_.data(), 1, MPI_INT, comm_);
  std::vector<int> vertex_displacements(static_cast<std::size_t>(size), 0);
  for (int r = 1; r < size; ++r) vertex_displacements[r] = vertex_displacements[r - 1] + counts_[r - 1];
  gather_surface_.assign(ids.size(), 0);
  MPI_Allgatherv(owned_surface_.data(), n_owned, MPI_INT, gather_surface_.data(), counts_.data(),
                 vertex_displacements.data(), MPI_INT, comm_);
  std::vector<int> owner(ids.size(), -1);
  for (int r = 0; r < size; ++r)
    for (int k = 0; k < counts_[r]; ++k) owner[static_cast<std::size_t>(gather_surface_[vertex_displacements[r] + k])] = r;
  {  // the global dof of each surface vertex (owned vertices are numbered first, 3 dofs each, from the range's start)
    PetscOwner<Vec, VecDestroy> layout = assembler_.create_vector();
    PetscInt begin = 0;
    EDGEFEM_PETSC(VecGetOwnershipRange(layout, &begin, nullptr));
    std::vector<long long> mine, all(ids.size());
    for (const std::int32_t v : owned_local_) mine.push_back(static_cast<long long>(begin) + 3LL * v);
    MPI_Allgatherv(mine.data(), n_owned, MPI_LONG_LONG, all.data(), counts_.data(), vertex_displacements.data(),
                   MPI_LONG_LONG, comm_);
    global_dof_.assign(ids.size(), 0);
    for (std::size_t k = 0; k < ids.size(); ++k)
      global_dof_[static_cast<std::size_t>(gather_surface_[k])] = static_cast<PetscInt>(all[k]);
  }
  for (int r = 0; r < size; ++r) counts_[r] *= 3, displacements_[r] = 3 * vertex_displacements[r];
  return owner;
}

void SelfContactTerms::check_start(const Job& job, const std::vector<double>& rest) {
  // The start: no intersection and no touching pair (the barrier would be infinite).
  const long long crossing = contact::count_intersecting_pairs(rest, potential_->surface().triangles);
  contact::SelfMeasure m = potential_->measure(rest, barrier_);
  double min_distance = m.min_distance;
  MPI_Allreduce(MPI_IN_PLACE, &min_distance, 1, MPI_DOUBLE, MPI_MIN, comm_);
  if (crossing > 0 || !(min_distance > 0.0)) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "%s:%d: contact.self: the body's surface %s at the start (%lld pairs of triangles intersect, the "
                  "closest pair is %.6g apart); self-contact needs a surface free of intersections",
                  job.job_file.c_str(), job.contact.line, crossing > 0 ? "intersects itself" : "touches itself",
                  crossing, min_distance);
    throw InputError(text);
  }
}

double SelfContactTerms::automatic_stiffness(const Model& model, double dt, double dh) {
  assembler_.set_positions(assembler_.reference());
  assembler_.stiffness(assembler_.matrix());
  PetscOwner<Vec, VecDestroy> work = assembler_.create_vector();
  EDGEFEM_PETSC(MatGetDiagonal(assembler_.matrix(), work));
  const double k = mean_vertex_stiffness(comm_, model, work, assembler_.lumped_mass(), owned_local_, dt);
  return k / contact::barrier_second_derivative(0.5 * dh, dh);
}

void SelfContactTerms::gather_all(Vec x, std::vector<double>& out) {
  VecArray xa(x, true);
  gather_all(xa.span(), out);
}

void SelfContactTerms::gather_all(std::span<const double> owned, std::vector<double>& out) {
  buffer_.resize(3 * owned_local_.size());
  for (std::size_t k = 0; k < owned_local_.size(); ++k)
    for (int d = 0; d < 3; ++d) buffer_[3 * k + d] = owned[3 * static_cast<std::size_t>(owned_local_[k]) + d];
  const std::size_t n = gather_surface_.size();
  std::vector<double> gathered(3 * n);
  MPI_Allgatherv(buffer_.data(), static_cast<int>(buffer_.size()), MPI_DOUBLE, gathered.data(), counts_.data(),
                 displacements_.data(), MPI_DOUBLE, comm_);
  out.assign(3 * n, 0.0);
  for (std::size_t k = 0; k < n; ++k)
    for (int d = 0; d < 3; ++d) out[3 * static_cast<std::size_t>(gather_surface_[k]) + d] = gathered[3 * k + d];
}

void SelfContactTerms::load(Vec x, std::vector<double>& out) {
  VecArray xa(x, true);
  load(xa.span(), out);
}

void SelfContactTerms::load(std::span<const double> owned, std::vector<double>& out) {
  out.resize(3 * static_cast<std::size_t>(n_surface_vertices()), 0.0);
  for (std::size_t k = 0; k < owned_local_.size(); ++k)
    for (int d = 0; d < 3; ++d)
      out[3 * static_cast<std::size_t>(owned_surface_[k]) + d] = owned[3 * static_cast<std::size_t>(owned_local_[k]) + d];
}

void SelfContactTerms::rebuild(std::vector<double>& x, double delta) {
  exchange_->build(x, delta);
  potential_->set_known(exchange_->layer()->known);
  const std::vector<char>& known = exchange_->layer()->known;
  for (const int v : potential_->friction_vertices())  // (the anchor keeps them: self_exchange.hpp)
    if (!known[static_cast<std::size_t>(v)])
      throw std::logic_error("self-contact: a friction pair's vertex left the ghost layer");
}

void SelfContactTerms::ready(std::vector<double>& x, std::vector<double>* dx) {
  const double t0 = MPI_Wtime();
  double move = 0.0;
  if (!exchange_->serves(x, dx ? std::span<const double>(*dx) : std::span<const double>(), move)) {
    rebuild(x, std::max(reach_, 1.01 * move));
    if (dx) exchange_->forward(*exchange_->layer(), {*dx}, 3);
  } else if (dx) {
    exchange_->forward(*exchange_->layer(), {x, *dx}, 3);
  } else {
    exchange_->forward(*exchange_->layer(), {x}, 3);
  }
  if (dx) {  // (a vertex not at hand does not move: its stale entry would only defeat the candidate list)
    const std::vector<char>& known = exchange_->layer()->known;
    for (std::size_t v = 0; v < known.size(); ++v)
      if (!known[v]) (*dx)[3 * v] = (*dx)[3 * v + 1] = (*dx)[3 * v + 2] = 0.0;
  }
  exchange_seconds_ += MPI_Wtime() - t0;
}

void SelfContactTerms::add_owned(const std::vector<double>& values, Vec v, const std::vector<double>& mask) const {
  VecArray va(v, false);
  for (std::size_t k = 0; k < owned_local_.size(); ++k)
    for (int d = 0; d < 3; ++d) {
      const std::size_t s = 3 * static_cast<std::size_t>(owned_surface_[k]) + d;
      va.span()[3 * static_cast<std::size_t>(owned_local_[k]) + d] += (mask.empty() ? 1.0 : mask[s]) * values[s];
    }
}

SelfContactCost SelfContactTerms::cost() const {
  SelfContactCost c = calls_;
  c.pairs = barrier_ ? potential_->times() : contact::SelfTimes{};  // (position-based: the measures not counted)
  c.pairs.broad += extra_pairs_.broad, c.pairs.narrow += extra_pairs_.narrow, c.pairs.ccd += extra_pairs_.ccd;
  c.pairs.narrow_pairs += extra_pairs_.narrow_pairs, c.pairs.ccd_pairs += extra_pairs_.ccd_pairs;
  c.exchange = exchange_seconds_;
  c.assembly = assembly_seconds_;
  c.total = seconds_;
  c.cpu = cpu_seconds_;
  return c;
}

void SelfContactTerms::begin_step(Vec x, double slip_step) {
  ++calls_.steps;
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load(x, x_);
  if (exchange_->reach() > reach_) {  // (a long move's layer: back to the usual reach)
    rebuild(x_, reach_);
  } else {
    ready(x_, nullptr);
  }
  exchange_->set_anchor(friction_ > 0.0 ? std::span<const double>(x_) : std::span<const double>());
  if (friction_ > 0.0) potential_->lag_friction(x_, friction_, friction_velocity_ * std::max(slip_step, 1e-12));
  seconds_ += MPI_Wtime() - t0, cpu_seconds_ += process_cpu_seconds() - c0;
}

void SelfContactTerms::add_residual(Vec x, Vec r) {
  ++calls_.residuals;
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load(x, x_);
  ready(x_, nullptr);
  gradient_.assign(x_.size(), 0.0);
  potential_->evaluate(x_, gradient_, nullptr);
  const double t1 = MPI_Wtime();
  exchange_->reverse_add(*exchange_->layer(), gradient_, 3);
  const double t2 = MPI_Wtime();
  add_owned(gradient_, r, {});
  assembly_seconds_ += MPI_Wtime() - t2;
  exchange_seconds_ += t2 - t1;
  seconds_ += MPI_Wtime() - t0, cpu_seconds_ += process_cpu_seconds() - c0;
}

std::span<const contact::VertexBlock> SelfContactTerms::blocks(Vec x) {
  ++calls_.jacobians;
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load(x, x_);
  ready(x_, nullptr);
  diagonal_.assign(9 * static_cast<std::size_t>(n_surface_vertices()), 0.0);
  potential_->evaluate(x_, {}, &diagonal_, &pairs_);
  coupling_layer_ = exchange_->layer();
  const double t1 = MPI_Wtime();
  exchange_->reverse_add(*coupling_layer_, diagonal_, 9);
  const double t2 = MPI_Wtime();
  exchange_seconds_ += t2 - t1;
  blocks_.clear();
  for (std::size_t k = 0; k < owned_local_.size(); ++k) {
    contact::VertexBlock b;
    b.vertex = owned_local_[k];
    const double* v = &diagonal_[9 * static_cast<std::size_t>(owned_surface_[k])];
    if (std::all_of(v, v + 9, [](double a) { return a == 0.0; })) continue;
    std::copy(v, v + 9, b.values.begin());
    blocks_.push_back(b);
  }
  assembly_seconds_ += MPI_Wtime() - t2;
  seconds_ += MPI_Wtime() - t0, cpu_seconds_ += process_cpu_seconds() - c0;
  return blocks_;
}

void SelfContactTerms::multiply_couplings(Vec in, Vec out) {
  ++calls_.products;
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load(in, y_);
  exchange_->forward(*coupling_layer_, {y_}, 3);
  const double t1 = MPI_Wtime();
  for (std::size_t i = 0; i < y_.size(); ++i) y_[i] *= free_[i];
  gradient_.assign(y_.size(), 0.0);
  for (const contact::SelfPairHessian& p : pairs_)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        if (i == j) continue;  // (the diagonal blocks are in the matrix)
        const auto vi = static_cast<std::size_t>(p.vertices[i]), vj = static_cast<std::size_t>(p.vertices[j]);
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) gradient_[3 * vi + r] += p.values[12 * (3 * i + r) + 3 * j + c] * y_[3 * vj + c];
      }
  const double t2 = MPI_Wtime();
  exchange_->reverse_add(*coupling_layer_, gradient_, 3);
  const double t3 = MPI_Wtime();
  add_owned(gradient_, out, free_);
  exchange_seconds_ += (t1 - t0) + (t3 - t2);
  assembly_seconds_ += (t2 - t1) + (MPI_Wtime() - t3);
  seconds_ += MPI_Wtime() - t0, cpu_seconds_ += process_cpu_seconds() - c0;
}

void SelfContactTerms::add_couplings(Mat P) const {
  std::array<PetscInt, 12> index{};
  std::array<PetscScalar, 144> values{};
  for (const contact::SelfPairHessian& p : pairs_) {
    for (int i = 0; i < 4; ++i)
      for (int r = 0; r < 3; ++r) {
        const std::size_t s = 3 * static_cast<std::size_t>(p.vertices[i]) + static_cast<std::size_t>(r);
        index[3 * i + r] = free_[s] != 0.0 ? global_dof_[static_cast<std::size_t>(p.vertices[i])] + r : -1;
      }
    for (int a = 0; a < 12; ++a)
      for (int b = 0; b < 12; ++b) values[12 * a + b] = a / 3 == b / 3 ? 0.0 : p.values[12 * a + b];  // (diagonal: in P)
    EDGEFEM_PETSC(MatSetValues(P, 12, index.data(), 12, index.data(), values.data(), ADD_VALUES));
  }
}

double SelfContactTerms::step_limit(Vec x, Vec y) {
  ++calls_.limits;
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load(x, x_);
  load(y, y_);
  for (const int v : owned_surface_)
    for (int d = 0; d < 3; ++d) y_[3 * static_cast<std::size_t>(v) + d] = -y_[3 * static_cast<std::size_t>(v) + d];
  ready(x_, &y_);
  double limit = potential_->step_limit(x_, y_);
  MPI_Allreduce(MPI_IN_PLACE, &limit, 1, MPI_DOUBLE, MPI_MIN, comm_);
  seconds_ += MPI_Wtime() - t0, cpu_seconds_ += process_cpu_seconds() - c0;
  return limit;
}

void SelfContactTerms::limit_prediction(Vec start, Vec x) {
  ++calls_.limits;
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load(start, x_);
  load(x, y_);
  for (const int v : owned_surface_)
    for (int d = 0; d < 3; ++d) y_[3 * static_cast<std::size_t>(v) + d] -= x_[3 * static_cast<std::size_t>(v) + d];
  ready(x_, &y_);
  double limit = potential_->step_limit(x_, y_);
  MPI_Allreduce(MPI_IN_PLACE, &limit, 1, MPI_DOUBLE, MPI_MIN, comm_);
  if (limit < 1.0) EDGEFEM_PETSC(VecAXPBY(x, 1.0 - limit, limit, start));  // x := limit x + (1 - limit) start
  seconds_ += MPI_Wtime() - t0, cpu_seconds_ += process_cpu_seconds() - c0;
}

double SelfContactTerms::energy(Vec x) {
  ++calls_.energies;
  load(x, x_);
  ready(x_, nullptr);
  double e = potential_->evaluate(x_, {}, nullptr, nullptr, false);  // (friction is no stored energy)
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return e;
}

SelfContactReport SelfContactTerms::measure(Vec x) {
  VecArray xa(x, true);
  return measure(xa.span());
}

SelfContactReport SelfContactTerms::measure(std::span<const double> local_positions) {
  ++calls_.measures;
  load(local_positions, x_);
  int offered = offered_ ? 1 : 0;
  for (std::size_t k = 0; offered && k < owned_surface_.size(); ++k)
    for (int d = 0; d < 3; ++d) {
      const std::size_t i = 3 * static_cast<std::size_t>(owned_surface_[k]) + d;
      if (!(x_[i] == offered_x_[i])) offered = 0;
    }
  MPI_Allreduce(MPI_IN_PLACE, &offered, 1, MPI_INT, MPI_MIN, comm_);
  contact::SelfMeasure m;
  if (offered) {
    m = *offered_;
    ++offered_measures_;
  } else {
    ready(x_, nullptr);
    // (The position-based integrator's positions have moved past the candidate list's reach since its last query.)
    m = potential_->measure(x_, barrier_);
  }
  SelfContactReport r;
  MPI_Allreduce(&m.active, &r.active, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  MPI_Allreduce(&m.min_distance, &r.min_distance, 1, MPI_DOUBLE, MPI_MIN, comm_);
  return r;
}

void SelfContactTerms::offer_measure(const contact::SelfMeasure& m, std::vector<double> surface) {
  offered_ = m;
  offered_x_ = std::move(surface);
}

std::vector<double> SelfContactTerms::contact_forces(std::span<const double> local_positions) {
  load(local_positions, x_);
  ready(x_, nullptr);
  std::vector<double> gradient(x_.size(), 0.0);
  potential_->evaluate(x_, gradient, nullptr);
  exchange_->reverse_add(*exchange_->layer(), gradient, 3);
  std::vector<double> force(assembler_.lumped_mass().size(), 0.0);  // (3 per owned vertex)
  for (std::size_t k = 0; k < owned_local_.size(); ++k)
    for (int d = 0; d < 3; ++d)
      force[3 * static_cast<std::size_t>(owned_local_[k]) + d] = -gradient[3 * static_cast<std::size_t>(owned_surface_[k]) + d];
  return force;
}

long long SelfContactTerms::intersecting_pairs(std::span<const double> local_positions) {
  std::vector<double> all;  // (a diagnostic: the whole surface, not the ghost layer)
  gather_all(local_positions, all);
  return contact::count_intersecting_pairs(all, potential_->surface().triangles);
}

}  // namespace edgefem
