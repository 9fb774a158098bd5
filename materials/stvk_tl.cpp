// SPDX-License-Identifier: BSD-3-Clause
/// \file stvk_tl.cpp
/// Total-Lagrangian StVK (Kikuuwe appendix B): the correctness oracle and performance baseline of the edge
/// formulation, so it is written to be fast, not just simple.
///
/// Per tet, with V0 and the material's D (isotropic: lambda, mu) and V0-scaled kv = V0 k_vol:
///   F = sum_i x_i alpha_i^T, E = (F^T F - I)/2, S = V0 D:E    (V0 times the PK2 stress)
///   W = V0 eps^T D eps / 2 + kv psi(J - 1),  J = det F,  eps = Voigt(E) (engineering shear)
///   f_a = P alpha_a, P = F S + kv psi'(J-1) cof(F)          (dJ/dF = cof(F) = J F^-T)
/// Stiffness, from dE = sym(F^T dF) with dF = dx_b alpha_b^T:
///   K_ab = V0 B_a^T D B_b + (alpha_a^T S alpha_b) I + kv [psi'' c_a c_b^T - psi' [w_ab x]]
/// with B_a the 6x3 nonlinear strain-displacement matrix (d eps / d x_a), c_a = cof(F) alpha_a and
/// w_ab = F (alpha_a x alpha_b) (the last term is d2J/dx_a dx_b). Isotropic tets use the closed form of the
/// material part, V0 [lambda u_a u_b^T + mu (u_b u_a^T + G_ab F F^T)], u_a = F alpha_a, G_ab = alpha_a . alpha_b.
///
/// Only the six off-diagonal blocks K_ab (a < b) are formed (alpha_0 = -sum of the others, likewise u_0, S alpha_0,
/// c_0, B_0): the diagonal blocks K(v, v) are never needed per tet (see below).
///
/// Block pattern and assembly ("the same COO path" as the edge formulation): the pattern is identical to
/// stvk's (a diagonal block per touched vertex, then (v0, v1) and (v1, v0) per edge, edges sorted), so every
/// formulation feeds the same matrix structure. Each tet's vertices are stored in ascending order, so its six
/// off-diagonal blocks K_ab (a < b) are exactly the (v0(E), v1(E)) blocks of its edges. Three race-free stages,
/// no atomics:
///   1. per tet: forces (12 doubles) and the 6 edge blocks (54 doubles) into per-tet scratch;
///   2. per edge: K(E) = sum over the tets of E (CSR edge -> (tet, slot)), written in both orientations;
///   3. per vertex: f(v) = sum over the tets of v (CSR vertex -> (tet, slot)) and
///      K(v, v) = -sum_w K(v, w) over the incident edges (translation invariance, as algKV).
/// Tets are stored sorted by their smallest vertex and the stages are fused into one OpenMP sweep over vertex
/// ranges (edge_assembly::VertexSweep), which keeps the scratch in cache: ~25% faster than three separate loops.
/// Scratch buffers are members (mutable): one object must not be evaluated from two threads at once. All of this
/// but the per-tet kernel is per_tet_formulation.hpp's, shared with neo_hookean.cpp.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "materials/formulation.hpp"
#include "materials/per_tet_formulation.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

namespace {

using TlTet = edge_assembly::AscendingTet;

class StvkTl final : public edge_assembly::PerTetFormulation<StvkTl> {
 public:
  static constexpr const char* kName = "stvk-tl";
  static constexpr const char* kFactory = "make_stvk_tl";
  using PerTetFormulation::PerTetFormulation;

 private:
  friend class edge_assembly::PerTetFormulation<StvkTl>;
  [[gnu::always_inline]] inline void add_tet_energy(const TlTet& T, const double* x, double& w) const;
  template <bool kStiffness>
  [[gnu::always_inline]] inline void tet_terms(std::int64_t t, const double* x) const;
};

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
    for (int c = 0; c < 3; ++c)
      F[3 * r + c] = d[0][r] * T.alpha[0][c] + d[1][r] * T.alpha[1][c] + d[2][r] * T.alpha[2][c];
}

/// Green strain (symmetric, stored full) of F.
inline void green_strain(const double F[9], double E[9]) {
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c) {
      const double v = 0.5 * (F[r] * F[c] + F[3 + r] * F[3 + c] + F[6 + r] * F[6 + c] - (r == c ? 1.0 : 0.0));
      E[3 * r + c] = E[3 * c + r] = v;
    }
}

