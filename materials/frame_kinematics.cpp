// SPDX-License-Identifier: BSD-3-Clause
/// \file frame_kinematics.cpp
/// Frame kinematics (dual-quaternion blending) and the StVK sample kernel; formulas in frame_kinematics.hpp.
///
/// Derivatives: R(b) and A(b) = dp/db are written as closed forms in b and evaluated with a small second-order
/// forward-mode number (`Hyper<N>`: value, gradient, Hessian in N seeded variables), which gives dR/db, d^2R/db^2,
/// dA/db and d^2A/db^2 exactly. F = R(b) + A(b) W is linear in W, so with z = (b, W):
///   dF/db_k = dR/db_k + (dA/db_k) W,  dF_ac/dW_lc' = delta_cc' A_al,
///   d^2F/db_k db_m = d^2R/db_k db_m + (d^2A/db_k db_m) W,  d^2F_ac/db_k dW_lc' = delta_cc' dA_al/db_k,
///   d^2F/dW^2 = 0,
/// and e(z) = V psi(F(z)) has grad = V J^T P and Hessian = V (J^T C J + sum_ac P_ac d^2F_ac), with P = F S the first
/// Piola-Kirchhoff stress and C = dP/dF (StVK: dP = dF S + F (lambda tr(dE) I + 2 mu dE), dE = sym(F^T dF)).
#include "materials/frame_kinematics.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace edgefem::frames {
namespace {

/// Value, gradient and Hessian of a function of N variables (second-order forward mode). Only the upper triangle
/// h[i][j], j >= i, is computed and read.
template <int N>
struct Hyper {
  double v = 0.0;
  double g[N]{};
  double h[N][N]{};
};

template <int N>
Hyper<N> variable(double value, int k) {
  Hyper<N> x;
  x.v = value;
  x.g[k] = 1.0;
  return x;
}
template <int N>
Hyper<N> operator+(const Hyper<N>& a, const Hyper<N>& b) {
  Hyper<N> r;
  r.v = a.v + b.v;
  for (int i = 0; i < N; ++i) r.g[i] = a.g[i] + b.g[i];
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) r.h[i][j] = a.h[i][j] + b.h[i][j];
  return r;
}
template <int N>
Hyper<N> operator-(const Hyper<N>& a, const Hyper<N>& b) {
  Hyper<N> r;
  r.v = a.v - b.v;
  for (int i = 0; i < N; ++i) r.g[i] = a.g[i] - b.g[i];
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) r.h[i][j] = a.h[i][j] - b.h[i][j];
  return r;
}
template <int N>
Hyper<N> operator-(const Hyper<N>& a) {
  return a * -1.0;
}
template <int N>
Hyper<N> operator*(const Hyper<N>& a, double s) {
  Hyper<N> r;
  r.v = a.v * s;
  for (int i = 0; i < N; ++i) r.g[i] = a.g[i] * s;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) r.h[i][j] = a.h[i][j] * s;
  return r;
}
template <int N>
Hyper<N> operator*(double s, const Hyper<N>& a) {
  return a * s;
}
template <int N>
Hyper<N> operator+(const Hyper<N>& a, double s) {
  Hyper<N> r = a;
  r.v += s;
  return r;
}
template <int N>
Hyper<N> operator*(const Hyper<N>& a, const Hyper<N>& b) {
  Hyper<N> r;
  r.v = a.v * b.v;
  for (int i = 0; i < N; ++i) r.g[i] = a.v * b.g[i] + b.v * a.g[i];
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) r.h[i][j] = a.v * b.h[i][j] + b.v * a.h[i][j] + a.g[i] * b.g[j] + b.g[i] * a.g[j];
  return r;
}
/// 1 / a.
template <int N>
Hyper<N> reciprocal(const Hyper<N>& a) {
  Hyper<N> r;
  const double inv = 1.0 / a.v;
  r.v = inv;
  for (int i = 0; i < N; ++i) r.g[i] = -a.g[i] * inv * inv;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j) r.h[i][j] = 2.0 * a.g[i] * a.g[j] * inv * inv * inv - a.h[i][j] * inv * inv;
  return r;
}

