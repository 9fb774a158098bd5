// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_block.cpp
/// The block projection of tetrahedra (pbd_block.hpp): one Newton step of a tet's local backward-Euler problem.
#include "pbd/pbd_block.hpp"

#include <cmath>

#include "materials/tet_local_hessian.hpp"

namespace edgefem {

namespace {

constexpr int kVoigtI[6] = {0, 1, 2, 0, 1, 2}, kVoigtJ[6] = {0, 1, 2, 1, 2, 0};

/// alpha_0..3 (al[a][q]) and F (row-major) per lane.
template <int L>
[[gnu::always_inline]] inline void alphas_and_f(const BlockBatch<L>& in, double (&al)[4][3][L], double (&F)[9][L]) {
  for (int a = 0; a < 3; ++a)
    for (int q = 0; q < 3; ++q)
      for (int l = 0; l < L; ++l) al[a + 1][q][l] = in.alpha[3 * a + q][l];
  for (int q = 0; q < 3; ++q)
    for (int l = 0; l < L; ++l) al[0][q][l] = -(al[1][q][l] + al[2][q][l] + al[3][q][l]);
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q)
      for (int l = 0; l < L; ++l)
        F[3 * r + q][l] = (in.x[3 + r][l] - in.x[r][l]) * al[1][q][l] + (in.x[6 + r][l] - in.x[r][l]) * al[2][q][l] +
                          (in.x[9 + r][l] - in.x[r][l]) * al[3][q][l];
}

/// The vertices' effective inverse masses w~_a = h_a w_a, h_a = 1 / (1 + c w_a gamma_a), with the geometric bound
/// gamma_a = rho sum_b |alpha_a . alpha_b| (h = 1 where the tet is unstressed).
template <int L>
[[gnu::always_inline]] inline void heavier(const BlockBatch<L>& in, const double (&al)[4][3][L], double (&wt)[4][L],
                                           double (&h)[4][L]) {
#pragma GCC unroll 4
  for (int a = 0; a < 4; ++a) {
    double gamma[L] = {};
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b)
      for (int l = 0; l < L; ++l)
        gamma[l] += std::abs(al[a][0][l] * al[b][0][l] + al[a][1][l] * al[b][1][l] + al[a][2][l] * al[b][2][l]);
    for (int l = 0; l < L; ++l) {
      h[a][l] = 1.0 / (1.0 + in.c[l] * in.w[a][l] * in.bound[l] * gamma[l]);
      wt[a][l] = h[a][l] * in.w[a][l];
    }
  }
}

/// Q = D~^-1 / c + J (W~ (x) I) J^T (lower triangle, 21) and b = J (W~ (x) I) r, through A = sum_a w~_a alpha_a
/// alpha_a^T, C = F^T F and P = sum_a alpha_a (w~ r)_a^T (3 x 3 each) instead of the 6 x 12 Jacobian.
template <int L>
[[gnu::always_inline]] inline void strain_system(const BlockBatch<L>& in, const double (&al)[4][3][L],
                                                 const double (&F)[9][L], const double (&wt)[4][L], double (&Q)[21][L],
                                                 double (&b)[6][L]) {
  double A[3][3][L], C[3][3][L], Ra[4][3][L], rr[4][3][L], P[3][3][L], Gm[3][3][L];
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k)
      for (int l = 0; l < L; ++l) Ra[a][k][l] = wt[a][l] * al[a][k][l], rr[a][k][l] = wt[a][l] * in.res[3 * a + k][l];
  for (int i = 0; i < 3; ++i)
    for (int k = i; k < 3; ++k)
      for (int l = 0; l < L; ++l) {
        const double va = al[0][i][l] * Ra[0][k][l] + al[1][i][l] * Ra[1][k][l] + al[2][i][l] * Ra[2][k][l] +
                          al[3][i][l] * Ra[3][k][l];
        const double vc = F[i][l] * F[k][l] + F[3 + i][l] * F[3 + k][l] + F[6 + i][l] * F[6 + k][l];
        A[i][k][l] = A[k][i][l] = va, C[i][k][l] = C[k][i][l] = vc;
      }
  for (int r = 0; r < 3; ++r)  // P[r][i] = sum_a (R r)_ar alpha_ai
    for (int i = 0; i < 3; ++i)
      for (int l = 0; l < L; ++l)
        P[r][i][l] = rr[0][r][l] * al[0][i][l] + rr[1][r][l] * al[1][i][l] + rr[2][r][l] * al[2][i][l] +
                     rr[3][r][l] * al[3][i][l];
  for (int j = 0; j < 3; ++j)  // Gm[j][i] = sum_r F_rj P_ri
    for (int i = 0; i < 3; ++i)
      for (int l = 0; l < L; ++l)
        Gm[j][i][l] = F[j][l] * P[0][i][l] + F[3 + j][l] * P[1][i][l] + F[6 + j][l] * P[2][i][l];
  double scale[L];
  for (int l = 0; l < L; ++l) scale[l] = 1.0 / in.c[l];