/// V0-scaled PK2 stress S = V0 D:E (full 3x3) and the energy density times V0.
inline double stress(const TetMaterial& M, double v0, const double E[9], double S[9]) {
  if (M.isotropic) {
    const double tr = E[0] + E[4] + E[8], lam = v0 * M.lambda, mu2 = 2.0 * v0 * M.mu;
    for (int q = 0; q < 9; ++q) S[q] = mu2 * E[q];
    S[0] += lam * tr;
    S[4] += lam * tr;
    S[8] += lam * tr;
  } else {
    const double eps[6] = {E[0], E[4], E[8], 2 * E[1], 2 * E[5], 2 * E[6]};
    double s[6];
    for (int p = 0; p < 6; ++p) {
      const double* Dp = M.D.data() + 6 * p;
      s[p] = v0 * (Dp[0] * eps[0] + Dp[1] * eps[1] + Dp[2] * eps[2] + Dp[3] * eps[3] + Dp[4] * eps[4] + Dp[5] * eps[5]);
    }
    S[0] = s[0], S[1] = s[3], S[2] = s[5];
    S[3] = s[3], S[4] = s[1], S[5] = s[4];
    S[6] = s[5], S[7] = s[4], S[8] = s[2];
  }
  double w = 0.0;
  for (int q = 0; q < 9; ++q) w += S[q] * E[q];
  return 0.5 * w;  // V0 eps^T D eps / 2 = S:E / 2
}

void StvkTl::add_tet_energy(const TlTet& T, const double* x, double& w) const {
  const TetMaterial& M = mat_[T.mat];
  double F[9], E[9], S[9];
  deformation_gradient(T, x, F);
  green_strain(F, E);
  w += stress(M, T.v0, E, S);
  if (M.volumetric != VolumetricPenalty::none) {
    double cof[9];
    w += T.v0 * M.k_vol * tetgeo::vol_penalty(tetgeo::cofactor(F, cof) - 1.0, M.volumetric).psi;
  }
}

/// Isotropic material and geometric parts of the six edge blocks K_ab, (a, b) = kEdgeLocal[slot]:
/// V0 [lambda u_a u_b^T + mu u_b u_a^T + mu G_ab F F^T] + (alpha_a^T S alpha_b) I, u_a = F alpha_a.
[[gnu::always_inline]] inline void isotropic_edge_blocks(const TlTet& T, const TetMaterial& M, const double F[9],
                                                         const double* const alpha[4], const double Sa[4][3],
                                                         double* kt) {
  const double lam = T.v0 * M.lambda, mu = T.v0 * M.mu;
  double u[4][3], lu[4][3], mu_u[4][3], B[9];
  for (int a = 1; a < 4; ++a) tetgeo::mat_vec(F, alpha[a], u[a]);
  for (int c = 0; c < 3; ++c) u[0][c] = -(u[1][c] + u[2][c] + u[3][c]);
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 3; ++c) lu[a][c] = lam * u[a][c], mu_u[a][c] = mu * u[a][c];
  for (int r = 0; r < 3; ++r)
    for (int c = r; c < 3; ++c)
      B[3 * r + c] = B[3 * c + r] = F[3 * r] * F[3 * c] + F[3 * r + 1] * F[3 * c + 1] + F[3 * r + 2] * F[3 * c + 2];
  for (int s = 0; s < 6; ++s) {
    const int a = tetgeo::kEdgeLocal[s][0], b = tetgeo::kEdgeLocal[s][1];
    const double mg = mu * tetgeo::dot(alpha[a], alpha[b]), geo = tetgeo::dot(alpha[a], Sa[b]);
    double* K = kt + 9 * s;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) K[3 * r + c] = lu[a][r] * u[b][c] + mu_u[b][r] * u[a][c] + mg * B[3 * r + c];
    K[0] += geo;
    K[4] += geo;
    K[8] += geo;
  }
}

/// General-D material and geometric parts of the six edge blocks: V0 B_a^T D B_b with B_a (6x3) = d eps / d x_a =
/// M_a F^T, M_a the (6x3) Voigt pattern of alpha_a: K_ab = F N_ab F^T with N_ab = M_a^T (V0 D) M_b, using the
/// sparsity of M (3 nonzeros per column); plus (alpha_a^T S alpha_b) I.
[[gnu::always_inline]] inline void anisotropic_edge_blocks(const TlTet& T, const TetMaterial& M, const double F[9],
                                                           const double* const alpha[4], const double Sa[4][3],
                                                           double* kt) {
  const double* D = M.D.data();
  double DM[4][6][3];  // V0 D M_b, b = 1..3
  for (int b = 1; b < 4; ++b) {
    const double* g = alpha[b];
    const double h0 = T.v0 * g[0], h1 = T.v0 * g[1], h2 = T.v0 * g[2];
    for (int p = 0; p < 6; ++p) {
      const double* Dp = D + 6 * p;
      DM[b][p][0] = Dp[0] * h0 + Dp[3] * h1 + Dp[5] * h2;
      DM[b][p][1] = Dp[1] * h1 + Dp[3] * h0 + Dp[4] * h2;
      DM[b][p][2] = Dp[2] * h2 + Dp[4] * h1 + Dp[5] * h0;
    }
  }
  for (int s = 0; s < 6; ++s) {
    const int a = tetgeo::kEdgeLocal[s][0], b = tetgeo::kEdgeLocal[s][1];  // b >= 1
    const double* g = alpha[a];
    const auto& Q = DM[b];
    double N[9], FN[9];
    for (int k = 0; k < 3; ++k) {
      N[k] = g[0] * Q[0][k] + g[1] * Q[3][k] + g[2] * Q[5][k];
      N[3 + k] = g[1] * Q[1][k] + g[0] * Q[3][k] + g[2] * Q[4][k];
      N[6 + k] = g[2] * Q[2][k] + g[1] * Q[4][k] + g[0] * Q[5][k];
    }
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) FN[3 * r + k] = F[3 * r] * N[k] + F[3 * r + 1] * N[3 + k] + F[3 * r + 2] * N[6 + k];
    const double geo = tetgeo::dot(alpha[a], Sa[b]);
    double* K = kt + 9 * s;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        K[3 * r + c] = FN[3 * r] * F[3 * c] + FN[3 * r + 1] * F[3 * c + 1] + FN[3 * r + 2] * F[3 * c + 2];
    K[0] += geo;
    K[4] += geo;
    K[8] += geo;
  }
}

