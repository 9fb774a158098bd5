#pragma once
/// \file petsc_util.hpp
/// Checked PETSc calls from C++ code and thin move-only owners of PETSc objects.
#include <petscsys.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace edgefem {

/// A PETSc call failed (a bug or a resource problem, not bad user input).
struct PetscFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
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
  Handle* address() { return &handle_; }  ///< for Create calls; the owner must be empty
  operator Handle() const { return handle_; }  // NOLINT: implicit on purpose, PETSc calls take handles

 private:
  Handle handle_ = nullptr;
};

}  // namespace edgefem
