// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint write and read times (io/checkpoint): N vertices, the three fields of a dynamic run (position,
// velocity, acceleration), written and read back REPEATS times by the ranks of MPI_COMM_WORLD; prints the
// fastest and the median of each. Two ownerships: "blocks" (rank r owns [r N / P, (r + 1) N / P)) and
// "strided" (vertex i on rank i % P: every owned run is one vertex long, the worst case for a file view).
// Usage: mpiexec -n P edgefem_bench_checkpoint [N] [DIR] [REPEATS] [blocks|strided]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"

namespace {

using namespace edgefem;

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const std::string dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path().string();
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const std::string only = argc > 4 ? argv[4] : "";
  const std::string path = dir + "/edgefem_bench_checkpoint.ckpt";
  int status = 0;
  try {
    for (const char* scheme : {"blocks", "strided"}) {
      if (!only.empty() && only != scheme) continue;
      std::vector<std::int64_t> owned;
      for (std::int64_t i = 0; i < n; ++i) {
        const int owner = std::string(scheme) == "blocks" ? static_cast<int>(i * size / n) : static_cast<int>(i % size);
        if (owner == rank) owned.push_back(i);
      }
      CheckpointState state;
      state.step = 10;
      state.time = 0.5;
      state.dt = 0.05;
      state.integrator = "newmark";
      state.job_text = "analysis: {type: dynamic}\n";
      state.field_names = {"position", "velocity", "acceleration"};
      for (std::size_t f = 0; f < 3; ++f) {
        std::vector<double> values;
        values.reserve(3 * owned.size());
        for (const std::int64_t v : owned)
          for (int c = 0; c < 3; ++c) values.push_back(static_cast<double>(f) + static_cast<double>(v) * 1e-3 + c);
        state.fields.push_back(std::move(values));
      }
      std::vector<double> write_s, read_s;
      for (int k = 0; k < repeats; ++k) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        write_checkpoint(MPI_COMM_WORLD, path, n, owned, state);
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        const CheckpointState back = read_checkpoint(MPI_COMM_WORLD, path, n, owned);
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        write_s.push_back(t1 - t0);
        read_s.push_back(t2 - t1);
        if (back.fields != state.fields) throw std::runtime_error("read back differs");
      }
      if (rank == 0) {
        const double mb = 72.0 * static_cast<double>(n) / 1e6;
        std::printf(
            "%d ranks, %lld vertices (%.1f MB of fields), %s: write min %.4f s median %.4f s, "
            "read min %.4f s median %.4f s\n",
            size, static_cast<long long>(n), mb, scheme, *std::min_element(write_s.begin(), write_s.end()),
            median(write_s), *std::min_element(read_s.begin(), read_s.end()), median(read_s));
      }
    }
    if (rank == 0) std::filesystem::remove(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
