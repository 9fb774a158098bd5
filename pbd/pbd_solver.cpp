/// \file pbd_solver.cpp
/// The position-based time loop (pbd_solver.hpp).
#include "pbd/pbd_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "partition/collective.hpp"

namespace edgefem {
namespace {

using Owned = VecArray;  ///< the owned entries of a (ghosted) global vector

const char* const field_names[] = {"position", "velocity", "external_work"};

void update_ghosts(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
}

}  // namespace

PbdSolver::PbdSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model, bool quiet)
    : comm_(comm),
      spec_(job.dynamic.value()),
      mesh_(mesh),
      model_(std::move(model)),
      assembler_(comm, mesh, model_),
      quiet_(quiet) {
  std::vector<double> bending(job.materials.size());
  for (std::size_t m = 0; m < bending.size(); ++m) bending[m] = job.materials[m].bending_stiffness;
  sweep_.emplace(comm, mesh, model_, bending);
  sweep_->set_time_step(spec_.dt, spec_.position_based.xpbd);
  sweep_->set_inversion_handling(spec_.position_based.inversion == PbdInversion::svd);
  std::vector<std::optional<PlasticLaw>> plastic(job.materials.size());
  for (std::size_t m = 0; m < plastic.size(); ++m) plastic[m] = job.materials[m].plasticity;
  run_collectively(comm, [&] { sweep_->set_plasticity(plastic); });
  n_steps_ = std::llround(spec_.end_time / spec_.dt);
  for (auto* v : {&x_, &v_, &x_n_, &h_, &h_new_, &w_, &work_}) {
    *v = sweep_->create_vector();
    EDGEFEM_PETSC(VecSet(*v, 0.0));
  }
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
  // 2. Constraint sweeps (the attachments pull towards their anchors at t_{n+1}).
  sweep_->set_anchor_time(t_new);
  sweep_->reset_multipliers();
  for (int it = 0; it < spec_.position_based.iterations; ++it) {
    if (spec_.position_based.sweep == PbdSweep::colored)
      sweep_->colored_sweep(x_);
    else
      sweep_->jacobi_sweep(x_);
  }
  // Plasticity (Bender et al. §4.1): once per step, from the step's final positions, after the sweeps (the sweeps
  // of one step see one fixed plastic strain, so the constraints they project stay the same energies).
  sweep_->update_plasticity(x_, dt);
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

std::vector<TimeStepReport> PbdSolver::run(const std::function<void(long long, double)>& on_step,
                                           const std::function<bool()>& should_stop) {
  std::vector<TimeStepReport> reports;
  if (!restarted_) {
    if (!quiet_ && spec_.position_based.initial_shape != PbdInitialShape::rest)
      EDGEFEM_PETSC(PetscPrintf(comm_, "step 0: initial state %s, inverted %lld of %lld tets\n",
                                spec_.position_based.initial_shape == PbdInitialShape::flatten ? "flattened" : "mirrored",
                                static_cast<long long>(inverted_cells()), static_cast<long long>(mesh_.n_global_cells)));
    assembler_.external_force(0.0, h_);
    if (on_step) on_step(step_, time_);
  }
  const auto run_start = std::chrono::steady_clock::now();
  const long long first_step = step_;
  while (step_ < n_steps_) {
    TimeStepReport report;
    const auto t0 = std::chrono::steady_clock::now();
    step_once();
    report.step = step_;
    report.time = time_;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report.energy = energy();
    reports.push_back(report);
    if (!quiet_) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      const double left = elapsed / static_cast<double>(step_ - first_step) * static_cast<double>(n_steps_ - step_);
      EDGEFEM_PETSC(PetscPrintf(comm_,
                                "step %lld/%lld  t = %.6g  sweeps %d  wall %.3f s  est. left %.1f s  energy %.9e"
                                "  inverted %lld\n",
                                step_, n_steps_, time_, spec_.position_based.iterations, report.seconds, left,
                                report.energy.total(), static_cast<long long>(inverted_cells())));
    }
    if (on_step) on_step(step_, time_);
    if (step_ < n_steps_ && should_stop && should_stop()) break;
  }
  return reports;
}

EnergyReport PbdSolver::energy() {
  return state_energy(comm_, assembler_, model_, mesh_.mesh.coords, time_, x_, v_, w_, work_);
}

CheckpointState PbdSolver::checkpoint_state() {
  CheckpointState s;
  s.step = step_;
  s.time = time_;
  s.dt = spec_.dt;
  s.integrator = to_string(spec_.integrator);
  for (const char* name : field_names) s.field_names.emplace_back(name);
  for (Vec v : {x_.get(), v_.get(), w_.get()}) {
    Owned o(v, true);
    s.fields.emplace_back(o.span().begin(), o.span().end());
  }
  if (sweep_->plastic()) {  // the plastic strain of every tet, in global cell order (format version 3)
    s.cell_field_names.emplace_back("plastic_strain");
    s.cell_fields.push_back(sweep_->plastic_strain());
    s.n_cells = mesh_.n_global_cells;
    s.owned_cells.assign(mesh_.cell_global.begin(), mesh_.cell_global.end());
  }
  return s;
}

void PbdSolver::restore(const CheckpointState& s) {
  const std::array<Vec, 3> targets = {x_, v_, w_};
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const std::vector<double>* field = nullptr;
    for (std::size_t i = 0; i < s.field_names.size(); ++i)
      if (s.field_names[i] == field_names[k]) field = &s.fields[i];
    if (field == nullptr) throw std::runtime_error(std::string("checkpoint has no field '") + field_names[k] + "'");
    Owned t(targets[k], false);
    if (field->size() != t.span().size()) throw std::runtime_error("checkpoint field size mismatch");
    std::copy(field->begin(), field->end(), t.span().begin());
  }
  if (sweep_->plastic()) {
    const std::vector<double>* plastic = nullptr;
    for (std::size_t i = 0; i < s.cell_field_names.size(); ++i)
      if (s.cell_field_names[i] == "plastic_strain") plastic = &s.cell_fields[i];
    run_collectively(comm_, [&] {
      if (plastic == nullptr)
        throw std::runtime_error("checkpoint has no cell field 'plastic_strain' (the job has a plastic material: "
                                 "restart from a checkpoint of a plastic run)");
      sweep_->set_plastic_strain(*plastic);
    });
  }
  update_ghosts(x_);
  step_ = s.step;
  time_ = s.time;
  restarted_ = true;
  assembler_.external_force(time_, h_);
}

std::vector<double> PbdSolver::local_positions() {
  assembler_.set_positions(x_);
  return assembler_.local_positions();
}

std::vector<double> PbdSolver::local_velocities() {
  EDGEFEM_PETSC(VecCopy(v_, work_));
  update_ghosts(work_);
  LocalForm f(work_, true);
  return {f.span().begin(), f.span().end()};
}

std::vector<double> PbdSolver::local_internal_force() {
  assembler_.set_positions(x_);
  return assembler_.local_internal_force();
}

}  // namespace edgefem
