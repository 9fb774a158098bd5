// SPDX-License-Identifier: BSD-3-Clause
#include "solver/assembly.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "core/setup_laps.hpp"
#include "mesh/vertex_rotations.hpp"
#include "solver/assembly_times.hpp"

namespace edgefem {

AssemblyTimes& assembly_times() {
  static AssemblyTimes times;
  return times;
}

bool assembly_barriers() {
  static const bool on = [] {
    const char* v = std::getenv("EDGEFEM_ASSEMBLY_BARRIERS");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void LocalWorkSeconds::stop() {
  if (stopped_) return;
  stopped_ = true;
  assembly_times().local += MPI_Wtime() - start_;
  assembly_times().local_cpu += process_cpu_seconds() - cpu_start_;
}

void barrier_before_exchange(MPI_Comm comm) {
  if (!assembly_barriers()) return;
  const ScopeSeconds timed(assembly_times().barrier_wait);
  MPI_Barrier(comm);
}

namespace {

std::vector<PetscInt> to_petsc(const std::vector<GlobalIndex>& v, std::size_t begin) {
  std::vector<PetscInt> out;
  out.reserve(v.size() - begin);
  for (std::size_t i = begin; i < v.size(); ++i) {
    if (3 * v[i] + 2 > static_cast<GlobalIndex>(PETSC_MAX_INT))
      throw PetscFailure("global dof " + std::to_string(3 * v[i] + 2) +
                         " does not fit PetscInt: build against 64-bit PETSc (libpetsc64-real-dev)");
    out.push_back(static_cast<PetscInt>(v[i]));
  }
  return out;
}

/// The PETSc log events of the kernel passes (force; force and stiffness), registered once per process.
std::array<PetscLogEvent, 2> kernel_log_events() {
  static const std::array<PetscLogEvent, 2> events = [] {
    PetscClassId classid = 0;
    PetscLogEvent force = 0, stiffness = 0;
    EDGEFEM_PETSC(PetscClassIdRegister("edgefem", &classid));
    EDGEFEM_PETSC(PetscLogEventRegister("EdgefemForce", classid, &force));
    EDGEFEM_PETSC(PetscLogEventRegister("EdgefemForceK", classid, &stiffness));
    return std::array<PetscLogEvent, 2>{force, stiffness};
  }();
  return events;
}

/// A local partial (3 per local vertex) written into v's local form and summed into its owners.
void sum_over_ranks(Vec v, const std::vector<double>& local_partial) {
  {
    LocalForm form(v, false);
    std::copy(local_partial.begin(), local_partial.end(), form.span().begin());
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, ADD_VALUES, SCATTER_REVERSE));
}

}  // namespace

LocalForm::LocalForm(Vec v, bool read_only) : global_(v) {
  EDGEFEM_PETSC(VecGhostGetLocalForm(global_, &local_));
  array_.emplace(local_, read_only);
}

LocalForm::~LocalForm() {
  array_.reset();
  VecGhostRestoreLocalForm(global_, &local_);
}

Assembler::Assembler(MPI_Comm comm, const LocalMesh& mesh, const Model& model)
    : comm_(comm), mesh_(mesh), model_(model) {
  const std::array<PetscLogEvent, 2> events = kernel_log_events();
  event_force_ = events[0];
  event_stiffness_ = events[1];

  create_vectors();
  owned_prescribed_.assign(3 * static_cast<std::size_t>(mesh_.n_owned), 0);
  for (const auto& d : model_.dirichlet) {
    dirichlet_rows_.push_back(static_cast<PetscInt>(3 * mesh_.global_vertex[d.dof / 3] + d.dof % 3));
    owned_prescribed_[static_cast<std::size_t>(d.dof)] = 1;
  }
  setup_laps::mark(setup_laps::Phase::vectors);
  std::vector<PetscInt> coo_i, coo_j;
  build_coo_pattern(coo_i, coo_j);
  setup_laps::mark(setup_laps::Phase::matrix_pattern);
  if (model_.formulations.size() > 1) force_buffer_.assign(3 * static_cast<std::size_t>(mesh_.n_local()), 0.0);
  {
    int local = 0, any = 0;
    for (const auto& f : model_.formulations) local |= f->viscous() ? 1 : 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_LOR, comm_);
    viscous_ = any != 0;
    if (viscous_) EDGEFEM_PETSC(VecDuplicate(x_ghost_, velocity_ghost_.address()));
  }
  if (model_.consistent_mass) create_consistent_mass_matrix(coo_i, coo_j);

  insertion_.emplace(comm_, 3 * static_cast<PetscInt>(mesh_.n_owned), coo_i, coo_j, matrix_);
  EDGEFEM_PETSC(MatSetOption(matrix_, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  setup_laps::mark(setup_laps::Phase::matrix_handover);
  MatNullSpace rigid = nullptr;
  EDGEFEM_PETSC(MatNullSpaceCreateRigidBody(reference_, &rigid));
  EDGEFEM_PETSC(MatSetNearNullSpace(matrix_, rigid));
  EDGEFEM_PETSC(MatNullSpaceDestroy(&rigid));
  setup_laps::mark(setup_laps::Phase::near_null_space);
}

void Assembler::create_vectors() {
  const LocalIndex n_owned = mesh_.n_owned, n_local = mesh_.n_local();
  const std::vector<PetscInt> ghosts = to_petsc(mesh_.global_vertex, static_cast<std::size_t>(n_owned));
  EDGEFEM_PETSC(VecCreateGhostBlock(comm_, 3, 3 * n_owned, PETSC_DECIDE, static_cast<PetscInt>(ghosts.size()),
                                    ghosts.data(), x_ghost_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, f_ghost_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, reference_.address()));
  {
    LocalForm ref(reference_, false);
    std::copy(mesh_.mesh.coords.begin(), mesh_.mesh.coords.end(), ref.span().begin());
  }
  for (const auto& group : model_.loads) {
    loads_.emplace_back();
    EDGEFEM_PETSC(VecDuplicate(x_ghost_, loads_.back().address()));
    sum_over_ranks(loads_.back(), group.force);
  }
  {
    std::vector<double> mass3(3 * static_cast<std::size_t>(n_local), 0.0);
    for (std::size_t v = 0; v < model_.lumped_mass.size(); ++v)
      for (int c = 0; c < 3; ++c) mass3[3 * v + c] = model_.lumped_mass[v];
    sum_over_ranks(f_ghost_, mass3);
    const PetscScalar* m = nullptr;
    EDGEFEM_PETSC(VecGetArrayRead(f_ghost_, &m));
    owned_mass_.assign(m, m + 3 * static_cast<std::size_t>(n_owned));
    EDGEFEM_PETSC(VecRestoreArrayRead(f_ghost_, &m));
  }
  EDGEFEM_PETSC(VecCopy(reference_, x_ghost_));
  EDGEFEM_PETSC(VecGhostUpdateBegin(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
}

std::vector<char> Assembler::prescribed_local_dofs() const {
  std::vector<char> prescribed(3 * static_cast<std::size_t>(mesh_.n_local()), 0);
  PetscOwner<Vec, VecDestroy> mark;
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, mark.address()));
  EDGEFEM_PETSC(VecSet(mark, 0.0));
  {
    LocalForm m(mark, false);
    for (const auto& d : model_.dirichlet) m.span()[static_cast<std::size_t>(d.dof)] = 1.0;
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(mark, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(mark, INSERT_VALUES, SCATTER_FORWARD));
  LocalForm m(mark, true);
  for (std::size_t i = 0; i < prescribed.size(); ++i) prescribed[i] = m.span()[i] != 0.0;
  return prescribed;
}

void Assembler::build_coo_pattern(std::vector<PetscInt>& coo_i, std::vector<PetscInt>& coo_j) {
  const LocalIndex n_owned = mesh_.n_owned;
  // 9 entries per 3x3 block, in the order the formulations write their blocks.
  std::size_t n_blocks = 0;
  for (const auto& f : model_.formulations) {
    block_offset_.push_back(n_blocks);
    n_blocks += f->block_pattern().size();
  }
  coo_i.reserve(9 * n_blocks + 3 * static_cast<std::size_t>(n_owned));
  coo_j.reserve(9 * n_blocks + 3 * static_cast<std::size_t>(n_owned));
  const std::vector<PetscInt> global = to_petsc(mesh_.global_vertex, 0);
  for (const auto& f : model_.formulations)
    for (const auto& [a, b] : f->block_pattern())
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          coo_i.push_back(3 * global[a] + i);
          coo_j.push_back(3 * global[b] + j);
        }
  // The entries in a row or column prescribed on any rank (seen on this rank's local vertices).
  const std::vector<char> prescribed = prescribed_local_dofs();
  std::size_t e = 0;
  for (const auto& f : model_.formulations)
    for (const auto& [a, b] : f->block_pattern())
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j, ++e) {
          const std::size_t row = 3 * static_cast<std::size_t>(a) + i, col = 3 * static_cast<std::size_t>(b) + j;
          if (prescribed[row] || prescribed[col]) coo_prescribed_.push_back(e);
          if (!prescribed[row] && prescribed[col]) coo_lift_.push_back({e, row, col});
        }
  n_kernel_entries_ = 9 * n_blocks;
  diagonal_block_.assign(static_cast<std::size_t>(n_owned), SIZE_MAX);
  for (std::size_t k = 0, blk = 0; k < model_.formulations.size(); ++k)
    for (const auto& [a, b] : model_.formulations[k]->block_pattern()) {
      if (a == b && a < n_owned && diagonal_block_[static_cast<std::size_t>(a)] == SIZE_MAX)
        diagonal_block_[static_cast<std::size_t>(a)] = 9 * blk;
      ++blk;
    }
  // Then the diagonal of every owned dof.
  for (LocalIndex v = 0; v < n_owned; ++v)
    for (int c = 0; c < 3; ++c) {
      coo_i.push_back(3 * global[v] + c);
      coo_j.push_back(3 * global[v] + c);
    }
  n_coo_entries_ = coo_i.size();
}

void Assembler::create_consistent_mass_matrix(const std::vector<PetscInt>& coo_i, const std::vector<PetscInt>& coo_j) {
  // P1 consistent mass: m / (n (n + 1)) (1 + delta_ij) I per vertex pair of every cell of n vertices and mass
  // m (m/20 for tets, m/12 for triangles), on the blocks of the formulation the cell belongs to (its vertex
  // diagonal and edge blocks are in the pattern).
  mass_values_.assign(n_kernel_entries_, 0.0);
  const int n = model_.nodes_per_cell;
  const std::vector<LocalIndex>& cells = n == 4 ? mesh_.mesh.tets : mesh_.mesh.triangles;
  for (std::size_t k = 0; k < model_.formulations.size(); ++k) {
    std::unordered_map<std::uint64_t, std::size_t> block_of;
    const auto& pattern = model_.formulations[k]->block_pattern();
    for (std::size_t blk = 0; blk < pattern.size(); ++blk)
      block_of.try_emplace((static_cast<std::uint64_t>(pattern[blk][0]) << 32) |
                               static_cast<std::uint32_t>(pattern[blk][1]),
                           block_offset_[k] + blk);
    for (const LocalIndex t : model_.formulation_cells[k]) {
      const LocalIndex* v = cells.data() + n * static_cast<std::size_t>(t);
      const double share = model_.cell_mass[static_cast<std::size_t>(t)] / (n * (n + 1));
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const auto it = block_of.find((static_cast<std::uint64_t>(v[i]) << 32) | static_cast<std::uint32_t>(v[j]));
          if (it == block_of.end())
            throw PetscFailure("consistent mass: a cell's vertex pair is not in the block pattern");
          for (int d = 0; d < 3; ++d) mass_values_[9 * it->second + 4 * d] += share * (i == j ? 2.0 : 1.0);
        }
    }
  }
  std::vector<double> values(coo_i.size(), 0.0);
  std::copy(mass_values_.begin(), mass_values_.end(), values.begin());
  AijInsertion(comm_, 3 * static_cast<PetscInt>(mesh_.n_owned), coo_i, coo_j, mass_matrix_).insert(mass_matrix_, values.data());
}

PetscOwner<Vec, VecDestroy> Assembler::create_vector() const {
  PetscOwner<Vec, VecDestroy> v;
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, v.address()));
  return v;
}

