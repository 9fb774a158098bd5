// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_self_contact.cpp
/// The position-based integrator's self-collision constraints (pbd_self_contact.hpp).
#include "pbd/pbd_self_contact.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "contact/self_ccd.hpp"
#include "contact/triangle_distance.hpp"
#include "core/stopwatch.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {

namespace {

using contact::Vec3;
using contact::operator+;
using contact::operator-;
using contact::operator*;

/// The parameters (s, t) of the closest points of segments p1-q1 and p2-q2 (Ericson 5.1.9; parallel: s = 0).
std::array<double, 2> closest_segments(const Vec3& p1, const Vec3& q1, const Vec3& p2, const Vec3& q2) {
  using contact::dot;
  const Vec3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  if (!(a > 0.0) && !(e > 0.0)) return {0.0, 0.0};
  if (!(a > 0.0)) return {0.0, std::clamp(f / e, 0.0, 1.0)};
  const double c = dot(d1, r);
  if (!(e > 0.0)) return {std::clamp(-c / a, 0.0, 1.0), 0.0};
  const double b = dot(d1, d2), denominator = a * e - b * b;
  double s = denominator > 1e-12 * a * e ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0.0) {
    t = 0.0, s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1.0) {
    t = 1.0, s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  return {s, t};
}

/// A pair's separation sum_i c_i y_i between its closest points, and the weights c (point-triangle: the point,
/// then the triangle; edge-edge: a0, a1, b0, b1).
/// `interior`: the closest points are inside the triangle or inside both edges (where a pair can cross).
Vec3 separation(bool edge_edge, const std::array<Vec3, 4>& y, std::array<double, 4>& c, bool* interior = nullptr) {
  if (edge_edge) {
    const auto st = closest_segments(y[0], y[1], y[2], y[3]);
    c = {1.0 - st[0], st[0], -(1.0 - st[1]), -st[1]};
    if (interior) *interior = st[0] > 0.0 && st[0] < 1.0 && st[1] > 0.0 && st[1] < 1.0;
  } else {
    const auto b = contact::closest_on_triangle(y[0], y[1], y[2], y[3]).barycentric;
    c = {1.0, -b[0], -b[1], -b[2]};
    if (interior) *interior = b[0] > 0.0 && b[1] > 0.0 && b[2] > 0.0;
  }
  Vec3 r{};
  for (int i = 0; i < 4; ++i) r = r + c[i] * y[i];
  return r;
}

}  // namespace

PbdSelfContact::PbdSelfContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model,
                               Assembler& assembler, std::span<const double> inverse_mass)
    : comm_(comm),
      terms_(comm, job, mesh, model, assembler, job.dynamic ? job.dynamic->dt : 0.0, false),
      local_w_(inverse_mass.begin(), inverse_mass.end()) {
  h_ = terms_.potential_->activation_distance();
  mu_ = job.contact.self_friction;
  w_.assign(3 * static_cast<std::size_t>(terms_.n_surface_vertices()), 0.0);
  load_local(local_w_.data(), w_);
  // The layer serves moves less a common translation (self_exchange.hpp): a falling cloth keeps it.
  terms_.exchange_->translate(true);
  // The terms' own broad phase answers only the start's check and a record the steps did not offer (their pairs
  // come from swept_).
  terms_.potential_->release_broad_phase();
}

void PbdSelfContact::load_local(const double* x, std::vector<double>& out) const {
  out.resize(3 * static_cast<std::size_t>(terms_.n_surface_vertices()), 0.0);
  for (std::size_t k = 0; k < terms_.owned_local_.size(); ++k)
    for (int d = 0; d < 3; ++d)
      out[3 * static_cast<std::size_t>(terms_.owned_surface_[k]) + d] =
          x[3 * static_cast<std::size_t>(terms_.owned_local_[k]) + d];
}