#pragma GCC unroll 6
  for (int p = 0; p < 6; ++p) {
    const int i = kVoigtI[p], j = kVoigtJ[p];
    for (int l = 0; l < L; ++l) b[p][l] = p < 3 ? Gm[i][i][l] : Gm[j][i][l] + Gm[i][j][l];
#pragma GCC unroll 6
    for (int q = 0; q <= p; ++q) {
      const int k = kVoigtI[q], m = kVoigtJ[q], e = p * (p + 1) / 2 + q;
      for (int l = 0; l < L; ++l) {
        double v;
        if (p < 3)
          v = A[i][k][l] * C[i][k][l];
        else if (q < 3)
          v = A[i][k][l] * C[j][k][l] + A[j][k][l] * C[i][k][l];
        else
          v = A[i][k][l] * C[j][m][l] + A[i][m][l] * C[j][k][l] + A[j][k][l] * C[i][m][l] + A[j][m][l] * C[i][k][l];
        Q[e][l] = in.ci[e][l] * scale[l] + v;
      }
    }
  }
}

/// z = Q^-1 b: Q = K D K^T (unit lower K in place of Q's strict lower triangle, D on its diagonal), then the two
/// triangular solves.
template <int L>
[[gnu::always_inline]] inline void ldlt6(double (&Q)[21][L], const double (&b)[6][L], double (&z)[6][L]) {
  double inv_d[6][L];
#pragma GCC unroll 6
  for (int p = 0; p < 6; ++p) {
#pragma GCC unroll 6
    for (int q = 0; q < p; ++q) {
      const int e = p * (p + 1) / 2 + q;
#pragma GCC unroll 6
      for (int k = 0; k < q; ++k) {
        const int pk = p * (p + 1) / 2 + k, qk = q * (q + 1) / 2 + k, kk = k * (k + 1) / 2 + k;
        for (int l = 0; l < L; ++l) Q[e][l] -= Q[pk][l] * Q[qk][l] * Q[kk][l];
      }
      for (int l = 0; l < L; ++l) Q[e][l] *= inv_d[q][l];
    }
    const int d = p * (p + 1) / 2 + p;
#pragma GCC unroll 6
    for (int k = 0; k < p; ++k) {
      const int pk = p * (p + 1) / 2 + k, kk = k * (k + 1) / 2 + k;
      for (int l = 0; l < L; ++l) Q[d][l] -= Q[pk][l] * Q[pk][l] * Q[kk][l];
    }
    for (int l = 0; l < L; ++l) inv_d[p][l] = 1.0 / Q[d][l];
  }
#pragma GCC unroll 6
  for (int p = 0; p < 6; ++p) {
    for (int l = 0; l < L; ++l) z[p][l] = b[p][l];
#pragma GCC unroll 6
    for (int k = 0; k < p; ++k)
      for (int l = 0; l < L; ++l) z[p][l] -= Q[p * (p + 1) / 2 + k][l] * z[k][l];
  }
#pragma GCC unroll 6
  for (int p = 5; p >= 0; --p) {
    for (int l = 0; l < L; ++l) z[p][l] *= inv_d[p][l];
#pragma GCC unroll 6
    for (int k = p + 1; k < 6; ++k)
      for (int l = 0; l < L; ++l) z[p][l] -= Q[k * (k + 1) / 2 + p][l] * z[k][l];
  }
}

