// SPDX-License-Identifier: BSD-3-Clause
/// \file self_exchange.cpp
/// Self-contact's ghost layer (self_exchange.hpp).
#include "solver/self_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgefem {
namespace {

constexpr int kTagCount = 5301, kTagList = 5302, kTagValues = 5303;
/// Boxes per rank in a layer's allgather: clusters of its surface vertices (self_exchange.hpp).
constexpr std::size_t kBoxes = 16;

/// A box of 6 doubles (lo, hi), empty: lo > hi.
using Box = std::array<double, 6>;

Box empty_box() { return {1e300, 1e300, 1e300, -1e300, -1e300, -1e300}; }

void grow(Box& b, const double* p) {
  for (int d = 0; d < 3; ++d) b[d] = std::min(b[d], p[d]), b[3 + d] = std::max(b[3 + d], p[d]);
}

Box inflated(const Box& b, double by) {
  if (b[0] > b[3]) return b;  // (empty stays empty)
  return {b[0] - by, b[1] - by, b[2] - by, b[3] + by, b[4] + by, b[5] + by};
}

bool overlap(const Box& a, const Box& b) {
  for (int d = 0; d < 3; ++d)
    if (a[3 + d] < b[d] || b[3 + d] < a[d]) return false;
  return true;
}

bool inside(const Box& b, const double* p) {
  for (int d = 0; d < 3; ++d)
    if (p[d] < b[d] || p[d] > b[3 + d]) return false;
  return true;
}

/// The owned vertices (indices k into x's owned list `owned`) split into at most `leaves` groups by median splits
/// along the longest axis of their positions; each group's box over x and the anchor (if any).
std::vector<Box> cluster_boxes(const std::vector<int>& owned, std::span<const double> x,
                               const std::vector<double>& anchor, int leaves) {
  std::vector<int> order(owned.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  const auto point = [&](int k) { return &x[3 * static_cast<std::size_t>(owned[static_cast<std::size_t>(k)])]; };
  std::vector<std::pair<int, int>> ranges{{0, static_cast<int>(order.size())}};
  while (static_cast<int>(ranges.size()) < leaves) {
    std::vector<std::pair<int, int>> next;
    for (const auto& [first, last] : ranges) {
      if (last - first < 2) {
        next.emplace_back(first, last);
        continue;
      }
      Box b = empty_box();
      for (int i = first; i < last; ++i) grow(b, point(order[static_cast<std::size_t>(i)]));
      int axis = 0;
      for (int d = 1; d < 3; ++d)
        if (b[3 + d] - b[d] > b[3 + axis] - b[axis]) axis = d;
      const int middle = (first + last) / 2;
      std::nth_element(order.begin() + first, order.begin() + middle, order.begin() + last,
                       [&](int a, int c) { return point(a)[axis] < point(c)[axis]; });
      next.emplace_back(first, middle), next.emplace_back(middle, last);
    }
    if (next.size() == ranges.size()) break;
    ranges = std::move(next);
  }
  std::vector<Box> boxes(static_cast<std::size_t>(leaves), empty_box());
  for (std::size_t g = 0; g < ranges.size(); ++g)
    for (int i = ranges[g].first; i < ranges[g].second; ++i) {
      const int k = order[static_cast<std::size_t>(i)];
      grow(boxes[g], point(k));
      if (!anchor.empty()) grow(boxes[g], &anchor[3 * static_cast<std::size_t>(k)]);
    }
  return boxes;
}

/// Whether p lies in any of the boxes.
bool inside_any(const std::vector<Box>& boxes, const double* p) {
  return std::any_of(boxes.begin(), boxes.end(), [&](const Box& b) { return inside(b, p); });
}

/// Whether any box of a overlaps any box of b.
bool overlap_any(const std::vector<Box>& a, const std::vector<Box>& b) {
  for (const Box& x : a)
    for (const Box& y : b)
      if (overlap(x, y)) return true;
  return false;
}

}  // namespace

SelfExchange::SelfExchange(MPI_Comm comm, std::vector<int> owner, std::vector<std::array<int, 2>> edges,
                           double query_inflation)
    : owner_(std::move(owner)), inflation_(query_inflation) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  for (std::size_t v = 0; v < owner_.size(); ++v)
    if (owner_[v] == rank_) owned_.push_back(static_cast<int>(v));
  // The first layer: the far vertices of this rank's edges, and ours that other ranks' edges need (topology alone).
  std::vector<std::vector<int>> send(static_cast<std::size_t>(size_)), recv(static_cast<std::size_t>(size_));
  for (const auto& e : edges) {
    const int a = owner_[static_cast<std::size_t>(e[0])], b = owner_[static_cast<std::size_t>(e[1])];
    if (a == rank_) edges_.push_back(e);
    if (a == b) continue;
    if (a == rank_) recv[static_cast<std::size_t>(b)].push_back(e[1]);
    if (b == rank_) send[static_cast<std::size_t>(a)].push_back(e[1]);
  }
  auto layer = std::make_shared<Layer>();
  layer->known.assign(owner_.size(), 0);
  for (const int v : owned_) layer->known[static_cast<std::size_t>(v)] = 1;
  for (int q = 0; q < size_; ++q) {
    auto& s = send[static_cast<std::size_t>(q)];
    auto& r = recv[static_cast<std::size_t>(q)];
    std::sort(s.begin(), s.end()), s.erase(std::unique(s.begin(), s.end()), s.end());
    std::sort(r.begin(), r.end()), r.erase(std::unique(r.begin(), r.end()), r.end());
    if (s.empty() && r.empty()) continue;
    for (const int v : r) layer->known[static_cast<std::size_t>(v)] = 1;
    layer->ranks.push_back(q);
    layer->send.push_back(std::move(s));
    layer->recv.push_back(std::move(r));
  }
  layer_ = std::move(layer);
}

