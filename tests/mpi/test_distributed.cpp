// SPDX-License-Identifier: BSD-3-Clause
// Distributed solves checked against serial solves and closed-form answers. Run under mpiexec with
// 1, 2 and 3 ranks (CTest: mpi.distributed.npN); every assertion holds on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/error.hpp"
#include "io/job.hpp"
#include "mesh/box.hpp"
#include "partition/partition.hpp"
#include "run/load_mesh.hpp"
#include "solver/model.hpp"
#include "run/output.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/dynamics_testing.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_distributed {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

struct Solution {
  std::vector<double> reference;     ///< rank 0: 3 per original vertex
  std::vector<double> displacement;  ///< rank 0: 3 per original vertex
  std::vector<StepReport> reports;
};

/// Solve `job` on `comm`; rank 0 of comm gets the displacements in the mesh file's vertex order.
Solution solve(MPI_Comm comm, const Job& job, const std::string& output_dir = "") {
  const LocalMesh mesh = mpitest::distributed_job_mesh(comm, job);
  StaticSolver solver(comm, job, mesh, build_model(comm, job, mesh), "", true);
  std::unique_ptr<ResultWriter> writer;
  if (!output_dir.empty()) writer = std::make_unique<ResultWriter>(comm, output_dir, mesh, solver.model());
  Solution s;
  s.reports = solver.run([&](int step, double load) {
    if (writer) writer->write(step, load, solver.local_positions(), solver.local_internal_force());
  });
  if (writer) writer->finish();
  // (X, u) of the owned vertices on rank 0, by original id.
  const std::vector<double> x = solver.local_positions();
  std::vector<double> u(3 * static_cast<std::size_t>(mesh.n_owned));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = x[i] - mesh.mesh.coords[i];
  auto gathered = mpitest::gather_by_original_vertex(comm, mesh, {mesh.mesh.coords, u});
  s.reference = std::move(gathered[0]);
  s.displacement = std::move(gathered[1]);
  return s;
}

std::string source(const std::string& relative) { return std::string(EDGEFEM_SOURCE_DIR) + "/" + relative; }

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double a : v) m = std::max(m, std::abs(a));
  return m;
}

