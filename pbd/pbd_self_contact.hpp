// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_self_contact.hpp
/// Self-collision of the position-based integrator (issue 53; `contact: {self: true}` with integrator
/// position-based): point-triangle and edge-edge constraints between the body's surface triangles (a membrane's
/// triangles, both sides; the boundary faces of tets) that share no vertex, projected as the sweep's last colour
/// but the obstacles', and a continuous check at the end of every step that no pair met on the way. The surface, its
/// pairs' ownership and the contact ghost layer are the Newton solvers' (solver/self_contact.hpp,
/// solver/self_exchange.hpp); `contact.distance` is the thickness h the constraints keep between parts.
///
///  - Generation, once per step (begin_step, after the prediction x*): the pairs whose primitives' boxes over
///    x_n -> x*, grown by h on every side, overlap (so primitives up to 2 h apart along the predicted move; the
///    sweeps' further moves are the continuous check's). The same box test as the Newton solvers (BoxTree), from
///    trees built once (at the rest positions) and refitted every step, their overlapping boxes found in one
///    traversal of two trees at once (contact::SweptPairs).
///    Of these, the constraints are those whose distance at x_n is at most 3 h + l, l the sum of each primitive's
///    largest predicted vertex move relative to the pair's mean move (additive CCD's bound: the distance is
///    1-Lipschitz in those), so the others stay beyond h while the sweeps add less than h to every move.
///  - Projection, in every sweep: each pair's constraint C = s d - h >= 0 (d the distance of its closest points,
///    s = -1 when they are interior — inside the triangle, inside both edges — and their separation points against
///    the one at x_n: the pair crossed), a zero-compliance inequality
///    along n (the separation's direction, oriented as at x_n) with the closest points' weights:
///      point-triangle: p - (b0 t0 + b1 t1 + b2 t2) (b the closest point's barycentric coordinates),
///      edge-edge:      (1 - s) a0 + s a1 - ((1 - t) b0 + t b1),
///    dlambda = -C / sum_i c_i^2 (w_i . n^2), dx_i = c_i dlambda w_i n (c_i the weights with their signs, w_i the
///    vertex's inverse masses per dof), then Coulomb friction at position level as for the obstacles (Macklin et
///    al. 2014 §6.1): the pair's relative tangential move over the step, r_t, cut by min(1, mu |C| / |r_t|),
///    distributed with the same weights. The pairs' corrections from one set of positions are averaged per vertex,
///    each weighted by its length (Jacobi with constraint averaging, Macklin et al. 2014 §4.2; the length weights
///    keep the average continuous in the positions, where a count would jump as a pair becomes active), so the
///    sweep's result does not depend on the pairs' order or the number of ranks (to round-off of the sums).
///  - The guarantee, at every step's end (end_step): every pair whose boxes over x_n -> x_{n+1} overlap (from the
///    step's trees: the step's pairs that pass the new box test, and queries of the trees refitted for the
///    primitives that left their boxes over x_n -> x* grown by h; contact::SweptPairs) gets an
///    additive continuous check (contact/self_ccd.hpp: the pair's distance stays > 0 and ends >= a tenth of its
///    start); the four vertices of a pair that fails are put back at x_n (a zero-velocity impact zone: Bridson et
///    al. 2002's fail-safe, with the simplest rigid motion), and the pairs touching them checked again, until none
///    fails. x_n is free of intersections (the start is checked, an InputError otherwise), so every step ends free
///    of intersections: no triangle pair that shares no vertex ever intersects.
/// Distribution: every rank projects the pairs it owns (a point-triangle pair its point's owner, an edge-edge pair
/// its smaller edge's); the layer serves moves less a common translation (SelfExchange::translate); its forward
/// exchange brings the ghosts' positions, the reverse one their corrections and counts (and the fail-safe's flags)
/// to the owners. OpenMP over the pairs.
#include <mpi.h>
#include <petscvec.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "contact/self_potential.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"
#include "solver/self_contact.hpp"

namespace edgefem {

/// A step's self-collision figures, the same on every rank.
struct PbdSelfStepReport {
  long long pairs = 0;      ///< the step's generated pairs (all ranks)
  long long projected = 0;  ///< pairs with a correction in the last sweep
  long long frozen = 0;     ///< vertices put back at x_n by the fail-safe
  int rounds = 0;           ///< the fail-safe's rounds of checks
};

class PbdSelfContact {
 public:
  /// Collective. `inverse_mass`: 3 per local dof (PbdConstraints::inverse_mass()). Throws InputError (all ranks)
  /// when the start intersects or touches itself.
  PbdSelfContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Assembler& assembler,
                 std::span<const double> inverse_mass);

  /// The step x_n -> x_pred: the ghost layer, the pairs. Collective.
  void begin_step(Vec x_n, Vec x_pred);
  /// The contact colour on the local positions x (owned ones changed; the caller updates the mesh's ghosts).
  /// Collective (the layer's neighbours).
  void project(double* x);
  /// The fail-safe on x (owned entries changed; the caller updates the ghosts). Collective.
  void end_step(Vec x_n, Vec x);
  [[nodiscard]] const PbdSelfStepReport& last() const { return last_; }
  [[nodiscard]] long long frozen_total() const { return frozen_total_; }
  [[nodiscard]] SelfContactTerms& terms() { return terms_; }
  [[nodiscard]] double thickness() const { return h_; }

 private:
  /// The owned surface vertices' entries of `out` from the local array x (3 per local vertex).
  void load_local(const double* x, std::vector<double>& out) const;
  /// Pair k's correction (12) from the surface positions y_; false when inactive.
  bool correct(std::size_t k, double* dx) const;
  /// One round of the fail-safe's checks of the pairs flagged in `check`; flags the vertices to freeze.
  long long check_round(const std::vector<contact::SelfPair>& pairs, const std::vector<char>& check,
                        std::vector<double>& freeze) const;
  /// The fail-safe's pairs: dx_ = x_{n+1} - x_n (ghosts filled), this rank's pairs whose boxes over the move
  /// overlap. Collective.
  std::vector<contact::SelfPair> moved_pairs();
  /// Stops (dx_ = 0) the vertices of failing pairs, round after round, until none fails; the stopped vertices
  /// (per surface vertex), how many (all ranks) and the rounds. Collective.
  std::vector<char> stop_until_safe(const std::vector<contact::SelfPair>& pairs, long long& newly, int& rounds);

  MPI_Comm comm_;
  SelfContactTerms terms_;
  double h_ = 0.0, mu_ = 0.0;
  std::vector<double> w_;        ///< 3 per surface vertex: inverse masses (owned; ghosts by forward)
  std::vector<double> local_w_;  ///< 3 per local dof
  std::vector<double> x_n_, y_, dx_, predicted_, sums_;  ///< per surface vertex: x_n, now, moves, x*; 4 per: sums
  /// This rank's pairs whose boxes over x_n -> x* grown by h overlap, with their trees (built once, refitted every
  /// step; the fail-safe's pairs come from them too)
  std::unique_ptr<contact::SweptPairs> swept_;
  std::vector<contact::SelfPair> pairs_;      ///< those of them that are constraints this step
  std::vector<std::array<int, 4>> vertices_;  ///< their vertices
  std::vector<contact::Vec3> side_;           ///< their separation's direction at x_n
  std::vector<double> corrections_;           ///< 12 per pair (last sweep)
  std::vector<char> active_;                  ///< per pair (last sweep)
  PbdSelfStepReport last_;
  long long frozen_total_ = 0;
  contact::SelfTimes times_;
  double exchange_ = 0.0, assembly_ = 0.0, total_ = 0.0;
};

}  // namespace edgefem
