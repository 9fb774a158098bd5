// SPDX-License-Identifier: BSD-3-Clause
// The frame-count study of the frame-based model (README and docs/theory/design.md "Frame-based models"): the job's own tet
// StVK solution (type nodes, the Newton reference) against the frame model for each variant and frame count. The
// tip is the mean displacement of the vertices of one boundary region (default 12: the free end of the cantilevers).
// Columns: tip displacement along the reference's direction, its error against the tets (positive = stiffer),
// |u_frames - u_tets| / |u_tets| of the mean tip vector, Newton iterations, set-up and solve times, samples.
//
//   mpiexec -n 1 build/bench/edgefem_frames_study JOB [--counts 2,4,8,16] [--variants V,V,...] [--tip REGION]
//                                                     [--grid NX,NY,NZ] [--converged U]
//   V = TYPE/WEIGHTS[/PLACEMENT]: TYPE rigid | affine, WEIGHTS hat | harmonic, PLACEMENT job (the job's own rule,
//   default) | farthest | kmeans | axis (evenly on the longest bounding-box axis through the box centre, the old
//   bending-bar study's frames). --grid: voxel samples (discretization.sample_grid) instead of one per tet.
//   --converged U: the converged |u| of the mean tip (from finer tet meshes), for a column of errors against it.
#include <omp.h>
#include <petscsys.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "frames/frames_solver.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"

using namespace edgefem;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, by);) out.push_back(item);
  return out;
}

/// The study's command line.
struct Options {
  std::string job;
  std::vector<int> counts{2, 4, 8, 16};
  std::vector<std::string> variants{"rigid/hat", "rigid/harmonic", "affine/harmonic"};
  int tip_region = 12;
  std::optional<std::array<int, 3>> grid;
  double converged = 0.0;  ///< --converged (0: no column)
};

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const bool has_value = a + 1 < argc;
    if (arg == "--counts" && has_value) {
      o.counts.clear();
      for (const auto& c : split(argv[++a], ',')) o.counts.push_back(std::stoi(c));
    } else if (arg == "--variants" && has_value) {
      o.variants = split(argv[++a], ',');
    } else if (arg == "--grid" && has_value) {
      const auto n = split(argv[++a], ',');
      if (n.size() != 3) throw std::runtime_error("--grid: expected NX,NY,NZ");
      o.grid = std::array<int, 3>{std::stoi(n[0]), std::stoi(n[1]), std::stoi(n[2])};
    } else if (arg == "--converged" && has_value) {
      o.converged = std::stod(argv[++a]);
    } else if (arg == "--tip" && has_value) {
      o.tip_region = std::stoi(argv[++a]);
    } else if (o.job.empty() && arg[0] != '-') {
      o.job = arg;
    } else {
      throw std::runtime_error("unknown argument '" + arg + "'");
    }
  }
  if (o.job.empty()) throw std::runtime_error("usage: edgefem_frames_study JOB [--counts ...] [--variants ...]");
  return o;
}

/// Mean displacement of the vertices of `region` (x: current positions, 3 per local vertex).
std::array<double, 3> tip_of(const LocalMesh& mesh, const std::vector<double>& x, int region) {
  std::array<double, 3> sum{};
  int n = 0;
  for (LocalIndex v = 0; v < mesh.n_local(); ++v)
    if (mesh.vertex_in_region(v, region)) {
      for (int c = 0; c < 3; ++c) sum[c] += x[3 * v + c] - mesh.mesh.coords[3 * v + c];
      ++n;
    }
  if (n == 0) throw std::runtime_error("no vertex in the tip region " + std::to_string(region));
  for (double& s : sum) s /= n;
  return sum;
}