/// A quaternion (x, y, z, w) of any number type.
template <class T>
struct Quat {
  T x, y, z, w;
};
template <class A, class B>
auto qmul(const Quat<A>& a, const Quat<B>& b) {
  using T = decltype(a.x * b.x);
  return Quat<T>{a.w * b.x + b.w * a.x + a.y * b.z - a.z * b.y, a.w * b.y + b.w * a.y + a.z * b.x - a.x * b.z,
                 a.w * b.z + b.w * a.z + a.x * b.y - a.y * b.x, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
template <class T>
Quat<T> conj(const Quat<T>& q) {
  return {-q.x, -q.y, -q.z, q.w};
}

/// The homogeneous rotation matrix M(q) (M v = q o v o conj(q)), row-major, and p = (M X + 2 vec(be o conj(b0))) / s.
template <class T>
void homogeneous_rotation(const Quat<T>& q, T M[3][3]) {
  const T xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, ww = q.w * q.w;
  const T xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z, wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  M[0][0] = ww + xx - yy - zz;
  M[0][1] = 2.0 * (xy - wz);
  M[0][2] = 2.0 * (xz + wy);
  M[1][0] = 2.0 * (xy + wz);
  M[1][1] = ww - xx + yy - zz;
  M[1][2] = 2.0 * (yz - wx);
  M[2][0] = 2.0 * (xz - wy);
  M[2][1] = 2.0 * (yz + wx);
  M[2][2] = ww - xx - yy + zz;
}

double reciprocal(double a) { return 1.0 / a; }

/// b_k as a number of type T: plain, or the k-th seeded variable of Hyper<8>.
template <class T>
T seed(double value, int k) {
  if constexpr (std::is_same_v<T, double>) {
    (void)k;
    return value;
  } else {
    return variable<8>(value, k);
  }
}

/// Seeds b as 8 numbers of type T.
template <class T>
struct SeededBlend {
  Quat<T> b0, be;
  explicit SeededBlend(const DualQuat& b)
      : b0{seed<T>(b[0], 0), seed<T>(b[1], 1), seed<T>(b[2], 2), seed<T>(b[3], 3)},
        be{seed<T>(b[4], 4), seed<T>(b[5], 5), seed<T>(b[6], 6), seed<T>(b[7], 7)} {}
};

/// p(b, X) and, when A is given, A = dp/db, both as T (Hyper<8> in b for the derivatives, double for values);
/// R = M(b0) / s.
template <class T>
void skin_hyper(const DualQuat& b, const Vec3& X, T p[3], T R[3][3], T (*A)[8]) {
  const SeededBlend<T> s(b);
  const T norm2 = s.b0.x * s.b0.x + s.b0.y * s.b0.y + s.b0.z * s.b0.z + s.b0.w * s.b0.w;
  const T inv = reciprocal(norm2);
  T M[3][3];
  homogeneous_rotation(s.b0, M);
  const auto t2 = qmul(s.be, conj(s.b0));  // 2 vec(.) = translation times s
  const T tr[3] = {2.0 * t2.x, 2.0 * t2.y, 2.0 * t2.z};
  T g[3];
  for (int a = 0; a < 3; ++a) {
    g[a] = tr[a] + M[a][0] * X[0] + M[a][1] * X[1] + M[a][2] * X[2];
    p[a] = g[a] * inv;
    for (int c = 0; c < 3; ++c) R[a][c] = M[a][c] * inv;
  }
  if (A == nullptr) return;
  // A_k = dp/db_k = (2 B(b, e_k) - p ds/db_k) / s with g(b) = B(b, b):
  //   B(b, c) = [vec(b0 o X o conj(c0)) + vec(c0 o X o conj(b0))] / 2 + vec(be o conj(c0)) + vec(ce o conj(b0)).
  const Quat<double> Xq{X[0], X[1], X[2], 0.0};
  const auto b0X = qmul(s.b0, Xq);
  for (int k = 0; k < 8; ++k) {
    Quat<double> e{0, 0, 0, 0};
    double* ek = (k % 4 == 0) ? &e.x : (k % 4 == 1) ? &e.y : (k % 4 == 2) ? &e.z : &e.w;
    *ek = 1.0;
    T twice_B[3];
    if (k < 4) {
      const auto q1 = qmul(b0X, conj(e));
      const auto q2 = qmul(qmul(e, Xq), conj(s.b0));
      const auto q3 = qmul(s.be, conj(e));
      twice_B[0] = q1.x + q2.x + 2.0 * q3.x;
      twice_B[1] = q1.y + q2.y + 2.0 * q3.y;
      twice_B[2] = q1.z + q2.z + 2.0 * q3.z;
    } else {
      const auto q = qmul(e, conj(s.b0));
      twice_B[0] = 2.0 * q.x;
      twice_B[1] = 2.0 * q.y;
      twice_B[2] = 2.0 * q.z;
    }
    const T* bk = k == 0 ? &s.b0.x : k == 1 ? &s.b0.y : k == 2 ? &s.b0.z : &s.b0.w;
    for (int a = 0; a < 3; ++a) {
      T num = twice_B[a];
      if (k < 4) num = num - 2.0 * (p[a] * *bk);
      A[a][k] = num * inv;
    }
  }
}

}  // namespace

std::array<double, 9> rotation_matrix(const std::array<double, 4>& q) {
  double M[3][3];
  homogeneous_rotation(Quat<double>{q[0], q[1], q[2], q[3]}, M);
  const double s = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  std::array<double, 9> R{};
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) R[3 * a + c] = M[a][c] / s;
  return R;
}

