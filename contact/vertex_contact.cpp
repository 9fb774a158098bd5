// SPDX-License-Identifier: BSD-3-Clause
#include "contact/vertex_contact.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>

#include "contact/barrier.hpp"

namespace edgefem::contact {

Mat3 project_psd(const Mat3& m) {
  Eigen::Matrix3d a;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a(i, j) = m[3 * i + j];
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(a);
  const Eigen::Vector3d values = eigen.eigenvalues().cwiseMax(0.0);
  const Eigen::Matrix3d p = eigen.eigenvectors() * values.asDiagonal() * eigen.eigenvectors().transpose();
  Mat3 out{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[3 * i + j] = 0.5 * (p(i, j) + p(j, i));
  return out;
}

NormalTerm normal_term(ContactMethod method, const Proximity& p, double dh, double stiffness, bool project) {
  NormalTerm t;
  const double d = p.distance;
  double s0 = 0, s1 = 0, s2 = 0;
  if (method == ContactMethod::barrier) {
    if (d >= dh) return t;
    s0 = stiffness * barrier(d, dh), s1 = stiffness * barrier_first_derivative(d, dh);
    s2 = stiffness * barrier_second_derivative(d, dh);
  } else {
    if (d >= 0.0) return t;
    s0 = stiffness * penalty(d), s1 = stiffness * penalty_first_derivative(d), s2 = stiffness;
  }
  t.energy = s0;
  t.gradient = s1 * p.normal;
  t.force = std::abs(s1);
  t.hessian = outer(p.normal, p.normal);
  for (double& v : t.hessian) v *= s2;
  const bool curved = std::any_of(p.hessian.begin(), p.hessian.end(), [](double v) { return v != 0.0; });
  if (curved) {
    add_scaled(t.hessian, s1, p.hessian);
    if (project) t.hessian = project_psd(t.hessian);
  }
  return t;
}

}  // namespace edgefem::contact
