/// \file stvk_tl.cpp
/// Total-Lagrangian StVK (Kikuuwe appendix B): the correctness oracle and performance baseline of the edge
/// formulation, so it is written to be fast, not just simple.
///
/// Per tet (V0-scaled constants lam = V0 lambda, mu = V0 mu, kv = V0 k_vol precomputed):
///   F = sum_i x_i alpha_i^T, E = (F^T F - I)/2, S = lam tr(E) I + 2 mu E   (V0 times the PK2 stress)
///   W = lam/2 tr(E)^2 + mu E:E + kv psi(J - 1),  J = det F
///   f_a = P alpha_a, P = F S + kv psi'(J-1) cof(F)          (dJ/dF = cof(F) = J F^-T)
/// Stiffness, from dE = sym(F^T dF) with dF = dx_b alpha_b^T, writing u_a = F alpha_a, B = F F^T,
/// G_ab = alpha_a . alpha_b:
///   K_ab = lam u_a u_b^T + mu (u_b u_a^T + G_ab B) + (alpha_a^T S alpha_b) I              (material + geometric)
///        + kv [psi'' c_a c_b^T - psi' [w_ab x]],  c_a = cof(F) alpha_a, w_ab = F (alpha_a x alpha_b)
/// (the last term is d2J/dx_a dx_b = eps_ikp eps_jlq F_pq alpha_a,j alpha_b,l). Only the 10 blocks a <= b are
/// computed; (b, a) is the transpose.
///
/// Parallelisation: an OpenMP loop over tets; tet t writes its own 16 COO blocks (block_pattern entries
/// 16 t + 4 a + b) and its 4 forces into a per-tet buffer; a per-vertex CSR gather (vertex -> (tet, slot)) then
/// sums the forces. No atomics. The force buffer is mutable scratch: one object must not be evaluated from two
/// threads at once.
#include <stdexcept>

#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

namespace {

using tetgeo::Csr;

/// Precomputed data of one tet (104 bytes): alpha_1..3 (alpha_0 = -sum) and V0-scaled constants.
struct TlTet {
  double alpha[3][3];
  double lam, mu, kv;
  std::array<LocalIndex, 4> v;
};

class StvkTl final : public TetFormulation {
 public:
  StvkTl(std::span<const double> coords, std::span<const LocalIndex> tets, std::span<const TetMaterial> materials);

  [[nodiscard]] std::string_view name() const override { return "stvk-tl"; }
  [[nodiscard]] LocalIndex n_vertices() const override { return n_vertices_; }
  [[nodiscard]] const std::vector<std::array<LocalIndex, 2>>& block_pattern() const override { return pattern_; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override {
    return tet_.capacity() * sizeof(TlTet) + v_list_.bytes() + pattern_.capacity() * sizeof(pattern_[0]) +
           ft_.capacity() * sizeof(double);
  }

 private:
  void check(std::span<const double> x, std::span<double> f) const;
  template <bool kStiffness>
  void evaluate(const double* x, double* f, double* blocks) const;

  LocalIndex n_vertices_ = 0;
  std::vector<TlTet> tet_;
  Csr<std::uint32_t> v_list_;  ///< vertex -> tet << 2 | local vertex
  std::vector<std::array<LocalIndex, 2>> pattern_;
  mutable std::vector<double> ft_;  ///< scratch: 12 force values per tet
};

StvkTl::StvkTl(std::span<const double> coords, std::span<const LocalIndex> tets, std::span<const TetMaterial> materials)
    : n_vertices_(static_cast<LocalIndex>(coords.size() / 3)) {
  tetgeo::check_inputs(coords.size(), tets.size(), materials.size(), "make_stvk_tl");
  const std::int64_t nt = static_cast<std::int64_t>(materials.size());
  tetgeo::check_packable(nt, 30, "tetrahedra");
  tet_.resize(nt);
  pattern_.resize(16 * nt);
  for (std::int64_t t = 0; t < nt; ++t) {
    double X[12];
    for (int i = 0; i < 4; ++i) {
      const LocalIndex v = tets[4 * t + i];
      if (v < 0 || v >= n_vertices_)
        throw std::invalid_argument("make_stvk_tl: tet " + std::to_string(t) + " has vertex id " + std::to_string(v) +
                                    ", expected 0.." + std::to_string(n_vertices_ - 1));
      tet_[t].v[i] = v;
      for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * v + c];
    }
    const tetgeo::RefTet r = tetgeo::reference_tet(X, t);
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) tet_[t].alpha[i][c] = r.alpha[i + 1][c];
    tet_[t].lam = r.v0 * materials[t].lambda;
    tet_[t].mu = r.v0 * materials[t].mu;
    tet_[t].kv = materials[t].volumetric ? r.v0 * materials[t].k_vol : 0.0;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) pattern_[16 * t + 4 * a + b] = {tet_[t].v[a], tet_[t].v[b]};
  }
  v_list_ = tetgeo::build_csr<std::uint32_t>(n_vertices_, [&](auto&& sink) {
    for (std::int64_t t = 0; t < nt; ++t)
      for (int i = 0; i < 4; ++i) sink(tet_[t].v[i], static_cast<std::uint32_t>(t << 2 | i));
  });
  ft_.resize(12 * nt);
}