void PbdSelfContact::begin_step(Vec x_n, Vec x_pred) {
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  {
    VecArray a(x_n, true), b(x_pred, true);
    load_local(a.span().data(), x_n_);
    load_local(b.span().data(), y_);
  }
  dx_.assign(x_n_.size(), 0.0);
  for (const int v : terms_.owned_surface_)
    for (int d = 0; d < 3; ++d) {
      const std::size_t i = 3 * static_cast<std::size_t>(v) + d;
      dx_[i] = y_[i] - x_n_[i];
    }
  terms_.ready(x_n_, &dx_);  // the layer serves x_n -> x*: x_n's and the moves' ghosts filled
  const double t1 = MPI_Wtime();
  terms_.exchange_->forward(*terms_.exchange_->layer(), {w_}, 3);
  const double t2 = MPI_Wtime();
  terms_.exchange_seconds_ += t2 - t1;
  auto clock = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < y_.size(); ++i) y_[i] = x_n_[i] + dx_[i];
  predicted_ = y_;
  const contact::SelfSurface& s = terms_.potential_->surface();
  if (!swept_) swept_ = std::make_unique<contact::SweptPairs>(s);  // (the trees' hierarchy, once)
  swept_->start(x_n_, y_, h_);
  times_.broad += seconds_since(clock);
  clock = std::chrono::steady_clock::now();
  // The constraints: the boxed pairs that can come within h while each vertex moves at most h beyond its predicted
  // move (the distance is 1-Lipschitz in the primitives' moves relative to a common translation, the bound of
  // additive CCD): d(x_n) <= h + l + 2 h, l the largest relative predicted move of either primitive, summed.
  pairs_.clear(), vertices_.clear(), side_.clear();
  for (const contact::SelfPair& p : swept_->pairs()) {
    const std::array<int, 4> v = pair_vertices(s, p);
    std::array<Vec3, 4> y, d;
    Vec3 mean{};
    for (int i = 0; i < 4; ++i) {
      const std::size_t o = 3 * static_cast<std::size_t>(v[i]);
      y[i] = contact::load3(&x_n_[o]);
      d[i] = contact::load3(&dx_[o]);
      mean = mean + 0.25 * d[i];
    }
    double first = 0.0, second = 0.0;  // the largest move relative to the mean of each primitive
    for (int i = 0; i < 4; ++i)
      (i < (p.edge_edge ? 2 : 1) ? first : second) = std::max(i < (p.edge_edge ? 2 : 1) ? first : second,
                                                              contact::norm(d[i] - mean));
    std::array<double, 4> c{};
    const Vec3 r = separation(p.edge_edge, y, c);
    if (contact::norm(r) > h_ + first + second + 2.0 * h_) continue;
    pairs_.push_back(p), vertices_.push_back(v), side_.push_back(r);
  }
  corrections_.assign(12 * pairs_.size(), 0.0);
  active_.assign(pairs_.size(), 0);
  times_.narrow += seconds_since(clock);
  last_ = {};
  last_.pairs = static_cast<long long>(pairs_.size());
  MPI_Allreduce(MPI_IN_PLACE, &last_.pairs, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  terms_.extra_pairs_ = times_;
  terms_.seconds_ += MPI_Wtime() - t0, terms_.cpu_seconds_ += process_cpu_seconds() - c0;
}

