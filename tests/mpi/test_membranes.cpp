// SPDX-License-Identifier: BSD-3-Clause
// Membranes (issue 5): Delingette's pure traction experiment (TVCG 2008, §V-B, Figs. 9-12) with the four
// membrane models, serial == distributed for a static and a dynamic membrane run, and the flat-membrane input
// error. Run under mpiexec with 1, 2 and 3 ranks (CTest: mpi.membranes.npN); every assertion holds on every
// rank. Rank 0 prints the measured values (one line per check, prefixed "membranes:").
//
// The pure traction square: the sheet [0, L] x [0, L] in z = 0, z held on every vertex (a flat static membrane
// has no out-of-plane stiffness), y held on the bottom edge (region 13), x held at the origin, and a nominal
// traction (0, p, 0) (force per unit REFERENCE length) on the top edge (region 14). The membrane's stiffness per
// unit length is E h (the energy is h A (lambda/2 tr(E)^2 + mu tr(E^2)), materials/membrane.hpp), so the
// small-strain answer is eps_y = p / (E h), eps_x = -nu eps_y; the finite-strain answer of the St. Venant-Kirchhoff
// membrane (trbs) is the homogeneous uniaxial state p / (E h) = l_y (l_y^2 - 1) / 2, l_x^2 = 1 - nu (l_y^2 - 1)
// (P = F S with S_xx = 0), exactly representable by linear triangles. Strains are measured as Delingette does,
// eps = (deformed - reference length) / reference length, here as the area average of the displacement gradient
// over the triangles (for a homogeneous deformation: the exact engineering strains; otherwise the mean).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "run/time_loop.hpp"
#include "solver/dynamic_solver.hpp"
#include "solver/model.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/dynamics_testing.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_membranes {  // one per file: the distributed test files share unity batches

namespace fs = std::filesystem;

using mpitest::world_rank;
using mpitest::world_size;

/// Per-executable scratch directory (the np1/np2/np3 tests may run concurrently).
std::string scratch() { return mpitest::scratch_dir("membranes"); }

std::string source(const std::string& relative) { return std::string(EDGEFEM_SOURCE_DIR) + "/" + relative; }

/// Write `yaml` to the scratch directory (rank 0) and read it on every rank of MPI_COMM_WORLD.
Job job_from_yaml(const std::string& name, const std::string& yaml) {
  return mpitest::job_from_yaml(scratch(), name, yaml);
}

