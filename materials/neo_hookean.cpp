// SPDX-License-Identifier: BSD-3-Clause
/// \file neo_hookean.cpp
/// Compressible neo-Hookean tetrahedra (neo_hookean.hpp has the law, its force and its exact tangent).
///
/// Built on stvk-tl's frame (per_tet_formulation.hpp, shared with stvk_tl.cpp): the same precomputed per-tet data
/// (alpha_1..3, V0, ascending vertices), the same block pattern (vertex diagonal blocks, then both orientations of
/// every edge) and the same fused, race-free OpenMP sweep (edge_assembly::VertexSweep): per tet its 12 forces and
/// its 6 edge blocks K_ab (a < b) into scratch, per edge the sum of its tets' blocks, per vertex its force and
/// K(v, v) = -sum_w K(v, w) (translation invariance holds for any frame-indifferent energy). Only the per-tet
/// kernel differs. An inverted tet (J <= 0) writes +infinity into its forces (and zero blocks): see the header.
#include "materials/neo_hookean.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "materials/per_tet_formulation.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// F = sum_{i=1..3} (x_i - x_0) alpha_i^T (row-major); x0..x3 the current positions of the tet's vertices.
inline void deformation_gradient(const double* const alpha[3], const double* x0, const double* x1, const double* x2,
                                 const double* x3, double F[9]) {
  const double* xi[3] = {x1, x2, x3};
  double d[3][3];
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) d[i][c] = xi[i][c] - x0[c];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) F[3 * r + c] = d[0][r] * alpha[0][c] + d[1][r] * alpha[1][c] + d[2][r] * alpha[2][c];
}

/// The law at F (J = det F > 0, cof = cof(F), ln J given): energy density times v0 and v0 P into P.
inline double first_piola(const double F[9], const double cof[9], double J, double ln_j, double v0, double mu,
                          double lambda, double P[9]) {
  const double inv_j = 1.0 / J, a = v0 * mu, b = v0 * (lambda * ln_j - mu) * inv_j;
  double tr = 0.0;
  for (int q = 0; q < 9; ++q) {
    P[q] = a * F[q] + b * cof[q];  // F^-T = cof / J
    tr += F[q] * F[q];
  }
  return v0 * (0.5 * mu * (tr - 3.0) - mu * ln_j + 0.5 * lambda * ln_j * ln_j);
}

/// Tangent block K_ab = v0 [mu G_ab I + lambda g_a g_b^T + (mu - lambda ln J) g_b g_a^T] into K (9, overwritten).
inline void tangent_block(const double* alpha_a, const double* alpha_b, const double* g_a, const double* g_b, double v0,
                          double mu, double lambda, double ln_j, double K[9]) {
  const double lam = v0 * lambda, c = v0 * (mu - lambda * ln_j), diag = v0 * mu * tetgeo::dot(alpha_a, alpha_b);
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s) K[3 * r + s] = lam * g_a[r] * g_b[s] + c * g_b[r] * g_a[s];
  K[0] += diag;
  K[4] += diag;
  K[8] += diag;
}

using NhTet = edge_assembly::AscendingTet;

/// F and cof(F) of tet T at the positions x; returns J = det F.
[[gnu::always_inline]] inline double deformation(const NhTet& T, const double* x, double F[9], double cof[9]) {
  const double* al[3] = {T.alpha[0], T.alpha[1], T.alpha[2]};
  deformation_gradient(al, x + 3 * std::int64_t{T.v[0]}, x + 3 * std::int64_t{T.v[1]}, x + 3 * std::int64_t{T.v[2]},
                       x + 3 * std::int64_t{T.v[3]}, F);
  return tetgeo::cofactor(F, cof);
}

class NeoHookean final : public edge_assembly::PerTetFormulation<NeoHookean> {
 public:
  static constexpr const char* kName = "neo-hookean";
  static constexpr const char* kFactory = "make_neo_hookean";
  using PerTetFormulation::PerTetFormulation;

 private:
  friend class edge_assembly::PerTetFormulation<NeoHookean>;
  /// The law takes isotropic young and poisson.
  static void check_materials(std::span<const TetMaterial> materials, std::span<const std::int32_t> material_of_tet) {
    for (const std::int32_t m : material_of_tet)
      if (!materials[static_cast<std::size_t>(m)].isotropic)
        throw std::invalid_argument("neo-hookean: material " + std::to_string(m) +
                                    " is anisotropic (the law takes isotropic young and poisson)");
  }
  [[gnu::always_inline]] inline void add_tet_energy(const NhTet& T, const double* x, double& w) const;
  template <bool kStiffness>
  [[gnu::always_inline]] inline void tet_terms(std::int64_t t, const double* x) const;
};

