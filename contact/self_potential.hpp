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
///
/// The broad phase keeps a Verlet list (Candidates): the pairs within dh / 2 + a margin (dh) of each other at the
/// positions where it was built; a query whose positions stay within the margin answers from it by the same box
/// test (no tree), so a Newton solve builds trees once per step or so instead of at every evaluation.
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "contact/self_friction.hpp"
#include "contact/vec3.hpp"

namespace edgefem::contact {

struct SelfSurface {
  std::vector<std::array<int, 3>> triangles;  ///< 3 surface vertices each
  std::vector<std::array<int, 2>> edges;      ///< the triangles' edges, once each (smaller vertex first), sorted
  std::vector<double> rest;                   ///< 3 per surface vertex: reference positions (the mollifier)
  std::vector<char> point_owned;              ///< per surface vertex
  std::vector<char> edge_owned;               ///< per edge
  /// Per triangle / edge: all its vertices' positions are at hand (a distributed body's ghost layer; serial: all).
  /// An absent primitive is in no pair.
  std::vector<char> triangle_present, edge_present;
  [[nodiscard]] int n_vertices() const { return static_cast<int>(rest.size() / 3); }
};

/// The surface of `triangles` over `rest` (3 per vertex), every pair owned (serial).
SelfSurface make_self_surface(std::vector<std::array<int, 3>> triangles, std::vector<double> rest);

/// One pair: a point-triangle pair (a: the point, b: the triangle) or an edge-edge pair (a < b: edges).
struct SelfPair {
  bool edge_edge = false;
  int a = 0, b = 0;
};

/// The four vertices of a pair (point-triangle: the point, the triangle's; edge-edge: a0, a1, b0, b1).
std::array<int, 4> pair_vertices(const SelfSurface& s, const SelfPair& p);

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

/// Where a rank's self-contact time goes (wall seconds, summed over calls) and how many pairs it handled.
struct SelfTimes {
  double broad = 0.0;   ///< finding candidate pairs: trees, the Verlet list and its filter
  double narrow = 0.0;  ///< distances, barrier energies, gradients and projected Hessians of the candidates
  double ccd = 0.0;     ///< the continuous checks of the line search's candidates
  long long narrow_pairs = 0, ccd_pairs = 0;  ///< candidates evaluated / checked
  long long evaluations = 0, limits = 0;      ///< evaluate() and step_limit() calls
};

/// The pairs (owned as flagged) whose primitives' boxes over x0 -> x1, grown by `inflate`, overlap: two new
/// trees and a query per owned point and edge, no candidate list: the tests' reference for SweptPairs and
/// SelfPotential, which answer with the same pairs in the same order.
std::vector<SelfPair> tree_pairs(const SelfSurface& s, std::span<const double> x0, std::span<const double> x1,
                                 double inflate);

/// The broad phase of the position-based integrator (pbd/pbd_self_contact.hpp) and of SelfPotential's queries, kept
/// across steps: two trees (triangles,
/// edges) whose hierarchy is built once, by median splits of the primitives' boxes at the surface's rest positions
/// (all primitives, present or not), and refitted (BoxTree::refit, O(n)) to every step's boxes; a surface's
/// primitives keep their neighbours (a patch of it stays a patch), so the refitted hierarchy stays tight. Queries of
/// a refitted tree are exact: start(x0, x1, inflate) gives the pairs of tree_pairs(s, x0, x1, inflate), the same
/// pairs in the same order, without building trees, and without a query per owned point and edge: a third tree over
/// the owned points' boxes, and one traversal of the points' and the triangles' trees together and one of the
/// edges' tree with itself (BoxTree::each_overlap: only node pairs whose boxes overlap), the pairs then sorted.
/// Then moved(x0, x2), a second question about a move from the
/// same start (the fail-safe), gives the pairs of tree_pairs(s, x0, x2, 0) (the same set, sorted as tree_pairs
/// sorts): the step's pairs that pass the new box test, and for the primitives whose new box left their step's box
/// (those "escaped"), queries of the trees refitted to hold the new boxes, plus every owned point against a small
/// tree of the escaped triangles. `s` must outlive it; its present flags may change between steps (an absent
/// primitive gets an empty box), not between start() and moved(); its owned flags not at all.
class SweptPairs {
 public:
  explicit SweptPairs(const SelfSurface& s);
  /// SweptPairs(s) and start(x0, x1, inflate).
  SweptPairs(const SelfSurface& s, std::span<const double> x0, std::span<const double> x1, double inflate);
  ~SweptPairs();
  SweptPairs(const SweptPairs&) = delete;
  SweptPairs& operator=(const SweptPairs&) = delete;
  /// A step: the pairs whose primitives' boxes over x0 -> x1, grown by `inflate`, overlap (pairs()).
  void start(std::span<const double> x0, std::span<const double> x1, double inflate);
  [[nodiscard]] const std::vector<SelfPair>& pairs() const { return pairs_; }
  /// The pairs whose boxes over x0 -> x2, grown by `inflate`, overlap; x0 the last start()'s.
  std::vector<SelfPair> moved(std::span<const double> x0, std::span<const double> x2, double inflate = 0.0);
  /// The last moved()'s primitives (points, edges, triangles) whose new box left their step's one.
  [[nodiscard]] long long escaped() const { return escaped_; }

