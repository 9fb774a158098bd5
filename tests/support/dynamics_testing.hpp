// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file dynamics_testing.hpp
/// Fixtures of the implicit-dynamics tests (tests/mpi/test_dynamics*.cpp, one executable): the scratch directory and
/// jobs of the executable, tight solver options, a run of a job with probes, energies and checkpoints, the final
/// state gathered on every rank, and comparisons. Test-only, header-only.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "run/time_loop.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem::dynamics_testing {

using mpitest::world_rank;
using mpitest::world_size;

/// Per-executable scratch directory (the np1/np2/np3 tests may run concurrently).
inline std::string scratch() { return mpitest::scratch_dir("dynamics"); }

/// Write `yaml` to the scratch directory (rank 0) and read it on every rank of MPI_COMM_WORLD.
inline Job job_from_yaml(const std::string& name, const std::string& yaml) {
  return mpitest::job_from_yaml(scratch(), name, yaml);
}

/// Tight tolerances for every job of this executable. PETSc options go to the process-wide options database
/// and stay there, so every job names all the options it relies on, the preconditioner included.
inline std::string tight_solver(const std::string& pc = "edgefem_gamg") {
  return "solver:\n"
         "  newton: {rtol: 1.0e-12, atol: 1.0e-13, max_it: 30}\n"
         "  petsc: \"-ksp_type cg -pc_type " +
         pc + " -ksp_rtol 1e-12 -ksp_atol 1e-50\"\n";
}

struct Probe {
  std::array<double, 3> point{};  ///< reference position of a vertex
  int component = 2;
};

struct RunSpec {
  std::optional<Probe> probe;
  std::string restart_from;      ///< checkpoint file to restore before running
  long long checkpoint_at = -1;  ///< write a checkpoint after this step ...
  std::string checkpoint_path;   ///< ... to this file
  /// Called on every rank after the initial state and every step (collective calls allowed).
  std::function<void(DynamicSolver&, const LocalMesh&, long long, double)> on_step;
};

struct RunResult {
  bool participated = false;
  std::vector<double> reference, position, velocity;  ///< 3 per original vertex, on every rank of the comm
  std::vector<long long> steps;                       ///< steps seen by on_step
  std::vector<double> times;
  std::vector<EnergyReport> energy;  ///< per entry of `steps`
  std::vector<double> probe;         ///< displacement of the probe, per entry of `steps`
  std::vector<TimeStepReport> reports;
  std::string preconditioner;  ///< the time steps' (DynamicSolver::preconditioner_name)
  double seconds = 0;
};

/// Run `job` on `comm` (MPI_COMM_NULL: this rank does not take part).
inline RunResult simulate(MPI_Comm comm, const Job& job, const RunSpec& spec = {}) {
  RunResult out;
  if (comm == MPI_COMM_NULL) return out;
  out.participated = true;
  const auto t0 = std::chrono::steady_clock::now();
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  DynamicSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  const std::vector<std::int64_t> owned_original(mesh.original_vertex.begin(),
                                                 mesh.original_vertex.begin() + mesh.n_owned);
  if (!spec.restart_from.empty())
    solver.restore(read_checkpoint(comm, spec.restart_from, mesh.n_global_vertices, owned_original));

  LocalIndex probe_vertex = -1;
  if (spec.probe)
    for (LocalIndex v = 0; v < mesh.n_owned; ++v) {
      double d = 0;
      for (int c = 0; c < 3; ++c) d = std::max(d, std::abs(mesh.mesh.coords[3 * v + c] - spec.probe->point[c]));
      if (d < 1e-9) probe_vertex = v;
    }
  out.reports = run_time_loop(solver, [&](long long step, double time) {
    out.steps.push_back(step);
    out.times.push_back(time);
    out.energy.push_back(solver.energy());
    if (spec.probe) {
      const std::vector<double> x = solver.local_positions();
      double local[2] = {0, 0}, global[2] = {0, 0};
      if (probe_vertex >= 0) {
        const auto i = 3 * static_cast<std::size_t>(probe_vertex) + static_cast<std::size_t>(spec.probe->component);
        local[0] = x[i] - mesh.mesh.coords[i];
        local[1] = 1;
      }
      MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
      if (global[1] != 1) throw std::runtime_error("probe point is not a vertex of the mesh");
      out.probe.push_back(global[0]);
    }
    if (spec.checkpoint_at == step) {
      CheckpointState state = solver.checkpoint();
      state.job_text = "test";
      write_checkpoint(comm, spec.checkpoint_path, mesh.n_global_vertices, owned_original, state);
    }
    if (spec.on_step) spec.on_step(solver, mesh, step, time);
  });

  // (X, x, v) of the owned vertices on every rank of comm, by original id.
  const std::vector<double> x = solver.local_positions();
  const std::vector<double> v = solver.local_velocities();
  auto gathered = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords, x, v}, true);
  out.reference = std::move(gathered[0]);
  out.position = std::move(gathered[1]);
  out.velocity = std::move(gathered[2]);
  out.preconditioner = solver.preconditioner_name();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

/// Largest |a - b| over the largest |ref_scale| (both by original vertex).
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b, double scale) {
  if (a.size() != b.size()) return 1e300;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d / scale;
}

inline double max_displacement(const RunResult& r) {
  double m = 0;
  for (std::size_t i = 0; i < r.position.size(); ++i) m = std::max(m, std::abs(r.position[i] - r.reference[i]));
  return m;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double a : v) m = std::max(m, std::abs(a));
  return m;
}

/// Rank 0's MPI_COMM_SELF, MPI_COMM_NULL elsewhere: the serial run inside a distributed test (none on 1 rank, where
/// it would be the same run: serial_difference() is then 0).
inline MPI_Comm rank0_alone() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return rank == 0 && size > 1 ? MPI_COMM_SELF : MPI_COMM_NULL;
}

/// Every rank waits here until rank 0 has finished its run alone; the others sleep while they wait instead of
/// polling in a collective (which, on 2 cores shared by 3 ranks, takes CPU time from rank 0's run).
inline void wait_for_rank0() {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  while (!done) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

/// Rank 0's value on every rank (the others sleep until rank 0 is there: wait_for_rank0).
inline double from_rank0(double value) {
  wait_for_rank0();
  MPI_Bcast(&value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return value;
}

/// Rank 0's vector on every rank (the others sleep until rank 0 is there: wait_for_rank0).
inline std::vector<double> from_rank0(std::vector<double> values) {
  wait_for_rank0();
  auto n = static_cast<long long>(values.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  values.resize(static_cast<std::size_t>(n));
  MPI_Bcast(values.data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return values;
}

/// The serial reference of a distributed test, on every rank: `run(MPI_COMM_SELF)` on rank 0 alone while the
/// other ranks sleep (wait_for_rank0), then broadcast; on 1 rank `distributed` itself (it is the same run). Every
/// rank running the serial job itself cost the CPU time of `size` serial runs, on 2 cores shared by 3 ranks.
template <class Run>
std::vector<double> serial_reference(Run&& run, const std::vector<double>& distributed) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return distributed;
  std::vector<double> serial;
  if (rank == 0) serial = run(MPI_COMM_SELF);
  return from_rank0(std::move(serial));
}

/// The largest entry of |a - b| (1e300 when the sizes differ).
inline double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 1e300;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

/// Rank 0's serial-vs-distributed difference (max_difference), on every rank; 0 on 1 rank.
inline double serial_difference(const std::vector<double>& distributed, const std::vector<double>& serial) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return 0.0;
  return from_rank0(rank == 0 ? max_difference(distributed, serial) : 0.0);
}

}  // namespace edgefem::dynamics_testing
