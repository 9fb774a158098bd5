// SPDX-License-Identifier: BSD-3-Clause
#include "materials/constant_stiffness.hpp"

#include <cstring>
#include <stdexcept>

#include "materials/edge_assembly.hpp"

namespace edgefem {
namespace {

class ConstantStiffness final : public edge_assembly::EdgeFormulation<> {
 public:
  ConstantStiffness(std::string name, std::span<const double> coords, const TetFormulation& source);

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override {
    using edge_assembly::vector_bytes;
    return vector_bytes(X_) + vector_bytes(kdiag_) + vector_bytes(kedge_) + edges_.bytes();
  }

 private:
  void check(std::span<const double> x, std::size_t nf) const;
  void apply(const double* x, double* f) const;  ///< f := K0 (x - X)

  std::string name_;
  std::vector<double> X_;      ///< reference positions
  std::vector<double> kdiag_;  ///< 9 per touched vertex: K0(v, v) (diagonal slot order)
  std::vector<double> kedge_;  ///< 9 per edge: K0(v0, v1)
};

ConstantStiffness::ConstantStiffness(std::string name, std::span<const double> coords, const TetFormulation& source)
    : EdgeFormulation(coords), name_(std::move(name)), X_(coords.begin(), coords.end()) {
  const auto& pattern = source.block_pattern();
  std::vector<double> f(coords.size()), blocks(9 * pattern.size());
  source.force_and_stiffness(coords, f, blocks);
  std::int64_t n_touched = 0;
  while (n_touched < static_cast<std::int64_t>(pattern.size()) && pattern[n_touched][0] == pattern[n_touched][1])
    ++n_touched;
  const std::int64_t ne = (static_cast<std::int64_t>(pattern.size()) - n_touched) / 2;
  std::vector<std::array<LocalIndex, 2>> edges(static_cast<std::size_t>(ne));
  for (std::int64_t e = 0; e < ne; ++e) edges[e] = pattern[n_touched + 2 * e];
  edges_ = edge_assembly::EdgeBlocks(n_vertices_, edges);
  if (edges_.pattern() != pattern)
    throw std::logic_error(name_ + ": the source's block pattern is not the edge layout of edge_assembly.hpp");
  kdiag_.assign(blocks.begin(), blocks.begin() + 9 * n_touched);
  kedge_.resize(9 * ne);
  for (std::int64_t e = 0; e < ne; ++e)
    std::memcpy(&kedge_[9 * e], &blocks[9 * (n_touched + 2 * e)], 9 * sizeof(double));
}

void ConstantStiffness::check(std::span<const double> x, std::size_t nf) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_) || nf != x.size())
    throw std::invalid_argument(name_ + ": x/f hold " + std::to_string(x.size()) + "/" + std::to_string(nf) +
                                " values, expected " + std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
}

void ConstantStiffness::apply(const double* x, double* f) const {
  const std::int64_t nv = n_vertices_;
  const double* X = X_.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < nv; ++v) {
    double* fv = f + 3 * v;
    const LocalIndex slot = edges_.diagonal_slot(static_cast<LocalIndex>(v));
    if (slot < 0) {
      fv[0] = fv[1] = fv[2] = 0.0;
      continue;
    }
    const double u[3] = {x[3 * v] - X[3 * v], x[3 * v + 1] - X[3 * v + 1], x[3 * v + 2] - X[3 * v + 2]};
    const double* Kd = &kdiag_[9 * std::int64_t{slot}];
    double r[3];
    for (int i = 0; i < 3; ++i) r[i] = Kd[3 * i] * u[0] + Kd[3 * i + 1] * u[1] + Kd[3 * i + 2] * u[2];
    const auto& v_list = edges_.vertex_edges();
    for (std::int64_t k = v_list.ptr[v]; k < v_list.ptr[v + 1]; ++k) {
      const std::uint32_t code = v_list.codes[k];
      const std::int64_t e = code >> 1;
      const double* K = &kedge_[9 * e];
      const std::int64_t w = (code & 1) ? edges_.v0(e) : edges_.v1(e);
      const double uw[3] = {x[3 * w] - X[3 * w], x[3 * w + 1] - X[3 * w + 1], x[3 * w + 2] - X[3 * w + 2]};
      if (code & 1) {  // v = v1: block (v1, v0) = K(E)^T
        for (int i = 0; i < 3; ++i) r[i] += K[i] * uw[0] + K[3 + i] * uw[1] + K[6 + i] * uw[2];
      } else {
        for (int i = 0; i < 3; ++i) r[i] += K[3 * i] * uw[0] + K[3 * i + 1] * uw[1] + K[3 * i + 2] * uw[2];
      }
    }
    fv[0] = r[0];
    fv[1] = r[1];
    fv[2] = r[2];
  }
}

double ConstantStiffness::energy(std::span<const double> x) const {
  check(x, x.size());
  std::vector<double> f(x.size());
  apply(x.data(), f.data());
  const double* X = X_.data();
  return 0.5 * edge_assembly::ordered_sum(3 * std::int64_t{n_vertices_},
                                          [&](std::int64_t i) { return (x[i] - X[i]) * f[i]; });
}

void ConstantStiffness::force(std::span<const double> x, std::span<double> f) const {
  check(x, f.size());
  apply(x.data(), f.data());
}

void ConstantStiffness::force_and_stiffness(std::span<const double> x, std::span<double> f,
                                            std::span<double> blocks) const {
  check(x, f.size());
  edges_.check_blocks(blocks, name_);
  apply(x.data(), f.data());
  double* out = blocks.data();
  const std::int64_t nd = edges_.n_touched(), ne = edges_.n_edges();
#pragma omp parallel for schedule(static)
  for (std::int64_t s = 0; s < nd; ++s) std::memcpy(out + 9 * s, &kdiag_[9 * s], 9 * sizeof(double));
  double* kedge = edges_.edge_blocks(out);
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) edge_assembly::write_edge_block(kedge, e, &kedge_[9 * e]);
}

}  // namespace

std::unique_ptr<TetFormulation> make_constant_stiffness(std::string name, std::span<const double> coords,
                                                        const TetFormulation& source) {
  return std::make_unique<ConstantStiffness>(std::move(name), coords, source);
}

}  // namespace edgefem
