// SPDX-License-Identifier: BSD-3-Clause
/// \file frames_solver.cpp
/// Static Newton on the frames (frames_solver.hpp).
///
/// Why not the shared NewtonDriver (solver/newton.hpp): it drives a PETSc SNES on distributed vectors in a linear
/// space with a sparse assembled Jacobian. The frame unknowns are a handful of poses on SE(3): each iteration is an
/// increment in the tangent space at the current poses (the retraction), and the system is small and dense, held
/// whole on every rank. The loop below is the same Newton method (exact Hessian of the pulled-back energy, so
/// quadratic convergence; an energy backtracking line search far from equilibrium).
#include "frames/frames_solver.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "io/vtk_output.hpp"
#include "solver/newton.hpp"

namespace edgefem {

/// The inertia and damping of a backward-Euler step of the frames, a quadratic in the step's increment D (the sum
/// of the Newton increments, per frame dofs_per_frame, held frames 0): with the frame masses M and the Hessian H of
/// the strain energy and loads at the step's start (frozen: Rayleigh's stiffness damping), the time step h and the
/// velocity w at the start,
///   I(D) = |D - h w|^2_M / (2 h^2) + alpha |D|^2_M / (2 h) + beta |D|^2_H / (2 h) = D^T A D / 2 - b^T D + const,
///   A = ((1 + h alpha) M + h beta H) / h^2,  b = M w / h.
/// I(D) + the potential at the moved poses is the step's incremental potential; its stationary point is the
/// implicit Euler step  M (w' - w) / h + alpha M w' + beta H w' + g(q') = 0 with w' = D / h, whose first Newton
/// iteration from D = 0 is the linearised step (run_dynamic's linearized-euler).
struct FrameStepInertia {
  Eigen::MatrixXd A;
  Eigen::VectorXd b, D;
  [[nodiscard]] double energy(const Eigen::VectorXd& d) const { return 0.5 * d.dot(A * d) - b.dot(d); }
};

using frames::FramePose;
using frames::Vec3;

namespace {
/// A model whose frames are all held has no unknown: nothing of it can move, whatever the loads. Refused (on every
/// rank: the held frames are agreed) rather than "solved", since it is never what a job means: its frames sit on
/// the fixed regions (positions there, or too few frames for the fixed regions to leave one free). A static model
/// with no held frame is refused too.
void refuse_all_held(const Job& job, const FramePlacement& placement, const std::vector<int>& held) {
  // The other end: a static model with no held frame has its rigid-body motions free (a singular system; Newton
  // would wander for 30 iterations and six load cuts before saying so).
  if (job.analysis_type == AnalysisType::statics && std::find(held.begin(), held.end(), 1) == held.end())
    throw InputError(job.job_file + ":" + std::to_string(job.discretization.line) +
                     ": discretization: no frame is held (no boundary entry fixes x, y and z), so the static frame "
                     "model's rigid-body motions are free and its equilibrium is undetermined: expected a boundary "
                     "entry with fix: [x, y, z] (or analysis type dynamic)");
  if (std::find(held.begin(), held.end(), 0) != held.end()) return;
  std::ostringstream msg;
  msg << job.job_file << ":" << job.discretization.line << ": discretization: every frame is held (" << held.size()
      << " of " << held.size() << ": each is the frame of largest weight at some vertex of a boundary entry that "
      << "fixes x, y and z), so the model has no unknown and nothing can move; frames at";
  for (std::size_t i = 0; i < placement.origins.size() && i < 4; ++i)
    msg << (i ? ", [" : " [") << placement.origins[i][0] << ", " << placement.origins[i][1] << ", "
        << placement.origins[i][2] << "]";
  msg << (placement.origins.size() > 4 ? ", ..." : "")
      << ". Expected at least one free frame: more frames, or positions away from the fixed regions";
  throw InputError(msg.str());
}
}  // namespace

FrameSolver::FrameSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, bool quiet)
    : comm_(comm), job_(job), mesh_(mesh), model_(model), quiet_(quiet) {
  const auto t0 = std::chrono::steady_clock::now();
  const int count = job.discretization.frame_count > 0 ? job.discretization.frame_count
                                                       : static_cast<int>(job.discretization.positions.size());
  const VoxelGrid grid = make_voxel_grid(comm, mesh, voxel_size_for(mesh_volume(comm, mesh), count));
  placement_ = place_frames(comm, mesh, job, model, grid);
  weights_ = frame_weights(comm, mesh, model, job.discretization, placement_, grid);
  seconds_weights_ = seconds_since(t0);
  const int n = n_frames();
  held_ = held_frames(comm, mesh, model, job, weights_, n);
  refuse_all_held(job, placement_, held_);
  init_loads();
  if (!job.obstacles.empty()) contact_.emplace(comm, job, mesh, model, weights_, n);
  // Lame constants of each tet's material.
  const LocalIndex n_tets = mesh.mesh.n_tets();
  std::vector<double> lambda(static_cast<std::size_t>(n_tets)), mu(lambda.size());
  for (LocalIndex t = 0; t < n_tets; ++t) {
    const MaterialSpec& m = job.materials[static_cast<std::size_t>(model.cell_material[t])];
    lambda[t] = m.young * m.poisson / ((1.0 + m.poisson) * (1.0 - 2.0 * m.poisson));
    mu[t] = m.young / (2.0 * (1.0 + m.poisson));
  }
  // The masses (dynamics) come from the tets; the stiffness from the voxel samples when a sample grid is given.
  space_ = make_frame_space(job.discretization.frame_type, placement_.origins);
  state_ = space_->rest_state();
  if (job.discretization.sample_grid) {
    use_voxel_samples(*job.discretization.sample_grid, lambda, mu);
  } else {
    std::vector<LocalIndex> cells(static_cast<std::size_t>(n_tets));
    std::iota(cells.begin(), cells.end(), 0);
    frames::FramePoints samples = frames::make_samples(mesh.mesh, cells, lambda, mu, weights_, n);
    if (job.analysis_type == AnalysisType::dynamics) add_rest_masses(samples, model.cell_mass);
    space_->use_tet_samples(std::move(samples));
  }
  if (job.analysis_type == AnalysisType::dynamics) init_dynamics();
  long long mine = static_cast<long long>(space_->n_samples());
  MPI_Allreduce(&mine, &n_samples_global_, 1, MPI_LONG_LONG, MPI_SUM, comm);
}

