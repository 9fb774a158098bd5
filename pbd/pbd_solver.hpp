// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_solver.hpp
/// `analysis.integrator: position-based`: Bender, Koschier, Charrier, Weber (2014), Algorithm 1, with the
/// tetrahedra's element energies as constraints (pbd/pbd_sweep.hpp: PBD or XPBD, coloured Gauss-Seidel or
/// averaged Jacobi). One step from (x_n, v_n) to t_{n+1}:
///   1. predict, on free dofs: v* = v_n + dt M^-1 f_ext(t_{n+1}) (gravity, tractions), x* = x_n + dt v*;
///      prescribed dofs are set to x_D(t_{n+1}) (hard position constraints: inverse mass 0);
///   2. `iterations` sweeps over all constraints (XPBD multipliers start at 0 every step);
///   3. v_{n+1} = (x_{n+1} - x_n) / dt, then v_{n+1} *= (1 - velocity_damping).
/// The start is the reference configuration, or (analysis.initial_state {flatten|mirror: axis}) the reference
/// flattened onto / mirrored about the mid-plane of the bounding box normal to the axis (Bender et al. Fig. 6); the
/// sweeps use the energies with inversion handling unless position_based.inversion is none.
/// No Newton and no linear solve. The same state, output and checkpoints as DynamicSolver (positions, velocities,
/// external work: solver/time_integrator.hpp), so the time loop, the PVTU series and restarts work unchanged.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "partition/partition.hpp"
#include "pbd/pbd_chebyshev.hpp"
#include "pbd/pbd_contact.hpp"
#include "pbd/pbd_self_contact.hpp"
#include "pbd/pbd_sweep.hpp"
#include "solver/model.hpp"
#include "solver/time_integrator.hpp"

namespace edgefem {

class PbdSolver final : public TimeIntegrator {
 public:
  /// Collective. job.dynamic must be set (its integrator is not checked: tests run this solver on other jobs).
  PbdSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, bool quiet);

  /// The loads at t = 0 (and, unless quiet, a line on a flattened or mirrored start: how many tets are inverted).
  void start() override;
  /// step_once(), timed, with the energies after it (no step is ever cut; sweeps count as newton_iterations = 0).
  TimeStepReport step() override;
  /// "step k/N  t = ...  sweeps ...  wall ...  est. left ...  energy ...  inverted ..." (counts the inverted tets
  /// over the ranks).
  [[nodiscard]] std::string progress_line(const TimeStepReport& report, double seconds_left) override;
  [[nodiscard]] std::string preconditioner_name() const override { return "none: no linear solves"; }
  [[nodiscard]] const NewtonStats& stats() const override { return stats_; }  ///< always zero: no Newton
  /// plastic_strain (|E_p|, Frobenius, per tet) when a material is plastic.
  [[nodiscard]] std::vector<OutputCellField> output_cell_fields() override;
  /// With obstacles: contact_gap (1 per local vertex) and contact_force (3: the obstacles' force on the vertex,
  /// m p / dt^2 from the contacts' shares, pbd_contact.hpp; ghosts from their owners). Collective.
  [[nodiscard]] std::vector<OutputPointField> output_point_fields() override;
  /// With obstacles: each obstacle's force on the body at the last step (pbd_contact.hpp). Collective.
  [[nodiscard]] std::vector<double> obstacle_forces() override;
  /// The contacts (with obstacles; for tests).
  [[nodiscard]] PbdContact* contact() { return contact_ ? &*contact_ : nullptr; }
  [[nodiscard]] std::optional<ContactStepReport> last_contact() const override { return contact_step_; }
  [[nodiscard]] const ContactSeconds* contact_seconds() override { return contact_ ? &contact_->seconds() : nullptr; }
  /// With contact.self: the self-collision constraints' surface, ghost layer and cost (pbd_self_contact.hpp).
  [[nodiscard]] SelfContactTerms* self_contact_terms() override { return self_ ? &self_->terms() : nullptr; }
  [[nodiscard]] PbdSelfContact* self_contact() { return self_ ? &*self_ : nullptr; }

  /// One time step (t_n -> t_n + dt), without output or report: begin_step, `iterations` times sweep_once,
  /// end_step. Collective.
  void step_once();
  /// The parts of step_once (for studies of the sweeps: bench/pbd_convergence.cpp). begin_step: the prediction x*
  /// and zero multipliers; sweep_once: one sweep (the k-th since begin_step); end_step: plasticity, velocities,
  /// work, time. Collective.
  void begin_step();
  void sweep_once();
  void end_step();
  [[nodiscard]] PbdConstraints& sweep() { return *sweep_; }
  /// Tets with det F <= 0 now, on all ranks (pbd/pbd_sweep.hpp). Collective.
  [[nodiscard]] std::int64_t inverted_cells();
  /// Set the owned positions (ghosts updated); for tests.
  void set_positions(std::span<const double> owned);

 protected:
  [[nodiscard]] StateVectors state_vectors() override { return {x_, v_, w_, work_}; }
  /// position, velocity, external_work of the owned vertices.
  [[nodiscard]] std::vector<CheckpointVector> checkpoint_vectors() override;
  /// A plastic job's plastic strain of every tet, in global cell order (format version 3).
  [[nodiscard]] std::vector<CheckpointCellField> checkpoint_cell_fields() override;
  /// The positions' ghosts and the loads at t_n.
  void after_restore() override;

 private:
  /// analysis.initial_state flatten / mirror: the start positions (rest velocity unless initial_velocity is given).
  void apply_initial_shape();

  std::optional<PbdConstraints> sweep_;
  std::optional<ChebyshevAcceleration> chebyshev_;  ///< position_based.acceleration: chebyshev
  std::optional<PbdContact> contact_;               ///< with obstacles (pbd_contact.hpp)
  std::optional<ContactStepReport> contact_step_;   ///< the last step's
  std::optional<PbdSelfContact> self_;              ///< with contact.self (pbd_self_contact.hpp)
  int sweeps_done_ = 0;                             ///< sweeps since begin_step
  PetscOwner<Vec, VecDestroy> x_, v_, x_n_, h_, h_new_, w_, work_;
  NewtonStats stats_;
};

}  // namespace edgefem
