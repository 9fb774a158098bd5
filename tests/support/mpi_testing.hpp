// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file mpi_testing.hpp
/// Helpers shared by the MPI test executables: ranks of MPI_COMM_WORLD, scratch directories, jobs written from
/// YAML text, the distributed mesh of a job, owned-vertex fields gathered in the mesh file's vertex order, and the
/// checkpoint files of a directory. Test-only, header-only; not used by the library.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"

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

#ifdef EDGEFEM_BINARY_DIR
/// The scratch directory of one test executable, build/test-out/<suite>_np<ranks>: the np1/np2/np3 runs of an
/// executable may run concurrently.
inline std::string scratch_dir(const std::string& suite) {
  return std::string(EDGEFEM_BINARY_DIR) + "/test-out/" + suite + "_np" + std::to_string(world_size());
}
#endif

/// Write `yaml` to dir/name.yaml (rank 0) and read it on every rank of MPI_COMM_WORLD. The second barrier keeps
/// rank 0 from rewriting the file (a test that asks for the same name again, with nothing collective in between)
/// while a slower rank is still reading it: on 3 ranks sharing 2 cores rank 0 once truncated it under rank 1,
/// whose read_job threw, so rank 1 left the test and the others waited for it in a collective forever.
inline Job job_from_yaml(const std::string& dir, const std::string& name, const std::string& yaml) {
  const std::string path = dir + "/" + name + ".yaml";
  if (world_rank() == 0) {
    std::filesystem::create_directories(dir);
    std::ofstream(path) << yaml;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::optional<Job> job;
  std::exception_ptr error;
  try {
    job = read_job(path);
  } catch (...) {
    error = std::current_exception();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (error) std::rethrow_exception(error);
  return std::move(*job);
}

/// Collective: the job's mesh, loaded on rank 0 of comm and distributed over comm.
inline LocalMesh distributed_job_mesh(MPI_Comm comm, const Job& job) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Mesh whole;
  if (rank == 0) whole = load_job_mesh(job);
  return distribute_mesh(comm, whole, nullptr, any_bending(job));
}

/// Collective: per-vertex 3-vectors of the owned vertices (each field holds 3 values per local vertex, ghosts
/// ignored) gathered in the mesh file's vertex order: out[f][3 * original + d]. The result is on rank 0 of comm
/// (the other ranks get empty vectors), or on every rank with `everywhere`.
inline std::vector<std::vector<double>> gather_by_original_vertex(MPI_Comm comm, const LocalMesh& mesh,
                                                                  std::initializer_list<std::span<const double>> fields,
                                                                  bool everywhere = false) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t stride = 1 + 3 * fields.size();  // original id, then 3 values of each field
  std::vector<double> mine;
  for (LocalIndex v = 0; v < mesh.n_owned; ++v) {
    mine.push_back(static_cast<double>(mesh.original_vertex[v]));
    for (const auto& field : fields)
      for (int d = 0; d < 3; ++d) mine.push_back(field[3 * static_cast<std::size_t>(v) + d]);
  }
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size) + 1, 0);
  if (everywhere)
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  else
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 0; r < size; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<double> all(static_cast<std::size_t>(offsets[size]));
  if (everywhere)
    MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, comm);
  else
    MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, comm);
  std::vector<std::vector<double>> out(fields.size());
  if (!everywhere && rank != 0) return out;
  const std::size_t n = all.size() / stride;
  for (auto& field : out) field.resize(3 * n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto id = static_cast<std::size_t>(all[stride * k]);
    for (std::size_t f = 0; f < out.size(); ++f)
      for (int d = 0; d < 3; ++d) out[f][3 * id + d] = all[stride * k + 1 + 3 * f + d];
  }
  return out;
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
