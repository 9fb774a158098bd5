#include "solver/assembly.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace edgefem {
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

}  // namespace

LocalForm::LocalForm(Vec v, bool read_only) : global_(v), read_only_(read_only) {
  EDGEFEM_PETSC(VecGhostGetLocalForm(global_, &local_));
  if (read_only_) {
    const PetscScalar* a = nullptr;
    EDGEFEM_PETSC(VecGetArrayRead(local_, &a));
    data_ = const_cast<PetscScalar*>(a);
  } else {
    EDGEFEM_PETSC(VecGetArray(local_, &data_));
  }
  EDGEFEM_PETSC(VecGetLocalSize(local_, &size_));
}

LocalForm::~LocalForm() {
  if (read_only_) {
    const PetscScalar* a = data_;
    VecRestoreArrayRead(local_, &a);
  } else {
    VecRestoreArray(local_, &data_);
  }
  VecGhostRestoreLocalForm(global_, &local_);
}

Assembler::Assembler(MPI_Comm comm, const LocalMesh& mesh, const Model& model)
    : comm_(comm), mesh_(mesh), model_(model) {
  static const std::array<PetscLogEvent, 2> events = [] {
    PetscClassId classid = 0;
    PetscLogEvent force = 0, stiffness = 0;
    EDGEFEM_PETSC(PetscClassIdRegister("edgefem", &classid));
    EDGEFEM_PETSC(PetscLogEventRegister("EdgefemForce", classid, &force));
    EDGEFEM_PETSC(PetscLogEventRegister("EdgefemForceK", classid, &stiffness));
    return std::array<PetscLogEvent, 2>{force, stiffness};
  }();
  event_force_ = events[0];
  event_stiffness_ = events[1];

  const LocalIndex n_owned = mesh_.n_owned, n_local = mesh_.n_local();
  const std::vector<PetscInt> ghosts = to_petsc(mesh_.global_vertex, static_cast<std::size_t>(n_owned));
  EDGEFEM_PETSC(VecCreateGhostBlock(comm_, 3, 3 * n_owned, PETSC_DECIDE, static_cast<PetscInt>(ghosts.size()),
                                    ghosts.data(), x_ghost_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, f_ghost_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, f_ext_.address()));
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, reference_.address()));
  {
    LocalForm ref(reference_, false);
    std::copy(mesh_.mesh.coords.begin(), mesh_.mesh.coords.end(), ref.span().begin());
  }
  {
    LocalForm fe(f_ext_, false);
    std::copy(model_.external_force.begin(), model_.external_force.end(), fe.span().begin());
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ext_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ext_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecCopy(reference_, x_ghost_));
  EDGEFEM_PETSC(VecGhostUpdateBegin(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));

  for (const auto& d : model_.dirichlet)
    dirichlet_rows_.push_back(static_cast<PetscInt>(3 * mesh_.global_vertex[d.dof / 3] + d.dof % 3));

  // COO pattern: 9 entries per 3x3 block, in the order the formulations write their blocks.
  std::size_t n_blocks = 0;
  for (const auto& f : model_.formulations) {
    block_offset_.push_back(n_blocks);
    n_blocks += f->block_pattern().size();
  }
  std::vector<PetscInt> coo_i, coo_j;
  coo_i.reserve(9 * n_blocks);
  coo_j.reserve(9 * n_blocks);
  const std::vector<PetscInt> global = to_petsc(mesh_.global_vertex, 0);
  for (const auto& f : model_.formulations)
    for (const auto& [a, b] : f->block_pattern())
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          coo_i.push_back(3 * global[a] + i);
          coo_j.push_back(3 * global[b] + j);
        }
  // Prescribed dofs of every rank, seen on this rank's local vertices (owned + ghosts).
  std::vector<char> prescribed(3 * static_cast<std::size_t>(n_local), 0);
  {
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
  }
  {
    std::size_t e = 0;
    for (const auto& f : model_.formulations)
      for (const auto& [a, b] : f->block_pattern())
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j, ++e)
            if (prescribed[3 * static_cast<std::size_t>(a) + i] || prescribed[3 * static_cast<std::size_t>(b) + j])
              coo_prescribed_.push_back(e);
  }
  n_kernel_entries_ = 9 * n_blocks;
  for (const PetscInt row : dirichlet_rows_) {
    coo_i.push_back(row);
    coo_j.push_back(row);
  }
  coo_values_.assign(coo_i.size(), 0.0);
  std::fill(coo_values_.begin() + static_cast<std::ptrdiff_t>(n_kernel_entries_), coo_values_.end(), 1.0);
  if (model_.formulations.size() > 1) force_buffer_.assign(3 * static_cast<std::size_t>(n_local), 0.0);

  EDGEFEM_PETSC(MatCreate(comm_, matrix_.address()));
  EDGEFEM_PETSC(MatSetSizes(matrix_, 3 * n_owned, 3 * n_owned, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(matrix_, MATAIJ));
  EDGEFEM_PETSC(MatSetBlockSize(matrix_, 3));
  EDGEFEM_PETSC(MatSetPreallocationCOO(matrix_, static_cast<PetscCount>(coo_i.size()), coo_i.data(), coo_j.data()));
  EDGEFEM_PETSC(MatSetOption(matrix_, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  MatNullSpace rigid = nullptr;
  EDGEFEM_PETSC(MatNullSpaceCreateRigidBody(reference_, &rigid));
  EDGEFEM_PETSC(MatSetNearNullSpace(matrix_, rigid));
  EDGEFEM_PETSC(MatNullSpaceDestroy(&rigid));
}

PetscOwner<Vec, VecDestroy> Assembler::create_vector() const {
  PetscOwner<Vec, VecDestroy> v;
  EDGEFEM_PETSC(VecDuplicate(x_ghost_, v.address()));
  return v;
}

void Assembler::set_positions(Vec x) {
  if (x != x_ghost_.get()) EDGEFEM_PETSC(VecCopy(x, x_ghost_));
  EDGEFEM_PETSC(VecGhostUpdateBegin(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x_ghost_, INSERT_VALUES, SCATTER_FORWARD));
}

std::vector<double> Assembler::local_positions() {
  LocalForm x(x_ghost_, true);
  return {x.span().begin(), x.span().end()};
}

void Assembler::internal_force(Vec out) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_force_, 0, 0, 0, 0));
  {
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
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  if (out != f_ghost_.get()) EDGEFEM_PETSC(VecCopy(f_ghost_, out));
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
  LocalForm x(x_ghost_, true);
  LocalForm f(f_ghost_, false);
  std::span<double> fs = f.span();
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

void Assembler::hand_matrix_to_petsc(Mat P) {
  const std::size_t n_prescribed = coo_prescribed_.size();
#pragma omp parallel for schedule(static)
  for (std::size_t k = 0; k < n_prescribed; ++k) coo_values_[coo_prescribed_[k]] = 0.0;
  EDGEFEM_PETSC(MatSetValuesCOO(P, coo_values_.data(), INSERT_VALUES));
  PetscBool assembled = PETSC_FALSE;
  EDGEFEM_PETSC(MatAssembled(P, &assembled));
  if (!assembled) {
    EDGEFEM_PETSC(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  }
}

void Assembler::stiffness(Mat P) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_stiffness_, 0, 0, 0, 0));
  evaluate_force_and_stiffness();  // the forces come with K; stiffness() does not hand them over
  hand_matrix_to_petsc(P);
  EDGEFEM_PETSC(PetscLogEventEnd(event_stiffness_, 0, 0, 0, 0));
}

void Assembler::force_and_stiffness(Vec f, Mat P) {
  EDGEFEM_PETSC(PetscLogEventBegin(event_stiffness_, 0, 0, 0, 0));
  evaluate_force_and_stiffness();
  EDGEFEM_PETSC(VecGhostUpdateBegin(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  hand_matrix_to_petsc(P);
  EDGEFEM_PETSC(VecGhostUpdateEnd(f_ghost_, ADD_VALUES, SCATTER_REVERSE));
  if (f != f_ghost_.get()) EDGEFEM_PETSC(VecCopy(f_ghost_, f));
  EDGEFEM_PETSC(PetscLogEventEnd(event_stiffness_, 0, 0, 0, 0));
}

std::size_t Assembler::kernel_bytes() const {
  std::size_t bytes = 0;
  for (const auto& f : model_.formulations) bytes += f->bytes();
  return bytes;
}

}  // namespace edgefem