void FrameSolver::add_rest_masses(const frames::FramePoints& samples, std::span<const double> cell_mass) {
  const std::vector<double> m =
      space_->rest_masses(samples, cell_mass, job_.discretization.frame_mass == FrameMass::weighted);
  if (rest_mass_.empty()) rest_mass_.assign(m.size(), 0.0);
  for (std::size_t k = 0; k < m.size(); ++k) rest_mass_[k] += m[k];
}

void FrameSolver::init_dynamics() {
  // Lumped masses (Eq. 6 with the cross terms dropped; rigid frames rotate theirs, Eq. 15), summed over the ranks,
  // rank 0's sums for everyone (the same bits on every rank, as in evaluate).
  MPI_Allreduce(MPI_IN_PLACE, rest_mass_.data(), static_cast<int>(rest_mass_.size()), MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Bcast(rest_mass_.data(), static_cast<int>(rest_mass_.size()), MPI_DOUBLE, 0, comm_);
  velocity_ = space_->translation_velocity(job_.dynamic->initial_velocity);
  const int d = dofs_per_frame();
  for (int i = 0; i < n_frames(); ++i)
    if (held_[i]) std::fill_n(velocity_.begin() + static_cast<long>(d) * i, d, 0.0);
}

void FrameSolver::use_voxel_samples(const std::array<int, 3>& grid, std::span<const double> lambda,
                                    std::span<const double> mu) {
  // The grid spans the global bounding box of the vertices; every rank bins its tets' samples (made a chunk of tets
  // at a time, in order), the sums are added over the ranks, and rank r takes the voxels k with k % ranks == r: the
  // same samples on any rank count.
  const int n = n_frames();
  const double n_values = static_cast<double>(grid[0]) * grid[1] * grid[2] * static_cast<double>(space_->voxel_width());
  if (n_values > 1e8)
    throw InputError(job_.job_file + ":" + std::to_string(job_.discretization.line) + ": discretization.sample_grid [" +
                     std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " + std::to_string(grid[2]) +
                     "] with " + std::to_string(n) + " frames needs too many voxel sums (" +
                     std::to_string(static_cast<long long>(n_values)) + " values, at most 1e8): use a coarser grid");
  frames::Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (std::size_t v = 0; 3 * v < mesh_.mesh.coords.size(); ++v)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], mesh_.mesh.coords[3 * v + d]);
      hi[d] = std::max(hi[d], mesh_.mesh.coords[3 * v + d]);
    }
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), 3, MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), 3, MPI_DOUBLE, MPI_MAX, comm_);
  std::vector<double> sums(static_cast<std::size_t>(n_values), 0.0);
  const LocalIndex n_tets = mesh_.mesh.n_tets();
  constexpr LocalIndex kChunk = 4096;
  std::vector<LocalIndex> cells;
  for (LocalIndex first = 0; first < n_tets; first += kChunk) {
    const LocalIndex count = std::min(kChunk, n_tets - first);
    cells.resize(static_cast<std::size_t>(count));
    std::iota(cells.begin(), cells.end(), first);
    const frames::FramePoints samples = frames::make_samples(mesh_.mesh, cells, lambda.subspan(first, count),
                                                             mu.subspan(first, count), weights_, n);
    space_->add_voxel_sums(samples, lo, hi, grid, sums);
    if (job_.analysis_type == AnalysisType::dynamics)
      add_rest_masses(samples, std::span(model_.cell_mass).subspan(first, count));
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm_);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  space_->use_voxels(sums, grid, rank, size);
}

