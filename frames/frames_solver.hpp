// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frames_solver.hpp
/// Static equilibrium of the frame-based model (`discretization: {type: frames}`; docs/theory/design.md "Frame-based
/// models"). Unknowns: per free frame 6 (rigid: a twist, angular first) or 12 (affine: [A | t]); the energy is
/// summed over this rank's samples and loaded vertices by the frame space (frames/frame_space.hpp), and the partial
/// energy, gradient and dense Hessian are summed over the ranks with one MPI_Allreduce per evaluation. The small
/// dense system is then solved redundantly on every rank (Eigen LDLT; rank 0's step is broadcast so every rank
/// applies the same bits), and the state is moved by the space (retraction on SE(3), or a sum). Load steps as in
/// StaticSolver (load factor step / steps); Newton with an energy backtracking line search; converged when
/// |g_free| <= max(newton_atol, newton_rtol |g_free at the step's start|).
#include <mpi.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "frames/frame_space.hpp"
#include "frames/frames_contact.hpp"
#include "frames/frames_setup.hpp"
#include "io/job.hpp"
#include "materials/frame_model.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// One load step of the frame solve (identical on every rank).
struct FrameStepReport {
  int step = 0;
  double load_factor = 0.0;
  int newton_iterations = 0;
  std::vector<double> residuals;  ///< |g_free| before each iteration and after the last
  double seconds = 0.0;
  double seconds_evaluate = 0.0;  ///< in evaluate_frames (this rank) and the Allreduce
  int substeps = 1;               ///< increments taken (more than 1 when the load increment was cut)
  int stages = 0;                 ///< moving obstacles: continuation stages (FrameContact::advance) after the first
};

/// One time step of the frame dynamics (identical on every rank).
struct FrameTimeStep {
  int step = 0;
  double time = 0.0;
  double kinetic = 0.0;    ///< 1/2 Omega^T M Omega after the step (lumped, rotated masses)
  double potential = 0.0;  ///< strain energy minus the loads' work, at the poses before the step (backward-euler:
                           ///< after it, with the contact energy)
  double contact = 0.0;    ///< the contact energy after the step (backward-euler; barrier and friction)
  int newton_iterations = 0;  ///< backward-euler: Newton iterations (with the obstacles' continuation stages)
  int stages = 0;             ///< backward-euler: the moving obstacles' continuation stages (advance) after the first
  double seconds = 0.0;
};

/// The inertia and damping of a backward-Euler step of the frames (frames_solver.cpp).
struct FrameStepInertia;

