// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_ad.hpp
/// Forward-mode automatic differentiation to second order for the self-contact pair terms (self_distance.hpp): a
/// value with its gradient and dense Hessian in N variables (N = 12: the four vertices of a point-triangle or an
/// edge-edge pair). Every operation applies the chain rule exactly, so a pair's energy, gradient and Hessian come
/// from one evaluation of the energy's formula: exact to round-off, no hand-derived expressions to get wrong.
/// Header only, no MPI, no PETSc.
#include <array>
#include <cmath>

namespace edgefem::contact {

template <int N>
struct Ad2 {
  double v = 0.0;
  std::array<double, N> g{};
  std::array<double, N * N> h{};  ///< row-major, symmetric

  Ad2() = default;
  Ad2(double value) : v(value) {}  // NOLINT(google-explicit-constructor): constants mix with variables
  /// Variable i of the N with the value `value`.
  static Ad2 variable(int i, double value) {
    Ad2 a(value);
    a.g[static_cast<std::size_t>(i)] = 1.0;
    return a;
  }
};

template <int N>
Ad2<N> operator+(const Ad2<N>& a, const Ad2<N>& b) {
  Ad2<N> r(a.v + b.v);
  for (int i = 0; i < N; ++i) r.g[i] = a.g[i] + b.g[i];
  for (int i = 0; i < N * N; ++i) r.h[i] = a.h[i] + b.h[i];
  return r;
}
template <int N>
Ad2<N> operator-(const Ad2<N>& a, const Ad2<N>& b) {
  Ad2<N> r(a.v - b.v);
  for (int i = 0; i < N; ++i) r.g[i] = a.g[i] - b.g[i];
  for (int i = 0; i < N * N; ++i) r.h[i] = a.h[i] - b.h[i];
  return r;
}
template <int N>
Ad2<N> operator*(double s, const Ad2<N>& a) {
  Ad2<N> r(s * a.v);
  for (int i = 0; i < N; ++i) r.g[i] = s * a.g[i];
  for (int i = 0; i < N * N; ++i) r.h[i] = s * a.h[i];
  return r;
}
template <int N>
Ad2<N> operator*(const Ad2<N>& a, const Ad2<N>& b) {
  Ad2<N> r(a.v * b.v);
  for (int i = 0; i < N; ++i) r.g[i] = a.v * b.g[i] + b.v * a.g[i];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      r.h[N * i + j] = a.v * b.h[N * i + j] + b.v * a.h[N * i + j] + a.g[i] * b.g[j] + b.g[i] * a.g[j];
  return r;
}
/// f(u) from f(u.v), f'(u.v), f''(u.v): the chain rule to second order.
template <int N>
Ad2<N> chain(const Ad2<N>& u, double f0, double f1, double f2) {
  Ad2<N> r(f0);
  for (int i = 0; i < N; ++i) r.g[i] = f1 * u.g[i];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) r.h[N * i + j] = f1 * u.h[N * i + j] + f2 * u.g[i] * u.g[j];
  return r;
}
template <int N>
Ad2<N> operator/(const Ad2<N>& a, const Ad2<N>& b) {
  const double inv = 1.0 / b.v;
  return a * chain(b, inv, -inv * inv, 2.0 * inv * inv * inv);
}
template <int N>
Ad2<N> sqrt(const Ad2<N>& u) {
  const double s = std::sqrt(u.v);
  return chain(u, s, 0.5 / s, -0.25 / (s * u.v));
}

// The plain-double overloads, so that the distance formulas are one template for both.
inline double chain(double, double f0, double, double) { return f0; }

}  // namespace edgefem::contact
