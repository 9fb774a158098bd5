// SPDX-License-Identifier: BSD-3-Clause
// The position-based integrator's coloured XPBD sweep against the backward-Euler step (issue 47; README
// "Position-based dynamics", docs/theory/design.md "Position-based integrator"): one step of a body clamped on one face
// under gravity, the relative L2 distance |x - x_BE| / |x_BE - x_n| of the positions after each number of sweeps to
// the Newton solver's backward-Euler step of the same job (rtol 1e-13), the first sweep count at which it is below
// `target` with the sweeps' seconds to get there, the seconds per sweep (wall, the sweeps alone) and the Newton
// solver's seconds for the step (wall). One row per run:
//   mpiexec -n P build/bench/edgefem_pbd_convergence [key=value ...]
// keys (defaults): cells=64,4,4 (a box size=[10,1,1], clamped at x = 0) or mesh=FILE.msh clamp=REGION (clamped
// region of a Gmsh mesh); model=stvk young=1e4 poisson=0.3 density=1 dt=0.002 gravity=0,0,-2
// sweeps=1,5,20,100,500,1000 target=1e-6 acceleration=none|chebyshev spectral_radius=0.95 inversion=svd|none;
// prior=N iterations=K: the step after N steps of K sweeps (default 0: the first step, from rest); mode=trajectory:
// `steps` steps of `iterations` sweeps, the largest displacement every tenth step and P ranks against 1 at the end.
// Threads: OMP_NUM_THREADS. bench/pbd_tables.sh runs the tables of the docs.
#include <petscsys.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "partition/partition.hpp"
#include "pbd/pbd_solver.hpp"
#include "run/load_mesh.hpp"
#include "run/time_loop.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "tests/support/mpi_testing.hpp"

using namespace edgefem;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string list(const std::string& csv) {  // "1,2,3" -> "1, 2, 3"
  std::string out;
  for (char c : csv) out += c == ',' ? std::string(", ") : std::string(1, c);
  return out;
}

/// The job of a run: a clamped box or Gmsh mesh under gravity, one step of `integrator`.
std::string job_text(std::map<std::string, std::string>& o, const std::string& integrator) {
  const std::string mesh = o.count("mesh")
                               ? "  file: " + o["mesh"] + "\n"
                               : "  generate: {shape: box, size: [10, 1, 1], cells: [" + list(o["cells"]) + "]}\n";
  const std::string clamp = o.count("mesh") ? o["clamp"] : "11";
  std::string text = "mesh:\n" + mesh + "materials:\n  - {model: " + o["model"] + ", young: " + o["young"] +
                     ", poisson: " + o["poisson"] + ", density: " + o["density"] +
                     "}\nboundary:\n  - select: {region: " + clamp + "}\n    fix: [x, y, z]\nloads:\n  gravity: [" +
                     list(o["gravity"]) + "]\nanalysis:\n  type: dynamic\n  dt: " + o["dt"] +
                     "\n  end_time: " + o["dt"] + "\n  integrator: " + integrator + "\n";
  const std::string steps = o.count("steps") ? o["steps"] : "1";
  const double end_time = std::stod(o["dt"]) * std::stod(steps);
  char end[32];
  std::snprintf(end, sizeof end, "%.17g", end_time);
  text = text.replace(text.find("end_time: "), 10 + o["dt"].size(), "end_time: " + std::string(end));
  if (integrator == "position-based")
    text += "  position_based: {iterations: " + (o.count("iterations") ? o["iterations"] : std::string("1")) +
            ", sweep: colored, xpbd: true, inversion: " + o["inversion"] +
            (o["acceleration"] == "none"
                 ? std::string()
                 : ", acceleration: " + o["acceleration"] + ", spectral_radius: " + o["spectral_radius"]) +
            "}\n";
  return text +
         "solver:\n  newton: {rtol: 1.0e-13, atol: 1.0e-30, max_it: 40}\n"
         "  petsc: \"-ksp_type cg -pc_type gamg -ksp_rtol 1e-14 -ksp_atol 1e-50\"\n";
}

