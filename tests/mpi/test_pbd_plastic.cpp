// SPDX-License-Identifier: BSD-3-Clause
// Plasticity in the position-based integrator (Bender et al. 2014 §4.1, materials/plasticity.hpp), under mpiexec
// with 1, 2 and 3 ranks (CTest mpi.pbd_plastic.npN); measured values are printed by rank 0 ("plastic:").
// The experiment of the paper's Fig. 8, on jobs/examples/pbd_plastic.yaml's beam (4 x 1 x 1, 1536 tets, clamped at
// x = 0): a tip traction bends it (ramp 0..0.25, hold to 0.75, off by 0.8), then it swings free with velocity
// damping until t = 4. Then
//  - the elastic beam returns to its rest shape, the plastic one keeps a permanent bend;
//  - a larger creep leaves more plastic strain and a larger permanent bend; a larger yield strain less;
//  - |E_p| never exceeds gamma_max (a small gamma_max is reached and holds);
//  - the coloured sweep with plasticity gives the same result on any number of ranks (round-off);
//  - a checkpoint written mid-run (with its plastic strains, a cell field) restarts to the uninterrupted result:
//    bit for bit on the same ranks, to round-off on one rank from the distributed checkpoint.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/job.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/time_loop.hpp"
#include "solver/model.hpp"
#include "tests/support/dynamics_testing.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_pbd_plastic {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;

std::string scratch() { return mpitest::scratch_dir("pbd_plastic"); }

/// The beam of jobs/examples/pbd_plastic.yaml with `plasticity` (empty: elastic) and end time `end`.
std::string beam_yaml(const std::string& plasticity, double end = 4.0) {
  return "mesh:\n"
         "  generate: {shape: box, size: [4, 1, 1], cells: [16, 4, 4]}\n"
         "materials:\n"
         "  - model: stvk\n"
         "    young: 1.0e3\n"
         "    poisson: 0.3\n"
         "    density: 1.0\n" +
         (plasticity.empty() ? std::string() : "    plasticity: " + plasticity + "\n") +
         "boundary:\n"
         "  - select: {region: 11}\n"
         "    fix: [x, y, z]\n"
         "loads:\n"
         "  tractions:\n"
         "    - select: {region: 12}\n"
         "      traction: [0, 0, -2.0]\n"
         "      schedule: {table: [[0, 0], [0.25, 1], [0.75, 1], [0.8, 0]]}\n"
         "analysis:\n"
         "  type: dynamic\n"
         "  dt: 0.005\n"
         "  end_time: " +
         std::to_string(end) +
         "\n"
         "  integrator: position-based\n"
         "  position_based: {iterations: 10, sweep: colored, xpbd: true, velocity_damping: 0.02, inversion: none}\n";
}

Job job_of(const std::string& name, const std::string& yaml) { return mpitest::job_from_yaml(scratch(), name, yaml); }

struct Result {
  std::vector<double> position;  ///< by file vertex, on every rank
  double tip = 0.0;              ///< mean z displacement of the x = 4 face at the end
  double peak_tip = 0.0;         ///< its largest magnitude during the run
  double max_plastic = 0.0;      ///< largest |E_p| at the end
  double mean_plastic = 0.0;     ///< volume-free mean |E_p| over the tets at the end
  double max_plastic_seen = 0.0;  ///< largest |E_p| after any step
};

double mean_tip(const std::vector<double>& x, const std::vector<double>& X) {
  double sum = 0.0;
  int n = 0;
  for (std::size_t v = 0; 3 * v < X.size(); ++v)
    if (std::abs(X[3 * v] - 4.0) < 1e-9) sum += x[3 * v + 2] - X[3 * v + 2], ++n;
  return sum / n;
}

/// Sum of |E_p| and the number of tets, over the ranks of comm.
double mean_plastic(MPI_Comm comm, const PbdSolver& solver) {
  const std::vector<double> p = const_cast<PbdSolver&>(solver).sweep().plastic_strain();
  double local[2] = {0.0, static_cast<double>(p.size() / 6)}, global[2];
  for (std::size_t c = 0; c < p.size() / 6; ++c) local[0] += strain_norm(p.data() + 6 * c);
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm);
  return global[1] > 0 ? global[0] / global[1] : 0.0;
}