FramePose retract(const FramePose& pose, const double* twist) {
  const double angle = std::sqrt(twist[0] * twist[0] + twist[1] * twist[1] + twist[2] * twist[2]);
  // exp(dtheta / 2) = (sin(angle / 2) axis, cos(angle / 2)); sin(a/2)/a by its series near 0.
  const double half_sinc = angle < 1e-8 ? 0.5 - angle * angle / 48.0 : std::sin(0.5 * angle) / angle;
  const Quat<double> e{half_sinc * twist[0], half_sinc * twist[1], half_sinc * twist[2], std::cos(0.5 * angle)};
  const auto& r = pose.rotation;
  auto q = qmul(e, Quat<double>{r[0], r[1], r[2], r[3]});
  double n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  if (q.w < 0.0) n = -n;  // same rotation, kept on the w >= 0 hemisphere (consistent blending signs)
  FramePose out;
  out.rotation = {q.x / n, q.y / n, q.z / n, q.w / n};
  for (int c = 0; c < 3; ++c) out.origin[c] = pose.origin[c] + twist[3 + c];
  return out;
}

RelativeTransform relative_transform(const FramePose& pose, const Vec3& rest_origin) {
  // d(twist) with the retraction written to second order: exp(dtheta/2) = (dtheta/2, 1 - |dtheta|^2/8) + O(3).
  Hyper<6> tw[6];
  for (int a = 0; a < 6; ++a) tw[a] = variable<6>(0.0, a);
  const Hyper<6> e_w = (tw[0] * tw[0] + tw[1] * tw[1] + tw[2] * tw[2]) * (-1.0 / 8.0) + 1.0;
  const Quat<Hyper<6>> e{0.5 * tw[0], 0.5 * tw[1], 0.5 * tw[2], e_w};
  const auto& r0 = pose.rotation;
  const auto r = qmul(e, Quat<double>{r0[0], r0[1], r0[2], r0[3]});
  // tau = t - R X0 with R X0 = r o X0 o conj(r) / |r|^2 (|r| = 1 to second order: the e above is unit to O(3)).
  const Quat<double> X0{rest_origin[0], rest_origin[1], rest_origin[2], 0.0};
  const auto RX = qmul(qmul(r, X0), conj(r));
  const Quat<Hyper<6>> tau{(tw[3] + pose.origin[0]) - RX.x, (tw[4] + pose.origin[1]) - RX.y,
                           (tw[5] + pose.origin[2]) - RX.z, Hyper<6>{}};
  const auto half_tau_r = qmul(tau, r);
  const Hyper<6>* parts[8] = {&r.x, &r.y, &r.z, &r.w, nullptr, nullptr, nullptr, nullptr};
  const Quat<Hyper<6>> dual{0.5 * half_tau_r.x, 0.5 * half_tau_r.y, 0.5 * half_tau_r.z, 0.5 * half_tau_r.w};
  parts[4] = &dual.x;
  parts[5] = &dual.y;
  parts[6] = &dual.z;
  parts[7] = &dual.w;
  RelativeTransform out;
  for (int k = 0; k < 8; ++k) {
    out.d[k] = parts[k]->v;
    for (int a = 0; a < 6; ++a) {
      out.first[k][a] = parts[k]->g[a];
      for (int b = 0; b < 6; ++b) out.second[k][a][b] = parts[k]->h[std::min(a, b)][std::max(a, b)];
    }
  }
  return out;
}

