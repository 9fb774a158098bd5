// SPDX-License-Identifier: BSD-3-Clause
#include "contact/contact_potential.hpp"

#include <algorithm>
#include <cmath>

namespace edgefem::contact {
namespace {

bool nonzero(const Mat3& m) {
  return std::any_of(m.begin(), m.end(), [](double v) { return v != 0.0; });
}

}  // namespace

ContactPotential::ContactPotential(const std::vector<std::unique_ptr<Obstacle>>& obstacles,
                                   std::vector<std::int32_t> vertices)
    : obstacles_(obstacles), vertices_(std::move(vertices)) {}

double ContactPotential::vertex_terms(std::size_t c, const Vec3& p, Vec3* gradient, Mat3* hessian,
                                      double* per_obstacle, long long* active, bool with_friction) const {
  double energy = 0.0;
  const double bound = method_ == ContactMethod::barrier ? dh_ : 0.0;
  for (std::size_t o = 0; o < obstacles_.size(); ++o) {
    Proximity prox;
    if (!obstacles_[o]->proximity(p, bound, hessian != nullptr, prox)) continue;
    const NormalTerm t = normal_term(method_, prox, dh_, stiffness_);
    if (t.force == 0.0 && t.energy == 0.0) continue;
    if (active) ++*active;
    energy += t.energy;
    if (gradient) *gradient = *gradient + t.gradient;
    if (hessian) add_scaled(*hessian, 1.0, t.hessian);
    if (per_obstacle)
      for (int k = 0; k < 3; ++k) per_obstacle[3 * o + k] -= t.gradient[k];
  }
  if (lag_offsets_.empty() || !with_friction) return energy;
  for (std::size_t k = lag_offsets_[c]; k < lag_offsets_[c + 1]; ++k) {
    Vec3 g{};
    energy += friction_terms(lags_[k].lag, p, slip_, &g, hessian);
    if (gradient) *gradient = *gradient + g;
    if (per_obstacle)
      for (int d = 0; d < 3; ++d) per_obstacle[3 * static_cast<std::size_t>(lags_[k].obstacle) + d] -= g[d];
  }
  return energy;
}

double ContactPotential::evaluate(std::span<const double> x, std::span<double> gradient,
                                  std::vector<VertexBlock>* blocks) const {
  const auto n = static_cast<std::ptrdiff_t>(vertices_.size());
  if (blocks) {
    block_scratch_.assign(vertices_.size(), Mat3{});
    blocks->clear();
  }
  double energy = 0.0;
#pragma omp parallel for reduction(+ : energy) schedule(static)
  for (std::ptrdiff_t c = 0; c < n; ++c) {
    const std::size_t v = 3 * static_cast<std::size_t>(vertices_[c]);
    Vec3 g{};
    Mat3* h = blocks ? &block_scratch_[static_cast<std::size_t>(c)] : nullptr;
    energy += vertex_terms(static_cast<std::size_t>(c), load3(&x[v]), gradient.empty() ? nullptr : &g, h, nullptr,
                           nullptr);
    if (!gradient.empty())
      for (int k = 0; k < 3; ++k) gradient[v + k] += g[k];
  }
  if (blocks)
    for (std::size_t c = 0; c < vertices_.size(); ++c)
      if (nonzero(block_scratch_[c])) blocks->push_back({vertices_[c], block_scratch_[c]});
  return energy;
}

double ContactPotential::normal_energy(std::span<const double> x) const {
  double energy = 0.0;
  for (std::size_t c = 0; c < vertices_.size(); ++c)
    energy += vertex_terms(c, load3(&x[3 * static_cast<std::size_t>(vertices_[c])]), nullptr, nullptr, nullptr,
                           nullptr, false);
  return energy;
}

void ContactPotential::add_unit_barrier_gradient(std::span<const double> x, std::span<double> gradient) const {
  for (const std::int32_t v : vertices_) {
    const Vec3 p = load3(&x[3 * static_cast<std::size_t>(v)]);
    for (const auto& obstacle : obstacles_) {
      Proximity prox;
      if (!obstacle->proximity(p, dh_, false, prox)) continue;
      const NormalTerm t = normal_term(ContactMethod::barrier, prox, dh_, 1.0);
      for (int k = 0; k < 3; ++k) gradient[3 * static_cast<std::size_t>(v) + k] += t.gradient[k];
    }
  }
}

double ContactPotential::segment_limit(const Vec3& p0, const Vec3& p1, double fraction) const {
  const Vec3 step = p1 - p0;
  const double length = norm(step);
  if (!(length > 0.0)) return 1.0;
  double t = 1.0;
  for (const auto& obstacle : obstacles_) {
    const double hit = obstacle->time_of_impact(p0, p1);
    if (hit != kNoImpact) t = std::min(t, fraction * hit);
    // A move that ends just short of the surface is not a contact, but it must keep a part of its gap d0 too: it
    // is cut to end at (1 - fraction) d0, accepted down to half of that. Only an obstacle within length / fraction
    // of p0 can be that close at the end (d is 1-Lipschitz).
    Proximity near;
    if (!obstacle->proximity(p0, length / fraction, false, near) || !(near.distance > 0.0)) continue;
    const double d0 = near.distance, keep = 0.5 * (1.0 - fraction) * d0;
    double s = t;
    const double d1 = obstacle->signed_distance(p0 + s * step);
    if (d1 >= keep) continue;
    s *= fraction * d0 / (d0 - d1);  // the gap's linear interpolation (exact for a plane) ...
    for (int k = 0; k < 60 && obstacle->signed_distance(p0 + s * step) < keep; ++k) s *= 0.5;  // ... checked
    t = std::min(t, s);
  }
  return t;
}

double ContactPotential::step_limit(std::span<const double> x, std::span<const double> y, double fraction) const {
  const auto n = static_cast<std::ptrdiff_t>(vertices_.size());
  double limit = 1.0;
#pragma omp parallel for reduction(min : limit) schedule(static)
  for (std::ptrdiff_t c = 0; c < n; ++c) {
    const std::size_t v = 3 * static_cast<std::size_t>(vertices_[c]);
    const Vec3 p0 = load3(&x[v]);
    limit = std::min(limit, segment_limit(p0, p0 - load3(&y[v]), fraction));
  }
  return limit;
}

long long ContactPotential::limit_motion(std::span<const double> from, std::span<double> to, double fraction) const {
  long long cut = 0;
  for (const std::int32_t vertex : vertices_) {
    const std::size_t v = 3 * static_cast<std::size_t>(vertex);
    const Vec3 p0 = load3(&from[v]), p1 = load3(&to[v]);
    const double t = segment_limit(p0, p1, fraction);
    if (t >= 1.0) continue;
    ++cut;
    for (int k = 0; k < 3; ++k) to[v + k] = p0[k] + t * (p1[k] - p0[k]);
  }
  return cut;
}

long long ContactPotential::carry_along(std::span<double> x, std::span<const double> moves, double fraction) const {
  long long carried = 0;
  for (const std::int32_t vertex : vertices_) {
    const std::size_t v = 3 * static_cast<std::size_t>(vertex);
    bool moved = false;
    for (std::size_t o = 0; o < obstacles_.size(); ++o) {
      const Vec3 m = load3(&moves[3 * o]);
      if (m == Vec3{}) continue;
      // The obstacle's move is the vertex's move -m relative to it; stretched by 1 / fraction, a first contact
      // within it means the move would take more than `fraction` of the gap.
      const Vec3 p = load3(&x[v]);
      if (obstacles_[o]->time_of_impact(p, p - (1.0 / fraction) * m) == kNoImpact) continue;
      for (int k = 0; k < 3; ++k) x[v + k] += m[k];
      moved = true;
    }
    carried += moved ? 1 : 0;
  }
  return carried;
}

void ContactPotential::lag_friction(std::span<const double> x, std::span<const double> moves) {
  lags_.clear();
  lag_offsets_.assign(vertices_.size() + 1, 0);
  const double bound = method_ == ContactMethod::barrier ? dh_ : 0.0;
  for (std::size_t c = 0; c < vertices_.size(); ++c) {
    lag_offsets_[c] = lags_.size();
    const Vec3 p = load3(&x[3 * static_cast<std::size_t>(vertices_[c])]);
    for (std::size_t o = 0; o < obstacles_.size(); ++o) {
      const double mu = obstacles_[o]->friction();
      Proximity prox;
      if (mu <= 0.0 || !obstacles_[o]->proximity(p, bound, false, prox)) continue;
      const NormalTerm t = normal_term(method_, prox, dh_, stiffness_, false);
      if (!(t.force > 0.0) || !std::isfinite(t.force)) continue;
      Lag lag;
      lag.obstacle = static_cast<std::int32_t>(o);
      lag.lag.t1 = any_orthogonal(prox.normal);
      lag.lag.t2 = cross(prox.normal, lag.lag.t1);
      lag.lag.force = mu * t.force;
      lag.lag.start = p;
      lag.lag.obstacle_move = load3(&moves[3 * o]);
      lags_.push_back(lag);
    }
  }
  lag_offsets_[vertices_.size()] = lags_.size();
  if (lags_.empty()) lag_offsets_.clear();
}

double ContactPotential::nearest_distance(const Vec3& p) const {
  double gap = std::numeric_limits<double>::infinity();
  for (const auto& obstacle : obstacles_) gap = std::min(gap, obstacle->signed_distance(p));
  return gap;
}

ContactMeasure ContactPotential::measure(std::span<const double> x, std::span<double> vertex_force,
                                         std::span<double> vertex_gap) const {
  ContactMeasure m;
  m.obstacle_force.assign(3 * obstacles_.size(), 0.0);
  for (std::size_t c = 0; c < vertices_.size(); ++c) {
    const std::size_t v = 3 * static_cast<std::size_t>(vertices_[c]);
    const Vec3 p = load3(&x[v]);
    const double gap = nearest_distance(p);
    m.min_gap = std::min(m.min_gap, gap);
    Vec3 g{};
    vertex_terms(c, p, &g, nullptr, m.obstacle_force.data(), &m.active);
    if (!vertex_force.empty())
      for (int k = 0; k < 3; ++k) vertex_force[v + k] = -g[k];
    if (!vertex_gap.empty()) vertex_gap[static_cast<std::size_t>(vertices_[c])] = gap;
  }
  return m;
}

}  // namespace edgefem::contact
