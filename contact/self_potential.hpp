// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_potential.hpp
/// Self-contact of a triangle surface (the boundary faces of a tet mesh, or the triangles of a membrane): the IPC
/// barrier of every point-triangle and edge-edge pair that shares no vertex (self_distance.hpp), found through a
/// broad phase of boxes (self_broad_phase.hpp), its energy, gradient and PSD-projected Hessian; the step limit of a
/// line search from continuous collision checks of every pair whose boxes over the step overlap (self_ccd.hpp).
///
/// Positions are 3 doubles per surface vertex. For a distributed body every rank holds the whole surface's
/// positions and evaluates the pairs it owns (the caller's `point_owned` and `edge_owned` flags: a point-triangle
/// pair belongs to its point, an edge-edge pair {i, j} to the edge min(i, j)), so that over the ranks each pair is
/// counted once; the caller sums the gradients and reduces the limits (solver/self_contact.hpp). No MPI, no PETSc.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "contact/vec3.hpp"

namespace edgefem::contact {

struct SelfSurface {
  std::vector<std::array<int, 3>> triangles;  ///< 3 surface vertices each
  std::vector<std::array<int, 2>> edges;      ///< the triangles' edges, once each (smaller vertex first), sorted
  std::vector<double> rest;                   ///< 3 per surface vertex: reference positions (the mollifier)
  std::vector<char> point_owned;              ///< per surface vertex
  std::vector<char> edge_owned;               ///< per edge
  [[nodiscard]] int n_vertices() const { return static_cast<int>(rest.size() / 3); }
};

/// The surface of `triangles` over `rest` (3 per vertex), every pair owned (serial).
SelfSurface make_self_surface(std::vector<std::array<int, 3>> triangles, std::vector<double> rest);

/// One pair: a point-triangle pair (a: the point, b: the triangle) or an edge-edge pair (a < b: edges).
struct SelfPair {
  bool edge_edge = false;
  int a = 0, b = 0;
};

/// A pair's Hessian, for callers that assemble the full matrix (and for tests).
struct SelfPairHessian {
  std::array<int, 4> vertices{};
  std::array<double, 144> values{};
};

/// What the pairs look like at a state (this rank's pairs).
struct SelfMeasure {
  long long active = 0;  ///< pairs closer than the activation distance
  double min_distance = std::numeric_limits<double>::infinity();  ///< over the active pairs (infinity: none)
};

class SelfPotential {
 public:
  SelfPotential(SelfSurface surface, double dh, double kappa);
  void set_stiffness(double kappa) { kappa_ = kappa; }
  [[nodiscard]] double stiffness() const { return kappa_; }
  [[nodiscard]] double activation_distance() const { return dh_; }
  [[nodiscard]] const SelfSurface& surface() const { return surface_; }

  /// This rank's pairs within the activation distance at x (broad phase: boxes inflated by dh / 2).
  [[nodiscard]] std::vector<SelfPair> near_pairs(std::span<const double> x) const;
  /// This rank's pairs whose boxes over the move x -> x + dx overlap.
  [[nodiscard]] std::vector<SelfPair> swept_pairs(std::span<const double> x, std::span<const double> dx) const;

  /// The energy of this rank's pairs at x; adds the gradient to `gradient` (3 per surface vertex; empty: skipped),
  /// the PSD-projected Hessian's 3 x 3 diagonal blocks to `diagonal` (9 per surface vertex, row-major; null:
  /// skipped) and, with `full`, every active pair's projected 12 x 12 Hessian.
  double evaluate(std::span<const double> x, std::span<double> gradient, std::vector<double>* diagonal,
                  std::vector<SelfPairHessian>* full = nullptr) const;
  /// The largest t in [0, 1] such that no pair of this rank comes into contact along x + t' dx, t' <= t, keeping
  /// a tenth of each pair's gap (additive CCD, self_ccd.hpp).
  [[nodiscard]] double step_limit(std::span<const double> x, std::span<const double> dx) const;
  [[nodiscard]] SelfMeasure measure(std::span<const double> x) const;

 private:
  std::array<int, 4> pair_vertices(const SelfPair& p) const;
  std::vector<SelfPair> pairs_of_boxes(const std::vector<double>& lo_hi_points, double inflate) const;

  SelfSurface surface_;
  double dh_ = 1e-3, kappa_ = 1.0;
};

}  // namespace edgefem::contact
