// SPDX-License-Identifier: BSD-3-Clause
/// \file provenance.cpp
/// Versions and hosts of a run (provenance.hpp).
#include "run/provenance.hpp"

#include <petscversion.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "edgefem/version.hpp"
#include "io/vtk_output.hpp"
#include "partition/metis_version.hpp"
#include "run/report.hpp"

namespace edgefem {

namespace {

/// The first line of MPI_Get_library_version (Open MPI's is "Open MPI v4.1.4, package: ..., Nov 2022").
std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string s(text, static_cast<std::size_t>(std::max(0, length)));
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

Provenance build_provenance() {
  Provenance p;
  p.version = EDGEFEM_VERSION;
  p.git_describe = git_describe();
  p.petsc = std::to_string(PETSC_VERSION_MAJOR) + "." + std::to_string(PETSC_VERSION_MINOR) + "." +
            std::to_string(PETSC_VERSION_SUBMINOR);
  p.mpi = mpi_library_version();
  p.vtk = vtk_version();
  p.metis = metis_version();
  return p;
}

Provenance gather_provenance(MPI_Comm comm) {
  Provenance p = build_provenance();
  MPI_Comm_size(comm, &p.ranks);
  p.threads_per_rank = threads();
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(p.ranks) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  for (int r = 0; r < p.ranks; ++r) {
    const char* host = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    p.hosts.emplace_back(host, strnlen(host, MPI_MAX_PROCESSOR_NAME));
  }
  std::sort(p.hosts.begin(), p.hosts.end());
  p.hosts.erase(std::unique(p.hosts.begin(), p.hosts.end()), p.hosts.end());
  return p;
}

std::string provenance_text(const Provenance& p) {
  return "edgefem " + p.version + "\n  git describe: " + p.git_describe + "\n  PETSc: " + p.petsc + "\n  MPI: " + p.mpi +
         "\n  VTK: " + p.vtk + "\n  METIS: " + p.metis + "\n";
}

}  // namespace edgefem