/// Rank 0's values on every rank.
template <std::size_t N>
std::array<double, N> from_rank0(std::array<double, N> values) {
  MPI_Bcast(values.data(), static_cast<int>(N), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return values;
}
double from_rank0(double value) { return from_rank0(std::array<double, 1>{value})[0]; }

/// Tight tolerances for every job of this executable. PETSc options go to the process-wide options database
/// and stay there, so every job names all the options it relies on. -snes_linesearch_atol: the critical-point
/// line search stops Newton (reporting CONVERGED_FNORM_ABS) once dot(F, Y) < atol ||Y||, an absolute test with
/// PETSc's default atol = 1e-15; at p = 1e-5 E that stops after one iteration with |R| = 4e-11 > newton.atol,
/// leaving a relative error of 1e-5 in eps_x. (edgefem keeps PETSc's default: it is also what ends Newton at
/// round-off level when newton.atol is below what the residual can reach.)
const std::string kSolver =
    "solver:\n"
    "  newton: {rtol: 1.0e-12, atol: 1.0e-14, max_it: 30}\n"
    "  petsc: \"-ksp_type cg -pc_type edgefem_gamg -ksp_rtol 1e-12 -ksp_atol 1e-50 -snes_linesearch_atol 1e-300\"\n";

// ---------------------------------------------------------------------------------------------------------
// Meshes written by the test (Gmsh 2.2 ASCII): triangles tagged 1, boundary lines 11 (left), 12 (right),
// 13 (bottom), 14 (top), like the sheet generator.

struct PlanarMesh {
  std::vector<std::array<double, 2>> points;
  std::vector<std::array<int, 3>> triangles;  ///< counter-clockwise
  std::vector<std::array<int, 3>> lines;      ///< (a, b, tag)
};

/// Written by rank 0, readable on every rank when this returns. Returns the mesh spec for a job file.
std::string write_msh(const std::string& name, const PlanarMesh& m) {
  const std::string path = scratch() + "/" + name + ".msh";
  if (world_rank() == 0) {
    fs::create_directories(scratch());
    std::ofstream out(path);
    char line[160];
    out << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n" << m.points.size() << "\n";
    for (std::size_t i = 0; i < m.points.size(); ++i) {
      std::snprintf(line, sizeof line, "%zu %.17g %.17g 0\n", i + 1, m.points[i][0], m.points[i][1]);
      out << line;
    }
    out << "$EndNodes\n$Elements\n" << m.lines.size() + m.triangles.size() << "\n";
    std::size_t id = 0;
    for (const auto& l : m.lines)
      out << ++id << " 1 2 " << l[2] << " " << l[2] << " " << l[0] + 1 << " " << l[1] + 1 << "\n";
    for (const auto& t : m.triangles)
      out << ++id << " 2 2 1 1 " << t[0] + 1 << " " << t[1] + 1 << " " << t[2] + 1 << "\n";
    out << "$EndElements\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return "file: " + path;
}

/// Tensor-product grid on the unit square with nodes xs (columns) x ys (rows); the diagonal of cell (i, j)
/// alternates in a checkerboard when `alternate` (else always from (i, j) to (i+1, j+1)).
PlanarMesh grid_mesh(const std::vector<double>& xs, const std::vector<double>& ys, bool alternate) {
  PlanarMesh m;
  const int nx = static_cast<int>(xs.size()) - 1, ny = static_cast<int>(ys.size()) - 1;
  auto id = [&](int i, int j) { return i + (nx + 1) * j; };
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) m.points.push_back({xs[i], ys[j]});
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int a = id(i, j), b = id(i + 1, j), c = id(i + 1, j + 1), d = id(i, j + 1);
      if (!alternate || (i + j) % 2 == 0) {
        m.triangles.push_back({a, b, c});
        m.triangles.push_back({a, c, d});
      } else {
        m.triangles.push_back({a, b, d});
        m.triangles.push_back({b, c, d});
      }
    }
  for (int i = 0; i < nx; ++i) {
    m.lines.push_back({id(i, 0), id(i + 1, 0), 13});
    m.lines.push_back({id(i, ny), id(i + 1, ny), 14});
  }
  for (int j = 0; j < ny; ++j) {
    m.lines.push_back({id(0, j), id(0, j + 1), 11});
    m.lines.push_back({id(nx, j), id(nx, j + 1), 12});
  }
  return m;
}

/// n cells on [0, 1], each `ratio` times the previous one (ratio < 1: finer towards 1).
std::vector<double> geometric(int n, double ratio) {
  std::vector<double> x(static_cast<std::size_t>(n) + 1, 0.0);
  double h = 1.0;
  for (int i = 0; i < n; ++i) x[i + 1] = x[i] + h, h *= ratio;
  for (double& v : x) v /= x.back();
  x.back() = 1.0;
  return x;
}

/// Equilateral triangles of side a = 1/nx in ny rows, odd rows shifted by a/2 (so the left and right sides are
/// zigzags of equilateral triangles; the bottom y = 0 and top y = ny a sqrt(3)/2 are straight).
PlanarMesh equilateral_mesh(int nx, int ny) {
  PlanarMesh m;
  const double a = 1.0 / nx, h = a * std::sqrt(3.0) / 2;
  auto id = [&](int i, int j) { return i + (nx + 1) * j; };
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) m.points.push_back({(i + 0.5 * (j % 2)) * a, j * h});
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      if (j % 2 == 0) {
        m.triangles.push_back({id(i, j), id(i + 1, j), id(i, j + 1)});
        m.triangles.push_back({id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)});
      } else {
        m.triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
        m.triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
      }
    }
  for (int i = 0; i < nx; ++i) {
    m.lines.push_back({id(i, 0), id(i + 1, 0), 13});
    m.lines.push_back({id(i, ny), id(i + 1, ny), 14});
  }
  for (int j = 0; j < ny; ++j) {
    m.lines.push_back({id(0, j), id(0, j + 1), 11});
    m.lines.push_back({id(nx, j), id(nx, j + 1), 12});
  }
  return m;
}