void Assembler::update_ghosts(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
}

void Assembler::set_positions(Vec x) {
  {
    const LocalWorkSeconds timed;
    if (x != x_ghost_.get()) EDGEFEM_PETSC(VecCopy(x, x_ghost_));
  }
  barrier_before_exchange(comm_);  // (diagnostic mode: how late the other ranks arrive at this assembly)
  const ScopeSeconds timed(assembly_times().exchange);
  EDGEFEM_PETSC(VecGhostUpdateBegin(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
}

std::vector<double> Assembler::vertex_rotations() {
  if (mesh_.mesh.tets.empty()) return {};
  LocalForm x(x_ghost_, true);
  return edgefem::vertex_rotations(mesh_.mesh.coords, x.span(), mesh_.mesh.tets, mesh_.n_owned);
}

std::vector<double> Assembler::local_positions() {
  LocalForm x(x_ghost_, true);
  return {x.span().begin(), x.span().end()};
}

void Assembler::internal_force(Vec out) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_force_, 0, 0, 0, 0));
  {
    const LocalWorkSeconds timed;
    LocalForm x(x_ghost_, true);
    LocalForm f(f_ghost_, false);
    std::span<double> fs = f.span();
    for (std::size_t k = 0; k < model_.formulations.size(); ++k) {
      if (k == 0) {
        model_.formulations[k]->force(x.span(), fs);  // overwrites every local entry
        continue;
      }
      model_.formulations[k]->force(x.span(), force_buffer_);
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < fs.size(); ++i) fs[i] += force_buffer_[i];
    }
    if (model_.formulations.empty()) std::fill(fs.begin(), fs.end(), 0.0);
  }
  barrier_before_exchange(comm_);
  {
    const ScopeSeconds timed(assembly_times().exchange);
    EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
    EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  }
  if (out != f_ghost_.get()) {
    const LocalWorkSeconds timed;
    EDGEFEM_PETSC(VecCopy(f_ghost_, out));
  }
  EDGEFEM_PETSC(PetscLogEventEnd(event_force_, 0, 0, 0, 0));
}

