// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_solver.cpp
/// The position-based time loop (pbd_solver.hpp).
#include "pbd/pbd_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "materials/plasticity.hpp"
#include "partition/collective.hpp"

namespace edgefem {
namespace {

using Owned = VecArray;  ///< the owned entries of a (ghosted) global vector

void update_ghosts(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
}

}  // namespace

PbdSolver::PbdSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, bool quiet)
    : TimeIntegrator(comm, job.dynamic.value(), mesh, std::move(model), quiet) {
  std::vector<double> bending(job.materials.size());
  for (std::size_t m = 0; m < bending.size(); ++m) bending[m] = job.materials[m].bending_stiffness;
  sweep_.emplace(comm, mesh, model_, bending);
  sweep_->set_time_step(spec_.dt, spec_.position_based.xpbd);
  sweep_->set_inversion_handling(spec_.position_based.inversion == PbdInversion::svd);
  std::vector<std::optional<PlasticLaw>> plastic(job.materials.size());
  for (std::size_t m = 0; m < plastic.size(); ++m) plastic[m] = job.materials[m].plasticity;
  run_collectively(comm, [&] { sweep_->set_plasticity(plastic); });
  if (spec_.position_based.acceleration == PbdAcceleration::chebyshev)
    chebyshev_.emplace(*sweep_, spec_.position_based.spectral_radius);
  for (auto* v : {&x_, &v_, &x_n_, &h_, &h_new_, &w_, &work_}) {
    *v = sweep_->create_vector();
    EDGEFEM_PETSC(VecSet(*v, 0.0));
  }
  if (!job.obstacles.empty()) contact_.emplace(comm, job, mesh, model_, work_);
  if (job.contact.self) self_.emplace(comm, job, mesh, model_, assembler_, sweep_->inverse_mass());
  if (contact_ || self_)  // the sweep's last colour: the pairs, then the obstacles
    sweep_->set_contact([this](double* x) {
      if (self_) self_->project(x);
      if (contact_) contact_->project(x);
    });
  EDGEFEM_PETSC(VecCopy(assembler_.reference(), x_));
  apply_initial_shape();
  update_ghosts(x_);
  Owned vel(v_, false);
  for (std::size_t i = 0; i < vel.span().size(); ++i) vel.span()[i] = spec_.initial_velocity[i % 3];
  for (const auto& d : model_.dirichlet) vel.span()[static_cast<std::size_t>(d.dof)] = 0.0;
}

void PbdSolver::apply_initial_shape() {
  const PbdInitialShape shape = spec_.position_based.initial_shape;
  if (shape == PbdInitialShape::rest) return;
  // The mid-plane of the bounding box (min and max are exact on any number of ranks).
  const int axis = spec_.position_based.initial_axis;
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (LocalIndex v = 0; v < mesh_.n_local(); ++v) {
    const double c = mesh_.mesh.coords[3 * static_cast<std::size_t>(v) + axis];
    low = std::min(low, c), high = std::max(high, c);
  }
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, comm_);
  const double mid = 0.5 * (low + high);
  Owned x(x_, false);
  for (std::size_t i = static_cast<std::size_t>(axis); i < x.span().size(); i += 3)
    x.span()[i] = shape == PbdInitialShape::flatten ? mid : 2.0 * mid - x.span()[i];
}

std::int64_t PbdSolver::inverted_cells() { return sweep_->count_inverted(x_); }

void PbdSolver::set_positions(std::span<const double> owned) {
  {
    Owned x(x_, false);
    std::copy(owned.begin(), owned.end(), x.span().begin());
  }
  update_ghosts(x_);
}

void PbdSolver::step_once() {
  begin_step();
  for (int it = 0; it < spec_.position_based.iterations; ++it) sweep_once();
  end_step();
}