SelfExchange::~SelfExchange() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

bool SelfExchange::serves(std::span<const double> x, std::span<const double> dx, double& move) {
  if (translating_) return serves_translated(x, dx, move);
  double local[2] = {0.0, 0.0};  // the largest distance from the centre; the largest move
  for (std::size_t k = 0; k < owned_.size(); ++k)
    for (int d = 0; d < 3; ++d) {
      const std::size_t i = 3 * static_cast<std::size_t>(owned_[k]) + static_cast<std::size_t>(d);
      const double step = dx.empty() ? 0.0 : std::abs(dx[i]);
      const double from = centre_.empty() ? 0.0 : std::abs(x[i] - centre_[3 * k + static_cast<std::size_t>(d)]);
      local[0] = std::max(local[0], from + step);
      local[1] = std::max(local[1], step);
    }
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm_);
  ++traffic_.reductions;
  move = global[1];
  return delta_ >= 0.0 && global[0] <= delta_;
}

bool SelfExchange::serves_translated(std::span<const double> x, std::span<const double> dx, double& move) {
  // Per axis the largest and minus the smallest move from the centre of x and of x + dx; the largest |dx|.
  std::array<double, 7> local;
  local.fill(-std::numeric_limits<double>::infinity());
  local[6] = 0.0;
  for (std::size_t k = 0; k < owned_.size(); ++k)
    for (std::size_t d = 0; d < 3; ++d) {
      const std::size_t i = 3 * static_cast<std::size_t>(owned_[k]) + d;
      const double step = dx.empty() ? 0.0 : dx[i];
      const double from = centre_.empty() ? 0.0 : x[i] - centre_[3 * k + d];
      local[d] = std::max({local[d], from, from + step});
      local[3 + d] = std::max({local[3 + d], -from, -(from + step)});
      local[6] = std::max(local[6], std::abs(step));
    }
  std::array<double, 7> global{};
  MPI_Allreduce(local.data(), global.data(), 7, MPI_DOUBLE, MPI_MAX, comm_);
  ++traffic_.reductions;
  move = global[6];
  double spread = 0.0;  // half the largest range of the moves: the distance from the centre less the best translation
  for (std::size_t d = 0; d < 3; ++d) spread = std::max(spread, 0.5 * (global[d] + global[3 + d]));
  return delta_ >= 0.0 && spread <= delta_;
}

double SelfExchange::longest_edge(std::span<const double> x) const {
  double longest = 0.0;
  for (const auto& e : edges_) {
    double s = 0.0;
    for (int d = 0; d < 3; ++d) {
      const double t = x[3 * static_cast<std::size_t>(e[0]) + d] - x[3 * static_cast<std::size_t>(e[1]) + d];
      s += t * t;
    }
    longest = std::max(longest, std::sqrt(s));
  }
  return longest;
}

void SelfExchange::set_anchor(std::span<const double> x) {
  anchor_.clear();
  anchor_edge_ = 0.0;
  if (x.empty()) return;
  for (const int v : owned_) anchor_.insert(anchor_.end(), &x[3 * static_cast<std::size_t>(v)], &x[3 * static_cast<std::size_t>(v)] + 3);
  anchor_edge_ = longest_edge(x);
}