void FrameSolver::init_loads() {
  // The vertices any load group loads (this rank's cells' and facets' shares, unsummed: the sum over ranks happens
  // with the frame gradient), with their frames' weights; the forces are set per load factor by load_points.
  const int n = n_frames();
  for (LocalIndex v = 0; v < mesh_.n_local(); ++v) {
    const std::size_t k = 3 * static_cast<std::size_t>(v);
    const bool loaded = std::any_of(model_.loads.begin(), model_.loads.end(), [&](const LoadGroup& g) {
      return k + 2 < g.force.size() && (g.force[k] != 0.0 || g.force[k + 1] != 0.0 || g.force[k + 2] != 0.0);
    });
    if (!loaded) continue;
    loaded_vertices_.push_back(v);
    loads_.point.push_back({mesh_.mesh.coords[k], mesh_.mesh.coords[k + 1], mesh_.mesh.coords[k + 2]});
    loads_.force.push_back({0.0, 0.0, 0.0});
    for (int i = 0; i < n; ++i) {
      const double w = weights_[static_cast<std::size_t>(v) * n + i];
      if (w == 0.0) continue;
      frames::Influence in;
      in.frame = i;
      in.c[0] = w;
      loads_.influences.push_back(in);
    }
    loads_.offsets.push_back(static_cast<int>(loads_.influences.size()));
  }
}

const frames::FramePoints& FrameSolver::load_points(double load_factor) const {
  for (auto& f : loads_.force) f = {0.0, 0.0, 0.0};
  for (const LoadGroup& g : model_.loads) {
    const double s = model_.schedules[static_cast<std::size_t>(g.schedule)](load_factor);
    for (std::size_t p = 0; p < loaded_vertices_.size(); ++p) {
      const std::size_t k = 3 * static_cast<std::size_t>(loaded_vertices_[p]);
      if (k + 2 >= g.force.size()) continue;
      for (int c = 0; c < 3; ++c) loads_.force[p][c] += s * g.force[k + c];
    }
  }
  return loads_;
}