bool PbdSelfContact::correct(std::size_t k, double* dx) const {
  using contact::dot;
  const std::array<int, 4>& v = vertices_[k];
  std::array<Vec3, 4> y;
  for (int i = 0; i < 4; ++i) y[i] = contact::load3(&y_[3 * static_cast<std::size_t>(v[i])]);
  std::array<double, 4> c{};
  bool interior = false;
  const Vec3 r = separation(pairs_[k].edge_edge, y, c, &interior);
  const double d = contact::norm(r);
  const Vec3& side = side_[k];
  Vec3 n{};
  double distance = d;
  if (d > 0.0) {
    n = (1.0 / d) * r;
    // Crossed since x_n (possible only between interior closest points: elsewhere the separation turns without a
    // crossing): back to the side it came from.
    if (interior && dot(r, side) < 0.0) n = -1.0 * n, distance = -d;
  } else {
    const double length = contact::norm(side);
    if (!(length > 0.0)) return false;
    n = (1.0 / length) * side;
  }
  const double C = distance - h_;
  if (C >= 0.0) return false;
  double W = 0.0;
  std::array<double, 3> Wd{};  // per axis: sum_i c_i^2 w_i
  for (int i = 0; i < 4; ++i)
    for (int a = 0; a < 3; ++a) {
      const double w = w_[3 * static_cast<std::size_t>(v[i]) + a];
      W += c[i] * c[i] * w * n[a] * n[a];
      Wd[a] += c[i] * c[i] * w;
    }
  if (!(W > 0.0)) return false;
  const double dl = -C / W;
  for (int i = 0; i < 4; ++i)
    for (int a = 0; a < 3; ++a) dx[3 * i + a] = c[i] * dl * w_[3 * static_cast<std::size_t>(v[i]) + a] * n[a];
  if (!(mu_ > 0.0)) return true;
  // Friction: the closest points' relative move over the step, after the normal correction, tangential part cut
  // by mu |C| (all of it while shorter: sticking).
  Vec3 rel{};
  for (int i = 0; i < 4; ++i) {
    const std::size_t o = 3 * static_cast<std::size_t>(v[i]);
    for (int a = 0; a < 3; ++a) rel[a] += c[i] * (y[i][a] + dx[3 * i + a] - x_n_[o + a]);
  }
  const Vec3 tangential = rel - dot(rel, n) * n;
  const double length = contact::norm(tangential);
  if (!(length > 0.0)) return true;
  const Vec3 cut = -std::min(1.0, mu_ * (-C) / length) * tangential;
  for (int a = 0; a < 3; ++a) {
    if (!(Wd[a] > 0.0)) continue;
    for (int i = 0; i < 4; ++i) dx[3 * i + a] += c[i] * w_[3 * static_cast<std::size_t>(v[i]) + a] * cut[a] / Wd[a];
  }
  return true;
}

void PbdSelfContact::project(double* x) {
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  load_local(x, y_);
  terms_.exchange_->forward(*terms_.exchange_->layer(), {y_}, 3);
  const double t1 = MPI_Wtime();
  auto clock = std::chrono::steady_clock::now();
  const auto n = static_cast<std::ptrdiff_t>(pairs_.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const auto K = static_cast<std::size_t>(k);
    active_[K] = correct(K, &corrections_[12 * K]) ? 1 : 0;
  }
  times_.narrow += seconds_since(clock);
  times_.narrow_pairs += n;
  clock = std::chrono::steady_clock::now();
  // Averaged per vertex, each correction weighted by its length (continuous in the positions, unlike a count: a
  // pair that just becomes active does not halve the others' corrections), summed in the pairs' order.
  sums_.assign(4 * static_cast<std::size_t>(terms_.n_surface_vertices()), 0.0);
  long long projected = 0;
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    if (!active_[k]) continue;
    ++projected;
    for (int i = 0; i < 4; ++i) {
      const double* dx = &corrections_[12 * k + 3 * static_cast<std::size_t>(i)];
      const double length = std::sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
      if (!(length > 0.0)) continue;
      double* s = &sums_[4 * static_cast<std::size_t>(vertices_[k][i])];
      for (int a = 0; a < 3; ++a) s[a] += length * dx[a];
      s[3] += length;
    }
  }
  const double assembled = seconds_since(clock);
  const double t2 = MPI_Wtime();
  terms_.exchange_->reverse_add(*terms_.exchange_->layer(), sums_, 4);
  const double t3 = MPI_Wtime();
  for (std::size_t k = 0; k < terms_.owned_local_.size(); ++k) {
    const double* s = &sums_[4 * static_cast<std::size_t>(terms_.owned_surface_[k])];
    if (!(s[3] > 0.0)) continue;
    double* p = x + 3 * static_cast<std::size_t>(terms_.owned_local_[k]);
    for (int a = 0; a < 3; ++a) p[a] += s[a] / s[3];
  }
  last_.projected = projected;  // (this rank's; summed at the step's end)
  terms_.assembly_seconds_ += assembled + (MPI_Wtime() - t3);
  terms_.exchange_seconds_ += (t1 - t0) + (t3 - t2);
  terms_.extra_pairs_ = times_;
  terms_.seconds_ += MPI_Wtime() - t0, terms_.cpu_seconds_ += process_cpu_seconds() - c0;
}