void SelfExchange::build(std::span<double> x, double delta) {
  forward(*layer_, {x}, 3);  // (the far vertices of our edges: in every layer)
  // Our boxes (clusters of our vertices at x and at the anchor) and our longest edge, from every rank.
  const std::size_t per_rank = 6 * kBoxes + 1;
  std::vector<double> mine;
  for (const Box& b : cluster_boxes(owned_, x, anchor_, kBoxes)) mine.insert(mine.end(), b.begin(), b.end());
  mine.push_back(std::max(longest_edge(x), anchor_edge_));
  std::vector<double> all(per_rank * static_cast<std::size_t>(size_));
  MPI_Allgather(mine.data(), static_cast<int>(per_rank), MPI_DOUBLE, all.data(), static_cast<int>(per_rank),
                MPI_DOUBLE, comm_);
  double longest = 0.0;
  for (int q = 0; q < size_; ++q) longest = std::max(longest, all[per_rank * static_cast<std::size_t>(q) + 6 * kBoxes]);
  // Rank q needs every vertex within its boxes grown by 2 L + G (self_exchange.hpp).
  const double grow_by = 2.0 * longest + 2.0 * delta + 2.0 * inflation_;
  const auto boxes_of = [&](int q, double by) {
    std::vector<Box> boxes(kBoxes);
    for (std::size_t b = 0; b < kBoxes; ++b) {
      std::copy_n(&all[per_rank * static_cast<std::size_t>(q) + 6 * b], 6, boxes[b].begin());
      boxes[b] = inflated(boxes[b], by);
    }
    return boxes;
  };
  std::vector<int> targets, sources;
  std::vector<std::vector<int>> lists;
  const std::vector<Box> me = boxes_of(rank_, 0.0), my_region = boxes_of(rank_, grow_by);
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const std::vector<Box> region = boxes_of(q, grow_by);
    if (overlap_any(my_region, boxes_of(q, 0.0))) sources.push_back(q);
    if (!overlap_any(me, region)) continue;
    targets.push_back(q);
    std::vector<int> list;
    for (std::size_t k = 0; k < owned_.size(); ++k) {
      const auto v = static_cast<std::size_t>(owned_[k]);
      if (inside_any(region, &x[3 * v]) || (!anchor_.empty() && inside_any(region, &anchor_[3 * k])))
        list.push_back(owned_[k]);
    }
    lists.push_back(std::move(list));
  }
  install(targets, lists, sources, trade_lists(targets, lists, sources));
  centre_.clear();
  for (const int v : owned_) centre_.insert(centre_.end(), &x[3 * static_cast<std::size_t>(v)], &x[3 * static_cast<std::size_t>(v)] + 3);
  delta_ = delta;
  ++traffic_.builds;
  forward(*layer_, {x}, 3);  // (the new ghosts' positions)
}

void SelfExchange::install(const std::vector<int>& targets, std::vector<std::vector<int>>& lists,
                           const std::vector<int>& sources, std::vector<std::vector<int>> received) {
  auto layer = std::make_shared<Layer>();
  layer->known.assign(owner_.size(), 0);
  for (const int v : owned_) layer->known[static_cast<std::size_t>(v)] = 1;
  std::size_t t = 0, s = 0;
  while (t < targets.size() || s < sources.size()) {
    const int q = std::min(t < targets.size() ? targets[t] : size_, s < sources.size() ? sources[s] : size_);
    std::vector<int> send, recv;
    if (t < targets.size() && targets[t] == q) send = std::move(lists[t++]);
    if (s < sources.size() && sources[s] == q) recv = std::move(received[s++]);
    if (send.empty() && recv.empty()) continue;
    for (const int v : recv) layer->known[static_cast<std::size_t>(v)] = 1;
    layer->ranks.push_back(q);
    layer->send.push_back(std::move(send));
    layer->recv.push_back(std::move(recv));
  }
  layer_ = std::move(layer);
}

