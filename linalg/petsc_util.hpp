// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file petsc_util.hpp
/// Checked PETSc calls from C++ code and thin move-only owners of PETSc objects.
#include <petscsys.h>
#include <petscmat.h>
#include <petscvec.h>

#include <initializer_list>
#include <span>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace edgefem {

/// A PETSc call failed (a bug or a resource problem, not bad user input). Possibly thrown on this rank only:
/// `main` aborts the run.
struct PetscFailure : Error {
  explicit PetscFailure(const std::string& message) : Error(message, ErrorScope::this_rank) {}
};

/// Throw PetscFailure naming the call when a PETSc function returns an error.
inline void petsc_check(PetscErrorCode code, const char* what) {
  if (code != 0) {
    const char* text = nullptr;
    PetscErrorMessage(code, &text, nullptr);
    throw PetscFailure(std::string("PETSc error in ") + what + ": " + (text ? text : "unknown error") + " (code " +
                       std::to_string(static_cast<int>(code)) + ")");
  }
}
#define EDGEFEM_PETSC(call) ::edgefem::petsc_check((call), #call)

/// True when the PETSc object `object` (a Mat, PC, KSP, ... handle) has one of `types` (MATSEQAIJ, PCGAMG, ...).
template <class Handle>
bool has_type(Handle object, std::initializer_list<const char*> types) {
  for (const char* type : types) {
    PetscBool match = PETSC_FALSE;
    EDGEFEM_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(object), type, &match));
    if (match == PETSC_TRUE) return true;
  }
  return false;
}

/// Whether `m` is a (sequential or MPI) AIJ matrix; false for no matrix.
inline bool is_aij(Mat m) { return m && has_type(m, {MATSEQAIJ, MATMPIAIJ}); }

/// Move-only owner of a PETSc object handle (Vec, Mat, KSP, SNES, IS, VecScatter, MatNullSpace).
template <class Handle, PetscErrorCode (*Destroy)(Handle*)>
class PetscOwner {
 public:
  PetscOwner() = default;
  explicit PetscOwner(Handle h) : handle_(h) {}
  PetscOwner(const PetscOwner&) = delete;
  PetscOwner& operator=(const PetscOwner&) = delete;
  PetscOwner(PetscOwner&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  PetscOwner& operator=(PetscOwner&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~PetscOwner() { reset(); }
  void reset() {
    if (handle_) Destroy(&handle_);
    handle_ = nullptr;
  }
  [[nodiscard]] Handle get() const { return handle_; }
  Handle* address() { return &handle_; }       ///< for Create calls; the owner must be empty
  operator Handle() const { return handle_; }  // NOLINT: implicit on purpose, PETSc calls take handles

 private:
  Handle handle_ = nullptr;
};

/// RAII access to the entries of a vector on this process (VecGetArray / VecGetArrayRead).
class VecArray {
 public:
  VecArray(Vec v, bool read_only) : v_(v), read_only_(read_only) {
    if (read_only_) {
      const PetscScalar* a = nullptr;
      EDGEFEM_PETSC(VecGetArrayRead(v_, &a));
      data_ = const_cast<PetscScalar*>(a);
    } else {
      EDGEFEM_PETSC(VecGetArray(v_, &data_));
    }
    EDGEFEM_PETSC(VecGetLocalSize(v_, &size_));
  }
  ~VecArray() {
    if (read_only_) {
      const PetscScalar* a = data_;
      VecRestoreArrayRead(v_, &a);
    } else {
      VecRestoreArray(v_, &data_);
    }
  }
  VecArray(const VecArray&) = delete;
  VecArray& operator=(const VecArray&) = delete;
  [[nodiscard]] std::span<double> span() const { return {data_, static_cast<std::size_t>(size_)}; }

 private:
  Vec v_;
  bool read_only_;
  PetscScalar* data_ = nullptr;
  PetscInt size_ = 0;
};

/// The PETSc log stage called `name`, registered on first use (stages are process-wide).
inline PetscLogStage log_stage(const char* name) {
  PetscLogStage stage = -1;
  EDGEFEM_PETSC(PetscLogStageGetId(name, &stage));
  if (stage < 0) EDGEFEM_PETSC(PetscLogStageRegister(name, &stage));
  return stage;
}

/// Run a PETSc callback body: push `stage`, run f, pop; a C++ exception becomes a PETSc error (for SNES
/// callbacks, which must not throw through C code).
template <class F>
PetscErrorCode petsc_callback(PetscLogStage stage, F&& f) {
  PetscCall(PetscLogStagePush(stage));
  try {
    f();
  } catch (const std::exception& e) {
    PetscLogStagePop();
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(PetscLogStagePop());
  return 0;
}

}  // namespace edgefem
