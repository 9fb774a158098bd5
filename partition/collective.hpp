// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file collective.hpp
/// Error handling that never leaves a rank waiting in a collective: run a step on every rank, agree on
/// whether any rank failed, and make every rank throw the same (first failing rank's) message.
#include <mpi.h>

#include <exception>
#include <string>

#include "core/error.hpp"

namespace edgefem {

/// Broadcast `message` from the lowest rank with failed == true; returns true on every rank if any failed.
bool agree_on_failure(MPI_Comm comm, bool failed, std::string& message);

/// Run f() on every rank. If it throws on any rank, every rank throws CollectiveError (core/error.hpp) with the
/// message of the lowest failing rank (InputError messages are passed through unchanged).
template <class F>
void run_collectively(MPI_Comm comm, F&& f) {
  bool failed = false;
  std::string message;
  try {
    f();
  } catch (const std::exception& e) {
    failed = true;
    message = e.what();
  }
  if (agree_on_failure(comm, failed, message)) throw CollectiveError(message);
}

}  // namespace edgefem
