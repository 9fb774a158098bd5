// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file vec3.hpp
/// The 3-vectors and 3x3 matrices of the contact geometry: plain arrays (row-major matrices), so that callers need
/// no linear-algebra library. Header only, no MPI, no PETSc.
#include <array>
#include <cmath>

namespace edgefem::contact {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<double, 9>;  ///< row-major

inline Vec3 operator+(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vec3 operator-(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3 operator*(double s, const Vec3& a) { return {s * a[0], s * a[1], s * a[2]}; }
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
inline Vec3 load3(const double* p) { return {p[0], p[1], p[2]}; }

/// a a^T.
inline Mat3 outer(const Vec3& a, const Vec3& b) {
  Mat3 m{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[3 * i + j] = a[i] * b[j];
  return m;
}
inline Mat3 identity3() { return {1, 0, 0, 0, 1, 0, 0, 0, 1}; }
/// a := a + s b (matrices).
inline void add_scaled(Mat3& a, double s, const Mat3& b) {
  for (int k = 0; k < 9; ++k) a[k] += s * b[k];
}
/// M v.
inline Vec3 multiply(const Mat3& m, const Vec3& v) {
  return {m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
          m[6] * v[0] + m[7] * v[1] + m[8] * v[2]};
}

/// A unit vector orthogonal to the unit vector n (the same one for the same n).
inline Vec3 any_orthogonal(const Vec3& n) {
  const Vec3 axis = std::abs(n[0]) < 0.6 ? Vec3{1, 0, 0} : (std::abs(n[1]) < 0.6 ? Vec3{0, 1, 0} : Vec3{0, 0, 1});
  const Vec3 t = cross(n, axis);
  return (1.0 / norm(t)) * t;
}

}  // namespace edgefem::contact