long long PbdSelfContact::check_round(const std::vector<contact::SelfPair>& pairs, const std::vector<char>& check,
                                      std::vector<double>& freeze) const {
  const contact::SelfSurface& s = terms_.potential_->surface();
  const auto n = static_cast<std::ptrdiff_t>(pairs.size());
  std::vector<char> failed(pairs.size(), 0);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const auto K = static_cast<std::size_t>(k);
    if (!check[K]) continue;
    const contact::SelfPair& p = pairs[K];
    const std::array<int, 4> v = pair_vertices(s, p);
    std::array<Vec3, 4> x, d;
    for (int i = 0; i < 4; ++i) {
      x[i] = contact::load3(&x_n_[3 * static_cast<std::size_t>(v[i])]);
      d[i] = contact::load3(&dx_[3 * static_cast<std::size_t>(v[i])]);
    }
    failed[K] = contact::additive_ccd(x, d, p.edge_edge) < 1.0 ? 1 : 0;
  }
  long long count = 0;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (!failed[k]) continue;
    ++count;
    for (const int u : pair_vertices(s, pairs[k])) freeze[static_cast<std::size_t>(u)] = 1.0;
  }
  return count;
}

std::vector<contact::SelfPair> PbdSelfContact::moved_pairs() {
  // Every vertex within its predicted box (x_n, x*) grown by h: the layer serves the move; else the layer is checked
  // (and rebuilt if needed). The pairs from the step's trees (SweptPairs::moved), or from new ones if the layer, and
  // with it the primitives at hand, changed.
  int inside = 1;
  dx_.assign(x_n_.size(), 0.0);
  for (const int v : terms_.owned_surface_)
    for (int d = 0; d < 3; ++d) {
      const std::size_t i = 3 * static_cast<std::size_t>(v) + d;
      dx_[i] = y_[i] - x_n_[i];
      const double lo = std::min(x_n_[i], predicted_[i]) - h_, hi = std::max(x_n_[i], predicted_[i]) + h_;
      if (!(y_[i] >= lo && y_[i] <= hi)) inside = 0;
    }
  MPI_Allreduce(MPI_IN_PLACE, &inside, 1, MPI_INT, MPI_MIN, comm_);
  const double t_exchange = MPI_Wtime();
  const long long builds = terms_.traffic().builds;
  if (inside)
    terms_.exchange_->forward(*terms_.exchange_->layer(), {dx_}, 3);
  else
    terms_.ready(x_n_, &dx_);
  const bool rebuilt = terms_.traffic().builds != builds;
  terms_.exchange_seconds_ += MPI_Wtime() - t_exchange;
  const auto clock = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < y_.size(); ++i) y_[i] = x_n_[i] + dx_[i];
  // (Grown by h / 2: the pairs within h at the step's end among them, for the record; end_step.) A new layer: the
  // trees' pairs over the move (their step's pairs are done with), as new trees' (SweptPairs).
  std::vector<contact::SelfPair> pairs;
  if (rebuilt) {
    swept_->start(x_n_, y_, 0.5 * h_);
    pairs = swept_->pairs();
  } else {
    pairs = swept_->moved(x_n_, y_, 0.5 * h_);
  }
  times_.broad += seconds_since(clock);
  return pairs;
}