class FrameSolver {
 public:
  /// Collective: places the frames, computes the weights, the held frames and the samples.
  FrameSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, bool quiet);

  /// All load steps; `on_step(step, load_factor)` after step 0 (rest) and each converged step. Throws SolverError
  /// (every rank) when a step does not converge in job.newton_max_it iterations.
  std::vector<FrameStepReport> run(const std::function<void(int, double)>& on_step);

  /// Dynamics: the paper's linearised implicit Euler step (Eq. 4, with the internal force on the right-hand side as
  /// the digest corrects it) and the state update (5) through the space (rigid: `retract`; affine: a sum), lumped
  /// frame masses (rigid 6x6 blocks rotated with their frames, Eq. 15; affine 12x12 blocks, constant), Rayleigh
  /// damping B = alpha M + beta H (H = the Hessian of the potential, -K of the paper):
  ///   [M (1 + h alpha) + (h beta + h^2) H] dOmega = -h g - h (alpha M + beta H) Omega - h^2 H Omega,
  ///   Omega <- Omega + dOmega, state <- moved(state, h Omega).
  /// One linear solve per step (no Newton iterations). Loads follow their schedules at the step's end time.
  /// integrator backward-euler: the same implicit Euler step solved to convergence by Newton on the incremental
  /// potential (FrameStepInertia), with the obstacles' barrier and lagged friction, each Newton step limited by the
  /// contact points' continuous check, moving obstacles at the step's end reached through advance() (needed with
  /// obstacles). `on_step(step, time)` after step 0 and each step.
  std::vector<FrameTimeStep> run_dynamic(const std::function<void(int, double)>& on_step);

  /// The lumped rest masses M_i (per frame a dofs_per_frame-square block, row-major), summed over ranks.
  [[nodiscard]] const std::vector<double>& rest_masses() const { return rest_mass_; }

  /// Skinned positions of every local vertex (owned and ghosts), 3 per vertex.
  [[nodiscard]] std::vector<double> local_positions() const;
  [[nodiscard]] int n_frames() const { return static_cast<int>(placement_.origins.size()); }
  [[nodiscard]] int dofs_per_frame() const { return space_->dofs_per_frame(); }
  [[nodiscard]] const FramePlacement& placement() const { return placement_; }
  /// The frames' current origins and rotations (affine: the polar factor of A), and their linear maps (R or A).
  [[nodiscard]] std::vector<frames::FramePose> poses() const { return space_->poses(state_); }
  [[nodiscard]] std::vector<std::array<double, 9>> linear_maps() const { return space_->linear_maps(state_); }
  [[nodiscard]] const std::vector<double>& state() const { return state_; }
  [[nodiscard]] const std::vector<int>& held() const { return held_; }
  [[nodiscard]] const std::vector<double>& weights() const { return weights_; }
  [[nodiscard]] long long n_samples_global() const { return n_samples_global_; }
  [[nodiscard]] double setup_seconds_weights() const { return seconds_weights_; }

  /// With obstacles (frames_contact.hpp): the last converged load step's contact report and each obstacle's force on
  /// the body (3 per obstacle); the contact. Empty / null without.
  [[nodiscard]] const std::optional<ContactStepReport>& last_contact() const { return contact_step_; }
  [[nodiscard]] const std::vector<double>& obstacle_forces() const { return obstacle_forces_; }
  [[nodiscard]] const FrameContact* contact() const { return contact_ ? &*contact_ : nullptr; }
  /// With obstacles: the output fields contact_gap (1 per local vertex) and contact_force (3) of the current state
  /// (FrameContact::vertex_fields). Collective.
  void contact_fields(std::vector<double>& gap, std::vector<double>& force) const;

  /// The potential (strain energy minus the loads' work at `time`, plus the contact energy) at the current state,
  /// summed over the ranks (the loads' work counted from the origin: -f . x). Collective.
  [[nodiscard]] double potential(double time) const { return energy(state_, time); }
  /// Sum over ranks of the energy, gradient and Hessian at `state` and `load_factor` (Hessian empty if not wanted).
  /// `with_contact`: false leaves the contact terms out.
  void evaluate(std::span<const double> state, double load_factor, bool want_hessian, frames::FrameSystem& out,
                bool with_contact = true) const;

 private:
  /// Adds the contact potential at `state` (this rank's points) to `out`, timed into the contact's seconds.
  void add_contact(std::span<const double> state, bool want_hessian, frames::FrameSystem& out) const;
  /// With obstacles: contact_step_ and obstacle_forces_ at the current state (obstacles where they are). Collective.
  void report_contact();
  /// The summed energy alone (line searches).
  [[nodiscard]] double energy(std::span<const double> state, double load_factor) const;
  /// The loaded vertices and their frames' weights (once), and their forces at `load_factor` (every call).
  void init_loads();
  [[nodiscard]] const frames::FramePoints& load_points(double load_factor) const;
  /// One step's Newton iterations from the current state, loads at `load_factor`, moving obstacles from their
  /// place at `from` to `to` (advance: a continuation, one Newton iteration per stage; converged only at `to`), with
  /// a time step's inertia (dynamics; its D updated) or without (statics). False (and `why`) when it does not
  /// converge.
  bool solve_step(double load_factor, FrameStepReport& report, std::string& why, double from, double to,
                  FrameStepInertia* inertia = nullptr);
  /// The contact energy at `state` (obstacles where they are), summed over the ranks.
  [[nodiscard]] double contact_energy(std::span<const double> state) const;
  /// The state at load factor `to` predicted from the converged states at `from` (the current one) and before
  /// (linear extrapolation; affine frames only, like StaticSolver's predictor). Held frames stay at rest.
  void predict(double from, double to);
  /// The unknowns of the frames not held: dofs_per_frame per frame (index d i + a).
  [[nodiscard]] std::vector<int> free_dofs() const;
  /// Backtracking on the energy (Armijo) along `step` (one value per entry of `free`) from the state, at most 20
  /// halvings; the state becomes the accepted trial. `slope`: g . step; `energy_now`: the energy at the state
  /// (with `inertia`'s I(D)); `inertia`: its I(D + alpha step) added to the trials' energy. Returns alpha.
  double line_search(const std::vector<int>& free, const std::vector<double>& step, double slope, double energy_now,
                     double load_factor, const FrameStepInertia* inertia = nullptr);
  /// One backward-Euler step of run_dynamic (report.step and report.time set).
  void time_step_newton(const std::vector<int>& free, FrameTimeStep& report);
  /// One step of run_dynamic (report.step and report.time set): the poses and velocities after it, its energies.
  void time_step(const std::vector<int>& free, FrameTimeStep& report);
  /// Adds the per-tet samples' share of the lumped frame masses (dynamics; `cell_mass` per sample).
  void add_rest_masses(const frames::FramePoints& samples, std::span<const double> cell_mass);
  /// The lumped frame masses summed over the ranks, and the initial velocities of a dynamic analysis.
  void init_dynamics();
  /// Integrates at one sample per cell of `grid` over the global bounding box, binned from the per-tet samples a
  /// chunk of tets at a time (`lambda`, `mu` per tet; collective); the masses of a dynamic analysis on the way.
  void use_voxel_samples(const std::array<int, 3>& grid, std::span<const double> lambda, std::span<const double> mu);

  MPI_Comm comm_;
  const Job& job_;
  const LocalMesh& mesh_;
  const Model& model_;
  bool quiet_;
  FramePlacement placement_;
  std::vector<double> weights_;
  std::vector<int> held_;
  std::unique_ptr<FrameSpace> space_;
  std::vector<LocalIndex> loaded_vertices_;  ///< the vertices of loads_ (forces of every load group)
  mutable frames::FramePoints loads_;        ///< forces set by load_points
  std::vector<double> state_;
  std::vector<double> previous_state_;  ///< the converged state before the current one (predict)
  double previous_load_ = 0.0;          ///< its load factor
  std::vector<double> rest_mass_;       ///< dofs_per_frame^2 per frame (dynamics only)
  std::vector<double> velocity_;        ///< dofs_per_frame per frame (dynamics only)
  std::optional<FrameContact> contact_;          ///< with obstacles
  std::optional<ContactStepReport> contact_step_;  ///< the last converged load step's
  std::vector<double> obstacle_forces_;          ///< 3 per obstacle, at the last converged load step
  long long n_samples_global_ = 0;
  double seconds_weights_ = 0.0;
};

/// Frames of one step as a VTK PolyData file (.vtp, ASCII): points at the frame origins, point data
/// `displacement`, `rotation` (quaternion x, y, z, w; affine frames: the polar factor of A), `axis_x`, `axis_y`,
/// `axis_z` (the columns of the frame's linear map: the rotated axes, or A's columns) and `held` (1 = held by a fix).
/// Written atomically.
void write_frames_vtp(const std::string& path, const FramePlacement& placement,
                      const std::vector<frames::FramePose>& poses, const std::vector<std::array<double, 9>>& maps,
                      const std::vector<int>& held);

}  // namespace edgefem