std::vector<double> Assembler::local_internal_force() {
  internal_force(f_ghost_);
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  LocalForm f(f_ghost_, true);
  return {f.span().begin(), f.span().end()};
}

void Assembler::evaluate_force_and_stiffness() {
  const LocalWorkSeconds timed;
  LocalForm x(x_ghost_, true);
  LocalForm f(f_ghost_, false);
  std::span<double> fs = f.span();
  coo_values_.assign(n_coo_entries_, 0.0);  // (freed again once handed over)
  for (std::size_t k = 0; k < model_.formulations.size(); ++k) {
    const auto& form = model_.formulations[k];
    std::span<double> blocks(coo_values_.data() + 9 * block_offset_[k], 9 * form->block_pattern().size());
    if (k == 0) {
      form->force_and_stiffness(x.span(), fs, blocks);
      continue;
    }
    form->force_and_stiffness(x.span(), force_buffer_, blocks);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < fs.size(); ++i) fs[i] += force_buffer_[i];
  }
  if (model_.formulations.empty()) std::fill(fs.begin(), fs.end(), 0.0);
}

void Assembler::hand_matrix_to_petsc(Mat P, const MatrixCoefficients& c) {
  if (P != matrix_.get()) throw PetscFailure("Assembler: the stiffness goes into matrix() only");
  const std::size_t n_kernel = n_kernel_entries_;
  double* values = coo_values_.data();
  // (the lifting's and the viscous terms' ghost updates are counted as local work: rare, small)
  LocalWorkSeconds local_work;
  if (!mass_values_.empty() && c.mass != 0.0) {
    const double* mass = mass_values_.data();
#pragma omp parallel for schedule(static)
    for (std::size_t e = 0; e < n_kernel; ++e) values[e] = c.stiffness * values[e] + c.mass * mass[e];
  } else if (c.stiffness != 1.0) {
#pragma omp parallel for schedule(static)
    for (std::size_t e = 0; e < n_kernel; ++e) values[e] *= c.stiffness;
  }
  if (c.lift_in != nullptr && c.lift_out != nullptr) {
    update_ghosts(c.lift_in);
    {
      LocalForm in(c.lift_in, true);
      LocalForm out(c.lift_out, false);
      std::span<double> o = out.span();
      std::fill(o.begin(), o.end(), 0.0);
      for (const auto& [e, row, col] : coo_lift_) o[row] += values[e] * in.span()[col];
    }
    EDGEFEM_PETSC(VecGhostUpdateBegin(c.lift_out, ADD_VALUES, SCATTER_REVERSE));
    EDGEFEM_PETSC(VecGhostUpdateEnd(c.lift_out, ADD_VALUES, SCATTER_REVERSE));
  }
  if (viscous_ && c.damping != 0.0 && c.velocity != nullptr) {
    EDGEFEM_PETSC(VecCopy(c.velocity, velocity_ghost_));
    update_ghosts(velocity_ghost_);
    damping_values_.resize(n_kernel);
    LocalForm x(x_ghost_, true);
    LocalForm v(velocity_ghost_, true);
    force_buffer_.resize(x.span().size());
    for (std::size_t k = 0; k < model_.formulations.size(); ++k) {
      const auto& form = model_.formulations[k];
      if (!form->viscous()) continue;
      const std::size_t begin = 9 * block_offset_[k], size = 9 * form->block_pattern().size();
      form->viscous_force_and_damping(x.span(), v.span(), force_buffer_, {damping_values_.data() + begin, size});
#pragma omp parallel for schedule(static)
      for (std::size_t e = begin; e < begin + size; ++e) values[e] += c.damping * damping_values_[e];
    }
  }
  add_vertex_blocks(c);
  const std::size_t n_prescribed = coo_prescribed_.size();
#pragma omp parallel for schedule(static)
  for (std::size_t k = 0; k < n_prescribed; ++k) values[coo_prescribed_[k]] = 0.0;
  const bool lumped = mass_values_.empty();
  for (std::size_t i = 0; i < owned_prescribed_.size(); ++i) {
    double d = lumped ? c.mass * owned_mass_[i] : 0.0;
    if (!c.diagonal.empty()) d += c.diagonal[i];
    values[n_kernel + i] = owned_prescribed_[i] ? 1.0 : d;
  }
  local_work.stop();
  barrier_before_exchange(comm_);
  {
    const ScopeSeconds timed(assembly_times().insertion);
    insertion_->insert(P, coo_values_.data());
  }
  std::vector<double>().swap(coo_values_);  // its heap serves the solve's and the output's allocations
}

