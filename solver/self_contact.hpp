// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_contact.hpp
/// Self-contact of a Newton solver's body (issue 53; `contact: {self: true}`): the IPC barrier between the body's
/// own surface triangles (the boundary faces of tets, or a membrane's triangles) and edges, pairs that share a
/// vertex excluded (contact/self_potential.hpp), added to the incremental potential; a line search that never lets
/// an iterate intersect itself (additive CCD of every pair whose boxes over the step overlap, the limit reduced over
/// all ranks); and a first iterate of every step reached from the step's start without a contact.
///
/// Distribution: the contact ghost layer (solver/self_exchange.hpp). Every rank holds the surface's topology (gathered
/// once) and, per evaluation, the positions of its owned surface vertices and of the ghosts near its part of the
/// surface, exchanged point to point with the ranks whose (inflated) surface boxes overlap its own; a rank evaluates
/// the pairs it owns (a point-triangle pair its point's owner, an edge-edge pair the owner of the smaller edge's
/// first vertex), so each pair is counted once; the ghosts' gradients and diagonal blocks go back to their owners
/// (the reverse exchange), the step limit is a minimum over all ranks. docs/theory/self_contact.md has the traffic
/// per rank and its model for many ranks.
///
/// The Newton matrix gets the 3 x 3 diagonal blocks of the pairs' PSD-projected Hessians (the pattern is unchanged,
/// as for obstacles: MatrixCoefficients::vertex_blocks), and the Krylov method multiplies by the whole Jacobian: the
/// couplings between a pair's different vertices, outside the mesh's pattern, are added to the matrix's product
/// (multiply_couplings, NewtonProblem::extra_multiply); the preconditioner gets them too (add_couplings).
#include <mpi.h>
#include <petscmat.h>
#include <petscvec.h>

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/self_potential.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"
#include "solver/self_exchange.hpp"

namespace edgefem {

/// One state's self-contact, the same on every rank.
struct SelfContactReport {
  long long active = 0;  ///< pairs closer than the activation distance
  double min_distance = 0.0;  ///< the smallest distance of an active pair (infinity: none)
};

/// Where a rank's self-contact time went (wall seconds, summed) and its pair counts, for the summary.
struct SelfContactCost {
  contact::SelfTimes pairs;   ///< broad phase, narrow phase, CCD (contact/self_potential.hpp)
  double exchange = 0.0;      ///< the ghost layer: builds, forward and reverse exchanges, validity checks
  double assembly = 0.0;      ///< into the residual, the blocks, the couplings' product and the preconditioner's copy
  double total = 0.0;         ///< all of the self-contact terms' calls
  double cpu = 0.0;           ///< the same calls' process CPU seconds (all threads; MPI's busy waits count)
  /// Calls (collective each): residuals, Jacobians (blocks), Krylov products, step limits (line search and
  /// predictions), energies, measures, step starts.
  long long residuals = 0, jacobians = 0, products = 0, limits = 0, energies = 0, measures = 0, steps = 0;
};

class SelfContactTerms {
 public:
  /// Collective. The surface, the activation distance (auto: 1e-3 of the body's box diagonal), the stiffness (auto:
  /// kappa b''(dh / 2) equal to the mean diagonal of K + M / dt^2 over the surface dofs at rest); checks that the
  /// reference surface does not intersect itself (an InputError otherwise). Moves the assembler's positions.
  /// `barrier` false (the position-based integrator's constraints, pbd/pbd_self_contact.hpp): no stiffness (1).
  SelfContactTerms(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Assembler& assembler,
                   double dt, bool barrier = true);

  /// At a step's start x (a time step, or a static load step; `slip_step` its length): friction between parts
  /// (`contact.friction`) lagged there, slip eps = friction_velocity x slip_step. Collective.
  void begin_step(Vec x, double slip_step);
  /// r += the gradient at x (owned entries). Collective.
  void add_residual(Vec x, Vec r);
  /// The Hessian's diagonal blocks of the owned surface vertices at x. Collective.
  [[nodiscard]] std::span<const contact::VertexBlock> blocks(Vec x);
  /// out += C in: the couplings between different vertices of the pairs' projected Hessians of the last blocks()
  /// call, none on prescribed dofs (rows or columns). Collective.
  void multiply_couplings(Vec in, Vec out);
  /// P += C, the same couplings as entries (MatSetValues, ADD_VALUES, global rows of any rank; none on prescribed
  /// dofs; no assembly): this rank's pairs only, so the assembled sum is C. For the preconditioner's matrix.
  void add_couplings(Mat P) const;
  /// The largest fraction of the step x -> x - y on which no pair of any rank comes into contact (a tenth of each
  /// pair's gap kept; 1 when none). Collective.
  double step_limit(Vec x, Vec y);
  /// x pulled back toward `start` along the line between them (x := start + t (x - start)) so that the move from
  /// start meets no contact. Collective.
  void limit_prediction(Vec start, Vec x);
  /// The barrier energy at x (friction's potential left out), summed over ranks. Collective.
  double energy(Vec x);
  /// Pairs within the activation distance and the smallest distance at x. Collective.
  SelfContactReport measure(Vec x);
  /// The same from positions of the local vertices (3 each, owned first: DynamicSolver::local_positions()).
  SelfContactReport measure(std::span<const double> local_positions);
  /// This rank's measure `m` of the surface positions `surface` (3 per surface vertex), found by the caller from
  /// pairs that hold all of its pairs within the activation distance: measure() answers with it, without a broad
  /// phase of its own, while every rank's owned positions are exactly these.
  void offer_measure(const contact::SelfMeasure& m, std::vector<double> surface);
  /// How many measure() calls were answered from an offered measure.
  [[nodiscard]] long long offered_measures() const { return offered_measures_; }
  /// The self-contact's force on every owned vertex at the positions (3 per local vertex, owned first, as measure()):
  /// minus the gradient of the barrier and of the lagged friction, summed over all pairs of all ranks; 3 per owned
  /// vertex, zero off the surface. Each pair's forces on its four vertices sum to zero (the distance is unchanged by
  /// a translation), so over any split of the body into parts the parts' forces are equal and opposite. Collective.
  std::vector<double> contact_forces(std::span<const double> local_positions);
  /// The number of pairs of surface triangles that share no vertex and intersect at the positions (3 per local
  /// vertex, owned first; exact test, contact/self_intersection.hpp), the same on every rank. Collective.
  long long intersecting_pairs(std::span<const double> local_positions);

