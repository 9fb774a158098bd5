// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file finite_differences.hpp
/// Dense assembly of a formulation's stiffness and damping blocks, central-difference gradients and Jacobians,
/// and the comparison every kernel test makes (f vs dW/dx, K vs df/dx, force() vs force_and_stiffness(),
/// symmetry of K). Test-only, header-only; not used by the library.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <span>
#include <vector>

#include "materials/formulation.hpp"

namespace edgefem::testing {

/// max_i |a_i|.
/// |a - b| relative to `scale` (floored at 1e-300).
inline double rel_err(double a, double b, double scale) { return std::abs(a - b) / std::max(scale, 1e-300); }

inline double max_abs(std::span<const double> a) {
  double s = 0.0;
  for (double v : a) s = std::max(s, std::abs(v));
  return s;
}

/// max_i |a_i - b_i| / max(max_i |b_i|, floor).
inline double rel_max_diff(std::span<const double> a, std::span<const double> b, double floor = 1e-300) {
  double diff = 0.0, norm = floor;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    norm = std::max(norm, std::abs(b[i]));
  }
  return diff / norm;
}

/// Sum the 3 x 3 blocks of `pattern` into a dense row-major n x n matrix (repeated pattern entries add up).
inline std::vector<double> dense_from_blocks(std::size_t n, const std::vector<std::array<LocalIndex, 2>>& pattern,
                                             std::span<const double> blocks) {
  std::vector<double> K(n * n, 0.0);
  for (std::size_t b = 0; b < pattern.size(); ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) K[(3 * pattern[b][0] + r) * n + 3 * pattern[b][1] + c] += blocks[9 * b + 3 * r + c];
  return K;
}

/// Dense 3n x 3n stiffness (row-major) assembled from force_and_stiffness(), summing repeated pattern entries.
inline std::vector<double> dense_stiffness(const TetFormulation& form, std::span<const double> x,
                                           std::vector<double>* force = nullptr) {
  const std::size_t n = 3 * static_cast<std::size_t>(form.n_vertices());
  const auto& pattern = form.block_pattern();
  std::vector<double> f(n), blocks(9 * pattern.size());
  form.force_and_stiffness(x, f, blocks);
  if (force) *force = f;
  return dense_from_blocks(n, pattern, blocks);
}

/// Dense damping D (row-major 3n x 3n) and the viscous force f_v from viscous_force_and_damping().
inline std::vector<double> dense_damping(const TetFormulation& form, std::span<const double> x,
                                         std::span<const double> v, std::vector<double>* fv = nullptr) {
  const std::size_t n = x.size();
  const auto& pattern = form.block_pattern();
  std::vector<double> f(n), blocks(9 * pattern.size());
  form.viscous_force_and_damping(x, v, f, blocks);
  if (fv) *fv = f;
  return dense_from_blocks(n, pattern, blocks);
}

/// Central-difference gradient of the energy (step h per coordinate).
inline std::vector<double> fd_force(const TetFormulation& form, std::vector<double> x, double h) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    x[i] = xi + h;
    const double wp = form.energy(x);
    x[i] = xi - h;
    const double wm = form.energy(x);
    x[i] = xi;
    g[i] = (wp - wm) / (2 * h);
  }
  return g;
}

/// Central-difference Jacobian of the force (row-major, 3n x 3n).
inline std::vector<double> fd_stiffness(const TetFormulation& form, std::vector<double> x, double h) {
  const std::size_t n = x.size();
  std::vector<double> K(n * n), fp(n), fm(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double xj = x[j];
    x[j] = xj + h;
    form.force(x, fp);
    x[j] = xj - h;
    form.force(x, fm);
    x[j] = xj;
    for (std::size_t i = 0; i < n; ++i) K[i * n + j] = (fp[i] - fm[i]) / (2 * h);
  }
  return K;
}

/// What a finite-difference test of a formulation at x measures; the test states the tolerances.
struct FdComparison {
  std::vector<double> f, K;      ///< force_and_stiffness(): f = dW/dx, dense K = df/dx (row-major)
  std::vector<double> f_only;    ///< force() alone
  double force_error = 0.0;      ///< rel_max_diff(f, central differences of W)
  double stiffness_error = 0.0;  ///< rel_max_diff(K, central differences of f)
  double asymmetry = 0.0;        ///< max |K_ij - K_ji|
};

/// Central differences of W and f with step h against f and K of `form` at x.
inline FdComparison compare_with_finite_differences(const TetFormulation& form, const std::vector<double>& x,
                                                    double h) {
  FdComparison c;
  c.K = dense_stiffness(form, x, &c.f);
  c.force_error = rel_max_diff(c.f, fd_force(form, x, h));
  c.stiffness_error = rel_max_diff(c.K, fd_stiffness(form, x, h));
  c.f_only.resize(c.f.size());
  form.force(x, c.f_only);
  const std::size_t n = c.f.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) c.asymmetry = std::max(c.asymmetry, std::abs(c.K[i * n + j] - c.K[j * n + i]));
  return c;
}

/// The test's XML property fd_rel_err_f_K: the force and stiffness errors of c ("%.3e %.3e").
inline void record_fd_errors(const FdComparison& c) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e %.3e", c.force_error, c.stiffness_error);
  ::testing::Test::RecordProperty("fd_rel_err_f_K", buf);
}

}  // namespace edgefem::testing