/// The state after `prior` position-based steps of `iterations` sweeps (none: rest), for both solvers.
CheckpointState start_state(std::map<std::string, std::string>& o) {
  const int prior = o.count("prior") ? std::stoi(o["prior"]) : 0;
  std::map<std::string, std::string> p = o;
  p["steps"] = std::to_string(std::max(prior, 1));
  const Job job = mpitest::job_from_yaml(o["dir"], "prior", job_text(p, "position-based"));
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  PbdSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), true);
  solver.start();
  for (int k = 0; k < prior; ++k) solver.step_once();
  CheckpointState state = solver.checkpoint();
  for (const char* name : {"acceleration", "force_rate"}) {  // (the Newton solver's; not used by backward Euler)
    state.field_names.emplace_back(name);
    state.fields.emplace_back(state.fields[0].size(), 0.0);
  }
  return state;
}

/// The backward-Euler step from `state` (gathered by file vertex), the positions at its start and the step's wall
/// seconds (Newton at rtol 1e-13, CG + GAMG).
std::vector<double> backward_euler(const Job& job, const CheckpointState& state, std::vector<double>& start,
                                   double& seconds) {
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  DynamicSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), "", true);
  solver.restore(state);
  start = mpitest::gather_by_original_vertex(MPI_COMM_WORLD, mesh, {solver.local_positions()}, true)[0];
  const double t0 = now();
  run_time_loop(
      solver, [](long long, double) {}, [] { return true; });
  seconds = now() - t0;
  return mpitest::gather_by_original_vertex(MPI_COMM_WORLD, mesh, {solver.local_positions()}, true)[0];
}

/// mode=trajectory: `steps` steps of `iterations` sweeps; every tenth step the largest displacement, the strain
/// energy and the inverted tets; at the end the distance to the same run on one rank.
void trajectory(std::map<std::string, std::string>& o) {
  const Job job = mpitest::job_from_yaml(o["dir"], "trajectory", job_text(o, "position-based"));
  auto run = [&](MPI_Comm comm, bool report) {
    const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
    PbdSolver solver(comm, job, mesh, build_model(comm, job, mesh), true);
    const double t0 = now();
    run_time_loop(solver, [&](long long step, double) {
      if (!report || step % 10 != 0) return;
      const std::vector<double> x = solver.local_positions();
      double u = 0;
      for (std::size_t i = 0; i < x.size(); ++i) u = std::max(u, std::abs(x[i] - mesh.mesh.coords[i]));
      MPI_Allreduce(MPI_IN_PLACE, &u, 1, MPI_DOUBLE, MPI_MAX, comm);
      const long long inverted = solver.inverted_cells();
      const double strain = solver.energy().strain;
      if (mpitest::world_rank() == 0)
        std::printf("step %4lld  max |u| %.6e  strain energy %.6e  inverted %lld  (%.2f s)\n", step, u, strain,
                    inverted, now() - t0);
    });
    return mpitest::gather_by_original_vertex(comm, mesh, {solver.local_positions()}, true)[0];
  };
  const std::vector<double> x = run(MPI_COMM_WORLD, true);
  if (mpitest::world_size() == 1) return;
  const std::vector<double> serial = run(MPI_COMM_SELF, false);
  double d = 0, n = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    d = std::max(d, std::abs(x[i] - serial[i])), n = std::max(n, std::abs(serial[i]));
  if (mpitest::world_rank() == 0)
    std::printf("%d ranks vs 1: max |dx| %.3e (max |x| %.3e)\n", mpitest::world_size(), d, n);
}

/// The sweeps of one step against the backward-Euler step: the distance after each count of `marks`, the first
/// count at which it is <= target (-1: none) and the sweeps' seconds (to the target, and all).
struct Sweeps {
  std::string row;
  int reached = -1;
  double seconds = 0, seconds_to_target = 0;
};
template <class Distance>
Sweeps sweep_table(PbdSolver& solver, const Distance& distance, const std::vector<int>& marks, double target) {
  Sweeps out;
  solver.begin_step();
  for (int done = 1; done <= marks.back(); ++done) {
    const double t0 = now();
    solver.sweep_once();
    out.seconds += now() - t0;
    const bool mark = std::find(marks.begin(), marks.end(), done) != marks.end();
    if (!mark && out.reached >= 0) continue;
    const double d = distance();
    if (out.reached < 0 && d <= target) out.reached = done, out.seconds_to_target = out.seconds;
    if (mark) {
      char cell[32];
      std::snprintf(cell, sizeof cell, " %8.1e", d);
      out.row += cell;
    }
  }
  return out;
}