void FrameSolver::evaluate(std::span<const double> state, double load_factor, bool want_hessian,
                           frames::FrameSystem& out, bool with_contact) const {
  const frames::FramePoints& loads = load_points(load_factor);
  space_->evaluate(state, loads, want_hessian, out);
  if (with_contact) add_contact(state, want_hessian, out);
  // One reduction: energy, strain energy, gradient (and Hessian).
  std::vector<double> buffer;
  buffer.reserve(2 + out.gradient.size() + out.hessian.size());
  buffer.push_back(out.energy);
  buffer.push_back(out.strain_energy);
  buffer.insert(buffer.end(), out.gradient.begin(), out.gradient.end());
  buffer.insert(buffer.end(), out.hessian.begin(), out.hessian.end());
  MPI_Allreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_DOUBLE, MPI_SUM, comm_);
  // Rank 0's sums for everyone: MPI does not promise bitwise-equal results on every rank, and every decision below
  // (convergence, line search, step) must be the same on all of them.
  MPI_Bcast(buffer.data(), static_cast<int>(buffer.size()), MPI_DOUBLE, 0, comm_);
  out.energy = buffer[0];
  out.strain_energy = buffer[1];
  std::copy(buffer.begin() + 2, buffer.begin() + 2 + static_cast<long>(out.gradient.size()), out.gradient.begin());
  std::copy(buffer.begin() + 2 + static_cast<long>(out.gradient.size()), buffer.end(), out.hessian.begin());
}

void FrameSolver::add_contact(std::span<const double> state, bool want_hessian, frames::FrameSystem& out) const {
  if (!contact_) return;
  const double t0 = MPI_Wtime();
  space_->add_point_potential(state, contact_->points(), contact_->potential(), want_hessian, out);
  (want_hessian ? contact_->seconds().hessian : contact_->seconds().residual) += MPI_Wtime() - t0;
}

void FrameSolver::contact_fields(std::vector<double>& gap, std::vector<double>& force) const {
  if (!contact_) return;
  contact_->vertex_fields(space_->skin(state_, contact_->reference(), contact_->weights()), local_positions(), gap,
                          force);
}

void FrameSolver::report_contact() {
  if (contact_)
    contact_step_ = contact_->report(space_->skin(state_, contact_->reference(), contact_->weights()),
                                     obstacle_forces_);
}

double FrameSolver::energy(std::span<const double> state, double load_factor) const {
  const frames::FramePoints& loads = load_points(load_factor);
  double e = space_->energy(state, loads);
  if (contact_) {
    frames::FrameSystem c;
    add_contact(state, false, c);
    e += c.energy;
  }
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Bcast(&e, 1, MPI_DOUBLE, 0, comm_);  // the same bits everywhere (see evaluate)
  return e;
}

double FrameSolver::contact_energy(std::span<const double> state) const {
  if (!contact_) return 0.0;
  frames::FrameSystem c;
  add_contact(state, false, c);
  double e = c.energy;
  MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Bcast(&e, 1, MPI_DOUBLE, 0, comm_);
  return e;
}

std::vector<int> FrameSolver::free_dofs() const {
  std::vector<int> free;
  const int d = dofs_per_frame();
  for (int i = 0; i < n_frames(); ++i)
    if (!held_[i])
      for (int a = 0; a < d; ++a) free.push_back(d * i + a);
  return free;
}

namespace {

/// The Newton step -K^-1 g on rank 0, broadcast; where K is not positive definite (far from equilibrium), K is
/// shifted until it is.
Eigen::VectorXd newton_direction(MPI_Comm comm, const Eigen::MatrixXd& K, const Eigen::VectorXd& g) {
  const int m = static_cast<int>(g.size());
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Eigen::VectorXd step(m);
  if (rank == 0) {
    double shift = 0.0;
    const double scale = K.diagonal().cwiseAbs().maxCoeff();
    for (int attempt = 0; attempt < 30; ++attempt) {
      Eigen::LDLT<Eigen::MatrixXd> ldlt(K + shift * Eigen::MatrixXd::Identity(m, m));
      step = -ldlt.solve(g);
      if (ldlt.info() == Eigen::Success && ldlt.isPositive() && step.allFinite() && step.dot(g) < 0) break;
      shift = shift == 0.0 ? 1e-8 * scale : 10.0 * shift;
    }
  }
  MPI_Bcast(step.data(), m, MPI_DOUBLE, 0, comm);
  return step;
}

}  // namespace