/// Runs `job` on comm; optionally restores `restart_from` first (with cells) and writes `checkpoint` after step
/// `checkpoint_at`.
Result run(MPI_Comm comm, const Job& job, const std::string& restart_from = "", long long checkpoint_at = -1,
           const std::string& checkpoint = "") {
  Result r;
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  const std::vector<std::int64_t> owned_original(mesh.original_vertex.begin(),
                                                 mesh.original_vertex.begin() + mesh.n_owned);
  const std::vector<std::int64_t> cells(mesh.cell_global.begin(), mesh.cell_global.end());
  PbdSolver solver(comm, job, mesh, build_model(comm, job, mesh), true);
  if (!restart_from.empty())
    solver.restore(read_checkpoint(comm, restart_from, mesh.n_global_vertices, owned_original,
                                   CellOwnership{mesh.n_global_cells, cells}));
  const std::vector<double> X = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords}, true)[0];
  run_time_loop(solver, [&](long long step, double) {
    if (step % 10 == 0) {
      const std::vector<double> x = mpitest::gather_by_original_vertex(comm, mesh, {solver.local_positions()}, true)[0];
      r.peak_tip = std::max(r.peak_tip, std::abs(mean_tip(x, X)));
    }
    if (solver.sweep().plastic())
      r.max_plastic_seen = std::max(r.max_plastic_seen, solver.sweep().max_plastic_strain());
    if (step == checkpoint_at) {
      CheckpointState state = solver.checkpoint();
      state.job_text = "test";
      write_checkpoint(comm, checkpoint, mesh.n_global_vertices, owned_original, state);
    }
  });
  r.position = mpitest::gather_by_original_vertex(comm, mesh, {solver.local_positions()}, true)[0];
  r.tip = mean_tip(r.position, X);
  r.max_plastic = solver.sweep().max_plastic_strain();
  r.mean_plastic = mean_plastic(comm, solver);
  return r;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

void print(const char* what, const Result& r) {
  if (world_rank() == 0)
    std::printf("plastic: %-28s peak tip %.4f  final tip %+.5f  mean |Ep| %.3e  max |Ep| %.4e\n", what, r.peak_tip,
                r.tip, r.mean_plastic, r.max_plastic);
}

/// Each rank runs the five jobs alone (800 steps each: the distributed runs would add 10 x 50 ghost exchanges per
/// step to the test's time; ColoredSweepIsRankCountIndependent shows that the rank count does not matter). The
/// same serial runs on any rank count: CTest runs this case on 1 rank only (tests/mpi/CMakeLists.txt).
TEST(PbdPlastic, PermanentBendGrowsWithCreepShrinksWithYieldAndIsBoundedByMax) {
  MPI_Comm comm = MPI_COMM_SELF;
  const Result elastic = run(comm, job_of("elastic", beam_yaml("")));
  const Result base = run(comm, job_of("base", beam_yaml("{yield: 0.005, creep: 4, max: 0.1}")));
  const Result creep = run(comm, job_of("creep", beam_yaml("{yield: 0.005, creep: 16, max: 0.1}")));
  const Result yield = run(comm, job_of("yield", beam_yaml("{yield: 0.01, creep: 4, max: 0.1}")));
  const Result capped = run(comm, job_of("capped", beam_yaml("{yield: 0.005, creep: 16, max: 0.004}")));
  print("elastic", elastic);
  print("yield 0.005 creep 4 max 0.1", base);
  print("yield 0.005 creep 16 max 0.1", creep);
  print("yield 0.01 creep 4 max 0.1", yield);
  print("yield 0.005 creep 16 max 0.004", capped);
  // The load bends the beam about the same in every run.
  for (const Result* r : {&elastic, &base, &creep, &yield, &capped}) {
    EXPECT_GT(r->peak_tip, 0.15);
    EXPECT_LT(r->peak_tip, 0.35);
  }
  // Elastic: back to rest (no plastic state at all).
  EXPECT_LT(std::abs(elastic.tip), 0.02 * elastic.peak_tip);
  EXPECT_EQ(elastic.max_plastic, 0.0);
  // Plastic: a permanent bend downwards (measured: 72 % of the peak), more with more creep (x 1.18, mean |E_p|
  // x 1.35), less with a larger yield strain (x 0.45, mean |E_p| x 0.30).
  EXPECT_LT(base.tip, -0.5 * base.peak_tip);
  EXPECT_LT(creep.tip, 1.1 * base.tip);
  EXPECT_GT(creep.mean_plastic, 1.2 * base.mean_plastic);
  EXPECT_GT(yield.tip, 0.7 * base.tip);
  EXPECT_LT(yield.mean_plastic, 0.5 * base.mean_plastic);
  EXPECT_LT(yield.tip, -0.1 * yield.peak_tip);
  // gamma_max bounds |E_p| after every step; the small one is reached.
  for (const Result* r : {&base, &creep, &yield}) EXPECT_LE(r->max_plastic_seen, 0.1 * (1 + 1e-14));
  EXPECT_LE(capped.max_plastic_seen, 0.004 * (1 + 1e-14));
  EXPECT_NEAR(capped.max_plastic, 0.004, 1e-12);
  EXPECT_GT(capped.tip, creep.tip);  // capped flow: a smaller permanent bend
}