void Assembler::add_vertex_blocks(const MatrixCoefficients& c) {
  for (const contact::VertexBlock& b : c.vertex_blocks) {
    const std::size_t first = diagonal_block_.at(static_cast<std::size_t>(b.vertex));
    if (first == SIZE_MAX) throw PetscFailure("Assembler: a contact block on a vertex without a diagonal block");
    for (int k = 0; k < 9; ++k) coo_values_[first + static_cast<std::size_t>(k)] += b.values[static_cast<std::size_t>(k)];
  }
}

void Assembler::stiffness(Mat P, const MatrixCoefficients& c) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_stiffness_, 0, 0, 0, 0));
  evaluate_force_and_stiffness();  // the forces come with K; stiffness() does not hand them over
  hand_matrix_to_petsc(P, c);
  EDGEFEM_PETSC(PetscLogEventEnd(event_stiffness_, 0, 0, 0, 0));
}

void Assembler::force_and_stiffness(Vec f, Mat P, const MatrixCoefficients& c) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_stiffness_, 0, 0, 0, 0));
  evaluate_force_and_stiffness();
  // Ghosted duplicates share one scatter context: the lifting's and the viscous velocity's scatters cannot overlap
  // the force's.
  const bool overlap = c.lift_in == nullptr && c.damping == 0.0;
  if (overlap) {
    barrier_before_exchange(comm_);
    const ScopeSeconds timed(assembly_times().exchange);
    EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  }
  hand_matrix_to_petsc(P, c);
  {
    const ScopeSeconds timed(assembly_times().exchange);
    if (!overlap) EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
    EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  }
  if (f != f_ghost_.get()) {
    const LocalWorkSeconds timed;
    EDGEFEM_PETSC(VecCopy(f_ghost_, f));
  }
  EDGEFEM_PETSC(PetscLogEventEnd(event_stiffness_, 0, 0, 0, 0));
}