/// Deformation gradient F (row-major) of tet T: F = sum_{i=1..3} (x_i - x_0) alpha_i^T.
inline void deformation_gradient(const TlTet& T, const double* x, double F[9]) {
  const double* x0 = x + 3 * std::int64_t{T.v[0]};
  double d[3][3];
  for (int i = 0; i < 3; ++i) {
    const double* xi = x + 3 * std::int64_t{T.v[i + 1]};
    d[i][0] = xi[0] - x0[0];
    d[i][1] = xi[1] - x0[1];
    d[i][2] = xi[2] - x0[2];
  }
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) F[3 * r + c] = d[0][r] * T.alpha[0][c] + d[1][r] * T.alpha[1][c] + d[2][r] * T.alpha[2][c];
}

/// Green strain (symmetric, stored full) of F.
inline void green_strain(const double F[9], double E[9]) {
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c) {
      const double v = 0.5 * (F[r] * F[c] + F[3 + r] * F[3 + c] + F[6 + r] * F[6 + c] - (r == c ? 1.0 : 0.0));
      E[3 * r + c] = E[3 * c + r] = v;
    }
}

/// Cofactor matrix cof(F) = J F^-T (row-major) and J = det F.
inline double cofactor(const double F[9], double cof[9]) {
  cof[0] = F[4] * F[8] - F[5] * F[7];
  cof[1] = F[5] * F[6] - F[3] * F[8];
  cof[2] = F[3] * F[7] - F[4] * F[6];
  cof[3] = F[2] * F[7] - F[1] * F[8];
  cof[4] = F[0] * F[8] - F[2] * F[6];
  cof[5] = F[1] * F[6] - F[0] * F[7];
  cof[6] = F[1] * F[5] - F[2] * F[4];
  cof[7] = F[2] * F[3] - F[0] * F[5];
  cof[8] = F[0] * F[4] - F[1] * F[3];
  return F[0] * cof[0] + F[1] * cof[1] + F[2] * cof[2];
}

inline void mat_vec(const double M[9], const double* a, double* out) {
  out[0] = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
  out[1] = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
  out[2] = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
}

void StvkTl::check(std::span<const double> x, std::span<double> f) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_) || f.size() != x.size())
    throw std::invalid_argument("stvk-tl: x/f hold " + std::to_string(x.size()) + "/" + std::to_string(f.size()) +
                                " values, expected " + std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
}

double StvkTl::energy(std::span<const double> x) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_))
    throw std::invalid_argument("stvk-tl: x has the wrong size");
  const std::int64_t nt = static_cast<std::int64_t>(tet_.size());
  const double* xd = x.data();
  double w = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : w)
  for (std::int64_t t = 0; t < nt; ++t) {
    const TlTet& T = tet_[t];
    double F[9], E[9];
    deformation_gradient(T, xd, F);
    green_strain(F, E);
    const double tr = E[0] + E[4] + E[8];
    double ee = 0.0;
    for (int q = 0; q < 9; ++q) ee += E[q] * E[q];
    w += 0.5 * T.lam * tr * tr + T.mu * ee;
    if (T.kv != 0.0) {
      double cof[9];
      w += T.kv * tetgeo::vol_penalty(cofactor(F, cof) - 1.0).psi;
    }
  }
  return w;
}

void StvkTl::force(std::span<const double> x, std::span<double> f) const {
  check(x, f);
  evaluate<false>(x.data(), f.data(), nullptr);
}

void StvkTl::force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const {
  check(x, f);
  if (blocks.size() != 9 * pattern_.size())
    throw std::invalid_argument("stvk-tl: blocks holds " + std::to_string(blocks.size()) + " values, expected " +
                                std::to_string(9 * pattern_.size()));
  evaluate<true>(x.data(), f.data(), blocks.data());
}