void NeoHookean::add_tet_energy(const NhTet& T, const double* x, double& w) const {
  const TetMaterial& M = mat_[T.mat];
  double F[9], cof[9], P[9];
  const double J = deformation(T, x, F, cof);
  if (!(J > 0.0)) {
    w += kInf;
    return;
  }
  w += first_piola(F, cof, J, std::log(J), T.v0, M.mu, M.lambda, P);
  if (M.volumetric != VolumetricPenalty::none) w += T.v0 * M.k_vol * tetgeo::vol_penalty(J - 1.0, M.volumetric).psi;
}

template <bool kStiffness>
void NeoHookean::tet_terms(std::int64_t t, const double* x) const {
  const NhTet& T = tet_[t];
  const TetMaterial& M = mat_[T.mat];
  const double* al[3] = {T.alpha[0], T.alpha[1], T.alpha[2]};
  double F[9], cof[9], P[9];
  const double J = deformation(T, x, F, cof);
  double* ft = &ft_[12 * t];
  if (!(J > 0.0)) {  // inverted or flat: a non-finite residual, which makes the Newton driver cut the step
    std::fill(ft, ft + 12, kInf);
    if constexpr (kStiffness) std::fill(&kt_[54 * t], &kt_[54 * t] + 54, 0.0);
    return;
  }
  const double ln_j = std::log(J);
  first_piola(F, cof, J, ln_j, T.v0, M.mu, M.lambda, P);
  tetgeo::Penalty pen;
  double kv = 0.0;
  bool vol = false;
  if (M.volumetric != VolumetricPenalty::none) {
    pen = tetgeo::vol_penalty(J - 1.0, M.volumetric);
    vol = pen.d1 != 0.0 || pen.d2 != 0.0;
    if (vol) {
      kv = T.v0 * M.k_vol;
      for (int q = 0; q < 9; ++q) P[q] += kv * pen.d1 * cof[q];
    }
  }
  for (int a = 0; a < 3; ++a) tetgeo::mat_vec(P, al[a], ft + 3 * (a + 1));
  for (int c = 0; c < 3; ++c) ft[c] = -(ft[3 + c] + ft[6 + c] + ft[9 + c]);

  if constexpr (kStiffness) {
    double a0[3], g[4][3], cv[4][3];
    for (int c = 0; c < 3; ++c) a0[c] = -(al[0][c] + al[1][c] + al[2][c]);
    const double* alpha[4] = {a0, al[0], al[1], al[2]};
    const double inv_j = 1.0 / J;
    for (int a = 1; a < 4; ++a) {
      tetgeo::mat_vec(cof, alpha[a], cv[a]);  // cof(F) alpha_a = J g_a
      for (int c = 0; c < 3; ++c) g[a][c] = cv[a][c] * inv_j;
    }
    for (int c = 0; c < 3; ++c) {
      g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
      cv[0][c] = -(cv[1][c] + cv[2][c] + cv[3][c]);
    }
    double* kt = &kt_[54 * t];
    for (int s = 0; s < 6; ++s) {
      const int a = tetgeo::kEdgeLocal[s][0], b = tetgeo::kEdgeLocal[s][1];
      tangent_block(alpha[a], alpha[b], g[a], g[b], T.v0, M.mu, M.lambda, ln_j, kt + 9 * s);
      if (vol) tetgeo::volumetric_block(F, alpha[a], alpha[b], cv[a], cv[b], kv * pen.d1, kv * pen.d2, kt + 9 * s);
    }
  }
}

}  // namespace

std::unique_ptr<TetFormulation> make_neo_hookean(std::span<const double> coords, std::span<const LocalIndex> tets,
                                                 std::span<const TetMaterial> materials,
                                                 std::span<const std::int32_t> material_of_tet) {
  return std::make_unique<NeoHookean>(coords, tets, materials, material_of_tet);
}