std::string sheet(int nx, int ny) {
  return "generate: {shape: sheet, size: [1, 1], cells: [" + std::to_string(nx) + ", " + std::to_string(ny) + "]}";
}

// ---------------------------------------------------------------------------------------------------------
// Static solves and strain measurement.

struct Traction {
  std::string model = "trbs";
  double young = 1.0, poisson = 0.3, thickness = 1.0;
  double p = 1e-5;  ///< nominal traction on the top edge, force per unit reference length
  int steps = 1;
  std::string mesh = sheet(8, 8);
  bool hold_normal = true;    ///< fix z on every vertex
  bool clamp_bottom = false;  ///< fix x and y on the bottom edge (an inhomogeneous state) instead of y alone
};

std::string traction_yaml(const Traction& t) {
  char buffer[2048];
  std::snprintf(buffer, sizeof buffer,
                "mesh:\n"
                "  %s\n"
                "materials:\n"
                "  - {model: %s, young: %.17g, poisson: %.17g, thickness: %.17g, density: 1.0}\n"
                "boundary:\n"
                "%s"
                "  - select: {region: 13}\n"
                "    fix: [%s]\n"
                "  - select: {box: [[-1.0e-9, -1.0e-9, -1], [1.0e-9, 1.0e-9, 1]]}\n"
                "    fix: [x]\n"
                "loads:\n"
                "  tractions:\n"
                "    - select: {region: 14}\n"
                "      traction: [0, %.17g, 0]\n"
                "analysis:\n"
                "  type: static\n"
                "  steps: %d\n",
                t.mesh.c_str(), t.model.c_str(), t.young, t.poisson, t.thickness,
                t.hold_normal ? "  - select: {all: true}\n    fix: [z]\n" : "", t.clamp_bottom ? "x, y" : "y", t.p,
                t.steps);
  return buffer + kSolver;
}

struct StaticResult {
  std::vector<double> reference, displacement;  ///< rank 0 of the comm: 3 per original vertex
  std::vector<LocalIndex> triangles;            ///< rank 0: the whole mesh's triangles
  std::vector<StepReport> reports;
  double seconds = 0;
};

/// Solve `job` on `comm`; rank 0 of comm gets the displacements in the mesh's original vertex order.
StaticResult solve_static(MPI_Comm comm, const Job& job) {
  const auto t0 = std::chrono::steady_clock::now();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Mesh whole;
  if (rank == 0) whole = load_job_mesh(job);
  const LocalMesh mesh = distribute_mesh(comm, whole);
  StaticSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  StaticResult r;
  r.reports = solver.run([](int, double) {});
  // (X, u) of the owned vertices on rank 0, by original id.
  const std::vector<double> x = solver.local_positions();
  std::vector<double> u(3 * static_cast<std::size_t>(mesh.n_owned));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = x[i] - mesh.mesh.coords[i];
  auto gathered = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords, u});
  r.reference = std::move(gathered[0]);
  r.displacement = std::move(gathered[1]);
  if (rank == 0) r.triangles = whole.triangles;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

/// Engineering strains of the sheet: the area average of the in-plane displacement gradient G over the
/// triangles; xx = G_xx, yy = G_yy, shear = G_xy + G_yx.
struct Strains {
  double xx = 0, yy = 0, shear = 0;
};

Strains mean_strains(const StaticResult& r) {
  double G[2][2] = {{0, 0}, {0, 0}}, area = 0;
  for (std::size_t t = 0; t + 2 < r.triangles.size(); t += 3) {
    const std::size_t a = 3 * static_cast<std::size_t>(r.triangles[t]),
                      b = 3 * static_cast<std::size_t>(r.triangles[t + 1]),
                      c = 3 * static_cast<std::size_t>(r.triangles[t + 2]);
    const double e1[2] = {r.reference[b] - r.reference[a], r.reference[b + 1] - r.reference[a + 1]};
    const double e2[2] = {r.reference[c] - r.reference[a], r.reference[c + 1] - r.reference[a + 1]};
    const double d1[2] = {r.displacement[b] - r.displacement[a], r.displacement[b + 1] - r.displacement[a + 1]};
    const double d2[2] = {r.displacement[c] - r.displacement[a], r.displacement[c + 1] - r.displacement[a + 1]};
    const double det = e1[0] * e2[1] - e1[1] * e2[0];
    // [d1 d2] = grad u [e1 e2]  =>  grad u = [d1 d2] [e1 e2]^-1; weight |det| / 2.
    const double inv[2][2] = {{e2[1] / det, -e2[0] / det}, {-e1[1] / det, e1[0] / det}};
    const double A = std::abs(det) / 2;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) G[i][j] += A * (d1[i] * inv[0][j] + d2[i] * inv[1][j]);
    area += A;
  }
  return {G[0][0] / area, G[1][1] / area, (G[0][1] + G[1][0]) / area};
}