double FrameSolver::line_search(const std::vector<int>& free, const std::vector<double>& step, double slope,
                                double energy_now, double load_factor, const FrameStepInertia* inertia) {
  // Backtracking on the energy (Armijo), at most 20 halvings.
  const std::size_t n_dofs = static_cast<std::size_t>(dofs_per_frame()) * static_cast<std::size_t>(n_frames());
  auto moved = [&](double alpha) {
    std::vector<double> full(n_dofs, 0.0);
    for (std::size_t a = 0; a < free.size(); ++a) full[free[a]] = alpha * step[a];
    return space_->moved(state_, full);
  };
  auto inertia_at = [&](double alpha) {  // I(D + alpha step)
    if (!inertia) return 0.0;
    Eigen::VectorXd d = inertia->D;
    for (std::size_t a = 0; a < free.size(); ++a) d[free[a]] += alpha * step[a];
    return inertia->energy(d);
  };
  double alpha = 1.0;
  std::vector<double> trial = moved(alpha);
  if (contact_) {  // no contact point may reach an obstacle on the straight way (frames_contact.hpp)
    alpha = contact_->step_limit(space_->skin(state_, contact_->reference(), contact_->weights()),
                                 space_->skin(trial, contact_->reference(), contact_->weights()));
    if (alpha < 1.0) trial = moved(alpha);
  }
  for (int cut = 0; cut < 20; ++cut) {
    const double e = energy(trial, load_factor) + inertia_at(alpha);
    if (std::isfinite(e) && e <= energy_now + 1e-4 * alpha * slope + 1e-14 * std::abs(energy_now)) break;
    alpha *= 0.5;
    trial = moved(alpha);
  }
  state_ = std::move(trial);
  return alpha;
}

bool FrameSolver::solve_step(double load_factor, FrameStepReport& report, std::string& why, double from, double to,
                             FrameStepInertia* inertia) {
  const std::vector<int> free = free_dofs();
  const int m = static_cast<int>(free.size());
  if (m == 0) return true;
  const int n_dofs = dofs_per_frame() * n_frames();
  double largest = -1.0;  // the largest |g| of the step (the relative tolerance's reference)
  double s = contact_ ? from : to;  // where the (moving) obstacles are
  int rank = 0, at_end = 0;
  MPI_Comm_rank(comm_, &rank);
  for (int it = 0;; ++it) {
    if (contact_ && s < to) {  // the moving obstacles as far toward `to` as the points' gaps allow
      s = contact_->advance(space_->skin(state_, contact_->reference(), contact_->weights()), s, to);
      if (it > 0) ++report.stages;
    }
    const auto t0 = std::chrono::steady_clock::now();
    frames::FrameSystem sys;
    evaluate(state_, load_factor, true, sys);
    report.seconds_evaluate += seconds_since(t0);
    Eigen::VectorXd g(m);
    Eigen::MatrixXd K(m, m);
    Eigen::VectorXd inertia_gradient;
    if (inertia) inertia_gradient = inertia->A * inertia->D - inertia->b;
    for (int a = 0; a < m; ++a) {
      g[a] = sys.gradient[free[a]] + (inertia ? inertia_gradient[free[a]] : 0.0);
      for (int b = 0; b < m; ++b)
        K(a, b) = sys.hessian[static_cast<std::size_t>(free[a]) * n_dofs + free[b]] +
                  (inertia ? inertia->A(free[a], free[b]) : 0.0);
    }
    const double e = sys.energy + (inertia ? inertia->energy(inertia->D) : 0.0);
    const double norm = g.norm();
    if (!std::isfinite(norm)) {
      why = "the frame forces are not finite";
      return false;
    }
    largest = std::max(largest, norm);
    report.residuals.push_back(norm);
    if (!quiet_ && job_.newton_max_it > 0 && rank == 0)
      std::printf("    frames Newton %2d: |g| = %.6e, energy = %.12e\n", it, norm, e);
    if (s == to && norm <= std::max(job_.newton_atol, job_.newton_rtol * largest)) return true;
    if ((s == to && at_end++ >= job_.newton_max_it) || it >= 100000) {
      std::ostringstream msg;
      msg << "no convergence in " << job_.newton_max_it << " Newton iterations (|g| " << report.residuals.front()
          << " -> " << norm << ")";
      why = msg.str();
      return false;
    }
    ++report.newton_iterations;
    const Eigen::VectorXd step = newton_direction(comm_, K, g);
    const double alpha = line_search(free, std::vector<double>(step.data(), step.data() + m), g.dot(step), e,
                                     load_factor, inertia);
    if (inertia)
      for (int a = 0; a < m; ++a) inertia->D[free[a]] += alpha * step[a];
  }
}

