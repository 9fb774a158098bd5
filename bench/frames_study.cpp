// The bending-bar study of the frame-based model (README "Frame-based models"): the job's own tet StVK solution
// (type nodes) against frames evenly spaced on the bar's axis (snapped to vertices), for each frame count and weight
// kind: the deflection of the vertex at the centre of the free end, its error against the tet solution, Newton
// iterations, time to solution, and the cost of one sample (frames: energy + gradient + 6x6 Hessian blocks) against
// one tet of the tet kernel (force + 3x3 stiffness blocks).
//
//   mpiexec -n 1 build/bench/edgefem_frames_study JOB [COUNTS (comma-separated, default 2,4,8,16)]
// The job must generate a box [0, L] x [0, W] x [0, H] (the bar's axis is x at the centre of its y-z section).
#include <omp.h>
#include <petscsys.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "materials/frame_model.hpp"
#include "partition/partition.hpp"
#include "frames/frames_solver.hpp"
#include "run/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"

using namespace edgefem;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

LocalMesh mesh_of(const Job& job) {
  Mesh whole = load_job_mesh(job);
  return distribute_mesh(MPI_COMM_SELF, whole);
}

LocalIndex vertex_at(const LocalMesh& mesh, const std::array<double, 3>& p) {
  LocalIndex best = 0;
  double d_best = 1e300;
  for (LocalIndex v = 0; v < mesh.n_local(); ++v) {
    double d = 0;
    for (int c = 0; c < 3; ++c) d += std::pow(mesh.mesh.coords[3 * v + c] - p[c], 2);
    if (d < d_best) d_best = d, best = v;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  {
    if (argc < 2) {
      std::fprintf(stderr, "usage: edgefem_frames_study JOB [COUNTS]\n");
      return 2;
    }
    Job job = read_job(argv[1]);
    std::vector<int> counts = {2, 4, 8, 16};
    if (argc > 2) {
      counts.clear();
      std::stringstream s(argv[2]);
      for (std::string item; std::getline(s, item, ',');) counts.push_back(std::stoi(item));
    }
    if (!job.generate) {
      std::fprintf(stderr, "the study needs a generated box\n");
      return 2;
    }
    const auto size = job.generate->size;
    const std::array<double, 3> tip_point{size[0], 0.5 * size[1], 0.5 * size[2]};
    const int threads = omp_get_max_threads();

    // The tet solution.
    Job nodes = job;
    nodes.discretization = DiscretizationSpec{};
    const LocalMesh mesh = mesh_of(nodes);
    const LocalIndex tip = vertex_at(mesh, tip_point);
    double t0 = now();
    StaticSolver tet(MPI_COMM_SELF, nodes, mesh, build_model(MPI_COMM_SELF, nodes, mesh), "", true);
    const auto tet_reports = tet.run([](int, double) {});
    const double tet_seconds = now() - t0;
    int tet_newton = 0;
    for (const auto& r : tet_reports) tet_newton += r.newton_iterations;
    const auto x_tet = tet.local_positions();
    const double w_tet = x_tet[3 * tip + 2] - mesh.mesh.coords[3 * tip + 2];
    // Tet kernel cost: force + stiffness blocks of every tet, best of 5.
    const TetFormulation& formulation = *tet.model().formulations.front();
    std::vector<double> f(x_tet.size()), blocks(9 * formulation.block_pattern().size());
    double tet_kernel = 1e300;
    for (int r = 0; r < 5; ++r) {
      t0 = now();
      formulation.force_and_stiffness(x_tet, f, blocks);
      tet_kernel = std::min(tet_kernel, now() - t0);
    }
    const double n_tets = static_cast<double>(mesh.mesh.n_tets());
    std::printf("bar %g x %g x %g, %lld vertices, %lld tets, %s, E %g, nu %g; %d thread(s), 1 rank\n", size[0], size[1],
                size[2], static_cast<long long>(mesh.n_global_vertices), static_cast<long long>(mesh.n_global_cells),
                std::string(job.materials[0].model->name).c_str(), job.materials[0].young, job.materials[0].poisson,
                threads);
    std::printf(
        "tet solution (%s): tip deflection %.6f, %d Newton iterations, %.3f s to solution; kernel f+K %.3f us/tet\n",
        std::string(job.materials[0].model->name).c_str(), w_tet, tet_newton, tet_seconds, 1e6 * tet_kernel / n_tets);
    std::printf(
        "\n| weights | frames | unknowns | tip deflection | error vs tets | end-point distance / length | Newton its | "
        "time to solution (s) | us per sample (f + K) |\n|---|---|---|---|---|---|---|---|---|\n");
    for (const FrameWeights weights : {FrameWeights::hat, FrameWeights::harmonic}) {
      for (const int n : counts) {
        Job fj = job;
        fj.discretization.type = DiscretizationType::frames;
        fj.discretization.weights = weights;
        fj.discretization.frame_count = 0;
        fj.discretization.positions.clear();
        for (int i = 0; i < n; ++i)
          fj.discretization.positions.push_back({size[0] * i / (n - 1), 0.5 * size[1], 0.5 * size[2]});
        const Model model = build_model(MPI_COMM_SELF, fj, mesh);
        t0 = now();
        FrameSolver solver(MPI_COMM_SELF, fj, mesh, model, true);
        std::vector<FrameStepReport> reports;
        try {
          reports = solver.run([](int, double) {});
        } catch (const std::exception& e) {
          std::printf("| %s | %d | - | failed: %s |\n", std::string(to_string(weights)).c_str(), n, e.what());
          continue;
        }
        const double seconds = now() - t0;
        int newton = 0;
        for (const auto& r : reports) newton += r.newton_iterations;
        const auto x = solver.local_positions();
        const double w = x[3 * tip + 2] - mesh.mesh.coords[3 * tip + 2];
        int held = 0;
        for (const int h : solver.held()) held += h;
        // Sample cost: one evaluation with the Hessian at the solution, best of 3.
        double best = 1e300;
        for (int r = 0; r < 3; ++r) {
          frames::FrameSystem sys;
          const double s0 = now();
          solver.evaluate(solver.poses(), 1.0, true, sys);
          best = std::min(best, now() - s0);
        }
        // The paper's measure (Gilles et al. §5: "the end point within 2.5 % of the bar length"): the distance
        // between the two solutions' tip positions over the bar's length.
        double d2 = 0.0;
        for (int c = 0; c < 3; ++c) d2 += (x[3 * tip + c] - x_tet[3 * tip + c]) * (x[3 * tip + c] - x_tet[3 * tip + c]);
        std::printf("| %s | %d | %d | %.6f | %+.2f %% | %.2f %% | %d | %.3f | %.2f |\n",
                    std::string(to_string(weights)).c_str(), n, 6 * (n - held), w, 100.0 * (w - w_tet) / std::abs(w_tet),
                    100.0 * std::sqrt(d2) / size[0], newton, seconds,
                    1e6 * best / static_cast<double>(solver.n_samples_global()));
        std::fflush(stdout);
      }
    }
  }
  PetscFinalize();
  return 0;
}