  [[nodiscard]] const contact::SelfPotential& potential() const { return *potential_; }
  [[nodiscard]] int n_surface_vertices() const { return potential_->surface().n_vertices(); }
  /// This rank's ghost-layer traffic since the set-up (the diagnostics' full gathers not counted).
  [[nodiscard]] const SelfExchangeTraffic& traffic() const { return exchange_->traffic(); }
  [[nodiscard]] const SelfExchange& exchange() const { return *exchange_; }
  /// This rank's seconds in the self-contact terms (exchanges, pairs, reductions).
  [[nodiscard]] double seconds() const { return seconds_; }
  [[nodiscard]] SelfContactCost cost() const;

 private:
  friend class PbdSelfContact;  // (the position-based constraints share the surface, the layer and the cost)
  /// All surface vertices' positions from x (a global vector): one Allgatherv (set-up and diagnostics only).
  void gather_all(Vec x, std::vector<double>& out);
  /// The same from the owned vertices' positions (3 per vertex, local order).
  void gather_all(std::span<const double> owned, std::vector<double>& out);
  /// The owned surface vertices' entries of `out` (3 per surface vertex) from x; the others are left.
  void load(Vec x, std::vector<double>& out);
  void load(std::span<const double> owned, std::vector<double>& out);
  /// Makes the ghost layer serve x (and the move dx) and fills their ghosts' entries. Collective.
  void ready(std::vector<double>& x, std::vector<double>* dx);
  /// A new layer at x serving moves up to `delta` (x's ghosts filled). Collective.
  void rebuild(std::vector<double>& x, double delta);
  /// Adds the owned surface vertices' entries of `values` (3 per surface vertex, times `mask` if not empty) to the
  /// local vector v.
  void add_owned(const std::vector<double>& values, Vec v, const std::vector<double>& mask) const;
  double automatic_stiffness(const Model& model, double dt, double dh);
  /// The owned surface vertices and the gather's layout; returns each surface vertex's owner. Collective.
  std::vector<int> set_up_exchange(const LocalMesh& mesh, const std::vector<long long>& ids);
  /// The reference surface neither intersects nor touches itself (an InputError otherwise). Collective.
  void check_start(const Job& job, const std::vector<double>& rest);

  MPI_Comm comm_;
  Assembler& assembler_;
  bool barrier_ = true;  ///< false: the position-based constraints' (their own times in extra_pairs_)
  std::unique_ptr<contact::SelfPotential> potential_;
  std::vector<std::int32_t> owned_local_;  ///< the local index of each owned surface vertex, in gather order
  std::vector<int> gather_surface_;        ///< surface vertex of each gathered position (all ranks' in rank order)
  std::unique_ptr<SelfExchange> exchange_;  ///< the ghost layer
  std::shared_ptr<const SelfExchange::Layer> coupling_layer_;  ///< the layer of the last blocks() (pairs_)
  double reach_ = 0.0;                     ///< how far the vertices may move before a layer is rebuilt
  std::vector<int> counts_, displacements_;  ///< of the Allgatherv, in doubles
  std::vector<int> owned_surface_;         ///< the surface index of each owned surface vertex
  std::vector<PetscInt> global_dof_;       ///< the global index of each surface vertex's x dof (y, z follow)
  std::vector<double> x_, y_, buffer_, gradient_, diagonal_;
  std::vector<contact::VertexBlock> blocks_;
  std::vector<contact::SelfPairHessian> pairs_;  ///< this rank's pairs' Hessians at the last blocks()
  std::vector<double> free_;                     ///< 3 per surface vertex: 0 on prescribed dofs, else 1
  double seconds_ = 0.0, exchange_seconds_ = 0.0, assembly_seconds_ = 0.0, cpu_seconds_ = 0.0;
  SelfContactCost calls_;  ///< (its call counts)
  contact::SelfTimes extra_pairs_;  ///< the position-based constraints' broad, narrow phase and checks
  double friction_ = 0.0, friction_velocity_ = 0.0;  ///< between parts: mu and eps_v
  std::optional<contact::SelfMeasure> offered_;  ///< offer_measure's, at the surface positions offered_x_
  std::vector<double> offered_x_;
  long long offered_measures_ = 0;
};

}  // namespace edgefem
