// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file tet_geometry.hpp
/// Private helpers shared by the tetrahedral formulations (stvk_tsep.cpp, stvk_tl.cpp, linear.cpp,
/// strain_stress.cpp): reference shape-function gradients, Kikuuwe's edge coefficients L_T (isotropic and
/// general D), the volumetric penalties, small 3-vector helpers and the factories' input checks (the gather lists
/// and loops are in edge_assembly.hpp). Not part of the public API.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "materials/formulation.hpp"
#include "mesh/mesh.hpp"

namespace edgefem::tetgeo {

/// Local vertex pairs of the six edges of a tet (same order as Topology::tet_edges).
inline constexpr int kEdgeLocal[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
/// For edge slot s = (i, j): the other two local vertices (k, l), ordered so that (i, j, k, l) is an even
/// permutation of (0, 1, 2, 3). Then C = (x_j - x_i) . ((x_k - x_i) x (x_l - x_i)) and the Hessian block of
/// the six-fold volume is d2C / dx_i dx_j = [(x_k - x_l) x] (cross-product matrix).
inline constexpr int kEdgeOpp[6][2] = {{2, 3}, {3, 1}, {1, 2}, {0, 3}, {2, 0}, {0, 1}};

inline double dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline void cross(const double* a, const double* b, double* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/// out = M a, M row-major 3x3.
inline void mat_vec(const double M[9], const double* a, double* out) {
  out[0] = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
  out[1] = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
  out[2] = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
}

/// Reference geometry of one tet: shape-function gradients alpha_i (F = sum_i x_i alpha_i^T, Kikuuwe eq. 47),
/// signed six-fold volume C_ini and volume V0 = |C_ini| / 6.
struct RefTet {
  double alpha[4][3];
  double c_ini;
  double v0;
};

/// Gradients from the reference positions X (12 doubles). With D = [X1-X0, X2-X0, X3-X0] the rows of D^-1
/// are alpha_1..3 = (d2 x d3, d3 x d1, d1 x d2) / det D, and alpha_0 = -(alpha_1 + alpha_2 + alpha_3).
/// Throws std::invalid_argument for a degenerate (zero-volume) tet; `which` names it in the message.
inline RefTet reference_tet(const double* X, std::int64_t which) {
  double d[3][3];
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) d[i][c] = X[3 * (i + 1) + c] - X[c];
  RefTet r{};
  cross(d[1], d[2], r.alpha[1]);
  cross(d[2], d[0], r.alpha[2]);
  cross(d[0], d[1], r.alpha[3]);
  r.c_ini = tet_volume6(X, X + 3, X + 6, X + 9);  // = d0 . (d1 x d2)
  const double scale = std::sqrt(std::max({dot(d[0], d[0]), dot(d[1], d[1]), dot(d[2], d[2])}));
  if (!(std::abs(r.c_ini) > 1e-13 * scale * scale * scale))
    throw std::invalid_argument("tetrahedron " + std::to_string(which) +
                                " has zero reference volume (degenerate element)");
  for (int i = 1; i < 4; ++i)
    for (int c = 0; c < 3; ++c) r.alpha[i][c] /= r.c_ini;
  for (int c = 0; c < 3; ++c) r.alpha[0][c] = -(r.alpha[1][c] + r.alpha[2][c] + r.alpha[3][c]);
  r.v0 = std::abs(r.c_ini) / 6.0;
  return r;
}

/// Kikuuwe's per-tet edge coefficients L_T (eq. 19), 6x6 symmetric, in kEdgeLocal order.
///
/// Closed form instead of (C_ini/12) Q^-T D Q^-1: since sum_i alpha_i = 0,
///   F^T F = sum_ij (x_i . x_j) alpha_i alpha_j^T = -sum_{e=(i<j)} |x_i - x_j|^2 sym(alpha_i alpha_j^T),
/// and likewise I with the reference lengths, so E = -1/2 sum_e zeta_e sym(alpha_i alpha_j^T). With the Gram
/// matrix G_ab = alpha_a . alpha_b, tr E = -1/2 sum_e zeta_e G_ij and
/// sym(a_i a_j^T) : sym(a_k a_l^T) = (G_ik G_jl + G_il G_jk) / 2, so W_T = V0 (lambda/2 tr(E)^2 + mu E:E)
/// = 1/4 zeta^T L_T zeta with
///   L_T(e=(i,j), f=(k,l)) = V0/2 [lambda G_ij G_kl + mu (G_ik G_jl + G_il G_jk)].
/// (Equal to eq. 19 with eps = [Exx, Eyy, Ezz, 2Exy, 2Eyz, 2Ezx] and the D of eq. 7; checked in the tests.)
inline void edge_coefficients(const RefTet& r, double lambda, double mu, double L[6][6]) {
  double G[4][4];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) G[a][b] = dot(r.alpha[a], r.alpha[b]);
  for (int e = 0; e < 6; ++e) {
    const int i = kEdgeLocal[e][0], j = kEdgeLocal[e][1];
    for (int f = e; f < 6; ++f) {
      const int k = kEdgeLocal[f][0], l = kEdgeLocal[f][1];
      L[e][f] = L[f][e] = 0.5 * r.v0 * (lambda * G[i][j] * G[k][l] + mu * (G[i][k] * G[j][l] + G[i][l] * G[j][k]));
    }
  }
}

/// General (anisotropic) L_T: with b_e = Voigt(sym(alpha_i alpha_j^T)) (engineering shear), e = (i, j), the
/// Green strain is eps = -1/2 sum_e zeta_e b_e, so W_T = V0/2 eps^T D eps = 1/4 zeta^T L_T zeta with
///   L_T(e, f) = V0/2 b_e^T D b_f,
/// which equals eq. 19, (C_ini/12) Q^-T D Q^-1, without inverting Q (checked in the tests).
inline void edge_coefficients(const RefTet& r, const double* D, double L[6][6]) {
  double b[6][6], Db[6][6];  // b[e] = Voigt vector of edge e; Db[e] = D b[e]
  for (int e = 0; e < 6; ++e) {
    const double* ai = r.alpha[kEdgeLocal[e][0]];
    const double* aj = r.alpha[kEdgeLocal[e][1]];
    b[e][0] = ai[0] * aj[0];
    b[e][1] = ai[1] * aj[1];
    b[e][2] = ai[2] * aj[2];
    b[e][3] = ai[0] * aj[1] + ai[1] * aj[0];
    b[e][4] = ai[1] * aj[2] + ai[2] * aj[1];
    b[e][5] = ai[2] * aj[0] + ai[0] * aj[2];
  }
  for (int e = 0; e < 6; ++e)
    for (int p = 0; p < 6; ++p) {
      double s = 0.0;
      for (int q = 0; q < 6; ++q) s += D[6 * p + q] * b[e][q];
      Db[e][p] = s;
    }
  for (int e = 0; e < 6; ++e)
    for (int f = e; f < 6; ++f) {
      double s = 0.0;
      for (int p = 0; p < 6; ++p) s += b[e][p] * Db[f][p];
      L[e][f] = L[f][e] = 0.5 * r.v0 * s;
    }
}

/// Unit-modulus volumetric penalty psi(theta), theta = J - 1, and its derivatives: W_vol = V0 k_vol psi(J - 1).
/// cubic (Kikuuwe §4): |min(0, theta)|^3 / 3, C^2 at theta = 0; quadratic: theta^2 / 2; none: 0.
struct Penalty {
  double psi = 0.0, d1 = 0.0, d2 = 0.0;
};
inline Penalty vol_penalty(double theta, VolumetricPenalty kind) {
  switch (kind) {
    case VolumetricPenalty::cubic:
      if (theta >= 0.0) return {};
      return {-theta * theta * theta / 3.0, -theta * theta, -2.0 * theta};
    case VolumetricPenalty::quadratic: return {0.5 * theta * theta, theta, 1.0};
    case VolumetricPenalty::none: break;
  }
  return {};
}

/// The volumetric penalty's part of the edge block K_ab, added to K (9 values): kv [psi'' c_a c_b^T - psi' [w_ab x]],
/// c_a = cof(F) alpha_a, w_ab = F (alpha_a x alpha_b) (the last term is d2J/dx_a dx_b); k2 = kv psi'', k1 = kv psi'
/// (stvk-tl, neo-hookean).
[[gnu::always_inline]] inline void volumetric_block(const double F[9], const double* alpha_a, const double* alpha_b,
                                                    const double* c_a, const double* c_b, double k1, double k2,
                                                    double* K) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) K[3 * r + c] += k2 * c_a[r] * c_b[c];
  if (k1 != 0.0) {
    double axb[3], w[3];
    cross(alpha_a, alpha_b, axb);
    mat_vec(F, axb, w);
    K[1] += k1 * w[2];
    K[2] -= k1 * w[1];
    K[3] -= k1 * w[2];
    K[5] += k1 * w[0];
    K[6] += k1 * w[1];
    K[7] -= k1 * w[0];
  }
}

