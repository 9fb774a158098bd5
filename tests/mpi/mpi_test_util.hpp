#pragma once
/// \file mpi_test_util.hpp
/// Small helpers shared by the MPI test executables.
#include <mpi.h>

namespace edgefem::mpitest {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace edgefem::mpitest
