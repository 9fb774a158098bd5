// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file vertex_contact.hpp
/// The normal contact term of one vertex against one obstacle, from the obstacle's Proximity (distance d, normal
/// n = grad d, Hessian H = grad grad d): the barrier kappa b(d) or the penalty k p(d) (barrier.hpp), its gradient
/// and its Hessian projected to positive semidefinite for Newton.
///
/// E = s(d) (s = kappa b or k p): grad E = s'(d) n, grad grad E = s''(d) n n^T + s'(d) H. Since H n = 0 (|grad d| = 1)
/// and H is symmetric, n is an eigenvector (eigenvalue s'' >= 0) and the others lie in the tangent plane with
/// eigenvalues s'(d) k_i, k_i the principal curvatures of the distance's level set (H's eigenvalues there). With the
/// barrier s' < 0, so convex features (k_i > 0: every analytic shape from outside, every single triangle feature)
/// give negative eigenvalues, which the projection drops: the projected block is then s'' n n^T, of rank 1; a
/// concave neighbourhood (k_i < 0) keeps its positive s' k_i: rank 2 or 3. project_psd() does this for any 3 x 3.
#include "contact/contact_method.hpp"
#include "contact/obstacle.hpp"

namespace edgefem::contact {

struct NormalTerm {
  double energy = 0.0;
  Vec3 gradient{};  ///< dE/dx
  Mat3 hessian{};   ///< projected (or exact: `project` false)
  double force = 0.0;  ///< |s'(d)|: the normal force's magnitude (friction's lambda)
};

/// The term of a vertex whose Proximity is `p` (its distance within the activation distance `dh` for the barrier,
/// or below 0 for the penalty; otherwise the term is zero). `stiffness`: kappa or k.
NormalTerm normal_term(ContactMethod method, const Proximity& p, double dh, double stiffness, bool project = true);

/// The nearest symmetric positive semidefinite matrix of a symmetric 3 x 3 (negative eigenvalues set to 0).
Mat3 project_psd(const Mat3& m);

}  // namespace edgefem::contact