double norm(const std::array<double, 3>& a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

/// Frames evenly spaced on the longest bounding-box axis through the box centre.
std::vector<std::array<double, 3>> axis_positions(const LocalMesh& mesh, int n) {
  std::array<double, 3> lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (LocalIndex v = 0; v < mesh.n_local(); ++v)
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], mesh.mesh.coords[3 * v + c]);
      hi[c] = std::max(hi[c], mesh.mesh.coords[3 * v + c]);
    }
  int axis = 0;
  for (int c = 1; c < 3; ++c)
    if (hi[c] - lo[c] > hi[axis] - lo[axis]) axis = c;
  std::vector<std::array<double, 3>> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      p[i][c] = c == axis ? lo[c] + (hi[c] - lo[c]) * i / std::max(1, n - 1) : 0.5 * (lo[c] + hi[c]);
  return p;
}

/// Mean number of frames influencing a tet (non-zero weight at one of its vertices): the n_s of the per-sample cost.
double mean_influences(const LocalMesh& mesh, const std::vector<double>& weights, int n) {
  long long sum = 0;
  for (LocalIndex t = 0; t < mesh.mesh.n_tets(); ++t)
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < 4; ++a)
        if (weights[static_cast<std::size_t>(mesh.mesh.tets[4 * t + a]) * n + i] != 0.0) {
          ++sum;
          break;
        }
  return static_cast<double>(sum) / std::max<LocalIndex>(1, mesh.mesh.n_tets());
}

/// The tet (Newton) reference: tip displacement and time.
struct Reference {
  std::array<double, 3> tip{};
  double seconds = 0.0;
  int newton = 0;
};

Reference tet_reference(const Job& job, const LocalMesh& mesh, int tip_region) {
  Job nodes = job;
  nodes.discretization = DiscretizationSpec{};
  const double t0 = now();
  StaticSolver tet(MPI_COMM_SELF, nodes, mesh, build_model(MPI_COMM_SELF, nodes, mesh), "", true);
  const auto reports = tet.run([](int, double) {});
  Reference r;
  r.seconds = now() - t0;
  for (const auto& rep : reports) r.newton += rep.newton_iterations;
  r.tip = tip_of(mesh, tet.local_positions(), tip_region);
  return r;
}

/// The job's discretization for one variant and frame count.
Job variant_job(const Job& job, const LocalMesh& mesh, const std::string& variant, int n,
                const std::optional<std::array<int, 3>>& grid) {
  const auto parts = split(variant, '/');
  if (parts.size() < 2 || (parts[0] != "rigid" && parts[0] != "affine") ||
      (parts[1] != "hat" && parts[1] != "harmonic" && parts[1] != "diffused"))
    throw std::runtime_error("variant '" + variant + "': expected TYPE/WEIGHTS[/PLACEMENT]");
  Job fj = job;
  DiscretizationSpec& d = fj.discretization;
  d.type = DiscretizationType::frames;
  d.frame_type = parts[0] == "rigid" ? FrameType::rigid : FrameType::affine;
  d.weights = parts[1] == "hat"        ? FrameWeights::hat
              : parts[1] == "harmonic" ? FrameWeights::harmonic
                                       : FrameWeights::diffused;
  const std::string placement = parts.size() > 2 ? parts[2] : "job";
  d.positions.clear();
  d.frame_count = n;
  if (grid) d.sample_grid = grid;
  if (placement == "axis") {
    d.positions = axis_positions(mesh, n);
    d.frame_count = 0;
  } else if (placement == "farthest" || placement == "kmeans") {
    d.placement = placement == "farthest" ? FramePlacementRule::farthest : FramePlacementRule::kmeans;
  } else if (placement != "job") {
    throw std::runtime_error("variant '" + variant + "': expected placement job, farthest, kmeans or axis");
  }
  if (d.line == 0) d.line = 1;
  return fj;
}

/// One frame solve: its tip, counts and times (empty `failure` when it converged).
struct FrameRun {
  std::array<double, 3> tip{};
  int unknowns = 0, newton = 0;
  double setup = 0.0, solve = 0.0, evaluation = 0.0, influences = 0.0;
  long long samples = 0;
  std::string failure;
};