/// v = J^T z - r (J^T z the nodal form of F Z, Z the symmetric 3 x 3 of z), ds_a = h_a v_a, and |dF|^2 of the
/// position change u = W ds = W~ v.
template <int L>
[[gnu::always_inline]] inline void finish(BlockBatch<L>& io, const double (&al)[4][3][L], const double (&F)[9][L],
                                          const double (&z)[6][L], const double (&wt)[4][L], const double (&h)[4][L]) {
  double P[9][L], u[12][L];
  for (int r = 0; r < 3; ++r)
    for (int l = 0; l < L; ++l) {
      const double f0 = F[3 * r][l], f1 = F[3 * r + 1][l], f2 = F[3 * r + 2][l];
      P[3 * r][l] = f0 * z[0][l] + f1 * z[3][l] + f2 * z[5][l];
      P[3 * r + 1][l] = f0 * z[3][l] + f1 * z[1][l] + f2 * z[4][l];
      P[3 * r + 2][l] = f0 * z[5][l] + f1 * z[4][l] + f2 * z[2][l];
    }
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r)
      for (int l = 0; l < L; ++l) {
        const double v = P[3 * r][l] * al[a][0][l] + P[3 * r + 1][l] * al[a][1][l] + P[3 * r + 2][l] * al[a][2][l] -
                         io.res[3 * a + r][l];
        io.ds[3 * a + r][l] = h[a][l] * v;
        u[3 * a + r][l] = wt[a][l] * v;
      }
  for (int l = 0; l < L; ++l) io.change[l] = 0.0;
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q)
      for (int l = 0; l < L; ++l) {
        const double d = u[r][l] * al[0][q][l] + u[3 + r][l] * al[1][q][l] + u[6 + r][l] * al[2][q][l] +
                         u[9 + r][l] * al[3][q][l];
        io.change[l] += d * d;
      }
}

template <int L>
[[gnu::always_inline]] inline void block_step(BlockBatch<L>& io) {
  double al[4][3][L], F[9][L], wt[4][L], h[4][L], Q[21][L], b[6][L], z[6][L];
  alphas_and_f(io, al, F);
  heavier(io, al, wt, h);
  strain_system(io, al, F, wt, Q, b);
  ldlt6(Q, b, z);
  finish(io, al, F, z, wt, h);
}

}  // namespace

[[gnu::target_clones("avx2", "default")]] void block_step_lanes(BlockBatch<kLanes>& batch) { block_step(batch); }

void block_step_one(BlockBatch<1>& batch) { block_step(batch); }

namespace {

/// The local Newton step of a constraint with n dofs and Hessian model H (symmetric positive semidefinite, n x n
/// row-major) for any inverse masses w (per dof): (I + dt^2 W^1/2 H W^1/2) u~ = -W^1/2 r (Cholesky), u = W^1/2 u~,
/// ds = -r - dt^2 H u.
template <int n>
void local_step(const double (&H)[n][n], const double* w, const double* res, double dt2, double* ds) {
  double N[n][n], wh[n];
  for (int i = 0; i < n; ++i) wh[i] = std::sqrt(w[i]);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) N[i][j] = (i == j ? 1.0 : 0.0) + dt2 * wh[i] * H[i][j] * wh[j];
  // Cholesky N = K K^T (K lower in place), then u~ = -N^-1 Wh r and u = Wh u~.
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      double v = N[i][j];
      for (int k = 0; k < j; ++k) v -= N[i][k] * N[j][k];
      N[i][j] = i == j ? std::sqrt(v) : v / N[j][j];
    }
  }
  double u[n];
  for (int i = 0; i < n; ++i) {
    double v = -wh[i] * res[i];
    for (int k = 0; k < i; ++k) v -= N[i][k] * u[k];
    u[i] = v / N[i][i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double v = u[i];
    for (int k = i + 1; k < n; ++k) v -= N[k][i] * u[k];
    u[i] = v / N[i][i];
  }
  for (int i = 0; i < n; ++i) u[i] *= wh[i];
  for (int i = 0; i < n; ++i) {
    double v = 0.0;
    for (int j = 0; j < n; ++j) v += H[i][j] * u[j];
    ds[i] = -res[i] - dt2 * v;
  }
}

}  // namespace

void block_step_general(const double al[4][3], const double* F, const double* w, const double* res, double bound,
                        const double* Dt, double v0, double dt2, double ds[12]) {
  double J[6][12], DJ[6][12], H[12][12], gamma[4] = {};
  strain_jacobian(al, F, J);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      gamma[a] += bound * std::abs(al[a][0] * al[b][0] + al[a][1] * al[b][1] + al[a][2] * al[b][2]);
  for (int p = 0; p < 6; ++p)
    for (int i = 0; i < 12; ++i) {
      double v = 0.0;
      for (int q = 0; q < 6; ++q) v += Dt[6 * p + q] * J[q][i];
      DJ[p][i] = v;
    }
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j) {
      double v = i == j ? gamma[i / 3] : 0.0;
      for (int p = 0; p < 6; ++p) v += J[p][i] * DJ[p][j];
      H[i][j] = v0 * v;
    }
  local_step<12>(H, w, res, dt2, ds);
}