TEST(Distributed, CantileverEqualsSerialSolve) {
  const Job job = read_job(source("tests/data/cantilever_small.yaml"));
  const Solution distributed = solve(MPI_COMM_WORLD, job);
  double relative = 0, tip = 0;
  if (world_rank() == 0) {
    const Solution serial = solve(MPI_COMM_SELF, job);
    ASSERT_EQ(serial.displacement.size(), distributed.displacement.size());
    double diff = 0;
    for (std::size_t i = 0; i < serial.displacement.size(); ++i)
      diff = std::max(diff, std::abs(serial.displacement[i] - distributed.displacement[i]));
    relative = diff / max_abs(serial.displacement);
    tip = max_abs(serial.displacement);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  MPI_Bcast(&relative, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&tip, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (world_rank() == 0)
    std::printf("cantilever on %d ranks: max |u - u_serial| / max |u_serial| = %.3e, max |u| = %.9f\n", world_size(),
                relative, tip);
  EXPECT_LT(relative, 1e-8) << "on " << world_size() << " ranks";
  EXPECT_GT(tip, 0.5);  // a visibly bent beam (about 2 units of tip deflection over a length of 10)
  EXPECT_LT(tip, 4.0);
  EXPECT_EQ(distributed.reports.size(), 2u);
}

/// Box [0,2]x[0,1]x[0,1] on rollers (x=0: ux=0, y=0: uy=0, z=0: uz=0), nominal traction P11 on x=2.
Job uniaxial_job(const std::string& model, double stretch, double young, double poisson) {
  Job job;
  job.job_file = "uniaxial (built in the test)";
  job.generate = GenerateSpec{GeneratedShape::box, {2, 1, 1}, {4, 2, 2}};
  MaterialSpec m;
  m.model = &model_named(model);
  m.young = young;
  m.poisson = poisson;
  m.volumetric_penalty = false;
  job.materials = {m};
  auto roller = [](int region, int component) {
    BoundarySpec b;
    b.select.kind = Selection::Kind::region;
    b.select.region = region;
    b.fix[component] = true;
    return b;
  };
  job.boundary = {roller(box_region::x_min, 0), roller(box_region::y_min, 1), roller(box_region::z_min, 2)};
  TractionSpec t;
  t.select.kind = Selection::Kind::region;
  t.select.region = box_region::x_max;
  t.traction = {young * stretch * (stretch * stretch - 1) / 2, 0, 0};  // P11 = E lambda (lambda^2 - 1) / 2
  job.loads.tractions = {t};
  job.steps = 3;
  job.newton_rtol = 1e-14;
  job.newton_atol = 1e-11;
  job.petsc_options = "";
  return job;
}

class UniaxialTension : public ::testing::TestWithParam<std::string> {};

TEST_P(UniaxialTension, MatchesClosedFormStvk) {
  const double stretch = 1.25, young = 1000.0, poisson = 0.3;
  const double lateral = std::sqrt(1 - poisson * (stretch * stretch - 1));
  const Solution s = solve(MPI_COMM_WORLD, uniaxial_job(GetParam(), stretch, young, poisson));
  double error = 0;
  if (world_rank() == 0) {
    for (std::size_t v = 0; v < s.reference.size() / 3; ++v) {
      const double expected[3] = {(stretch - 1) * s.reference[3 * v], (lateral - 1) * s.reference[3 * v + 1],
                                  (lateral - 1) * s.reference[3 * v + 2]};
      for (int d = 0; d < 3; ++d) error = std::max(error, std::abs(s.displacement[3 * v + d] - expected[d]));
    }
    error /= (stretch - 1) * 2.0;  // relative to the largest displacement
  }
  MPI_Bcast(&error, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (world_rank() == 0)
    std::printf("uniaxial tension (%s, %d ranks): max error / max displacement = %.3e\n", GetParam().c_str(),
                world_size(), error);
  EXPECT_LT(error, 1e-8) << GetParam() << " on " << world_size() << " ranks";
}

INSTANTIATE_TEST_SUITE_P(Models, UniaxialTension, ::testing::Values("stvk", "stvk-tl"), [](const auto& info) {
  return info.param == "stvk" ? std::string("stvk") : std::string("stvk_tl");
});

TEST(Distributed, TwoMaterialsTwoFormulationsEqualSerialSolve) {
  // Gmsh binary 2.2 mesh, physical volumes 1 (isotropic, stvk) and 2 (fibre-reinforced, stvk-tl).
  const Job job = read_job(source("jobs/examples/bimaterial.yaml"));
  const Solution distributed = solve(MPI_COMM_WORLD, job);
  double relative = 0;
  if (world_rank() == 0) {
    const Solution serial = solve(MPI_COMM_SELF, job);
    double diff = 0;
    for (std::size_t i = 0; i < serial.displacement.size(); ++i)
      diff = std::max(diff, std::abs(serial.displacement[i] - distributed.displacement[i]));
    relative = diff / max_abs(serial.displacement);
    std::printf("bimaterial on %d ranks: max |u - u_serial| / max |u_serial| = %.3e\n", world_size(), relative);
  }
  dynamics_testing::wait_for_rank0();  // the other ranks sleep through rank 0's serial run
  MPI_Bcast(&relative, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_LT(relative, 1e-8);
}

/// Uniaxial nominal stress `stress` along x on the roller box with a transversely isotropic material whose
/// fibre is `fibre`; returns the three homogeneous strains (displacement / length) measured at the far corner.
std::array<double, 3> anisotropic_uniaxial(const std::string& model, std::array<double, 3> fibre, double stress) {
  Job job = uniaxial_job(model, 1.0, 1.0, 0.3);
  job.materials[0].anisotropy = TransverseIsotropySpec{fibre, 5.0e4, 1.0e4, 4.0e3, 0.3, 0.35};
  job.loads.tractions[0].traction = {stress, 0, 0};
  job.steps = 1;
  const Solution s = solve(MPI_COMM_WORLD, job);
  std::array<double, 3> strain{};
  if (world_rank() == 0)
    for (std::size_t v = 0; v < s.reference.size() / 3; ++v)
      if (s.reference[3 * v] == 2.0 && s.reference[3 * v + 1] == 1.0 && s.reference[3 * v + 2] == 1.0)
        strain = {s.displacement[3 * v] / 2.0, s.displacement[3 * v + 1], s.displacement[3 * v + 2]};
  MPI_Bcast(strain.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return strain;
}

TEST(Distributed, TransverselyIsotropicUniaxialMatchesSmallStrainCompliance) {
  const double Ef = 5.0e4, Et = 1.0e4, nu_ft = 0.3, nu_tt = 0.35;
  // `linear` is exact at any load; stvk agrees to O(strain) at a strain of about 1e-6.
  for (const std::string model : {"linear", "stvk"}) {
    const double stress = model == "linear" ? 100.0 : 1e-6 * Et;
    const double tol = model == "linear" ? 1e-7 : 1e-4;  // linear: the KSP tolerance (1e-8) limits it
    // Along the fibre: eps_f = s/Ef, both transverse strains -nu_ft s/Ef.
    const auto along = anisotropic_uniaxial(model, {1, 0, 0}, stress);
    EXPECT_NEAR(along[0] / (stress / Ef), 1.0, tol) << model;
    EXPECT_NEAR(along[1] / (-nu_ft * stress / Ef), 1.0, tol) << model;
    EXPECT_NEAR(along[2] / (-nu_ft * stress / Ef), 1.0, tol) << model;
    // Across (fibre along y): eps_x = s/Et, eps_y (fibre) = -nu_ft s/Ef, eps_z = -nu_tt s/Et.
    const auto across = anisotropic_uniaxial(model, {0, 1, 0}, stress);
    EXPECT_NEAR(across[0] / (stress / Et), 1.0, tol) << model;
    EXPECT_NEAR(across[1] / (-nu_ft * stress / Ef), 1.0, tol) << model;
    EXPECT_NEAR(across[2] / (-nu_tt * stress / Et), 1.0, tol) << model;
  }
}

TEST(Distributed, TwistedCuboidTsepEqualsTotalLagrangianNsnDiffers) {
  // Kikuuwe §5, Fig. 9 (jobs/examples/twist.yaml): a rotation prescribed on the top face.
  Job job = read_job(source("jobs/examples/twist.yaml"));
  job.steps = 3;
  job.boundary[1].rotate->angle_degrees = 60;
  std::vector<double> u[3];
  const char* models[3] = {"stvk", "stvk-tl", "stvk-nsn"};
  for (int k = 0; k < 3; ++k) {
    job.materials[0].model = &model_named(models[k]);
    u[k] = solve(MPI_COMM_WORLD, job).displacement;
  }
  double tl = 0, nsn = 0, scale = 0;
  if (world_rank() == 0) {
    for (std::size_t i = 0; i < u[0].size(); ++i) {
      tl = std::max(tl, std::abs(u[1][i] - u[0][i]));
      nsn = std::max(nsn, std::abs(u[2][i] - u[0][i]));
      scale = std::max(scale, std::abs(u[0][i]));
    }
    std::printf("twist (%d ranks): max |u_tl - u_tsep| / max |u| = %.3e, nsn: %.3e\n", world_size(), tl / scale,
                nsn / scale);
  }
  double r[3] = {tl, nsn, scale};
  MPI_Bcast(r, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_LT(r[0] / r[2], 1e-9);  // analytically the same model
  EXPECT_GT(r[1] / r[2], 1e-3);  // the spring network is a different model
  EXPECT_GT(r[2], 0.3);          // corners of the top face move by about 0.4 at 60 degrees
}

TEST(Distributed, GmshBeamSinglePrecisionStiffnessKeepsTheAnswer) {
  // stvk keeps its K(E) TSEP coefficients in single precision (issue 56), its forces in double; stvk-tl is the same
  // energy with a stiffness all in double. The Jacobian's precision changes Newton's path, not the equilibrium it
  // converges to: the converged displacements agree to round-off (measured 3e-15 to 4e-14 relative on 1-3 ranks).
  Job job = read_job(source("tests/data/beam_gravity.yaml"));
  std::vector<double> u[2];
  std::vector<StepReport> reports[2];
  const char* models[2] = {"stvk", "stvk-tl"};
  for (int k = 0; k < 2; ++k) {
    job.materials[0].model = &model_named(models[k]);
    Solution s = solve(MPI_COMM_WORLD, job);
    u[k] = std::move(s.displacement);
    reports[k] = std::move(s.reports);
  }
  double r[2] = {0, 0};  // max |u_stvk - u_tl|, max |u_tl|
  if (world_rank() == 0) {
    ASSERT_EQ(u[0].size(), u[1].size());
    EXPECT_GT(u[0].size() / 3, 1000u);  // the Gmsh beam: 1,082 vertices, 3,603 tets
    for (std::size_t i = 0; i < u[0].size(); ++i) r[0] = std::max(r[0], std::abs(u[0][i] - u[1][i]));
    r[1] = max_abs(u[1]);
    std::printf("Gmsh beam (%d ranks): max |u_stvk - u_tl| / max |u| = %.3e, max |u| = %.9f, Newton %d / %d\n",
                world_size(), r[0] / r[1], r[1], reports[0].back().newton_iterations,
                reports[1].back().newton_iterations);
  }
  MPI_Bcast(r, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_LT(r[0] / r[1], 1e-10);
  EXPECT_GT(r[1], 1.0);  // a visibly bent beam
  EXPECT_LT(r[1], 3.0);
}

TEST(Distributed, OutputReadsBackWithVtk) {
  const Job job = read_job(source("tests/data/cantilever_small.yaml"));
  const std::string dir = std::string(EDGEFEM_BINARY_DIR) + "/test-out/mpi_output_np" + std::to_string(world_size());
  if (world_rank() == 0) std::filesystem::remove_all(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  const Solution s = solve(MPI_COMM_WORLD, job, dir);
  int failures = 0;
  if (world_rank() == 0) {
    // The .pvd lists steps 0, 1, 2 with their load factors.
    std::ifstream pvd(dir + "/solution.pvd");
    std::stringstream text;
    text << pvd.rdbuf();
    EXPECT_NE(text.str().find("timestep=\"0.5\""), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("file=\"step_000002.pvtu\""), std::string::npos) << text.str();
    vtkNew<vtkXMLPUnstructuredGridReader> reader;
    reader->SetFileName((dir + "/step_000002.pvtu").c_str());
    reader->Update();
    vtkUnstructuredGrid* grid = reader->GetOutput();
    EXPECT_EQ(grid->GetNumberOfCells(), 20 * 2 * 2 * 6);
    vtkDataArray* u = grid->GetPointData()->GetArray("displacement");
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->GetNumberOfComponents(), 3);
    ASSERT_NE(grid->GetPointData()->GetArray("force"), nullptr);
    for (const char* name : {"green_strain", "stress"}) {
      vtkDataArray* a = grid->GetCellData()->GetArray(name);
      ASSERT_NE(a, nullptr) << name;
      EXPECT_EQ(a->GetNumberOfComponents(), 9) << name;
      EXPECT_EQ(a->GetNumberOfTuples(), grid->GetNumberOfCells()) << name;
    }
    for (const char* name : {"von_mises", "rank", "region"})
      ASSERT_NE(grid->GetCellData()->GetArray(name), nullptr) << name;
    EXPECT_EQ(grid->GetCellData()->GetArray("rank")->GetRange()[1], world_size() - 1);
    // One value: the largest displacement in the file equals the solver's, and the clamped end is at rest.
    double largest = 0, at_clamp = 0;
    for (vtkIdType p = 0; p < u->GetNumberOfTuples(); ++p) {
      const double* d = u->GetTuple3(p);
      const double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      largest = std::max(largest, norm);
      if (grid->GetPoint(p)[0] == 0.0) at_clamp = std::max(at_clamp, norm);
    }
    double expected = 0;
    for (std::size_t v = 0; v < s.displacement.size() / 3; ++v)
      expected = std::max(expected,
                          std::hypot(s.displacement[3 * v], s.displacement[3 * v + 1], s.displacement[3 * v + 2]));
    EXPECT_NEAR(largest, expected, 1e-12 * expected);
    EXPECT_EQ(at_clamp, 0.0);
    failures = ::testing::Test::HasFailure() ? 1 : 0;
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(failures, 0);
}

TEST(Distributed, SelectionMatchingNothingFailsOnEveryRank) {
  Job job = uniaxial_job("stvk", 1.1, 1000, 0.3);
  job.boundary[0].select.kind = Selection::Kind::box;
  job.boundary[0].select.lo = {5, 5, 5};
  job.boundary[0].select.hi = {6, 6, 6};
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  try {
    (void)build_model(MPI_COMM_WORLD, job, mesh);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("boundary[0].select"), std::string::npos) << e.what();
  }
  // A region that does not exist: the message lists the regions the mesh has.
  job.boundary[0].select.kind = Selection::Kind::region;
  job.boundary[0].select.region = 99;
  try {
    (void)build_model(MPI_COMM_WORLD, job, mesh);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("region 99; regions in the mesh: 1, 11, 12, 13, 14, 15, 16"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace test_distributed
}  // namespace edgefem