std::vector<char> PbdSelfContact::stop_until_safe(const std::vector<contact::SelfPair>& pairs, long long& newly,
                                                  int& rounds) {
  const contact::SelfSurface& s = terms_.potential_->surface();
  std::vector<char> check(pairs.size(), 1), frozen(static_cast<std::size_t>(terms_.n_surface_vertices()), 0);
  std::vector<double> freeze, before;
  const auto moving = [](const std::vector<double>& d, std::size_t v) {
    return d[3 * v] != 0.0 || d[3 * v + 1] != 0.0 || d[3 * v + 2] != 0.0;
  };
  newly = 0;
  for (rounds = 1;; ++rounds) {
    const auto clock = std::chrono::steady_clock::now();
    freeze.assign(frozen.size(), 0.0);
    check_round(pairs, check, freeze);
    times_.ccd += seconds_since(clock);
    times_.ccd_pairs += static_cast<long long>(std::count(check.begin(), check.end(), 1));
    const double t1 = MPI_Wtime();
    terms_.exchange_->reverse_add(*terms_.exchange_->layer(), freeze, 1);
    before = dx_;
    long long changed = 0;
    for (const int v : terms_.owned_surface_) {
      const auto V = static_cast<std::size_t>(v);
      if (!(freeze[V] > 0.0) || frozen[V]) continue;
      frozen[V] = 1, ++changed;
      dx_[3 * V] = dx_[3 * V + 1] = dx_[3 * V + 2] = 0.0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_LONG_LONG, MPI_SUM, comm_);
    if (changed > 0) terms_.exchange_->forward(*terms_.exchange_->layer(), {dx_}, 3);  // (the ghosts that stopped)
    terms_.exchange_seconds_ += MPI_Wtime() - t1;
    if (changed == 0) return frozen;
    newly += changed;
    // Again: the pairs with a vertex that stopped in this round.
    std::vector<char> stopped(frozen.size(), 0);
    for (std::size_t v = 0; v < frozen.size(); ++v) stopped[v] = moving(before, v) && !moving(dx_, v) ? 1 : 0;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const std::array<int, 4> v = pair_vertices(s, pairs[k]);
      check[k] = std::any_of(v.begin(), v.end(), [&](int u) { return stopped[static_cast<std::size_t>(u)] != 0; });
    }
  }
}

void PbdSelfContact::end_step(Vec x_n, Vec x) {
  const double t0 = MPI_Wtime(), c0 = process_cpu_seconds();
  {
    VecArray a(x_n, true), b(x, true);
    load_local(a.span().data(), x_n_);
    load_local(b.span().data(), y_);
  }
  std::vector<double> end = y_;  // (owned entries: the step's end as the caller has it)
  long long newly = 0;
  int rounds = 0;
  const std::vector<contact::SelfPair> near = moved_pairs();
  const contact::SelfSurface& s = terms_.potential_->surface();
  const std::vector<char> frozen = stop_until_safe(contact::swept_overlapping(s, near, x_n_, y_), newly, rounds);
  {  // the stopped owned vertices back at x_n
    VecArray b(x, false);
    for (std::size_t k = 0; k < terms_.owned_local_.size(); ++k) {
      const auto V = static_cast<std::size_t>(terms_.owned_surface_[k]);
      if (!frozen[V]) continue;
      for (int d = 0; d < 3; ++d)
        b.span()[3 * static_cast<std::size_t>(terms_.owned_local_[k]) + d] = end[3 * V + d] = x_n_[3 * V + d];
    }
  }
  // The record of the step's end (SelfContactTerms::measure): its pairs within h are among `near` (boxes over
  // x_n -> x_{n+1} grown by h / 2; a stopped vertex is at x_n, inside them), at the ghosts' end positions.
  const double t_exchange = MPI_Wtime();
  terms_.exchange_->forward(*terms_.exchange_->layer(), {end}, 3);
  terms_.exchange_seconds_ += MPI_Wtime() - t_exchange;
  const auto clock = std::chrono::steady_clock::now();
  const contact::SelfMeasure measured = contact::measure_pairs(s, near, end, h_);
  times_.narrow += seconds_since(clock);
  terms_.offer_measure(measured, std::move(end));
  MPI_Allreduce(MPI_IN_PLACE, &last_.projected, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  last_.frozen = newly;
  last_.rounds = rounds;
  frozen_total_ += newly;
  terms_.extra_pairs_ = times_;
  terms_.seconds_ += MPI_Wtime() - t0, terms_.cpu_seconds_ += process_cpu_seconds() - c0;
}

}  // namespace edgefem