void tri_block_step(const double al[3][2], const double* F, const double* w, const double* res, const double* Dinv,
                    const double* D, double volume, double dt2, double ds[9]) {
  // J = d(E00, E11, 2 E01)/dx: row r of F is F[2 r], F[2 r + 1].
  double J[3][9];
  for (int a = 0; a < 3; ++a)
    for (int r = 0; r < 3; ++r) {
      const int i = 3 * a + r;
      const double f0 = F[2 * r], f1 = F[2 * r + 1];
      J[0][i] = f0 * al[a][0], J[1][i] = f1 * al[a][1], J[2][i] = f0 * al[a][1] + f1 * al[a][0];
    }
  const double e[3] = {0.5 * (F[0] * F[0] + F[2] * F[2] + F[4] * F[4] - 1.0),
                       0.5 * (F[1] * F[1] + F[3] * F[3] + F[5] * F[5] - 1.0), F[0] * F[1] + F[2] * F[3] + F[4] * F[5]};
  double S[3];  // S00, S11, S01 = D e
  for (int p = 0; p < 3; ++p) S[p] = D[3 * p] * e[0] + D[3 * p + 1] * e[1] + D[3 * p + 2] * e[2];
  const double half = 0.5 * (S[0] - S[1]);
  const double bound = std::abs(0.5 * (S[0] + S[1])) + std::sqrt(half * half + S[2] * S[2]);  // |S|, exactly
  const double c = dt2 * volume, inv_c = 1.0 / c;
  double h[9], wt[9], wr[9];  // h_i = 1 / (1 + c w_i gamma_a), w~_i = h_i w_i
  for (int a = 0; a < 3; ++a) {
    double gamma = 0.0;
    for (int b = 0; b < 3; ++b) gamma += std::abs(al[a][0] * al[b][0] + al[a][1] * al[b][1]);
    gamma *= c * bound;
    const double* wa = w + 3 * a;
    if (wa[0] == wa[1] && wa[0] == wa[2]) {  // (one division for the vertex)
      const double ha = 1.0 / (1.0 + wa[0] * gamma);
      h[3 * a] = h[3 * a + 1] = h[3 * a + 2] = ha;
    } else {
      for (int r = 0; r < 3; ++r) h[3 * a + r] = 1.0 / (1.0 + wa[r] * gamma);
    }
    for (int r = 0; r < 3; ++r) {
      const int i = 3 * a + r;
      wt[i] = h[i] * w[i];
      wr[i] = wt[i] * res[i];
    }
  }
  // (D^-1 / c + J W~ J^T) z = J W~ r (3 x 3, LDL^T), v = J^T z - r, ds = h v (Woodbury; pbd_block.hpp).
  double Q[3][3], bz[3];
  for (int p = 0; p < 3; ++p) {
    double v = 0.0;
    for (int i = 0; i < 9; ++i) v += J[p][i] * wr[i];
    bz[p] = v;
    for (int q = 0; q <= p; ++q) {
      double t = Dinv[3 * p + q] * inv_c;
      for (int i = 0; i < 9; ++i) t += J[p][i] * wt[i] * J[q][i];
      Q[p][q] = t;
    }
  }
  const double d0 = Q[0][0], i0 = 1.0 / d0, l10 = Q[1][0] * i0, l20 = Q[2][0] * i0;
  const double d1 = Q[1][1] - l10 * l10 * d0, i1 = 1.0 / d1, l21 = (Q[2][1] - l20 * l10 * d0) * i1;
  const double i2 = 1.0 / (Q[2][2] - l20 * l20 * d0 - l21 * l21 * d1);
  const double y0 = bz[0], y1 = bz[1] - l10 * y0, y2 = bz[2] - l20 * y0 - l21 * y1;
  const double z2 = y2 * i2, z1 = y1 * i1 - l21 * z2, z0 = y0 * i0 - l10 * z1 - l20 * z2;
  for (int i = 0; i < 9; ++i) ds[i] = h[i] * (J[0][i] * z0 + J[1][i] * z1 + J[2][i] * z2 - res[i]);
}

}  // namespace edgefem