void PbdSolver::begin_step() {
  const double dt = spec_.dt;
  const double t_new = static_cast<double>(step_ + 1) * dt;
  EDGEFEM_PETSC(VecCopy(x_, x_n_));
  assembler_.external_force(t_new, h_new_);
  {
    // 1. Prediction: v* = v_n + dt w f_ext, x* = x_n + dt v* (w = 0: prescribed, set to x_D(t_{n+1})).
    Owned x(x_, false);
    Owned v(v_, true);
    Owned f(h_new_, true);
    const std::span<const double> w = sweep_->inverse_mass();
    for (std::size_t i = 0; i < x.span().size(); ++i) x.span()[i] += dt * (v.span()[i] + dt * w[i] * f.span()[i]);
    for (const DirichletDof& d : model_.dirichlet)
      x.span()[static_cast<std::size_t>(d.dof)] = prescribed_position(model_, d, mesh_.mesh.coords, t_new);
  }
  update_ghosts(x_);
  // 2. Constraint sweeps (the attachments pull towards their anchors at t_{n+1}; the obstacles are there, the
  // step's contacts generated from x_n and x*: Bender's line 11).
  if (contact_) contact_->begin_step(time_, t_new, x_n_, x_);
  if (self_) self_->begin_step(x_n_, x_);
  sweep_->set_anchor_time(t_new);
  sweep_->reset_multipliers();
  sweeps_done_ = 0;
  if (chebyshev_) chebyshev_->start(x_, sweep_->shares());
}

void PbdSolver::sweep_once() {
  if (spec_.position_based.sweep == PbdSweep::colored)
    sweep_->colored_sweep(x_);
  else
    sweep_->jacobi_sweep(x_);
  if (chebyshev_) {  // (the sweep's contact colour is combined as any position; projected again after it)
    chebyshev_->combine(x_, sweep_->shares());
    sweep_->project_contacts(x_);
  }
  ++sweeps_done_;
}

void PbdSolver::end_step() {
  const double dt = spec_.dt;
  const double t_new = static_cast<double>(step_ + 1) * dt;
  // Plasticity (Bender et al. §4.1): once per step, from the step's final positions, after the sweeps (the sweeps
  // of one step see one fixed plastic strain, so the constraints they project stay the same energies).
  if (self_) {  // the fail-safe: no pair met on the way (pbd_self_contact.hpp)
    self_->end_step(x_n_, x_);
    update_ghosts(x_);
  }
  sweep_->update_plasticity(x_, dt);
  if (contact_) contact_step_ = contact_->report(x_);
  // 3. Velocity and damping; the loads' work, trapezoidal: (h_n + h_{n+1})/2 . (x_{n+1} - x_n).
  {
    Owned x(x_, true);
    Owned xn(x_n_, true);
    Owned v(v_, false);
    Owned h(h_, true);
    Owned hn(h_new_, true);
    Owned work(w_, false);
    const double keep = 1.0 - spec_.position_based.velocity_damping;
    for (std::size_t i = 0; i < x.span().size(); ++i) {
      const double dx = x.span()[i] - xn.span()[i];
      v.span()[i] = keep * dx / dt;
      work.span()[i] += 0.5 * (h.span()[i] + hn.span()[i]) * dx;
    }
  }
  EDGEFEM_PETSC(VecCopy(h_new_, h_));
  time_ = t_new;
  ++step_;
}

void PbdSolver::start() {
  if (!quiet_ && spec_.position_based.initial_shape != PbdInitialShape::rest)
    EDGEFEM_PETSC(PetscPrintf(comm_, "step 0: initial state %s, inverted %lld of %lld tets\n",
                              spec_.position_based.initial_shape == PbdInitialShape::flatten ? "flattened" : "mirrored",
                              static_cast<long long>(inverted_cells()), static_cast<long long>(mesh_.n_global_cells)));
  assembler_.external_force(0.0, h_);
}

