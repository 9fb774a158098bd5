// SPDX-License-Identifier: BSD-3-Clause
/// \file bending.cpp
/// Isometric bending (bending.hpp): per stencil the 4 weights k are precomputed; W, f and the constant K follow.
/// Forces are gathered per vertex through a vertex -> (stencil, slot) list, race-free under OpenMP; the energy is
/// an ordered sum.
#include "materials/bending.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "materials/edge_assembly.hpp"

namespace edgefem {
namespace {

double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double cross_norm(const double* a, const double* b) {
  const double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  return std::sqrt(dot3(c, c));
}

class Bending final : public TetFormulation {
 public:
  Bending(std::span<const double> coords, std::span<const LocalIndex> stencils, std::span<const double> stiffness)
      : n_vertices_(static_cast<LocalIndex>(coords.size() / 3)) {
    if (coords.size() % 3 != 0 || stencils.size() % 4 != 0 || stiffness.size() != stencils.size() / 4)
      throw std::invalid_argument("bending: " + std::to_string(coords.size()) + " coordinates, " +
                                  std::to_string(stencils.size()) + " stencil ids and " +
                                  std::to_string(stiffness.size()) +
                                  " stiffnesses (expected 3 per vertex, 4 per stencil, one per stencil)");
    const std::size_t ns = stiffness.size();
    v_.assign(stencils.begin(), stencils.end());
    k_.resize(4 * ns);
    std::vector<char> touched(static_cast<std::size_t>(n_vertices_), 0);
    for (std::size_t s = 0; s < ns; ++s) {
      if (!(stiffness[s] >= 0.0))
        throw std::invalid_argument("bending: stencil " + std::to_string(s) + " has stiffness " +
                                    std::to_string(stiffness[s]) + ", expected >= 0");
      double X[12];
      for (int i = 0; i < 4; ++i) {
        const LocalIndex v = v_[4 * s + i];
        if (v < 0 || v >= n_vertices_)
          throw std::invalid_argument("bending: stencil " + std::to_string(s) + " has vertex id " + std::to_string(v) +
                                      ", expected 0.." + std::to_string(n_vertices_ - 1));
        touched[static_cast<std::size_t>(v)] = 1;
        for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * static_cast<std::size_t>(v) + c];
      }
      const auto k = bending_weights(X, stiffness[s]);
      std::copy(k.begin(), k.end(), k_.begin() + 4 * static_cast<std::ptrdiff_t>(s));
    }
    // Pattern: touched vertices' diagonal blocks (ascending), then the 12 (i != j) pairs of every stencil.
    for (LocalIndex v = 0; v < n_vertices_; ++v)
      if (touched[static_cast<std::size_t>(v)]) {
        diag_of_.push_back(v);
        pattern_.push_back({v, v});
      }
    for (std::size_t s = 0; s < ns; ++s)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          if (i != j) pattern_.push_back({v_[4 * s + i], v_[4 * s + j]});
    vs_ = edge_assembly::build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
      for (std::size_t s = 0; s < ns; ++s)
        for (int i = 0; i < 4; ++i) sink(v_[4 * s + i], static_cast<std::uint32_t>(4 * s + i));
    });
    h_.resize(3 * ns);
  }

  [[nodiscard]] std::string_view name() const override { return "bending"; }
  [[nodiscard]] LocalIndex n_vertices() const override { return n_vertices_; }
  [[nodiscard]] const std::vector<std::array<LocalIndex, 2>>& block_pattern() const override { return pattern_; }
  [[nodiscard]] std::size_t bytes() const override {
    using edge_assembly::vector_bytes;
    return vector_bytes(v_) + vector_bytes(k_) + vector_bytes(pattern_) + vector_bytes(diag_of_) + vs_.bytes() +
           vector_bytes(h_);
  }

  [[nodiscard]] double energy(std::span<const double> x) const override {
    check(x.size());
    const std::size_t ns = k_.size() / 4;
    double w = 0.0;
    for (std::size_t s = 0; s < ns; ++s) {
      double h[3];
      hinge_vector(s, x.data(), h);
      w += 0.5 * dot3(h, h);
    }
    return w;
  }

  void force(std::span<const double> x, std::span<double> f) const override {
    check(x.size());
    check(f.size());
    const auto ns = static_cast<std::int64_t>(k_.size() / 4);
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < ns; ++s) hinge_vector(static_cast<std::size_t>(s), x.data(), &h_[3 * s]);
#pragma omp parallel for schedule(static)
    for (LocalIndex v = 0; v < n_vertices_; ++v) {
      double fv[3] = {0.0, 0.0, 0.0};
      for (std::int64_t q = vs_.ptr[v]; q < vs_.ptr[v + 1]; ++q) {
        const std::uint32_t code = vs_.codes[q];  // 4 s + slot
        const double k = k_[code];
        const double* h = &h_[3 * static_cast<std::size_t>(code / 4)];
        fv[0] += k * h[0], fv[1] += k * h[1], fv[2] += k * h[2];
      }
      for (int c = 0; c < 3; ++c) f[3 * static_cast<std::size_t>(v) + c] = fv[c];
    }
  }

  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override {
    force(x, f);
    if (blocks.size() != 9 * pattern_.size())
      throw std::invalid_argument("bending: " + std::to_string(blocks.size()) + " block values, expected " +
                                  std::to_string(9 * pattern_.size()));
    std::fill(blocks.begin(), blocks.end(), 0.0);
    // Diagonal blocks: sum over the vertex's stencils of k_i^2 I.
    const auto nd = static_cast<std::int64_t>(diag_of_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t d = 0; d < nd; ++d) {
      const LocalIndex v = diag_of_[static_cast<std::size_t>(d)];
      double kk = 0.0;
      for (std::int64_t q = vs_.ptr[v]; q < vs_.ptr[v + 1]; ++q) kk += k_[vs_.codes[q]] * k_[vs_.codes[q]];
      double* B = &blocks[9 * static_cast<std::size_t>(d)];
      B[0] = B[4] = B[8] = kk;
    }
    const auto ns = static_cast<std::int64_t>(k_.size() / 4);
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < ns; ++s) {
      double* B = &blocks[9 * (diag_of_.size() + 12 * static_cast<std::size_t>(s))];
      const double* k = &k_[4 * static_cast<std::size_t>(s)];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          if (i != j) {
            B[0] = B[4] = B[8] = k[i] * k[j];
            B += 9;
          }
    }
  }

 private:
  void check(std::size_t n) const {
    if (n != 3 * static_cast<std::size_t>(n_vertices_))
      throw std::invalid_argument("bending: a vector of " + std::to_string(n) + " values, expected " +
                                  std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
  }
  /// h = sum_i k_i x_i of stencil s.
  void hinge_vector(std::size_t s, const double* x, double h[3]) const {
    h[0] = h[1] = h[2] = 0.0;
    for (int i = 0; i < 4; ++i) {
      const double k = k_[4 * s + i];
      const double* xi = x + 3 * static_cast<std::size_t>(v_[4 * s + i]);
      h[0] += k * xi[0], h[1] += k * xi[1], h[2] += k * xi[2];
    }
  }

  LocalIndex n_vertices_ = 0;
  std::vector<LocalIndex> v_;        ///< 4 per stencil
  std::vector<double> k_;            ///< 4 weights per stencil
  std::vector<LocalIndex> diag_of_;  ///< touched vertices, ascending (the first blocks of the pattern)
  std::vector<std::array<LocalIndex, 2>> pattern_;
  edge_assembly::Csr<std::uint32_t> vs_;  ///< vertex -> 4 s + slot
  mutable std::vector<double> h_;         ///< scratch: the hinge vector of every stencil
};

}  // namespace