/// Solve the pure traction job on MPI_COMM_WORLD; its mean strains on every rank.
Strains traction_strains(const std::string& name, const Traction& t) {
  const StaticResult r = solve_static(MPI_COMM_WORLD, job_from_yaml(name, traction_yaml(t)));
  Strains s;
  if (world_rank() == 0) s = mean_strains(r);
  const auto v = from_rank0(std::array<double, 3>{s.xx, s.yy, s.shear});
  return {v[0], v[1], v[2]};
}

/// The St. Venant-Kirchhoff membrane in uniaxial nominal stress s = p / (E h): (eps_x, eps_y).
/// traction_strains, or nothing when Newton fails (SolverError, thrown on every rank).
std::optional<Strains> try_traction_strains(const std::string& name, const Traction& t) {
  try {
    return traction_strains(name, t);
  } catch (const SolverError&) {
    return std::nullopt;
  }
}

std::array<double, 2> stvk_uniaxial(double s, double nu) {
  double l = 1 + s;  // l (l^2 - 1) / 2 = s, Newton from the linear guess
  for (int it = 0; it < 50; ++it) l -= (l * (l * l - 1) / 2 - s) / ((3 * l * l - 1) / 2);
  return {std::sqrt(1 - nu * (l * l - 1)) - 1, l - 1};
}

