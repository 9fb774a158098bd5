// SPDX-License-Identifier: BSD-3-Clause
#include "linalg/shared_values.hpp"

#include "linalg/petsc_util.hpp"

namespace edgefem {

namespace {

constexpr const char* kComposedName = "edgefem_shared_values";

PetscErrorCode destroy_reference(void* p) {
  delete static_cast<std::shared_ptr<SharedValues>*>(p);
  return 0;
}

}  // namespace

std::span<double> SharedValues::take(const void* holder, std::size_t n) {
  if (n > values_.size()) {
    std::vector<double>().swap(values_);  // (the old values are dead: not copied)
    values_.resize(n);
  }
  holder_ = holder;
  return {values_.data(), n};
}

void compose_shared_values(Mat matrix, const std::shared_ptr<SharedValues>& values) {
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(matrix), &comm));
  PetscContainer container = nullptr;
  EDGEFEM_PETSC(PetscContainerCreate(comm, &container));
  EDGEFEM_PETSC(PetscContainerSetPointer(container, new std::shared_ptr<SharedValues>(values)));
  EDGEFEM_PETSC(PetscContainerSetUserDestroy(container, destroy_reference));
  EDGEFEM_PETSC(PetscObjectCompose(reinterpret_cast<PetscObject>(matrix), kComposedName,
                                   reinterpret_cast<PetscObject>(container)));
  EDGEFEM_PETSC(PetscContainerDestroy(&container));
}

std::shared_ptr<SharedValues> shared_values_of(Mat matrix) {
  PetscObject found = nullptr;
  EDGEFEM_PETSC(PetscObjectQuery(reinterpret_cast<PetscObject>(matrix), kComposedName, &found));
  if (found == nullptr) return nullptr;
  void* p = nullptr;
  EDGEFEM_PETSC(PetscContainerGetPointer(reinterpret_cast<PetscContainer>(found), &p));
  return *static_cast<std::shared_ptr<SharedValues>*>(p);
}

}  // namespace edgefem