template <bool kStiffness>
void StvkTl::evaluate(const double* x, double* f, double* blocks) const {
  const std::int64_t nt = static_cast<std::int64_t>(tet_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t) {
    const TlTet& T = tet_[t];
    double F[9], E[9], S[9], P[9];
    deformation_gradient(T, x, F);
    green_strain(F, E);
    const double ltr = T.lam * (E[0] + E[4] + E[8]);
    for (int q = 0; q < 9; ++q) S[q] = 2.0 * T.mu * E[q];
    S[0] += ltr;
    S[4] += ltr;
    S[8] += ltr;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) P[3 * r + c] = F[3 * r] * S[c] + F[3 * r + 1] * S[3 + c] + F[3 * r + 2] * S[6 + c];
    const double* al[4];
    double a0[3];
    for (int c = 0; c < 3; ++c) a0[c] = -(T.alpha[0][c] + T.alpha[1][c] + T.alpha[2][c]);
    al[0] = a0;
    al[1] = T.alpha[0];
    al[2] = T.alpha[1];
    al[3] = T.alpha[2];
    tetgeo::Penalty pen;
    bool vol = false;
    double cv[4][3] = {};  // dJ/dx_a = cof(F) alpha_a (only when the penalty is active)
    if (T.kv != 0.0) {
      double cof[9];
      pen = tetgeo::vol_penalty(cofactor(F, cof) - 1.0);
      vol = pen.d1 != 0.0;
      if (vol) {
        for (int q = 0; q < 9; ++q) P[q] += T.kv * pen.d1 * cof[q];
        if constexpr (kStiffness)
          for (int a = 0; a < 4; ++a) mat_vec(cof, al[a], cv[a]);
      }
    }

    double* ft = &ft_[12 * t];
    for (int a = 1; a < 4; ++a) mat_vec(P, al[a], ft + 3 * a);
    for (int c = 0; c < 3; ++c) ft[c] = -(ft[3 + c] + ft[6 + c] + ft[9 + c]);

    if constexpr (kStiffness) {
      double u[4][3], Sa[4][3], B[9];
      for (int a = 1; a < 4; ++a) {
        mat_vec(F, al[a], u[a]);
        mat_vec(S, al[a], Sa[a]);
      }
      for (int c = 0; c < 3; ++c) {
        u[0][c] = -(u[1][c] + u[2][c] + u[3][c]);
        Sa[0][c] = -(Sa[1][c] + Sa[2][c] + Sa[3][c]);
      }
      for (int r = 0; r < 3; ++r)
        for (int c = r; c < 3; ++c)
          B[3 * r + c] = B[3 * c + r] = F[3 * r] * F[3 * c] + F[3 * r + 1] * F[3 * c + 1] + F[3 * r + 2] * F[3 * c + 2];
      double* out = blocks + 144 * t;
      for (int a = 0; a < 4; ++a)
        for (int b = a; b < 4; ++b) {
          const double mg = T.mu * tetgeo::dot(al[a], al[b]);
          const double geo = tetgeo::dot(al[a], Sa[b]);
          double K[9];
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
              K[3 * r + c] = T.lam * u[a][r] * u[b][c] + T.mu * u[b][r] * u[a][c] + mg * B[3 * r + c];
          K[0] += geo;
          K[4] += geo;
          K[8] += geo;
          if (vol) {
            const double k2 = T.kv * pen.d2, k1 = T.kv * pen.d1;
            for (int r = 0; r < 3; ++r)
              for (int c = 0; c < 3; ++c) K[3 * r + c] += k2 * cv[a][r] * cv[b][c];
            if (a != b) {
              double axb[3], w[3];
              tetgeo::cross(al[a], al[b], axb);
              mat_vec(F, axb, w);
              // - k1 [w x]
              K[1] += k1 * w[2];
              K[2] -= k1 * w[1];
              K[3] -= k1 * w[2];
              K[5] += k1 * w[0];
              K[6] += k1 * w[1];
              K[7] -= k1 * w[0];
            }
          }
          double* kab = out + 9 * (4 * a + b);
          double* kba = out + 9 * (4 * b + a);
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
              kab[3 * r + c] = K[3 * r + c];
              kba[3 * c + r] = K[3 * r + c];
            }
        }
    }
  }
  const std::int64_t nv = n_vertices_;
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < nv; ++v) {
    double fv[3] = {0.0, 0.0, 0.0};
    for (std::int64_t k = v_list_.ptr[v]; k < v_list_.ptr[v + 1]; ++k) {
      const double* src = &ft_[3 * std::int64_t{v_list_.codes[k]}];  // 12 t + 3 slot = 3 (t << 2 | slot)
      fv[0] += src[0];
      fv[1] += src[1];
      fv[2] += src[2];
    }
    f[3 * v] = fv[0];
    f[3 * v + 1] = fv[1];
    f[3 * v + 2] = fv[2];
  }
}

}  // namespace

std::unique_ptr<TetFormulation> make_stvk_tl(std::span<const double> coords, std::span<const LocalIndex> tets,
                                             std::span<const TetMaterial> materials) {
  return std::make_unique<StvkTl>(coords, tets, materials);
}

}  // namespace edgefem