std::array<double, 4> bending_weights(const double* X, double kb) {
  const double* x0 = X;
  const double* x1 = X + 3;
  const double* x2 = X + 6;
  const double* x3 = X + 9;
  double e0[3], e1[3], e2[3], e3[3], e4[3], m0[3];
  for (int c = 0; c < 3; ++c) {
    e0[c] = x1[c] - x0[c];
    e1[c] = x2[c] - x0[c];
    e2[c] = x3[c] - x0[c];
    e3[c] = x2[c] - x1[c];
    e4[c] = x3[c] - x1[c];
    m0[c] = -e0[c];
  }
  const double n01 = cross_norm(e0, e1), n02 = cross_norm(e0, e2), n03 = cross_norm(m0, e3), n04 = cross_norm(m0, e4);
  const double scale = dot3(e0, e0);
  if (!(n01 > 1e-14 * scale) || !(n02 > 1e-14 * scale))
    throw std::invalid_argument("bending: a stencil has a triangle of zero area (degenerate element)");
  // Interior angles: at x0 in (x0, x1, x2) and (x0, x1, x3): c01, c02; at x1: c03, c04.
  const double c01 = dot3(e0, e1) / n01, c02 = dot3(e0, e2) / n02, c03 = dot3(m0, e3) / n03, c04 = dot3(m0, e4) / n04;
  const double area = 0.5 * (n01 + n02);
  const double K[4] = {c03 + c04, c01 + c02, -c01 - c03, -c02 - c04};
  const double f = std::sqrt(3.0 * kb / area);
  return {f * K[0], f * K[1], f * K[2], f * K[3]};
}

double bending_energy_gradient(const std::array<double, 4>& k, const double* x, double* gradient) {
  double h[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) h[c] += k[i] * x[3 * i + c];
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) gradient[3 * i + c] = k[i] * h[c];
  return 0.5 * dot3(h, h);
}

std::unique_ptr<TetFormulation> make_bending(std::span<const double> coords, std::span<const LocalIndex> stencils,
                                             std::span<const double> stiffness) {
  return std::make_unique<Bending>(coords, stencils, stiffness);
}

}  // namespace edgefem