/// Volumetric part added to the six edge blocks: kv [psi'' c_a c_b^T - psi' [w_ab x]], c_a = cof(F) alpha_a
/// (cv = c_1..3), w_ab = F (alpha_a x alpha_b); k2 = kv psi'', k1 = kv psi'.
[[gnu::always_inline]] inline void volumetric_edge_blocks(const double F[9], const double* const alpha[4],
                                                          const double cv[3][3], double k1, double k2, double* kt) {
  double c0[3];
  for (int c = 0; c < 3; ++c) c0[c] = -(cv[0][c] + cv[1][c] + cv[2][c]);
  const double* cva[4] = {c0, cv[0], cv[1], cv[2]};
  for (int s = 0; s < 6; ++s) {
    const int a = tetgeo::kEdgeLocal[s][0], b = tetgeo::kEdgeLocal[s][1];
    tetgeo::volumetric_block(F, alpha[a], alpha[b], cva[a], cva[b], k1, k2, kt + 9 * s);
  }
}

template <bool kStiffness>
void StvkTl::tet_terms(std::int64_t t, const double* x) const {
  const TlTet& T = tet_[t];
  const TetMaterial& M = mat_[T.mat];
  double F[9], E[9], S[9], P[9];
  deformation_gradient(T, x, F);
  green_strain(F, E);
  stress(M, T.v0, E, S);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) P[3 * r + c] = F[3 * r] * S[c] + F[3 * r + 1] * S[3 + c] + F[3 * r + 2] * S[6 + c];
  const double* al[3] = {T.alpha[0], T.alpha[1], T.alpha[2]};  // alpha_1..3
  tetgeo::Penalty pen;
  double kv = 0.0;
  bool vol = false;
  double cv[3][3];  // dJ/dx_a = cof(F) alpha_a, a = 1..3 (only when the penalty is active)
  if (M.volumetric != VolumetricPenalty::none) {
    double cof[9];
    pen = tetgeo::vol_penalty(tetgeo::cofactor(F, cof) - 1.0, M.volumetric);
    vol = pen.d1 != 0.0 || pen.d2 != 0.0;
    if (vol) {
      kv = T.v0 * M.k_vol;
      for (int q = 0; q < 9; ++q) P[q] += kv * pen.d1 * cof[q];
      if constexpr (kStiffness)
        for (int a = 0; a < 3; ++a) tetgeo::mat_vec(cof, al[a], cv[a]);
    }
  }

  double* ft = &ft_[12 * t];
  for (int a = 0; a < 3; ++a) tetgeo::mat_vec(P, al[a], ft + 3 * (a + 1));
  for (int c = 0; c < 3; ++c) ft[c] = -(ft[3 + c] + ft[6 + c] + ft[9 + c]);

  if constexpr (kStiffness) {
    // The six edge blocks K_ab, (a, b) = kEdgeLocal[slot], straight into the per-tet record.
    double* kt = &kt_[54 * t];
    double a0[3], Sa[4][3];
    for (int c = 0; c < 3; ++c) a0[c] = -(al[0][c] + al[1][c] + al[2][c]);
    const double* alpha[4] = {a0, al[0], al[1], al[2]};
    for (int a = 1; a < 4; ++a) tetgeo::mat_vec(S, alpha[a], Sa[a]);
    for (int c = 0; c < 3; ++c) Sa[0][c] = -(Sa[1][c] + Sa[2][c] + Sa[3][c]);
    if (M.isotropic)
      isotropic_edge_blocks(T, M, F, alpha, Sa, kt);
    else
      anisotropic_edge_blocks(T, M, F, alpha, Sa, kt);
    if (vol) volumetric_edge_blocks(F, alpha, cv, kv * pen.d1, kv * pen.d2, kt);
  }
}

}  // namespace

std::unique_ptr<TetFormulation> make_stvk_tl(std::span<const double> coords, std::span<const LocalIndex> tets,
                                             std::span<const TetMaterial> materials,
                                             std::span<const std::int32_t> material_of_tet) {
  return std::make_unique<StvkTl>(coords, tets, materials, material_of_tet);
}

}  // namespace edgefem