/// Validate the sizes of a factory's coordinates (3 per vertex) and cell list (n_ids ids, `per_cell` per cell):
/// `who` names the factory, `list` the cell list and `cell` one cell in the messages.
inline void check_sizes(std::size_t n_coords, std::size_t n_ids, int per_cell, const char* who, const char* list,
                        const char* cell) {
  if (n_coords % 3 != 0)
    throw std::invalid_argument(std::string(who) + ": coords holds " + std::to_string(n_coords) +
                                " values, expected 3 per vertex");
  if (n_ids % per_cell != 0)
    throw std::invalid_argument(std::string(who) + ": " + list + " holds " + std::to_string(n_ids) + " ids, expected " +
                                std::to_string(per_cell) + " per " + cell);
}

/// Validate the common inputs of the formulation factories: sizes, vertex ids and material ids.
inline void check_inputs(std::size_t n_coords, std::span<const LocalIndex> tets, std::size_t n_table,
                         std::span<const std::int32_t> material_of_tet, const char* who) {
  check_sizes(n_coords, tets.size(), 4, who, "tets", "tetrahedron");
  if (material_of_tet.size() != tets.size() / 4)
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(material_of_tet.size()) +
                                " material ids for " + std::to_string(tets.size() / 4) + " tetrahedra");
  const std::int64_t nv = static_cast<std::int64_t>(n_coords / 3);
  for (std::size_t t = 0; t < material_of_tet.size(); ++t) {
    if (material_of_tet[t] < 0 || static_cast<std::size_t>(material_of_tet[t]) >= n_table)
      throw std::invalid_argument(std::string(who) + ": tet " + std::to_string(t) + " has material id " +
                                  std::to_string(material_of_tet[t]) + ", expected 0.." +
                                  std::to_string(static_cast<std::int64_t>(n_table) - 1));
    for (int i = 0; i < 4; ++i) {
      const LocalIndex v = tets[4 * t + i];
      if (v < 0 || v >= nv)
        throw std::invalid_argument(std::string(who) + ": tet " + std::to_string(t) + " has vertex id " +
                                    std::to_string(v) + ", expected 0.." + std::to_string(nv - 1));
    }
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

}  // namespace edgefem::tetgeo
