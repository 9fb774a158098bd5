#pragma once
/// \file mpi_test_util.hpp
/// Small helpers shared by the MPI test executables.
#include <mpi.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/job.hpp"

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

/// Write `yaml` to dir/name.yaml (rank 0) and read it on every rank of MPI_COMM_WORLD.
inline Job job_from_yaml(const std::string& dir, const std::string& name, const std::string& yaml) {
  const std::string path = dir + "/" + name + ".yaml";
  if (world_rank() == 0) {
    std::filesystem::create_directories(dir);
    std::ofstream(path) << yaml;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return read_job(path);
}

}  // namespace edgefem::mpitest
