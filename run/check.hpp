// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file check.hpp
/// `edgefem check JOB.yaml`: reads and validates a job as `run` would (every key, value and cross-section rule of
/// io/job.cpp) and the header of its mesh file, without MPI, a mesh or a solve; prints the resolved job (every
/// key of every given section, the absent ones at their defaults) and the mesh line. Throws InputError like `run`.
#include <string>

namespace edgefem {

/// Returns 0; prints to standard output.
int check_job(const std::string& path);

/// The header of a Gmsh file, "MSH 4.1 binary" or "MSH 2.2 ASCII"; throws InputError naming the file when it is
/// not a Gmsh file of a version edgefem reads (2.2, 4.1).
std::string gmsh_header(const std::string& path);

}  // namespace edgefem