void Assembler::external_force(double t, Vec out) const {
  const LocalWorkSeconds timed;
  EDGEFEM_PETSC(VecSet(out, 0.0));
  for (std::size_t g = 0; g < loads_.size(); ++g) {
    const double s = model_.schedules[static_cast<std::size_t>(model_.loads[g].schedule)](t);
    if (s != 0.0) EDGEFEM_PETSC(VecAXPY(out, s, loads_[g]));
  }
}

void Assembler::mass_multiply(Vec x, Vec y) const {
  if (mass_matrix_) {
    EDGEFEM_PETSC(MatMult(mass_matrix_, x, y));
    return;
  }
  const PetscScalar* xa = nullptr;
  PetscScalar* ya = nullptr;
  EDGEFEM_PETSC(VecGetArrayRead(x, &xa));
  EDGEFEM_PETSC(VecGetArray(y, &ya));
  for (std::size_t i = 0; i < owned_mass_.size(); ++i) ya[i] = owned_mass_[i] * xa[i];
  EDGEFEM_PETSC(VecRestoreArray(y, &ya));
  EDGEFEM_PETSC(VecRestoreArrayRead(x, &xa));
}

void Assembler::viscous_force(Vec velocity, Vec out) {
  EDGEFEM_PETSC(VecCopy(velocity, velocity_ghost_));
  update_ghosts(velocity_ghost_);
  {
    LocalForm x(x_ghost_, true);
    LocalForm v(velocity_ghost_, true);
    LocalForm f(f_ghost_, false);
    std::span<double> fs = f.span();
    std::fill(fs.begin(), fs.end(), 0.0);
    force_buffer_.resize(fs.size());
    for (const auto& form : model_.formulations) {
      if (!form->viscous()) continue;
      form->viscous_force_and_damping(x.span(), v.span(), force_buffer_, {});
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < fs.size(); ++i) fs[i] += force_buffer_[i];
    }
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecCopy(f_ghost_, out));
}