FrameRun run_frames(const Job& fj, const LocalMesh& mesh, int tip_region) {
  FrameRun out;
  const Model model = build_model(MPI_COMM_SELF, fj, mesh);
  const double t0 = now();
  try {
    FrameSolver solver(MPI_COMM_SELF, fj, mesh, model, true);
    out.setup = now() - t0;
    const auto reports = solver.run([](int, double) {});
    out.solve = now() - t0 - out.setup;
    for (const auto& r : reports) out.newton += r.newton_iterations;
    int held = 0;
    for (const int h : solver.held()) held += h;
    out.unknowns = solver.dofs_per_frame() * (solver.n_frames() - held);
    out.tip = tip_of(mesh, solver.local_positions(), tip_region);
    out.samples = solver.n_samples_global();
    out.influences = mean_influences(mesh, solver.weights(), solver.n_frames());
    out.evaluation = 1e300;  // one evaluation with the Hessian at the solution (a Newton iteration), best of 3
    for (int r = 0; r < 3; ++r) {
      frames::FrameSystem sys;
      const double s0 = now();
      solver.evaluate(solver.state(), 1.0, true, sys);
      out.evaluation = std::min(out.evaluation, now() - s0);
    }
  } catch (const std::exception& e) {
    out.failure = e.what();
  }
  return out;
}

void study_row(const Job& job, const LocalMesh& mesh, const Reference& ref, const std::string& variant, int n,
               const Options& o) {
  const FrameRun f = run_frames(variant_job(job, mesh, variant, n, o.grid), mesh, o.tip_region);
  if (!f.failure.empty()) {
    std::printf("| %s | %d | failed: %s |\n", variant.c_str(), n, f.failure.c_str());
    return;
  }
  const double scale = norm(ref.tip);
  double along = 0.0;
  std::array<double, 3> diff{};
  for (int c = 0; c < 3; ++c) along += f.tip[c] * ref.tip[c] / scale, diff[c] = f.tip[c] - ref.tip[c];
  std::printf("| %s | %d | %d | %.5f | %+.1f %% |", variant.c_str(), n, f.unknowns, along,
              100.0 * (scale - along) / scale);
  if (o.converged > 0.0) std::printf(" %+.1f %% |", 100.0 * (o.converged - along) / o.converged);
  std::printf(" %.1f %% | %d | %.3f | %.3f | %lld | %.1f | %.2f |\n", 100.0 * norm(diff) / scale, f.newton, f.setup,
              f.solve, f.samples, f.influences, 1e3 * f.evaluation);
  std::fflush(stdout);
}

void study(const Options& o) {
  const Job job = read_job(o.job);
  const LocalMesh mesh = distribute_mesh(MPI_COMM_SELF, load_job_mesh(job));
  const Reference ref = tet_reference(job, mesh, o.tip_region);
  std::printf("%s: %lld vertices, %lld tets, %s, E %g, nu %g; %d thread(s), 1 rank\n", o.job.c_str(),
              static_cast<long long>(mesh.n_global_vertices), static_cast<long long>(mesh.n_global_cells),
              std::string(job.materials[0].model->name).c_str(), job.materials[0].young, job.materials[0].poisson,
              omp_get_max_threads());
  std::printf(
      "tets (Newton reference): mean tip displacement (%.5f, %.5f, %.5f), |u| %.5f, %d Newton iterations, "
      "%.3f s\n",
      ref.tip[0], ref.tip[1], ref.tip[2], norm(ref.tip), ref.newton, ref.seconds);
  if (o.converged > 0.0) std::printf("converged |u| (finer tet meshes): %.5f\n", o.converged);
  const bool c = o.converged > 0.0;
  std::printf(
      "\n| variant | frames | unknowns | tip along ref | error vs tets (stiffer +) |%s vector error | Newton its | "
      "set-up (s) | solve (s) | samples | frames per tet | ms per f + K |\n|---|---|---|---|---|%s---|---|---|"
      "---|---|---|---|\n",
      c ? " error vs converged |" : "", c ? "---|" : "");
  for (const auto& variant : o.variants)
    for (const int n : o.counts) study_row(job, mesh, ref, variant, n, o);
}

}  // namespace

int main(int argc, char** argv) {
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  int status = 0;
  try {
    study(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgefem_frames_study: %s\n", e.what());
    status = 2;
  }
  PetscFinalize();
  return status;
}