Vec3 skin(const DualQuat& b, const Vec3& X) {
  const Quat<double> b0{b[0], b[1], b[2], b[3]}, be{b[4], b[5], b[6], b[7]};
  double M[3][3];
  homogeneous_rotation(b0, M);
  const auto t2 = qmul(be, conj(b0));
  const double s = b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3];
  const double tr[3] = {2.0 * t2.x, 2.0 * t2.y, 2.0 * t2.z};
  Vec3 p{};
  for (int a = 0; a < 3; ++a) p[a] = (tr[a] + M[a][0] * X[0] + M[a][1] * X[1] + M[a][2] * X[2]) / s;
  return p;
}

SkinnedPoint skin_derivatives(const DualQuat& b, const Vec3& X) {
  Hyper<8> p[3], R[3][3];
  skin_hyper<Hyper<8>>(b, X, p, R, nullptr);
  SkinnedPoint out;
  for (int a = 0; a < 3; ++a) {
    out.p[a] = p[a].v;
    for (int k = 0; k < 8; ++k) {
      out.grad[a][k] = p[a].g[k];
      for (int m = 0; m < 8; ++m) out.hess[a][k][m] = p[a].h[std::min(k, m)][std::max(k, m)];
    }
  }
  return out;
}

std::array<double, 9> deformation_gradient(const DualQuat& b, const double W[8][3], const Vec3& X) {
  Hyper<8> p[3], R[3][3], A[3][8];
  skin_hyper<Hyper<8>>(b, X, p, R, A);
  std::array<double, 9> F{};
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      double f = R[a][c].v;
      for (int l = 0; l < 8; ++l) f += A[a][l].v * W[l][c];
      F[3 * a + c] = f;
    }
  return F;
}

double stvk_density(const std::array<double, 9>& F, double lambda, double mu) {
  double E[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double c = 0.0;
      for (int a = 0; a < 3; ++a) c += F[3 * a + i] * F[3 * a + j];
      E[i][j] = 0.5 * (c - (i == j ? 1.0 : 0.0));
    }
  const double tr = E[0][0] + E[1][1] + E[2][2];
  double ee = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) ee += E[i][j] * E[i][j];
  return 0.5 * lambda * tr * tr + mu * ee;
}

double stvk_sample_energy(const DualQuat& b, const double W[8][3], const Vec3& X, double lambda, double mu,
                          double volume) {
  double p[3], R[3][3], A[3][8];
  skin_hyper<double>(b, X, p, R, A);
  std::array<double, 9> F{};
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      double f = R[a][c];
      for (int l = 0; l < 8; ++l) f += A[a][l] * W[l][c];
      F[3 * a + c] = f;
    }
  return volume * stvk_density(F, lambda, mu);
}

namespace {

/// StVK at F: S = 2 mu E + lambda tr(E) I and P = F S (E the Green strain); returns the energy density.
double stvk_stress(const double F[3][3], double lambda, double mu, double S[3][3], double P[3][3]) {
  double E[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double c = 0.0;
      for (int a = 0; a < 3; ++a) c += F[a][i] * F[a][j];
      E[i][j] = 0.5 * (c - (i == j ? 1.0 : 0.0));
    }
  const double tr = E[0][0] + E[1][1] + E[2][2];
  double ee = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      S[i][j] = 2.0 * mu * E[i][j] + (i == j ? lambda * tr : 0.0);
      ee += E[i][j] * E[i][j];
    }
  for (int a = 0; a < 3; ++a)
    for (int j = 0; j < 3; ++j) P[a][j] = F[a][0] * S[0][j] + F[a][1] * S[1][j] + F[a][2] * S[2][j];
  return 0.5 * lambda * tr * tr + mu * ee;
}

/// C = dP/dF, 9x9 (index 3a + c), column by column: dP = dF S + F dS, dS = lambda tr(dE) I + 2 mu dE.
void stvk_tangent(const double F[3][3], const double S[3][3], double lambda, double mu, double C[9][9]) {
  for (int col = 0; col < 9; ++col) {
    double dF[3][3] = {};
    dF[col / 3][col % 3] = 1.0;
    double dE[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double c = 0.0;
        for (int a = 0; a < 3; ++a) c += F[a][i] * dF[a][j] + dF[a][i] * F[a][j];
        dE[i][j] = 0.5 * c;
      }
    const double dtr = dE[0][0] + dE[1][1] + dE[2][2];
    double dS[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) dS[i][j] = 2.0 * mu * dE[i][j] + (i == j ? lambda * dtr : 0.0);
    for (int a = 0; a < 3; ++a)
      for (int j = 0; j < 3; ++j) {
        double v = 0.0;
        for (int k = 0; k < 3; ++k) v += dF[a][k] * S[k][j] + F[a][k] * dS[k][j];
        C[3 * a + j][col] = v;
      }
  }
}

