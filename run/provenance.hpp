// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file provenance.hpp
/// Which program produced a result: edgefem's version (project(VERSION), generated edgefem/version.hpp), the
/// `git describe --always --dirty` of the tree it was built from (captured at build time, "unknown" without git),
/// the versions of PETSc, MPI, VTK and METIS it was built with, and where it ran (host names, ranks, threads).
/// `edgefem --version` prints it; summary.json carries it as "provenance" (io/summary.hpp).
#include <mpi.h>

#include <string>

#include "io/summary.hpp"

namespace edgefem {

/// `git describe --always --dirty` at build time (generated source; "unknown" without git).
const char* git_describe();

/// The program and library versions (no MPI call but MPI_Get_library_version, which is allowed before MPI_Init);
/// hosts, ranks and threads are left empty / 1.
Provenance build_provenance();

/// Collective: build_provenance() with the host names of every rank (unique, sorted, on every rank), the number of
/// ranks of `comm` and this rank's OpenMP threads.
Provenance gather_provenance(MPI_Comm comm);

/// The text of `edgefem --version`: one "name: value" line each.
std::string provenance_text(const Provenance& p);

}  // namespace edgefem