/// The coloured sweep with plasticity on all ranks against one rank (rank 0 alone).
TEST(PbdPlastic, ColoredSweepIsRankCountIndependent) {
  const Job job = job_of("ranks", beam_yaml("{yield: 0.005, creep: 8, max: 0.1}", 1.0));
  const Result distributed = run(MPI_COMM_WORLD, job);
  // The serial run on rank 0 alone (the others sleep), packed for the broadcast: positions, then the five figures.
  auto pack = [](const Result& r) {
    std::vector<double> v = r.position;
    v.insert(v.end(), {r.tip, r.peak_tip, r.max_plastic, r.mean_plastic, r.max_plastic_seen});
    return v;
  };
  const std::vector<double> packed =
      dynamics_testing::serial_reference([&](MPI_Comm self) { return pack(run(self, job)); }, pack(distributed));
  ASSERT_EQ(packed.size(), distributed.position.size() + 5);
  const double* figures = packed.data() + distributed.position.size();
  const Result serial{{packed.begin(), packed.end() - 5}, figures[0], figures[1], figures[2], figures[3], figures[4]};
  const double diff = max_abs_difference(serial.position, distributed.position);
  if (world_rank() == 0)
    std::printf("plastic: %d ranks vs 1: max |dx| = %.3e, mean |Ep| %.6e vs %.6e, max |Ep| %.6e vs %.6e\n",
                mpitest::world_size(), diff, distributed.mean_plastic, serial.mean_plastic, distributed.max_plastic,
                serial.max_plastic);
  EXPECT_GT(serial.mean_plastic, 1e-4);
  EXPECT_LT(diff, 1e-11 * serial.peak_tip);
  EXPECT_NEAR(distributed.mean_plastic, serial.mean_plastic, 1e-10 * serial.mean_plastic);
  EXPECT_NEAR(distributed.max_plastic, serial.max_plastic, 1e-10 * serial.max_plastic);
}

/// Checkpoint at step 100 (t = 0.5: loaded, flowing), restart: the uninterrupted result (1 s of the run).
TEST(PbdPlastic, CheckpointRestartReproducesTheUninterruptedRun) {
  const Job job = job_of("restart", beam_yaml("{yield: 0.005, creep: 8, max: 0.1}", 1.0));
  const std::string path = scratch() + "/plastic.ckpt";
  const Result whole = run(MPI_COMM_WORLD, job, "", 100, path);
  const Result resumed = run(MPI_COMM_WORLD, job, path);
  if (world_rank() == 0)
    std::printf("plastic: restart on %d ranks: max |dx| = %.3e, mean |Ep| %.9e vs %.9e\n", mpitest::world_size(),
                max_abs_difference(whole.position, resumed.position), whole.mean_plastic, resumed.mean_plastic);
  EXPECT_GT(whole.mean_plastic, 1e-4);
  EXPECT_EQ(resumed.position, whole.position);
  EXPECT_EQ(resumed.mean_plastic, whole.mean_plastic);
  EXPECT_EQ(resumed.max_plastic, whole.max_plastic);
  // Rank 0 alone from the distributed checkpoint (another rank count): round-off of the coloured sweep.
  const std::vector<double> alone_packed = dynamics_testing::serial_reference(
      [&](MPI_Comm self) {
        const Result r = run(self, job, path);
        std::vector<double> v = r.position;
        v.push_back(r.mean_plastic);
        return v;
      },
      [&] {
        std::vector<double> v = whole.position;
        v.push_back(whole.mean_plastic);
        return v;
      }());
  Result alone;
  alone.position.assign(alone_packed.begin(), alone_packed.end() - 1);
  alone.mean_plastic = alone_packed.back();
  const double diff = max_abs_difference(whole.position, alone.position);
  if (world_rank() == 0) std::printf("plastic: restart on 1 rank from %d: max |dx| = %.3e\n", mpitest::world_size(), diff);
  EXPECT_LT(diff, 1e-11 * whole.peak_tip);
  EXPECT_NEAR(alone.mean_plastic, whole.mean_plastic, 1e-10 * whole.mean_plastic);
  // Without the cell field (an elastic run's checkpoint, or read without cells) the plastic job refuses it.
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  const std::vector<std::int64_t> owned(mesh.original_vertex.begin(), mesh.original_vertex.begin() + mesh.n_owned);
  PbdSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), true);
  try {
    solver.restore(read_checkpoint(MPI_COMM_WORLD, path, mesh.n_global_vertices, owned));
    ADD_FAILURE() << "restore without the plastic strain did not throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint has no cell field 'plastic_strain'"), std::string::npos)
        << e.what();
  }
}

}  // namespace test_pbd_plastic
}  // namespace edgefem