/// mode=table: one row (see the file comment).
void table(std::map<std::string, std::string>& o) {
  const int prior = o.count("prior") ? std::stoi(o["prior"]) : 0;
  const CheckpointState state = start_state(o);
  o["steps"] = std::to_string(prior + 1);
  const Job be_job = mpitest::job_from_yaml(o["dir"], "be", job_text(o, "backward-euler"));
  std::vector<double> x_n;
  double newton_seconds = 0;
  const std::vector<double> be = backward_euler(be_job, state, x_n, newton_seconds);
  const Job job = mpitest::job_from_yaml(o["dir"], "pbd", job_text(o, "position-based"));
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  PbdSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), true);
  solver.restore(state);
  double step = 0;
  for (std::size_t i = 0; i < be.size(); ++i) step += std::pow(be[i] - x_n[i], 2);
  auto distance = [&] {
    const std::vector<double> x = mpitest::gather_by_original_vertex(MPI_COMM_WORLD, mesh, {solver.local_positions()},
                                                                     true)[0];
    double d = 0;
    for (std::size_t i = 0; i < x.size(); ++i) d += std::pow(x[i] - be[i], 2);
    return std::sqrt(d / step);
  };
  std::vector<int> marks;
  for (std::istringstream in(o["sweeps"]); in.good();) {
    std::string t;
    std::getline(in, t, ',');
    marks.push_back(std::stoi(t));
  }
  const Sweeps r = sweep_table(solver, distance, marks, std::stod(o["target"]));
  char tail[200];
  std::snprintf(tail, sizeof tail, " | %s at %5s (%8.3f s) | %.2e s/sweep | Newton step %.3f s | %lld tets, %d colours",
                o["target"].c_str(), r.reached < 0 ? "-" : std::to_string(r.reached).c_str(),
                r.reached < 0 ? 0.0 : r.seconds_to_target, r.seconds / marks.back(), newton_seconds,
                static_cast<long long>(mesh.n_global_cells), solver.sweep().n_colors());
  if (mpitest::world_rank() == 0)
    std::printf("%-10s E %-6s dt %-6s np %d %s|%s%s\n", o.count("mesh") ? "mesh" : o["cells"].c_str(),
                o["young"].c_str(), o["dt"].c_str(), mpitest::world_size(),
                o["acceleration"] == "none" ? "" : ("cheb " + o["spectral_radius"] + " ").c_str(), r.row.c_str(), tail);
}

}  // namespace

int main(int argc, char** argv) {
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  {
    std::map<std::string, std::string> o = {{"cells", "64,4,4"},
                                            {"young", "1e4"},
                                            {"model", "stvk"},
                                            {"poisson", "0.3"},
                                            {"density", "1"},
                                            {"dt", "0.002"},
                                            {"gravity", "0,0,-2"},
                                            {"sweeps", "1,5,20,100,500,1000"},
                                            {"target", "1e-6"},
                                            {"acceleration", "none"},
                                            {"spectral_radius", "0.95"},
                                            {"inversion", "svd"},
                                            {"dir", "/tmp/edgefem_pbd_convergence"},
                                            {"mode", "table"}};
    int pid = static_cast<int>(getpid());  // a scratch directory per run (rank 0's process id)
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    o["dir"] += "_" + std::to_string(pid);
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const std::size_t eq = arg.find('=');
      if (eq != std::string::npos) o[arg.substr(0, eq)] = arg.substr(eq + 1);
    }
    if (o["mode"] == "trajectory")
      trajectory(o);
    else
      table(o);
  }
  PetscFinalize();
  return 0;
}