/// J = dF/dz (9 x 32): dF/db_k = dR/db_k + (dA/db_k) W, dF_ac/dW_lc = A_al.
void sample_jacobian(const Hyper<8> R[3][3], const Hyper<8> A[3][8], const double W[8][3], double J[9][kSampleVars]) {
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      const int row = 3 * a + c;
      for (int k = 0; k < 8; ++k) {
        double v = R[a][c].g[k];
        for (int l = 0; l < 8; ++l) v += A[a][l].g[k] * W[l][c];
        J[row][k] = v;
      }
      for (int l = 0; l < 8; ++l) J[row][8 * (1 + c) + l] = A[a][l].v;
    }
}

/// Material term J^T C J into the upper triangle of hess (overwritten).
void material_term(const double J[9][kSampleVars], const double C[9][9], double hess[kSampleVars][kSampleVars]) {
  double CJ[9][kSampleVars];
  for (int r = 0; r < 9; ++r)
    for (int z = 0; z < kSampleVars; ++z) {
      double v = 0.0;
      for (int q = 0; q < 9; ++q) v += C[r][q] * J[q][z];
      CJ[r][z] = v;
    }
  for (int z1 = 0; z1 < kSampleVars; ++z1)
    for (int z2 = z1; z2 < kSampleVars; ++z2) {
      double v = 0.0;
      for (int r = 0; r < 9; ++r) v += J[r][z1] * CJ[r][z2];
      hess[z1][z2] = v;
    }
}

/// Geometric term sum_ac P_ac d^2 F_ac added to the upper triangle of hess:
///   (b, b): sum_ac P_ac d2R_ac + sum_al (sum_c P_ac W_lc) d2A_al;  (b_k, W_lc): sum_a P_ac dA_al/db_k.
void add_geometric_term(const double P[3][3], const double W[8][3], const Hyper<8> R[3][3], const Hyper<8> A[3][8],
                        double hess[kSampleVars][kSampleVars]) {
  double PW[3][8];
  for (int a = 0; a < 3; ++a)
    for (int l = 0; l < 8; ++l) PW[a][l] = P[a][0] * W[l][0] + P[a][1] * W[l][1] + P[a][2] * W[l][2];
  for (int k = 0; k < 8; ++k)
    for (int m = k; m < 8; ++m) {
      double v = 0.0;
      for (int a = 0; a < 3; ++a) {
        for (int c = 0; c < 3; ++c) v += P[a][c] * R[a][c].h[k][m];
        for (int l = 0; l < 8; ++l) v += PW[a][l] * A[a][l].h[k][m];
      }
      hess[k][m] += v;
    }
  for (int k = 0; k < 8; ++k)
    for (int c = 0; c < 3; ++c)
      for (int l = 0; l < 8; ++l) {
        double v = 0.0;
        for (int a = 0; a < 3; ++a) v += P[a][c] * A[a][l].g[k];
        hess[k][8 * (1 + c) + l] += v;
      }
}

}  // namespace

void stvk_sample(const DualQuat& b, const double W[8][3], const Vec3& X, double lambda, double mu, double volume,
                 SampleEnergy& out) {
  Hyper<8> p[3], R[3][3], A[3][8];
  skin_hyper<Hyper<8>>(b, X, p, R, A);
  double F[3][3];
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      double f = R[a][c].v;
      for (int l = 0; l < 8; ++l) f += A[a][l].v * W[l][c];
      F[a][c] = f;
      out.F[3 * a + c] = f;
    }
  // StVK: E, S, P = F S, energy.
  double S[3][3], P[3][3];
  out.energy = volume * stvk_stress(F, lambda, mu, S, P);
  double C[9][9];
  stvk_tangent(F, S, lambda, mu, C);
  double J[9][kSampleVars] = {};
  sample_jacobian(R, A, W, J);
  for (int z = 0; z < kSampleVars; ++z) {
    double g = 0.0;
    for (int row = 0; row < 9; ++row) g += J[row][z] * P[row / 3][row % 3];
    out.grad[z] = volume * g;
  }
  material_term(J, C, out.hess);
  add_geometric_term(P, W, R, A, out.hess);
  for (int z1 = 0; z1 < kSampleVars; ++z1)
    for (int z2 = z1; z2 < kSampleVars; ++z2) {
      out.hess[z1][z2] *= volume;
      out.hess[z2][z1] = out.hess[z1][z2];
    }
}

}  // namespace edgefem::frames
