// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_distance.hpp
/// The narrow phase of self-contact (IPC, Li et al. 2020, section 4 and appendix): the distance of a point-triangle
/// pair and of an edge-edge pair, each of the type its closest points have (point-point, point-edge, point-plane;
/// edge-edge lines), and a pair's barrier energy with its exact gradient and Hessian in the 12 coordinates of its
/// four vertices (self_ad.hpp), the Hessian projected onto the positive semi-definite cone (its negative
/// eigenvalues set to 0) for the Newton matrix.
///
/// The energy of a pair at distance d is kappa b(d) (barrier.hpp: the obstacles' barrier, in the distance itself);
/// an edge-edge pair's is multiplied by IPC's mollifier m(x) of x = |ea x eb|^2 (ea, eb the edges), which takes the
/// energy smoothly to 0 as the edges become parallel, where the edge-edge distance type switches to point-edge
/// types without continuity of the gradient:
///   m(x) = (2 - x / ex) x / ex for x < ex, 1 from ex on;   ex = 1e-3 |ea_rest|^2 |eb_rest|^2.
/// No MPI, no PETSc.
#include <array>

#include "contact/vec3.hpp"

namespace edgefem::contact {

/// The distance type of a pair: which two features are closest. Point-triangle: pp0..pp2 (point and vertex k),
/// pe0..pe2 (point and edge k: vertices k, k+1 mod 3), pt (point and the face's plane). Edge-edge (edges a0-a1 and
/// b0-b1): the point-point and point-edge types of the endpoints, or ee (the lines).
enum class DistanceType : int {
  pp0, pp1, pp2, pe0, pe1, pe2, pt,  // point-triangle
  a0_b0, a0_b1, a1_b0, a1_b1,         // edge-edge, endpoints
  a0_eb, a1_eb, b0_ea, b1_ea,         // edge-edge, an endpoint and the other edge
  ee                                  // edge-edge, the lines
};

/// The type of point p against triangle (t0, t1, t2): pt when p projects inside the triangle, else the nearest of
/// its three edges' point-edge or point-point types.
DistanceType point_triangle_type(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2);
/// The type of edges a0-a1 and b0-b1: ee when the lines' closest points lie inside both edges (and the edges are
/// not parallel: sin^2 of their angle above 1e-10), else the nearest of the four endpoint-edge types.
DistanceType edge_edge_type(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1);

/// The squared distance of the pair in the given type (the four vertices: the point and the triangle, or a0, a1,
/// b0, b1).
double squared_distance(DistanceType type, const std::array<Vec3, 4>& x);
/// The squared distance of the pair: of the type its vertices have.
double point_triangle_squared_distance(const std::array<Vec3, 4>& x);
double edge_edge_squared_distance(const std::array<Vec3, 4>& x);

/// A pair's terms: energy, gradient (12) and Hessian (12 x 12, row-major).
struct PairTerms {
  double energy = 0.0;
  double distance = 0.0;
  std::array<double, 12> gradient{};
  std::array<double, 144> hessian{};
};

/// kappa b(d) of a point-triangle pair (x: p, t0, t1, t2) with activation distance dh, its gradient and (with
/// `hessian`) its Hessian, PSD-projected when `project`. Energy 0 (and no derivatives) from dh on.
PairTerms point_triangle_terms(const std::array<Vec3, 4>& x, double dh, double kappa, bool hessian, bool project);
/// kappa m(x) b(d) of an edge-edge pair (x: a0, a1, b0, b1); `ex` the mollifier's threshold (mollifier_threshold).
PairTerms edge_edge_terms(const std::array<Vec3, 4>& x, double dh, double kappa, double ex, bool hessian,
                          bool project);
/// 1e-3 |a1 - a0|^2 |b1 - b0|^2 at the rest positions.
double mollifier_threshold(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1);

/// The 12 x 12 symmetric matrix m replaced by its projection onto the PSD cone (negative eigenvalues to 0).
void project_psd(std::array<double, 144>& m);

}  // namespace edgefem::contact