void FrameSolver::predict(double from, double to) {
  // Linear extrapolation of the last converged increment (affine states only: a rigid state is not a vector space).
  if (space_->dofs_per_frame() != space_->state_per_frame() || previous_state_.empty() || !(from > previous_load_))
    return;
  const double scale = (to - from) / (from - previous_load_);
  std::vector<double> step(state_.size());
  for (std::size_t k = 0; k < step.size(); ++k) step[k] = scale * (state_[k] - previous_state_[k]);
  state_ = space_->moved(state_, step);
}

std::vector<FrameStepReport> FrameSolver::run(const std::function<void(int, double)>& on_step) {
  std::vector<FrameStepReport> reports;
  report_contact();  // (the start's: reactions.csv's step 0)
  on_step(0, 0.0);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  for (int step = 1; step <= job_.steps; ++step) {
    const double load_factor = static_cast<double>(step) / job_.steps;
    FrameStepReport report;
    report.step = step;
    report.load_factor = load_factor;
    const auto t0 = std::chrono::steady_clock::now();
    // The load stepping of the tet solver (advance(), solver/newton.hpp): a failed increment is halved, the poses
    // restored, up to kMaxLoadStepCuts times in a row.
    std::string why;
    const int taken = advance(
        static_cast<double>(step - 1) / job_.steps, load_factor, kMaxLoadStepCuts,
        [&](double a, double b, std::string& failure) {
          const std::vector<double> saved = state_;
          if (contact_)  // friction lagged at the step's start (frames_contact.hpp)
            contact_->begin_step(space_->skin(state_, contact_->reference(), contact_->weights()), b - a, a, b);
          if (!contact_ || !contact_->moving()) {
            if (contact_) contact_->place(b);
            predict(a, b);
            // A prediction that reaches an obstacle (infinite barrier): start from the last state instead.
            if (contact_ && !std::isfinite(energy(state_, b))) state_ = saved;
          }
          if (solve_step(b, report, failure, contact_ && contact_->moving() ? a : b, b)) {
            previous_state_ = saved;
            previous_load_ = a;
            return true;
          }
          state_ = saved;
          why = failure;
          return false;
        },
        [&](double, double increment, const std::string& failure) {
          if (rank == 0)
            std::printf("  warning: step %d: frames: %s; cutting the load increment to %.4g\n", step, failure.c_str(),
                        increment);
        });
    if (taken == 0)
      throw SolverError("frames: load step " + std::to_string(step) + " (load factor " + std::to_string(load_factor) +
                        ") did not converge even after cutting the load increment " + std::to_string(kMaxLoadStepCuts) +
                        " times: " + why);
    report.substeps = taken;
    report_contact();
    report.seconds = seconds_since(t0);
    if (!quiet_ && rank == 0 && !report.residuals.empty())
      std::printf("  step %d: load factor %.4g, %d Newton iterations, |g| %.3e -> %.3e, %.3f s%s\n", step, load_factor,
                  report.newton_iterations, report.residuals.front(), report.residuals.back(), report.seconds,
                  contact_step_ ? contact_progress(*contact_step_).c_str() : "");
    reports.push_back(report);
    on_step(step, load_factor);
  }
  return reports;
}

