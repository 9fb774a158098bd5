// SPDX-License-Identifier: BSD-3-Clause
#include "contact/self_distance.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/barrier.hpp"
#include "contact/self_ad.hpp"

namespace edgefem::contact {
namespace {

using Ad = Ad2<12>;
template <class T>
using V3 = std::array<T, 3>;

template <class T>
V3<T> sub(const V3<T>& a, const V3<T>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
template <class T>
T dot3(const V3<T>& a, const V3<T>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class T>
V3<T> cross3(const V3<T>& a, const V3<T>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// The squared distances of the types (IPC's formulas): point-point; point to the line of an edge; point to the
// plane of a triangle; line to line.
template <class T>
T pp(const V3<T>& a, const V3<T>& b) {
  const V3<T> d = sub(a, b);
  return dot3(d, d);
}
template <class T>
T pe(const V3<T>& p, const V3<T>& e0, const V3<T>& e1) {
  const V3<T> c = cross3(sub(e0, p), sub(e1, p)), e = sub(e1, e0);
  return dot3(c, c) / dot3(e, e);
}
template <class T>
T plane(const V3<T>& p, const V3<T>& t0, const V3<T>& t1, const V3<T>& t2) {
  const V3<T> n = cross3(sub(t1, t0), sub(t2, t0));
  const T s = dot3(sub(p, t0), n);
  return s * s / dot3(n, n);
}
template <class T>
T lines(const V3<T>& a0, const V3<T>& a1, const V3<T>& b0, const V3<T>& b1) {
  const V3<T> n = cross3(sub(a1, a0), sub(b1, b0));
  const T s = dot3(sub(a0, b0), n);
  return s * s / dot3(n, n);
}

template <class T>
T typed(DistanceType type, const std::array<V3<T>, 4>& x) {
  switch (type) {
    case DistanceType::pp0: return pp(x[0], x[1]);
    case DistanceType::pp1: return pp(x[0], x[2]);
    case DistanceType::pp2: return pp(x[0], x[3]);
    case DistanceType::pe0: return pe(x[0], x[1], x[2]);
    case DistanceType::pe1: return pe(x[0], x[2], x[3]);
    case DistanceType::pe2: return pe(x[0], x[3], x[1]);
    case DistanceType::pt: return plane(x[0], x[1], x[2], x[3]);
    case DistanceType::a0_b0: return pp(x[0], x[2]);
    case DistanceType::a0_b1: return pp(x[0], x[3]);
    case DistanceType::a1_b0: return pp(x[1], x[2]);
    case DistanceType::a1_b1: return pp(x[1], x[3]);
    case DistanceType::a0_eb: return pe(x[0], x[2], x[3]);
    case DistanceType::a1_eb: return pe(x[1], x[2], x[3]);
    case DistanceType::b0_ea: return pe(x[2], x[0], x[1]);
    case DistanceType::b1_ea: return pe(x[3], x[0], x[1]);
    case DistanceType::ee: return lines(x[0], x[1], x[2], x[3]);
  }
  return T(0.0);
}

/// Point p against segment e0-e1: 0 (nearest e0), 1 (e1) or 2 (inside), and the squared distance.
int point_segment(const Vec3& p, const Vec3& e0, const Vec3& e1, double& squared) {
  const Vec3 e = e1 - e0;
  const double ee = dot(e, e), s = ee > 0.0 ? dot(p - e0, e) / ee : 0.0;
  if (s <= 0.0) return squared = dot(p - e0, p - e0), 0;
  if (s >= 1.0) return squared = dot(p - e1, p - e1), 1;
  squared = pe<double>(p, e0, e1);
  return 2;
}

template <class T>
std::array<V3<T>, 4> as(const std::array<Vec3, 4>& x);
template <>
std::array<V3<double>, 4> as(const std::array<Vec3, 4>& x) {
  return x;
}
template <>
std::array<V3<Ad>, 4> as(const std::array<Vec3, 4>& x) {
  std::array<V3<Ad>, 4> r;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) r[i][k] = Ad::variable(3 * i + k, x[i][k]);
  return r;
}

PairTerms pair_terms(DistanceType type, const std::array<Vec3, 4>& x, double dh, double kappa, double ex,
                     bool hessian, bool project) {
  PairTerms out;
  const double squared = typed(type, as<double>(x));
  out.distance = std::sqrt(std::max(squared, 0.0));
  if (!(out.distance < dh)) return out;
  const std::array<V3<Ad>, 4> v = as<Ad>(x);
  const Ad d = sqrt(typed(type, v));
  Ad e = chain(d, barrier(d.v, dh), barrier_first_derivative(d.v, dh), barrier_second_derivative(d.v, dh));
  if (ex > 0.0) {  // edge-edge: the mollifier of |ea x eb|^2
    const V3<Ad> n = cross3(sub(v[1], v[0]), sub(v[3], v[2]));
    const Ad c = dot3(n, n);
    if (c.v < ex) e = chain(c, (2.0 - c.v / ex) * c.v / ex, 2.0 / ex - 2.0 * c.v / (ex * ex), -2.0 / (ex * ex)) * e;
  }
  out.energy = kappa * e.v;
  for (int i = 0; i < 12; ++i) out.gradient[i] = kappa * e.g[i];
  if (hessian) {
    for (int i = 0; i < 144; ++i) out.hessian[i] = kappa * e.h[i];
    if (project) project_psd(out.hessian);
  }
  return out;
}

}  // namespace

DistanceType point_triangle_type(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  const Vec3 e0 = t1 - t0, e1 = t2 - t0, w = p - t0;
  const double a = dot(e0, e0), b = dot(e0, e1), c = dot(e1, e1), d = dot(e0, w), e = dot(e1, w);
  const double det = a * c - b * b;
  if (det > 0.0) {
    const double s = (c * d - b * e) / det, t = (a * e - b * d) / det;
    if (s >= 0.0 && t >= 0.0 && s + t <= 1.0) return DistanceType::pt;
  }
  const std::array<Vec3, 3> tv{t0, t1, t2};
  double best = std::numeric_limits<double>::infinity();
  DistanceType type = DistanceType::pp0;
  for (int k = 0; k < 3; ++k) {
    double squared = 0.0;
    const int where = point_segment(p, tv[k], tv[(k + 1) % 3], squared);
    if (!(squared < best)) continue;
    best = squared;
    type = where == 2 ? static_cast<DistanceType>(static_cast<int>(DistanceType::pe0) + k)
                      : static_cast<DistanceType>((k + where) % 3);
  }
  return type;
}

DistanceType edge_edge_type(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
  const Vec3 ea = a1 - a0, eb = b1 - b0, w = a0 - b0;
  const double a = dot(ea, ea), b = dot(ea, eb), c = dot(eb, eb), d = dot(ea, w), e = dot(eb, w);
  const double det = a * c - b * b;
  // Parallel edges (to round-off: a c - b^2 of parallel edges is the cancellation error of ~1e-16 a c) have no
  // interior closest points: sin^2 of the angle below 1e-10 counts as parallel (the lines' formula would divide
  // round-off by round-off); the endpoint types are then within ~1e-5 of the edges' length of the distance, and the
  // mollifier has taken the energy to ~0 there (it acts below sin^2 = 1e-3).
  if (det > 1e-10 * a * c) {
    const double s = (b * e - c * d) / det, t = (a * e - b * d) / det;
    if (s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0) return DistanceType::ee;
  }
  // The nearest of the endpoints against the other edge: {point-point with the edge's start, with its end,
  // point-edge} for a0, a1, b0, b1.
  using D = DistanceType;
  const std::array<std::array<D, 3>, 4> types{{{D::a0_b0, D::a0_b1, D::a0_eb},
                                               {D::a1_b0, D::a1_b1, D::a1_eb},
                                               {D::a0_b0, D::a1_b0, D::b0_ea},
                                               {D::a0_b1, D::a1_b1, D::b1_ea}}};
  const std::array<std::array<const Vec3*, 3>, 4> args{{{&a0, &b0, &b1}, {&a1, &b0, &b1}, {&b0, &a0, &a1},
                                                        {&b1, &a0, &a1}}};
  double best = std::numeric_limits<double>::infinity();
  D type = D::a0_b0;
  for (int k = 0; k < 4; ++k) {
    double squared = 0.0;
    const int where = point_segment(*args[k][0], *args[k][1], *args[k][2], squared);
    if (squared < best) best = squared, type = types[k][where];
  }
  return type;
}

double squared_distance(DistanceType type, const std::array<Vec3, 4>& x) { return typed(type, as<double>(x)); }

double point_triangle_squared_distance(const std::array<Vec3, 4>& x) {
  return squared_distance(point_triangle_type(x[0], x[1], x[2], x[3]), x);
}

double edge_edge_squared_distance(const std::array<Vec3, 4>& x) {
  return squared_distance(edge_edge_type(x[0], x[1], x[2], x[3]), x);
}

PairTerms point_triangle_terms(const std::array<Vec3, 4>& x, double dh, double kappa, bool hessian, bool project) {
  return pair_terms(point_triangle_type(x[0], x[1], x[2], x[3]), x, dh, kappa, 0.0, hessian, project);
}

PairTerms edge_edge_terms(const std::array<Vec3, 4>& x, double dh, double kappa, double ex, bool hessian,
                          bool project) {
  return pair_terms(edge_edge_type(x[0], x[1], x[2], x[3]), x, dh, kappa, ex, hessian, project);
}

double mollifier_threshold(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
  return 1e-3 * dot(a1 - a0, a1 - a0) * dot(b1 - b0, b1 - b0);
}

void project_psd(std::array<double, 144>& m) {
  Eigen::Map<Eigen::Matrix<double, 12, 12, Eigen::RowMajor>> a(m.data());
  const Eigen::Matrix<double, 12, 12> sym = 0.5 * (a + a.transpose());
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 12, 12>> eig(sym);
  Eigen::Matrix<double, 12, 1> lambda = eig.eigenvalues();
  if (lambda.minCoeff() >= 0.0) {
    a = sym;
    return;
  }
  lambda = lambda.cwiseMax(0.0);
  a = eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose();
}

}  // namespace edgefem::contact
