#pragma once
/// \file error.hpp
/// User-input errors (mesh files, job files, command line). The message is complete and meant for
/// the user: it names the file, the line or key, the bad value and what was expected.
#include <stdexcept>
#include <string>

namespace edgefem {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace edgefem