double Assembler::energy() {
  double local = 0.0;
  {
    LocalForm x(x_ghost_, true);
    for (const auto& f : model_.formulations) local += f->energy(x.span());
  }
  double total = 0.0;
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return total;
}

std::size_t Assembler::state_bytes() const {
  const auto vec = [](Vec v) -> std::size_t {
    PetscInt n = 0;
    if (!v || VecGetLocalSize(v, &n) != 0) return 0;
    // (a ghosted vector's local form: owned and ghost entries)
    Vec local = nullptr;
    if (VecGhostGetLocalForm(v, &local) == 0 && local) {
      VecGetLocalSize(local, &n);
      VecGhostRestoreLocalForm(v, &local);
    }
    return static_cast<std::size_t>(n) * sizeof(PetscScalar);
  };
  std::size_t b = vec(x_ghost_) + vec(f_ghost_) + vec(reference_) + vec(velocity_ghost_);
  for (const auto& l : loads_) b += vec(l);
  const auto cap = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  b += cap(owned_mass_) + cap(mass_values_) + cap(owned_prescribed_) + cap(damping_values_) + cap(dirichlet_rows_) +
       cap(force_buffer_) + cap(block_offset_) + cap(coo_prescribed_) + cap(coo_lift_);
  MatNullSpace near = nullptr;
  if (matrix_ && MatGetNearNullSpace(matrix_, &near) == 0 && near) {
    PetscBool constant = PETSC_FALSE;
    PetscInt n = 0;
    const Vec* vecs = nullptr;
    if (MatNullSpaceGetVecs(near, &constant, &n, &vecs) == 0)
      for (PetscInt k = 0; k < n; ++k) b += vec(vecs[k]);
  }
  return b;
}

std::size_t Assembler::kernel_bytes() const {
  std::size_t bytes = 0;
  for (const auto& f : model_.formulations) bytes += f->bytes();
  return bytes;
}

}  // namespace edgefem