namespace {

/// The block-diagonal mass matrix of the per-frame blocks (d x d each, row-major).
Eigen::MatrixXd block_diagonal(const std::vector<double>& blocks, int d) {
  const int n = static_cast<int>(blocks.size()) / (d * d);
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n * d, n * d);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c) M(d * i + r, d * i + c) = blocks[static_cast<std::size_t>(d * d * i + d * r + c)];
  return M;
}

}  // namespace

void FrameSolver::time_step(const std::vector<int>& free, FrameTimeStep& report) {
  const DynamicSpec& spec = *job_.dynamic;
  const double h = spec.dt, alpha = spec.damping_mass, beta = spec.damping_stiffness;
  const int n = n_frames(), d = dofs_per_frame(), n6 = d * n;
  const int m = static_cast<int>(free.size());
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  frames::FrameSystem sys;
  evaluate(state_, report.time, true, sys);
  const Eigen::MatrixXd M = block_diagonal(space_->masses(state_, rest_mass_), d);
  Eigen::MatrixXd H(n6, n6);
  for (int a = 0; a < n6; ++a)
    for (int b = 0; b < n6; ++b) H(a, b) = sys.hessian[static_cast<std::size_t>(a) * n6 + b];
  const Eigen::Map<const Eigen::VectorXd> g(sys.gradient.data(), n6);
  Eigen::Map<Eigen::VectorXd> omega(velocity_.data(), n6);
  report.potential = sys.energy;
  if (m > 0) {
    Eigen::MatrixXd A(m, m);
    Eigen::VectorXd rhs(m);
    const Eigen::VectorXd full_rhs = -h * g - h * (alpha * M + beta * H) * omega - h * h * H * omega;
    for (int a = 0; a < m; ++a) {
      rhs[a] = full_rhs[free[a]];
      for (int b = 0; b < m; ++b)
        A(a, b) = (1.0 + h * alpha) * M(free[a], free[b]) + (h * beta + h * h) * H(free[a], free[b]);
    }
    Eigen::VectorXd d_omega(m);
    if (rank == 0) d_omega = A.partialPivLu().solve(rhs);
    MPI_Bcast(d_omega.data(), m, MPI_DOUBLE, 0, comm_);
    if (!d_omega.allFinite())
      throw SolverError("frames: time step " + std::to_string(report.step) + " (t = " + std::to_string(report.time) +
                        "): the linearised implicit Euler system is singular");
    for (int a = 0; a < m; ++a) omega[free[a]] += d_omega[a];
    std::vector<double> increment(velocity_.size(), 0.0);
    for (int i = 0; i < n; ++i)
      if (!held_[i])
        for (int a = 0; a < d; ++a) increment[d * i + a] = h * velocity_[d * i + a];
    state_ = space_->moved(state_, increment);
  }
  report.kinetic = 0.5 * omega.dot(M * omega);
}

void FrameSolver::time_step_newton(const std::vector<int>& free, FrameTimeStep& report) {
  const DynamicSpec& spec = *job_.dynamic;
  const double h = spec.dt, alpha = spec.damping_mass, beta = spec.damping_stiffness, start = report.time - h;
  const int d = dofs_per_frame(), n6 = d * n_frames();
  const Eigen::MatrixXd M = block_diagonal(space_->masses(state_, rest_mass_), d);
  FrameStepInertia inertia;
  inertia.A = (1.0 + h * alpha) * M;
  if (beta != 0.0) {  // Rayleigh's stiffness damping with the strain energy's and loads' Hessian at the start
    frames::FrameSystem sys;
    evaluate(state_, report.time, true, sys, false);
    inertia.A += h * beta * Eigen::Map<const Eigen::MatrixXd>(sys.hessian.data(), n6, n6);
  }
  inertia.A /= h * h;
  const Eigen::Map<Eigen::VectorXd> omega(velocity_.data(), n6);
  inertia.b = M * omega / h;
  inertia.D = Eigen::VectorXd::Zero(n6);
  if (contact_)  // friction lagged at the step's start, with the obstacles' moves over the step
    contact_->begin_step(space_->skin(state_, contact_->reference(), contact_->weights()), h, start, report.time);
  FrameStepReport newton;
  std::string why;
  if (!free.empty() && !solve_step(report.time, newton, why, start, report.time, &inertia))
    throw SolverError("frames: time step " + std::to_string(report.step) + " (t = " + std::to_string(report.time) +
                      ") of backward-euler: " + why);
  for (const int a : free) velocity_[static_cast<std::size_t>(a)] = inertia.D[a] / h;
  report.newton_iterations = newton.newton_iterations;
  report.stages = newton.stages;
  report.kinetic = 0.5 * omega.dot(M * omega);
  report.potential = energy(state_, report.time);
  report.contact = contact_energy(state_);
  if (contact_) contact_->place(report.time);
  report_contact();
}

