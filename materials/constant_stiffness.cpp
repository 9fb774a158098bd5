#include "materials/constant_stiffness.hpp"

#include <cstring>
#include <stdexcept>

#include "materials/tet_geometry.hpp"

namespace edgefem {
namespace {

class ConstantStiffness final : public TetFormulation {
 public:
  ConstantStiffness(std::string name, std::span<const double> coords, const TetFormulation& source);

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] LocalIndex n_vertices() const override { return n_vertices_; }
  [[nodiscard]] const std::vector<std::array<LocalIndex, 2>>& block_pattern() const override { return pattern_; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override {
    auto vb = [](const auto& vec) { return vec.capacity() * sizeof(vec[0]); };
    return vb(X_) + vb(kdiag_) + vb(kedge_) + vb(ev0_) + vb(ev1_) + vb(diag_slot_) + v_list_.bytes() + vb(pattern_);
  }

 private:
  void check(std::span<const double> x, std::size_t nf) const;
  void apply(const double* x, double* f) const;  ///< f := K0 (x - X)

  std::string name_;
  LocalIndex n_vertices_ = 0;
  std::int64_t n_edges_ = 0, n_touched_ = 0;
  std::vector<double> X_;                 ///< reference positions
  std::vector<double> kdiag_;             ///< 9 per touched vertex: K0(v, v)
  std::vector<double> kedge_;             ///< 9 per edge: K0(v0, v1)
  std::vector<LocalIndex> ev0_, ev1_;
  std::vector<LocalIndex> diag_slot_;     ///< index of K0(v, v) in kdiag_ / the pattern, -1 if untouched
  tetgeo::Csr<std::uint32_t> v_list_;     ///< vertex -> e << 1 | (vertex is v1)
  std::vector<std::array<LocalIndex, 2>> pattern_;
};

ConstantStiffness::ConstantStiffness(std::string name, std::span<const double> coords, const TetFormulation& source)
    : name_(std::move(name)), n_vertices_(static_cast<LocalIndex>(coords.size() / 3)), X_(coords.begin(), coords.end()) {
  pattern_ = source.block_pattern();
  std::vector<double> f(coords.size()), blocks(9 * pattern_.size());
  source.force_and_stiffness(coords, f, blocks);
  while (n_touched_ < static_cast<std::int64_t>(pattern_.size()) && pattern_[n_touched_][0] == pattern_[n_touched_][1])
    ++n_touched_;
  n_edges_ = (static_cast<std::int64_t>(pattern_.size()) - n_touched_) / 2;
  kdiag_.assign(blocks.begin(), blocks.begin() + 9 * n_touched_);
  kedge_.resize(9 * n_edges_);
  ev0_.resize(n_edges_);
  ev1_.resize(n_edges_);
  diag_slot_.assign(n_vertices_, -1);
  for (std::int64_t s = 0; s < n_touched_; ++s) diag_slot_[pattern_[s][0]] = static_cast<LocalIndex>(s);
  for (std::int64_t e = 0; e < n_edges_; ++e) {
    ev0_[e] = pattern_[n_touched_ + 2 * e][0];
    ev1_[e] = pattern_[n_touched_ + 2 * e][1];
    std::memcpy(&kedge_[9 * e], &blocks[9 * (n_touched_ + 2 * e)], 9 * sizeof(double));
  }
  tetgeo::check_packable(n_edges_, 31, "edges");
  v_list_ = tetgeo::build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
    for (std::int64_t e = 0; e < n_edges_; ++e) {
      sink(ev0_[e], static_cast<std::uint32_t>(e << 1));
      sink(ev1_[e], static_cast<std::uint32_t>(e << 1 | 1));
    }
  });
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
    if (diag_slot_[v] < 0) {
      fv[0] = fv[1] = fv[2] = 0.0;
      continue;
    }
    const double u[3] = {x[3 * v] - X[3 * v], x[3 * v + 1] - X[3 * v + 1], x[3 * v + 2] - X[3 * v + 2]};
    const double* Kd = &kdiag_[9 * std::int64_t{diag_slot_[v]}];
    double r[3];
    for (int i = 0; i < 3; ++i) r[i] = Kd[3 * i] * u[0] + Kd[3 * i + 1] * u[1] + Kd[3 * i + 2] * u[2];
    for (std::int64_t k = v_list_.ptr[v]; k < v_list_.ptr[v + 1]; ++k) {
      const std::uint32_t code = v_list_.codes[k];
      const std::int64_t e = code >> 1;
      const double* K = &kedge_[9 * e];
      const std::int64_t w = (code & 1) ? ev0_[e] : ev1_[e];
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
  return 0.5 * tetgeo::ordered_sum(3 * std::int64_t{n_vertices_}, [&](std::int64_t i) { return (x[i] - X[i]) * f[i]; });
}

void ConstantStiffness::force(std::span<const double> x, std::span<double> f) const {
  check(x, f.size());
  apply(x.data(), f.data());
}

void ConstantStiffness::force_and_stiffness(std::span<const double> x, std::span<double> f,
                                            std::span<double> blocks) const {
  check(x, f.size());
  if (blocks.size() != 9 * pattern_.size())
    throw std::invalid_argument(name_ + ": blocks holds " + std::to_string(blocks.size()) + " values, expected " +
                                std::to_string(9 * pattern_.size()));
  apply(x.data(), f.data());
  double* out = blocks.data();
  const std::int64_t nd = n_touched_, ne = n_edges_;
#pragma omp parallel for schedule(static)
  for (std::int64_t s = 0; s < nd; ++s) std::memcpy(out + 9 * s, &kdiag_[9 * s], 9 * sizeof(double));
  double* kedge = out + 9 * nd;
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    const double* K = &kedge_[9 * e];
    double* o = kedge + 18 * e;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        o[3 * r + c] = K[3 * r + c];
        o[9 + 3 * c + r] = K[3 * r + c];
      }
  }
}

}  // namespace

std::unique_ptr<TetFormulation> make_constant_stiffness(std::string name, std::span<const double> coords,
                                                        const TetFormulation& source) {
  return std::make_unique<ConstantStiffness>(std::move(name), coords, source);
}

}  // namespace edgefem