std::vector<std::vector<int>> SelfExchange::trade_lists(const std::vector<int>& targets,
                                                       const std::vector<std::vector<int>>& lists,
                                                       const std::vector<int>& sources) {
  std::vector<int> sizes(targets.size()), incoming(sources.size());
  std::vector<MPI_Request> requests;
  for (std::size_t s = 0; s < sources.size(); ++s)
    MPI_Irecv(&incoming[s], 1, MPI_INT, sources[s], kTagCount, comm_, &requests.emplace_back());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    sizes[t] = static_cast<int>(lists[t].size());
    MPI_Isend(&sizes[t], 1, MPI_INT, targets[t], kTagCount, comm_, &requests.emplace_back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  traffic_.messages += static_cast<long long>(targets.size());
  requests.clear();
  std::vector<std::vector<int>> received(sources.size());
  for (std::size_t s = 0; s < sources.size(); ++s) {
    received[s].resize(static_cast<std::size_t>(incoming[s]));
    if (incoming[s] > 0)
      MPI_Irecv(received[s].data(), incoming[s], MPI_INT, sources[s], kTagList, comm_, &requests.emplace_back());
    traffic_.bytes_received += 4.0 * (1 + incoming[s]);
  }
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (sizes[t] == 0) continue;
    MPI_Isend(lists[t].data(), sizes[t], MPI_INT, targets[t], kTagList, comm_, &requests.emplace_back());
    ++traffic_.messages;
  }
  for (std::size_t t = 0; t < targets.size(); ++t) traffic_.bytes_sent += 4.0 * (1 + sizes[t]);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return received;
}

void SelfExchange::post(const Layer& layer, bool reverse, int k, std::vector<std::vector<double>>& out,
                        std::vector<std::vector<double>>& in, std::vector<MPI_Request>& requests) {
  for (std::size_t n = 0; n < layer.ranks.size(); ++n) {
    const std::size_t count = (reverse ? layer.send[n] : layer.recv[n]).size() * static_cast<std::size_t>(k);
    if (count == 0) continue;
    in[n].resize(count);
    MPI_Irecv(in[n].data(), static_cast<int>(count), MPI_DOUBLE, layer.ranks[n], kTagValues, comm_,
              &requests.emplace_back());
    traffic_.bytes_received += 8.0 * static_cast<double>(count);
  }
  for (std::size_t n = 0; n < layer.ranks.size(); ++n) {
    if (out[n].empty()) continue;
    MPI_Isend(out[n].data(), static_cast<int>(out[n].size()), MPI_DOUBLE, layer.ranks[n], kTagValues, comm_,
              &requests.emplace_back());
    ++traffic_.messages;
    traffic_.bytes_sent += 8.0 * static_cast<double>(out[n].size());
  }
}

void SelfExchange::forward(const Layer& layer, std::initializer_list<std::span<double>> arrays, int k) {
  const std::size_t n_ranks = layer.ranks.size(), kk = static_cast<std::size_t>(k);
  std::vector<std::vector<double>> out(n_ranks), in(n_ranks);
  for (std::size_t n = 0; n < n_ranks; ++n)
    for (const int v : layer.send[n])
      for (const auto& a : arrays) out[n].insert(out[n].end(), &a[kk * static_cast<std::size_t>(v)], &a[kk * static_cast<std::size_t>(v)] + kk);
  std::vector<MPI_Request> requests;
  post(layer, false, k * static_cast<int>(arrays.size()), out, in, requests);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (std::size_t n = 0; n < n_ranks; ++n) {
    std::size_t i = 0;
    for (const int v : layer.recv[n])
      for (const auto& a : arrays)
        for (std::size_t c = 0; c < kk; ++c) a[kk * static_cast<std::size_t>(v) + c] = in[n][i++];
  }
  ++traffic_.exchanges;
}

void SelfExchange::reverse_add(const Layer& layer, std::span<double> values, int k) {
  const std::size_t n_ranks = layer.ranks.size(), kk = static_cast<std::size_t>(k);
  std::vector<std::vector<double>> out(n_ranks), in(n_ranks);
  for (std::size_t n = 0; n < n_ranks; ++n)
    for (const int v : layer.recv[n])
      out[n].insert(out[n].end(), &values[kk * static_cast<std::size_t>(v)], &values[kk * static_cast<std::size_t>(v)] + kk);
  std::vector<MPI_Request> requests;
  post(layer, true, k, out, in, requests);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (std::size_t n = 0; n < n_ranks; ++n) {
    std::size_t i = 0;
    for (const int v : layer.send[n])
      for (std::size_t c = 0; c < kk; ++c) values[kk * static_cast<std::size_t>(v) + c] += in[n][i++];
  }
  ++traffic_.exchanges;
}

}  // namespace edgefem