std::vector<FrameTimeStep> FrameSolver::run_dynamic(const std::function<void(int, double)>& on_step) {
  const DynamicSpec& spec = *job_.dynamic;
  const int n_steps = static_cast<int>(std::lround(spec.end_time / spec.dt));
  const std::vector<int> free = free_dofs();
  std::vector<FrameTimeStep> out;
  report_contact();  // (the start's: reactions.csv's step 0)
  on_step(0, 0.0);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  for (int step = 1; step <= n_steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    FrameTimeStep report;
    report.step = step;
    report.time = step * spec.dt;
    if (spec.integrator == Integrator::backward_euler)
      time_step_newton(free, report);
    else
      time_step(free, report);
    report.seconds = seconds_since(t0);
    if (!quiet_ && rank == 0)
      std::printf("  step %d/%d: t = %.6g, %d Newton iterations, %.3f s%s\n", step, n_steps, report.time,
                  report.newton_iterations, report.seconds, contact_step_ ? contact_progress(*contact_step_).c_str() : "");
    out.push_back(report);
    on_step(step, report.time);
  }
  return out;
}

std::vector<double> FrameSolver::local_positions() const { return space_->skin(state_, mesh_.mesh.coords, weights_); }

void write_frames_vtp(const std::string& path, const FramePlacement& placement, const std::vector<FramePose>& poses,
                      const std::vector<std::array<double, 9>>& maps, const std::vector<int>& held) {
  const std::size_t n = poses.size();
  std::ostringstream s;
  s << std::setprecision(17);
  s << "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
    << "<PolyData>\n<Piece NumberOfPoints=\"" << n << "\" NumberOfVerts=\"" << n
    << "\" NumberOfLines=\"0\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n";
  s << "<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  for (const auto& p : poses) s << p.origin[0] << " " << p.origin[1] << " " << p.origin[2] << "\n";
  s << "</DataArray>\n</Points>\n<PointData>\n";
  s << "<DataArray type=\"Float64\" Name=\"displacement\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i)
    s << poses[i].origin[0] - placement.origins[i][0] << " " << poses[i].origin[1] - placement.origins[i][1] << " "
      << poses[i].origin[2] - placement.origins[i][2] << "\n";
  s << "</DataArray>\n<DataArray type=\"Float64\" Name=\"rotation\" NumberOfComponents=\"4\" format=\"ascii\">\n";
  for (const auto& p : poses)
    s << p.rotation[0] << " " << p.rotation[1] << " " << p.rotation[2] << " " << p.rotation[3] << "\n";
  s << "</DataArray>\n";
  const char* names[3] = {"axis_x", "axis_y", "axis_z"};
  for (int c = 0; c < 3; ++c) {
    s << "<DataArray type=\"Float64\" Name=\"" << names[c] << "\" NumberOfComponents=\"3\" format=\"ascii\">\n";
    for (const auto& R : maps) s << R[c] << " " << R[3 + c] << " " << R[6 + c] << "\n";
    s << "</DataArray>\n";
  }
  s << "<DataArray type=\"Int32\" Name=\"held\" NumberOfComponents=\"1\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) s << held[i] << "\n";
  s << "</DataArray>\n</PointData>\n<Verts>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) s << i << "\n";
  s << "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) s << i + 1 << "\n";
  s << "</DataArray>\n</Verts>\n</Piece>\n</PolyData>\n</VTKFile>\n";
  write_file_atomically(path, s.str());
}

}  // namespace edgefem