 private:
  struct Trees;
  const SelfSurface& s_;
  std::unique_ptr<Trees> trees_;
  std::vector<SelfPair> pairs_;
  std::vector<std::vector<std::uint64_t>> found_;  ///< start()'s pair keys, a list per thread (kept: no regrowing)
  std::vector<std::uint64_t> scratch_;             ///< the keys' sort buffer
  long long escaped_ = 0;
};

/// The pairs of `pairs` whose primitives' boxes over x0 -> x1 (not grown) overlap, in their order.
std::vector<SelfPair> swept_overlapping(const SelfSurface& s, const std::vector<SelfPair>& pairs,
                                        std::span<const double> x0, std::span<const double> x1);

/// How many of `pairs` are closer than dh at x, and the closest of those: SelfPotential::measure's answer when
/// `pairs` hold every one of the rank's pairs within dh.
SelfMeasure measure_pairs(const SelfSurface& s, const std::vector<SelfPair>& pairs, std::span<const double> x,
                          double dh);

class SelfPotential {
 public:
  SelfPotential(SelfSurface surface, double dh, double kappa);
  ~SelfPotential();
  SelfPotential(const SelfPotential&) = delete;  // (the broad phase's trees refer to surface_)
  SelfPotential& operator=(const SelfPotential&) = delete;
  void set_stiffness(double kappa) { kappa_ = kappa; }
  [[nodiscard]] double stiffness() const { return kappa_; }
  [[nodiscard]] double activation_distance() const { return dh_; }
  [[nodiscard]] const SelfSurface& surface() const { return surface_; }
  /// The primitives present are those whose vertices are all `known` (per surface vertex); the candidate list is
  /// dropped when that changes. The owned points and edges must be present.
  void set_known(const std::vector<char>& known);

  /// This rank's pairs within the activation distance at x (broad phase: boxes inflated by dh / 2).
  [[nodiscard]] std::vector<SelfPair> near_pairs(std::span<const double> x) const;
  /// This rank's pairs whose boxes over the move x -> x + dx overlap.
  [[nodiscard]] std::vector<SelfPair> swept_pairs(std::span<const double> x, std::span<const double> dx) const;
  /// How many times the candidate list (below) was built, and queries answered from it.
  [[nodiscard]] long long candidate_builds() const { return candidates_.builds; }
  [[nodiscard]] long long candidate_hits() const { return candidates_.hits; }

