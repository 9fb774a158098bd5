#pragma once
/// \file mpi_test_util.hpp
/// Small helpers shared by the MPI test executables.
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

/// The names of the checkpoint files (*.ckpt) in `dir`, not in its subfolders, sorted.
inline std::vector<std::string> checkpoint_names(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".ckpt") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace edgefem::mpitest
