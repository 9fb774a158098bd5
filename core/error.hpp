// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file error.hpp
/// The errors edgefem raises on purpose: one hierarchy, plain C++ (no MPI, no PETSc), so that every layer
/// (mesh/, materials/, partition/, io/, solver/, apps/) may include it.
///
///     std::runtime_error
///       Error                    what() is the complete message for the user; scope() says which ranks throw it
///         InputError             bad user input (mesh, job or checkpoint file, command line)      every rank
///         SolverError            a load or time step failed even after cutting it                  every rank
///         CollectiveError        some rank failed a collective step (its message, on every rank)   every rank
///         ResourceError          the run would not fit the machine (memory estimate)               every rank
///         PetscFailure           a PETSc call failed (linalg/petsc_util.hpp): a bug or resources    this rank
///
/// `main` catches Error once: an error thrown on every rank is reported once (by rank 0) and every rank exits
/// with status 1; an error that may be this rank's alone (and any other std::exception) aborts the run
/// (MPI_Abort) so that no rank is left waiting in a collective call.
#include <stdexcept>
#include <string>

namespace edgefem {

/// Which ranks throw an error together.
enum class ErrorScope {
  every_rank,  ///< every rank of the communicator throws it, with the same message
  this_rank,   ///< possibly this rank only (the others may be waiting in a collective call)
};

/// Base of every error edgefem raises on purpose.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, ErrorScope scope) : std::runtime_error(message), scope_(scope) {}
  [[nodiscard]] ErrorScope scope() const noexcept { return scope_; }

 private:
  ErrorScope scope_;
};

/// User-input errors (mesh files, job files, checkpoint files, command line). The message names the file,
/// the line or key, the bad value and what was expected. Thrown on every rank that takes part (a reader
/// that runs on one rank is wrapped in run_collectively, which rethrows on every rank).
struct InputError : Error {
  explicit InputError(const std::string& message) : Error(message, ErrorScope::every_rank) {}
};

/// A load step or time step cannot be solved even after cutting it. Thrown on every rank.
struct SolverError : Error {
  explicit SolverError(const std::string& message) : Error(message, ErrorScope::every_rank) {}
};

/// Some rank failed a collective step (partition/collective.hpp, io/checkpoint*): thrown on every rank,
/// what() is the lowest failing rank's message.
struct CollectiveError : Error {
  explicit CollectiveError(const std::string& message) : Error(message, ErrorScope::every_rank) {}
};

/// The run cannot fit the resources it has (run/memory_budget.hpp: the memory estimate before the model is
/// built). Decided collectively: thrown on every rank, with the same message.
struct ResourceError : Error {
  explicit ResourceError(const std::string& message) : Error(message, ErrorScope::every_rank) {}
};

}  // namespace edgefem