  /// The energy of this rank's pairs at x; adds the gradient to `gradient` (3 per surface vertex; empty: skipped),
  /// the PSD-projected Hessian's 3 x 3 diagonal blocks to `diagonal` (9 per surface vertex, row-major; null:
  /// skipped) and, with `full`, every active pair's projected 12 x 12 Hessian. With `with_friction` the lagged
  /// friction's terms too (lag_friction); without, the energy is the barrier's alone (the energy record's).
  double evaluate(std::span<const double> x, std::span<double> gradient, std::vector<double>* diagonal,
                  std::vector<SelfPairHessian>* full = nullptr, bool with_friction = true) const;
  /// The largest t in [0, 1] such that no pair of this rank comes into contact along x + t' dx, t' <= t, keeping
  /// a tenth of each pair's gap (additive CCD, self_ccd.hpp).
  [[nodiscard]] double step_limit(std::span<const double> x, std::span<const double> dx) const;
  /// The pairs within the activation distance at x: how many, and the closest. `listed`: the pairs from the candidate
  /// list (near_pairs), as the Newton solvers' queries at the same positions that follow; else from the trees
  /// without the list's margin (a query whose positions will not come back: fewer boxes overlap; the same answer).
  [[nodiscard]] SelfMeasure measure(std::span<const double> x, bool listed = true) const;

  /// Freezes friction (self_friction.hpp) for this rank's pairs within the activation distance at x0 (the step's
  /// start), coefficient mu, slip eps; evaluate() then adds it. mu = 0 clears it.
  void lag_friction(std::span<const double> x0, double mu, double eps);
  [[nodiscard]] std::size_t n_friction_pairs() const { return friction_.size(); }
  /// The vertices of the lagged friction pairs (4 each).
  [[nodiscard]] std::vector<int> friction_vertices() const;
  [[nodiscard]] const SelfTimes& times() const { return times_; }
  /// Frees the broad phase's trees and candidate list (made again at the next query): for a caller that asks rarely.
  void release_broad_phase() {
    swept_.reset();
    candidates_ = {};
  }

 private:
  std::array<int, 4> pair_vertices(const SelfPair& p) const { return contact::pair_vertices(surface_, p); }
  /// The pairs whose boxes over x0 -> x1 grown by `inflate` overlap: those of the candidate list that pass the same
  /// box test, when every vertex at x0 and x1 lies within its reach of the list's centre (rebuilt there from x0 if
  /// not, for a query without a move); else the refitted trees' (boxed_pairs). The same pairs, in the same order, as
  /// tree_pairs'.
  std::vector<SelfPair> overlapping(std::span<const double> x0, std::span<const double> x1, double inflate) const;
  /// tree_pairs(surface_, x0, x1, inflate), from trees whose hierarchy is built once (SweptPairs: refitted, one
  /// traversal) instead of two new trees and a query per owned point and edge.
  std::vector<SelfPair> boxed_pairs(std::span<const double> x0, std::span<const double> x1, double inflate) const;

  /// A Verlet list: the pairs whose boxes at `centre`, grown by dh / 2 + the margin, overlap. A box at positions
  /// each within m of the centre, grown by g, lies in the centre's box grown by m + g: so every pair whose boxes
  /// overlap there is in the list while m + g <= dh / 2 + margin (with a 1 % guard against rounding).
  struct Candidates {
    std::vector<double> centre;
    std::vector<SelfPair> pairs;
    long long builds = 0, hits = 0;
  };
  SelfSurface surface_;
  double dh_ = 1e-3, kappa_ = 1.0;
  mutable Candidates candidates_;  ///< (const queries are thread-safe only if not called concurrently)
  mutable std::unique_ptr<SweptPairs> swept_;  ///< boxed_pairs' trees (made at the first use)
  std::vector<SelfFrictionLag> friction_;  ///< lagged at the step's start
  double slip_ = 1.0;                       ///< friction's eps
  mutable SelfTimes times_;
};

}  // namespace edgefem::contact