std::vector<OutputPointField> PbdSolver::output_point_fields() {
  if (!contact_) return {};
  std::vector<double> gap, force;
  contact_->vertex_fields(local_positions(), sweep_->inverse_mass(), spec_.dt, gap, force);
  {  // the owners' forces to the ghost copies (work_ as scratch)
    LocalForm w(work_, false);
    std::copy(force.begin(), force.end(), w.span().begin());
  }
  update_ghosts(work_);
  {
    LocalForm w(work_, true);
    force.assign(w.span().begin(), w.span().end());
  }
  return {{"contact_gap", 1, std::move(gap)}, {"contact_force", 3, std::move(force)}};
}

std::vector<double> PbdSolver::obstacle_forces() {
  return contact_ ? contact_->obstacle_forces(sweep_->inverse_mass(), spec_.dt) : std::vector<double>{};
}

TimeStepReport PbdSolver::step() {
  TimeStepReport report;
  const auto t0 = std::chrono::steady_clock::now();
  step_once();
  // A step that left a position NaN or infinite (the sweeps diverged: a stiffness, load or time step far beyond what
  // the constraints can take) ends the run here, on every rank (agreed), not in NaN output files.
  int finite = 1;  // (not VecNorm: PETSc's max norm passes over NaN)
  {
    Owned x(x_, true);
    for (const double value : x.span()) finite &= std::isfinite(value) ? 1 : 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, comm_);
  report.step = step_;
  report.time = time_;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.energy = energy();  // the same on every rank (summed over them)
  // (Not the total energy: a model's strain energy may be NaN on an inverted tet the sweeps then restore, e.g.
  // Neo-Hookean's log J from a mirrored start. The kinetic energy overflows only with velocities beyond reason.)
  if (!finite || !std::isfinite(report.energy.kinetic))
    throw SolverError("position-based: time step " + std::to_string(step_) + " (t = " + std::to_string(time_) +
                      "): the " + (finite ? "kinetic energy is" : "positions are") +
                      " no longer finite (the constraint sweeps diverged; try a smaller dt, more iterations, a "
                      "smaller stiffness, load or initial velocity)");
  report.contact = contact_step_;
  return report;
}

std::string PbdSolver::progress_line(const TimeStepReport& r, double seconds_left) {
  const std::string contact = r.contact ? contact_progress(*r.contact) : std::string();
  char self[128] = "";
  if (self_)
    std::snprintf(self, sizeof self, "  self pairs %lld  projected %lld  stopped %lld", self_->last().pairs,
                  self_->last().projected, self_->last().frozen);
  char line[768];
  std::snprintf(line, sizeof line,
                "step %lld/%lld  t = %.6g  sweeps %d  wall %.3f s  est. left %.1f s  energy %.9e  inverted %lld%s%s\n",
                r.step, n_steps_, r.time, spec_.position_based.iterations, r.seconds, seconds_left, r.energy.total(),
                static_cast<long long>(inverted_cells()), contact.c_str(), self);
  return line;
}

std::vector<OutputCellField> PbdSolver::output_cell_fields() {
  if (!sweep_->plastic()) return {};
  const std::vector<double> p = sweep_->plastic_strain();  // |E_p| (Frobenius) per tet
  std::vector<double> norm(p.size() / 6);
  for (std::size_t c = 0; c < norm.size(); ++c) norm[c] = strain_norm(p.data() + 6 * c);
  return {{"plastic_strain", std::move(norm)}};
}

std::vector<CheckpointVector> PbdSolver::checkpoint_vectors() {
  return {{"position", x_}, {"velocity", v_}, {"external_work", w_}};
}

std::vector<CheckpointCellField> PbdSolver::checkpoint_cell_fields() {
  if (!sweep_->plastic()) return {};
  return {{"plastic_strain", [this] { return sweep_->plastic_strain(); },
           [this](std::span<const double> values) { sweep_->set_plastic_strain(values); },
           "the job has a plastic material: restart from a checkpoint of a plastic run"}};
}

void PbdSolver::after_restore() {
  update_ghosts(x_);
  assembler_.external_force(time_, h_);
}

}  // namespace edgefem
