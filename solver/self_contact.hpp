// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_contact.hpp
/// Self-contact of a Newton solver's body (issue 53; `contact: {self: true}`): the IPC barrier between the body's
/// own surface triangles (the boundary faces of tets, or a membrane's triangles) and edges, pairs that share a
/// vertex excluded (contact/self_potential.hpp), added to the incremental potential; a line search that never lets
/// an iterate intersect itself (additive CCD of every pair whose boxes over the step overlap, the limit reduced over
/// all ranks); and a first iterate of every step reached from the step's start without a contact.
///
/// Distribution (the contact ghost layer, in its simplest form): every rank holds the topology of the whole surface
/// (gathered once) and, for every evaluation, the positions of all surface vertices (one MPI_Allgatherv of 3 doubles
/// per surface vertex); a rank evaluates the pairs it owns (a point-triangle pair its point's owner, an edge-edge
/// pair the owner of the smaller edge's first vertex), so each pair is counted once; the gradients and diagonal
/// blocks are summed with one MPI_Allreduce of 3 (9) doubles per surface vertex, and the step limit with a
/// minimum. Traffic per rank and evaluation: O(surface vertices), independent of the number of ranks' neighbours
/// (docs/theory/self_contact.md has the figures and what a neighbour-only exchange would save).
///
/// The Newton matrix gets the 3 x 3 diagonal blocks of the pairs' PSD-projected Hessians (the pattern is unchanged,
/// as for obstacles: MatrixCoefficients::vertex_blocks), and the Krylov method multiplies by the whole Jacobian: the
/// couplings between a pair's different vertices, outside the mesh's pattern, are added to the matrix's product
/// (multiply_couplings, NewtonProblem::extra_multiply); the preconditioner is built from the matrix alone.
#include <mpi.h>
#include <petscmat.h>
#include <petscvec.h>

#include <memory>
#include <span>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/self_potential.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// One state's self-contact, the same on every rank.
struct SelfContactReport {
  long long active = 0;  ///< pairs closer than the activation distance
  double min_distance = 0.0;  ///< the smallest distance of an active pair (infinity: none)
};

/// What the exchange of one evaluation costs a rank (the collectives it takes part in).
struct SelfContactTraffic {
  long long collectives = 0;   ///< MPI collectives so far
  double bytes_received = 0;   ///< bytes this rank received in them (allgathered positions and reduced arrays)
};

class SelfContactTerms {
 public:
  /// Collective. The surface, the activation distance (auto: 1e-3 of the body's box diagonal), the stiffness (auto:
  /// kappa b''(dh / 2) equal to the mean diagonal of K + M / dt^2 over the surface dofs at rest); checks that the
  /// reference surface does not intersect itself (an InputError otherwise). Moves the assembler's positions.
  SelfContactTerms(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Assembler& assembler,
                   double dt);

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
  /// The number of pairs of surface triangles that share no vertex and intersect at the positions (3 per local
  /// vertex, owned first; exact test, contact/self_intersection.hpp), the same on every rank. Collective.
  long long intersecting_pairs(std::span<const double> local_positions);

  [[nodiscard]] const contact::SelfPotential& potential() const { return *potential_; }
  [[nodiscard]] int n_surface_vertices() const { return potential_->surface().n_vertices(); }
  [[nodiscard]] const SelfContactTraffic& traffic() const { return traffic_; }
  /// This rank's seconds in the self-contact terms (gathers, pairs, reductions).
  [[nodiscard]] double seconds() const { return seconds_; }

 private:
  /// All surface vertices' positions from x (a global vector): one Allgatherv. Collective.
  void gather(Vec x, std::vector<double>& out);
  /// The same from the owned vertices' positions (3 per vertex, local order).
  void gather(std::span<const double> owned, std::vector<double>& out);
  /// Sums `values` (k per surface vertex) over the ranks. Collective.
  void sum(std::vector<double>& values);
  double automatic_stiffness(const Model& model, double dt, double dh);
  /// The owned surface vertices and the gather's layout; returns each surface vertex's owner. Collective.
  std::vector<int> set_up_exchange(const LocalMesh& mesh, const std::vector<long long>& ids);
  /// The reference surface neither intersects nor touches itself (an InputError otherwise). Collective.
  void check_start(const Job& job, const std::vector<double>& rest);

  MPI_Comm comm_;
  Assembler& assembler_;
  std::unique_ptr<contact::SelfPotential> potential_;
  std::vector<std::int32_t> owned_local_;  ///< the local index of each owned surface vertex, in gather order
  std::vector<int> gather_surface_;        ///< surface vertex of each gathered position (all ranks' in rank order)
  std::vector<int> counts_, displacements_;  ///< of the Allgatherv, in doubles
  std::vector<int> owned_surface_;         ///< the surface index of each owned surface vertex
  std::vector<PetscInt> global_dof_;       ///< the global index of each surface vertex's x dof (y, z follow)
  std::vector<double> x_, y_, buffer_, gradient_, diagonal_;
  std::vector<contact::VertexBlock> blocks_;
  std::vector<contact::SelfPairHessian> pairs_;  ///< this rank's pairs' Hessians at the last blocks()
  std::vector<double> free_;                     ///< 3 per surface vertex: 0 on prescribed dofs, else 1
  SelfContactTraffic traffic_;
  double seconds_ = 0.0;
  double friction_ = 0.0, friction_velocity_ = 0.0;  ///< between parts: mu and eps_v
};

}  // namespace edgefem
