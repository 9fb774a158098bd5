// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/mpi_startup.hpp"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace edgefem {

bool prefer_ob1_on_one_node() {
  if (std::getenv("OMPI_MCA_pml") != nullptr) return false;
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const bool one_node = size != nullptr ? local != nullptr && std::strcmp(size, local) == 0
                                        : std::getenv("PMIX_RANK") == nullptr && std::getenv("PMI_RANK") == nullptr;
  return one_node && setenv("OMPI_MCA_pml", "ob1", 0) == 0;
}

namespace {

/// The job's rank count as the launcher tells it: 1 for a process no launcher started (a singleton), 0 when a
/// launcher started it without saying (unknown).
long launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"})
    if (const char* value = std::getenv(name)) return std::strtol(value, nullptr, 10);
  const bool launched = std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr;
  return launched ? 0 : 1;
}

}  // namespace

bool yield_when_idle() {
  if (std::getenv("OMPI_MCA_mpi_yield_when_idle") != nullptr || launched_ranks() == 1) return false;
  return setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0) == 0;
}

}  // namespace edgefem
