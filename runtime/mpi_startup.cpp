// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/mpi_startup.hpp"

#include <cstdlib>
#include <cstring>

namespace edgefem {

bool prefer_ob1_on_one_node() {
  if (std::getenv("OMPI_MCA_pml") != nullptr) return false;
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const bool one_node = size != nullptr ? local != nullptr && std::strcmp(size, local) == 0
                                        : std::getenv("PMIX_RANK") == nullptr && std::getenv("PMI_RANK") == nullptr;
  return one_node && setenv("OMPI_MCA_pml", "ob1", 0) == 0;
}

bool yield_when_idle() {
  return std::getenv("OMPI_MCA_mpi_yield_when_idle") == nullptr &&
         setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0) == 0;
}

}  // namespace edgefem