NeoHookeanRest neo_hookean_rest(const double* X) {
  const tetgeo::RefTet r = tetgeo::reference_tet(X, 0);
  NeoHookeanRest rest;
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) rest.dm_inv[3 * i + c] = r.alpha[i + 1][c];  // row i of Dm^-1 = alpha_{i+1}
  rest.v0 = r.v0;
  return rest;
}

double neo_hookean_energy_gradient_hessian(const NeoHookeanRest& rest, double mu, double lambda, const double* x,
                                           double* gradient, double* hessian) {
  const double* al[3] = {rest.dm_inv.data(), rest.dm_inv.data() + 3, rest.dm_inv.data() + 6};
  double F[9], cof[9], P[9];
  deformation_gradient(al, x, x + 3, x + 6, x + 9, F);
  const double J = tetgeo::cofactor(F, cof);
  if (!(J > 0.0)) {
    std::fill(gradient, gradient + 12, 0.0);
    if (hessian) std::fill(hessian, hessian + 144, 0.0);
    return kInf;
  }
  const double ln_j = std::log(J);
  const double w = first_piola(F, cof, J, ln_j, rest.v0, mu, lambda, P);
  for (int a = 0; a < 3; ++a) tetgeo::mat_vec(P, al[a], gradient + 3 * (a + 1));
  for (int c = 0; c < 3; ++c) gradient[c] = -(gradient[3 + c] + gradient[6 + c] + gradient[9 + c]);
  if (hessian) {
    double a0[3], g[4][3];
    for (int c = 0; c < 3; ++c) a0[c] = -(al[0][c] + al[1][c] + al[2][c]);
    const double* alpha[4] = {a0, al[0], al[1], al[2]};
    for (int a = 0; a < 4; ++a) {
      tetgeo::mat_vec(cof, alpha[a], g[a]);
      for (double& v : g[a]) v /= J;
    }
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        double K[9];
        tangent_block(alpha[a], alpha[b], g[a], g[b], rest.v0, mu, lambda, ln_j, K);
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) hessian[12 * (3 * a + r) + 3 * b + s] = K[3 * r + s];
      }
  }
  return w;
}

double neo_hookean_energy_gradient(const NeoHookeanRest& rest, double mu, double lambda, const double* x,
                                   double* gradient) {
  return neo_hookean_energy_gradient_hessian(rest, mu, lambda, x, gradient, nullptr);
}

double neo_hookean_strain_stress(const double* X, const double* x, const TetMaterial& material, double* E, double* S) {
  const NeoHookeanRest rest = neo_hookean_rest(X);
  const double* al[3] = {rest.dm_inv.data(), rest.dm_inv.data() + 3, rest.dm_inv.data() + 6};
  double F[9], cof[9];
  deformation_gradient(al, x, x + 3, x + 6, x + 9, F);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      E[3 * a + b] = 0.5 * (F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a == b ? 1.0 : 0.0));
  const double J = tetgeo::cofactor(F, cof);
  if (!(J > 0.0)) {
    std::fill(S, S + 9, std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
  }
  // C^-1 = F^-1 F^-T = cof^T cof / J^2.
  const double ln_j = std::log(J);
  double coef = material.lambda * ln_j - material.mu;  // S = mu I + (lambda ln J - mu) C^-1 + penalty
  if (material.volumetric != VolumetricPenalty::none)
    coef += material.k_vol * tetgeo::vol_penalty(J - 1.0, material.volumetric).d1 * J;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double c_inv = (cof[a] * cof[b] + cof[3 + a] * cof[3 + b] + cof[6 + a] * cof[6 + b]) / (J * J);
      S[3 * a + b] = (a == b ? material.mu : 0.0) + coef * c_inv;
    }
  // Cauchy sigma = F S F^T / J.
  double FS[9] = {}, sigma[9] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) FS[3 * i + j] += F[3 * i + k] * S[3 * k + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 3; ++k) sigma[3 * i + j] += FS[3 * i + k] * F[3 * j + k];
      sigma[3 * i + j] /= J;
    }
  const double dxy = sigma[0] - sigma[4], dyz = sigma[4] - sigma[8], dzx = sigma[8] - sigma[0];
  return std::sqrt(0.5 * (dxy * dxy + dyz * dyz + dzx * dzx) +
                   3.0 * (sigma[1] * sigma[1] + sigma[5] * sigma[5] + sigma[2] * sigma[2]));
}

}  // namespace edgefem