std::string name_of(const std::string& model, double nu) {
  std::string s = model + "_nu" + std::to_string(static_cast<int>(std::lround(nu * 100)));
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// 1. Small strains: trbs, trqs and linear-membrane give eps_y = p / (E h), eps_x = -nu eps_y (Delingette §V-B).

TEST(Membranes, SmallStrainPureTractionMatchesLinearElasticity) {
  double worst = 0;
  for (const std::string model : {"trbs", "trqs", "linear-membrane"}) {
    std::vector<Traction> cases;
    for (const double nu : {0.0, 0.3, 0.6, 0.9}) {
      Traction t;
      t.model = model;
      t.poisson = nu;
      cases.push_back(t);
    }
    // E = 200, h = 0.5: the traction is per unit reference length, the stiffness per unit length E h.
    Traction thick;
    thick.model = model;
    thick.young = 200;
    thick.thickness = 0.5;
    thick.p = 1e-5 * 200 * 0.5;
    cases.push_back(thick);
    for (const auto& t : cases) {
      const double expected = t.p / (t.young * t.thickness);
      const Strains s = traction_strains("small_" + name_of(model, t.poisson), t);
      const double ey = s.yy / expected - 1, ex = (s.xx + t.poisson * s.yy) / expected;
      worst = std::max({worst, std::abs(ey), std::abs(ex)});
      if (world_rank() == 0)
        std::printf(
            "membranes: small strain %-15s nu %.1f E %3g h %.1f (%d ranks): eps_y / (p/(E h)) - 1 = %+.2e, "
            "(eps_x + nu eps_y) / (p/(E h)) = %+.2e, shear %+.1e\n",
            model.c_str(), t.poisson, t.young, t.thickness, world_size(), ey, ex, s.shear / expected);
      EXPECT_LT(std::abs(ey), 1e-3) << model << " nu " << t.poisson;
      EXPECT_LT(std::abs(ex), 1e-3) << model << " nu " << t.poisson;
      EXPECT_LT(std::abs(s.shear / expected), 1e-3) << model << " nu " << t.poisson;
    }
  }
  if (world_rank() == 0) std::printf("membranes: small strain: worst relative error %.2e\n", worst);
}

// ---------------------------------------------------------------------------------------------------------
// 2. Tensile springs alone: Delingette's claim is that they behave as a membrane only for nu near 1/3, where
// the angular springs of an equilateral triangle vanish (c_k ~ 2 cot a_i cot a_j + nu - 1 = 0). On a mesh of
// equilateral triangles `springs` is then exactly `trqs`, which has the trbs tangent at rest: the same small
// strains as trbs. Elsewhere a spring lattice has an effective Poisson ratio of 1/3 whatever nu, and on the
// generator's right triangles (all diagonals one way) it is anisotropic: a vertical load shears the sheet.

TEST(Membranes, SpringsMatchOnlyNearOneThirdOnEquilateralMeshes) {
  const double third = 1.0 / 3.0;
  const std::string equilateral = write_msh("equilateral", equilateral_mesh(10, 12));
  auto run = [&](const std::string& mesh_name, const std::string& mesh, const std::string& model, double nu) {
    Traction t;
    t.model = model;
    t.poisson = nu;
    t.mesh = mesh;
    return traction_strains("springs_" + mesh_name + "_" + name_of(model, nu), t);
  };
  // Equilateral mesh: springs against trbs on the same mesh (its zigzag sides make the state inhomogeneous).
  for (const double nu : {third, 0.0, 0.6}) {
    const Strains sp = run("equilateral", equilateral, "springs", nu), tb = run("equilateral", equilateral, "trbs", nu);
    const double dy = sp.yy / tb.yy - 1, dx = sp.xx / tb.xx - 1;
    if (world_rank() == 0)
      std::printf(
          "membranes: springs on equilateral triangles, nu %.3f (%d ranks): eps_y / eps_y(trbs) - 1 = %+.3e, "
          "eps_x / eps_x(trbs) - 1 = %+.3e; -eps_x / eps_y = %.4f (trbs %.4f); eps_y / (p/E) = %.4f (trbs %.4f)\n",
          nu, world_size(), dy, dx, -sp.xx / sp.yy, -tb.xx / tb.yy, sp.yy / 1e-5, tb.yy / 1e-5);
    if (nu == third) {
      EXPECT_LT(std::abs(dy), 1e-4);
      EXPECT_LT(std::abs(dx), 1e-4);
    } else {
      // An equilateral spring lattice is isotropic with Poisson ratio 1/3 whatever nu.
      EXPECT_NEAR(-sp.xx / sp.yy, third, 0.02) << nu;
      EXPECT_GT(std::abs(-sp.xx / sp.yy - (-tb.xx / tb.yy)), 0.2) << nu;
    }
  }
  // Delingette's Fig. 12 (a) kind of mesh (Gmsh Delaunay, 12 edges per side, 376 triangles of all
  // orientations): at nu = 1/3 the springs come within 10 % of the membrane (measured: 6 %) with an effective
  // Poisson ratio near 1/3; at nu = 0.6 the Poisson ratio stays near 1/3.
  const std::string unstructured = "file: " + source("jobs/experiments/delingette/meshes/square.msh");
  for (const double nu : {third, 0.6}) {
    const Strains sp = run("unstructured", unstructured, "springs", nu);
    const double ey = sp.yy / 1e-5 - 1, nu_eff = -sp.xx / sp.yy;
    if (world_rank() == 0)
      std::printf(
          "membranes: springs on the unstructured square, nu %.3f (%d ranks): eps_y / (p/E) - 1 = %+.3e, "
          "-eps_x / eps_y = %.4f, shear / eps_y = %+.2e\n",
          nu, world_size(), ey, nu_eff, sp.shear / sp.yy);
    if (nu == third) {
      EXPECT_LT(std::abs(ey), 0.10);
      EXPECT_NEAR(nu_eff, third, 0.05);
    } else {
      EXPECT_NEAR(nu_eff, third, 0.05);
      EXPECT_GT(std::abs(nu_eff - nu), 0.2);
    }
  }
  // The generator's right-triangle sheet: far from linear elasticity even at nu = 1/3 (stiffer, sheared).
  for (const double nu : {third, 0.6}) {
    const Strains sp = run("sheet", sheet(8, 8), "springs", nu);
    if (world_rank() == 0)
      std::printf(
          "membranes: springs on the right-triangle sheet, nu %.3f (%d ranks): eps_y / (p/E) = %.4f, "
          "-eps_x / eps_y = %.4f, shear / eps_y = %+.4f\n",
          nu, world_size(), sp.yy / 1e-5, -sp.xx / sp.yy, sp.shear / sp.yy);
    EXPECT_GT(std::abs(sp.yy / 1e-5 - 1), 0.1) << nu;
    EXPECT_GT(std::abs(sp.shear / sp.yy), 0.1) << nu;
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. trbs against linear-membrane (Delingette Figs. 10 and 11): equal at small loads; at large loads trbs is
// the exact St. Venant-Kirchhoff membrane, stiffer than linear in traction and softer in compression
// (p = -0.1 E h: eps_y about 21 % larger than linear, Delingette reports "on average 20 %").

TEST(Membranes, TrbsAgreesWithLinearAtSmallLoadsAndDivergesAtLargeLoads) {
  const double nu = 0.6;
  for (const double p : {1e-5, 0.3, -0.1}) {
    Traction t;
    t.poisson = nu;
    t.p = p;
    t.steps = std::abs(p) > 0.01 ? 4 : 1;
    t.model = "linear-membrane";
    const Strains lin = traction_strains("vs_linear", t);
    t.model = "trbs";
    const Strains trbs = traction_strains("vs_trbs", t);
    const auto exact = stvk_uniaxial(p, nu);
    const double diff = trbs.yy / lin.yy - 1;
    if (world_rank() == 0)
      std::printf(
          "membranes: p/E = %+g, nu %.1f (%d ranks): linear eps_y = %+.9e (error %+.1e), eps_x / eps_y = %.6f; "
          "trbs eps_y = %+.9e eps_x = %+.9e (vs closed-form StVK: %+.1e, %+.1e); trbs / linear - 1 = %+.4f\n",
          p, nu, world_size(), lin.yy, lin.yy / p - 1, lin.xx / lin.yy, trbs.yy, trbs.xx, trbs.yy / exact[1] - 1,
          trbs.xx / exact[0] - 1, diff);
    // linear-membrane is linear: exact at any load.
    EXPECT_NEAR(lin.yy / p, 1.0, 1e-8);
    EXPECT_NEAR(lin.xx / lin.yy, -nu, 1e-8);
    // trbs is the StVK membrane: the homogeneous closed form at any load.
    EXPECT_NEAR(trbs.yy / exact[1], 1.0, 1e-8);
    EXPECT_NEAR(trbs.xx / exact[0], 1.0, 1e-8);
    if (std::abs(p) < 1e-3) {
      EXPECT_LT(std::abs(diff), 1e-4);
    } else if (p > 0) {
      EXPECT_LT(diff, -0.2);  // stiffer in traction: eps_y 0.2212 against 0.3
    } else {
      EXPECT_NEAR(diff, 0.21, 0.02);  // softer in compression: eps_y -0.1212 against -0.1
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 4. Mesh independence (Delingette Fig. 12): the strains on a uniform mesh against those on a strongly graded
// one, for the same loads. Two pairs: the generator's sheet against a tensor-product grid graded by a geometric
// ratio 1.3 per cell in x and 1/1.3 in y (cell sizes 1 : 17.9, diagonals alternating), written by the test; and
// the Gmsh Delaunay meshes of jobs/experiments/delingette/meshes, square.msh (uniform, h = 1/12) against
// graded.msh (h from 0.02 to 0.24).

TEST(Membranes, StrainsAreMeshIndependent) {
  const int n = 12;
  const std::string graded = write_msh("graded", grid_mesh(geometric(n, 1.3), geometric(n, 1 / 1.3), true));
  const std::string gmsh_dir = "file: " + source("jobs/experiments/delingette/meshes/");
  struct Pair {
    const char* name;
    std::string uniform, graded;
  };
  const Pair pairs[2] = {{"grid", sheet(n, n), graded}, {"gmsh", gmsh_dir + "square.msh", gmsh_dir + "graded.msh"}};
  for (const Pair& pair : pairs)
    for (const std::string model : {"trbs", "trqs", "linear-membrane", "springs"}) {
      double worst = 0;
      for (const double p : {1e-5, 0.1, -0.1}) {
        Traction t;
        t.model = model;
        t.poisson = 0.3;
        t.p = p;
        t.steps = std::abs(p) > 0.01 ? 3 : 1;
        t.mesh = pair.uniform;
        const auto u = try_traction_strains("uniform", t);
        t.mesh = pair.graded;
        const auto g = try_traction_strains("graded", t);
        if (!u || !g) {
          // Tensile springs in compression may lose in-plane stability (triangles flip); reported, not asserted.
          if (world_rank() == 0)
            std::printf("membranes: mesh independence (%s) %-15s p/E = %+g (%d ranks): Newton failed on the %s mesh\n",
                        pair.name, model.c_str(), p, world_size(), !u ? "uniform" : "graded");
          EXPECT_EQ(model, "springs") << pair.name << " p " << p;
          continue;
        }
        const double dy = g->yy / u->yy - 1, dx = g->xx / u->xx - 1;
        worst = std::max({worst, std::abs(dy), std::abs(dx)});
        if (world_rank() == 0)
          std::printf(
              "membranes: mesh independence (%s) %-15s p/E = %+g (%d ranks): uniform eps = (%+.6e, %+.6e), "
              "graded eps = (%+.6e, %+.6e): relative difference eps_y %+.2e, eps_x %+.2e\n",
              pair.name, model.c_str(), p, world_size(), u->xx, u->yy, g->xx, g->yy, dy, dx);
      }
      // trbs and linear-membrane reproduce the homogeneous state on any mesh; trqs is not a continuum model but
      // stays within a few %; tensile springs depend on the mesh (reported, not asserted).
      if (model == "trqs") {
        EXPECT_LT(worst, 0.05) << pair.name;
      } else if (model != "springs") {
        EXPECT_LT(worst, 1e-8) << pair.name << " " << model;
      }
    }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Serial == 2 == 3 ranks.

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double a : v) m = std::max(m, std::abs(a));
  return m;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 1e300;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(Membranes, StaticSerialEqualsDistributed) {
  // trbs at a large load in 4 load steps with the bottom edge clamped (an inhomogeneous state: the homogeneous
  // pure traction state would be reproduced by any partition), on the generator's sheet and on the graded Gmsh
  // mesh of Fig. 12 (b).
  for (const std::string& mesh : {sheet(12, 12), "file: " + source("jobs/experiments/delingette/meshes/graded.msh")}) {
    Traction t;
    t.p = 0.3;
    t.poisson = 0.45;
    t.steps = 4;
    t.mesh = mesh;
    t.clamp_bottom = true;
    const Job job = job_from_yaml("distributed_static", traction_yaml(t));
    const StaticResult all = solve_static(MPI_COMM_WORLD, job);
    double relative = 0, u = 0, seconds = 0;
    if (world_rank() == 0) {
      const StaticResult serial = solve_static(MPI_COMM_SELF, job);
      u = max_abs(serial.displacement);
      relative = max_difference(all.displacement, serial.displacement) / u;
      seconds = serial.seconds;
      std::printf(
          "membranes: static trbs p/E = 0.3, clamped bottom (%s) on %d ranks vs 1: max |x - x_serial| / max |u| = %.2e "
          "(max |u| = %.6f; %.2f s on %d ranks, %.2f s serial)\n",
          mesh.substr(0, 8) == "generate" ? "sheet 12 x 12" : "graded.msh", world_size(), relative, u, all.seconds,
          world_size(), seconds);
    }
    dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
    EXPECT_LT(from_rank0(relative), 1e-8);
    EXPECT_GT(from_rank0(u), 0.2);
  }
}

struct DynamicResult {
  std::vector<double> reference, position, velocity;  ///< rank 0 of the comm: 3 per original vertex
  std::vector<TimeStepReport> reports;
  double seconds = 0;
};

DynamicResult simulate(MPI_Comm comm, const Job& job) {
  const auto t0 = std::chrono::steady_clock::now();
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  DynamicSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  DynamicResult r;
  r.reports = run_time_loop(solver, [](long long, double) {});
  const std::vector<double> x = solver.local_positions(), v = solver.local_velocities();
  auto gathered = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords, x, v});
  r.reference = std::move(gathered[0]);
  r.position = std::move(gathered[1]);
  r.velocity = std::move(gathered[2]);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

TEST(Membranes, DynamicSerialEqualsDistributed) {
  // A 1 m square sheet (e = E h = 1000 N/m, 0.1 kg/m^2) hung by its edge y = 1, released flat under gravity
  // tilted 30 degrees from its normal (so the whole sheet is stretched at once, not only the rows near the held
  // edge): backward Euler, dt = 10 ms, 10 steps (Volino §4.3's hanging cloth, shortened).
  const Job job = job_from_yaml("distributed_dynamic",
                                "mesh:\n"
                                "  " +
                                    sheet(10, 10) +
                                    "\n"
                                    "materials:\n"
                                    "  - {model: trbs, young: 1000, poisson: 0.3, thickness: 1, density: 0.1}\n"
                                    "boundary:\n"
                                    "  - select: {region: 14}\n"
                                    "    fix: [x, y, z]\n"
                                    "loads:\n"
                                    "  gravity: [0, -4.905, -8.49571]\n"
                                    "analysis:\n"
                                    "  type: dynamic\n"
                                    "  dt: 0.01\n"
                                    "  end_time: 0.1\n"
                                    "  integrator: backward-euler\n" +
                                    kSolver);
  const DynamicResult all = simulate(MPI_COMM_WORLD, job);
  double dx = 0, dv = 0, fall = 0;
  if (world_rank() == 0) {
    const DynamicResult serial = simulate(MPI_COMM_SELF, job);
    double u = 0;
    for (std::size_t i = 0; i < serial.position.size(); ++i) {
      u = std::max(u, std::abs(serial.position[i] - serial.reference[i]));
      if (i % 3 == 0 && serial.reference[i + 1] == 0.0)
        fall = std::max(fall, std::hypot(serial.position[i] - serial.reference[i],
                                         serial.position[i + 1] - serial.reference[i + 1],
                                         serial.position[i + 2] - serial.reference[i + 2]));
    }
    dx = max_difference(all.position, serial.position) / u;
    dv = max_difference(all.velocity, serial.velocity) / max_abs(serial.velocity);
    int newton = 0;
    for (const auto& s : serial.reports) newton += s.newton_iterations;
    std::printf(
        "membranes: hanging sheet, 10 backward-euler steps on %d ranks vs 1: max |dx| / max |u| = %.2e, "
        "max |dv| / max |v| = %.2e (max |u| = %.5f, free edge moved %.6f, %d Newton iterations; %.2f s on "
        "%d ranks, %.2f s serial)\n",
        world_size(), dx, dv, u, fall, newton, all.seconds, world_size(), serial.seconds);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  EXPECT_LT(from_rank0(dx), 1e-8);
  EXPECT_LT(from_rank0(dv), 1e-8);
  // The free edge falls, held back by the sheet: less than backward Euler's free fall |g| dt^2 n (n + 1) / 2 =
  // 0.05396 m.
  fall = from_rank0(fall);
  EXPECT_GT(fall, 0.01);
  EXPECT_LT(fall, 9.81 * 1e-4 * 55);
}

// ---------------------------------------------------------------------------------------------------------
// 6. A flat static membrane without its normal component held: a clear InputError on every rank.

TEST(Membranes, FlatStaticMembraneWithoutNormalFixFailsOnEveryRank) {
  Traction t;
  t.hold_normal = false;
  const Job job = job_from_yaml("flat_unheld", traction_yaml(t));
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  int failed = 0;
  try {
    (void)build_model(MPI_COMM_WORLD, job, mesh);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    failed = 1;
    const std::string what = e.what();
    EXPECT_NE(what.find("flat membrane"), std::string::npos) << what;
    EXPECT_NE(what.find("fix: [z]"), std::string::npos) << what;
    if (world_rank() == 0) std::printf("membranes: flat membrane without z held: %s\n", what.c_str());
  }
  int everywhere = 0;
  MPI_Allreduce(&failed, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(everywhere, 1);
}

}  // namespace test_membranes
}  // namespace edgefem
