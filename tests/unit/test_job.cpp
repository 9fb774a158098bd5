// SPDX-License-Identifier: BSD-3-Clause
// Job-file tests: a full job parses with every value; each class of error names file, line and key path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/job.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;

class JobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::weakly_canonical(fs::path(::testing::TempDir())) /
           ("edgefem_job_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "meshes");
    std::ofstream(dir_ / "meshes" / "beam.msh") << "$MeshFormat\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& text, const std::string& name = "job.yaml") const {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  /// read_job must throw an InputError containing "<path>:<line>: " and every piece.
  std::string expect_error(const std::string& text, int line, const std::vector<std::string>& pieces) const {
    const std::string path = write(text);
    try {
      read_job(path);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      const std::string where = path + ":" + std::to_string(line) + ": ";
      EXPECT_EQ(msg.rfind(where, 0), 0u) << "expected the message to start with '" << where << "': " << msg;
      for (const auto& piece : pieces)
        EXPECT_NE(msg.find(piece), std::string::npos) << "missing '" << piece << "' in: " << msg;
      return msg;
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
    return {};
  }
  fs::path dir_;
};

const char* const full_job = R"(# a complete job
mesh:
  file: meshes/beam.msh
materials:
  - region: 1
    model: stvk
    young: 1.0e4
    poisson: 0.3
    density: 2.5
    volumetric_penalty: false
    thickness: 0.1
  - region: 2
    model: stvk-tl
    young: 500
    poisson: -0.2
boundary:
  - select: {region: 11}
    fix: [x, y, z]
  - select: {box: [[9.99, -1, -1], [10.01, 2, 2]]}
    displace: [0, ~, -0.5]
    fix: [y]
  - select: {all: true}
    displace: [null, null, 1]
loads:
  gravity: [0, 0, -1.0]
  tractions:
    - select: {region: 12}
      traction: [0, 1.0, 0]
analysis:
  type: static
  steps: 4
solver:
  newton: {rtol: 1.0e-8, atol: 1.0e-11, max_it: 25}
  petsc: "-ksp_type cg -pc_type gamg"
output:
  directory: out/beam
  every: 2
)";

TEST_F(JobTest, FullJobParsesEveryValue) {
  const std::string path = write(full_job);
  const Job job = read_job(path);
  EXPECT_EQ(job.job_file, path);
  EXPECT_EQ(job.job_dir, dir_.string());
  ASSERT_TRUE(job.mesh_file.has_value());
  EXPECT_EQ(*job.mesh_file, (dir_ / "meshes" / "beam.msh").string());
  EXPECT_FALSE(job.generate.has_value());

  ASSERT_EQ(job.materials.size(), 2u);
  const MaterialSpec& m0 = job.materials[0];
  EXPECT_EQ(m0.region, 1);
  EXPECT_EQ(m0.model->name, "stvk");
  EXPECT_DOUBLE_EQ(m0.young, 1.0e4);
  EXPECT_DOUBLE_EQ(m0.poisson, 0.3);
  EXPECT_DOUBLE_EQ(m0.density, 2.5);
  EXPECT_FALSE(m0.volumetric_penalty);
  EXPECT_DOUBLE_EQ(m0.thickness, 0.1);
  const MaterialSpec& m1 = job.materials[1];
  EXPECT_EQ(m1.region, 2);
  EXPECT_EQ(m1.model->name, "stvk-tl");
  EXPECT_DOUBLE_EQ(m1.young, 500);
  EXPECT_DOUBLE_EQ(m1.poisson, -0.2);
  EXPECT_DOUBLE_EQ(m1.density, 1.0);
  EXPECT_TRUE(m1.volumetric_penalty);
  EXPECT_DOUBLE_EQ(m1.thickness, 1.0);

  ASSERT_EQ(job.boundary.size(), 3u);
  EXPECT_EQ(job.boundary[0].select.kind, Selection::Kind::region);
  EXPECT_EQ(job.boundary[0].select.region, 11);
  EXPECT_EQ(job.boundary[0].fix, (std::array<bool, 3>{true, true, true}));
  EXPECT_FALSE(job.boundary[0].displace[0].has_value());
  const BoundarySpec& b1 = job.boundary[1];
  EXPECT_EQ(b1.select.kind, Selection::Kind::box);
  EXPECT_EQ(b1.select.lo, (std::array<double, 3>{9.99, -1, -1}));
  EXPECT_EQ(b1.select.hi, (std::array<double, 3>{10.01, 2, 2}));
  EXPECT_EQ(b1.fix, (std::array<bool, 3>{false, true, false}));
  EXPECT_EQ(b1.displace[0], 0.0);
  EXPECT_FALSE(b1.displace[1].has_value());
  EXPECT_EQ(b1.displace[2], -0.5);
  EXPECT_EQ(job.boundary[2].select.kind, Selection::Kind::all);
  EXPECT_EQ(job.boundary[2].displace[2], 1.0);

  EXPECT_EQ(job.loads.gravity, (std::array<double, 3>{0, 0, -1}));
  ASSERT_EQ(job.loads.tractions.size(), 1u);
  EXPECT_EQ(job.loads.tractions[0].select.region, 12);
  EXPECT_EQ(job.loads.tractions[0].traction, (std::array<double, 3>{0, 1, 0}));
  EXPECT_EQ(job.analysis_type, AnalysisType::statics);
  EXPECT_EQ(job.steps, 4);
  EXPECT_DOUBLE_EQ(job.newton_rtol, 1e-8);
  EXPECT_DOUBLE_EQ(job.newton_atol, 1e-11);
  EXPECT_EQ(job.newton_max_it, 25);
  EXPECT_EQ(job.petsc_options, "-ksp_type cg -pc_type gamg");
  EXPECT_EQ(job.output_directory, (dir_ / "out" / "beam").string());
  EXPECT_EQ(job.output_every, 2);
}

TEST_F(JobTest, SolverStrategyKeys) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\n";
  // Defaults.
  const Job plain = read_job(write(head));
  EXPECT_EQ(plain.solver.predictor, SolverSpec::Predictor::extrapolate);
  EXPECT_EQ(plain.solver.line_search, SolverSpec::LineSearch::full);
  EXPECT_EQ(plain.solver.forcing, SolverSpec::Forcing::eisenstat_walker);
  EXPECT_EQ(plain.solver.preconditioner, SolverSpec::Preconditioner::automatic);
  EXPECT_DOUBLE_EQ(plain.solver.eta_max, 1e-3);
  EXPECT_DOUBLE_EQ(plain.solver.linear_rtol, 1e-8);
  EXPECT_TRUE(plain.solver.reuse_preconditioner);
  EXPECT_TRUE(plain.solver.block_operator);
  EXPECT_DOUBLE_EQ(plain.solver.rebuild_eigenvalue, 1.5);
  EXPECT_TRUE(plain.solver.corotational);
  EXPECT_EQ(plain.solver.direct_max_dofs, 10000);
  EXPECT_EQ(plain.solver.aggregation, SolverSpec::Aggregation::automatic);
  // Every key.
  const Job job = read_job(write(head +
                                 "solver:\n"
                                 "  newton: {predictor: none, line_search: cp, forcing: fixed, eta_max: 0.01}\n"
                                 "  linear: {preconditioner: hypre, rtol: 1.0e-6, reuse: false, rebuild_ratio: 2,\n"
                                 "           rebuild_eigenvalue: 3, direct_max_dofs: 500, aggregation: unsmoothed,\n"
                                 "           block_operator: false, corotational: false}\n"));
  EXPECT_EQ(job.solver.predictor, SolverSpec::Predictor::none);
  EXPECT_EQ(job.solver.line_search, SolverSpec::LineSearch::cp);
  EXPECT_EQ(job.solver.forcing, SolverSpec::Forcing::fixed);
  EXPECT_DOUBLE_EQ(job.solver.eta_max, 0.01);
  EXPECT_EQ(job.solver.preconditioner, SolverSpec::Preconditioner::hypre);
  EXPECT_DOUBLE_EQ(job.solver.linear_rtol, 1e-6);
  EXPECT_FALSE(job.solver.reuse_preconditioner);
  EXPECT_FALSE(job.solver.block_operator);
  EXPECT_DOUBLE_EQ(job.solver.rebuild_ratio, 2.0);
  EXPECT_DOUBLE_EQ(job.solver.rebuild_eigenvalue, 3.0);
  EXPECT_FALSE(job.solver.corotational);
  EXPECT_EQ(job.solver.direct_max_dofs, 500);
  EXPECT_EQ(job.solver.aggregation, SolverSpec::Aggregation::unsmoothed);
  // Bad values name the key, the value and the choices.
  expect_error(head + "solver:\n  newton: {predictor: secant}\n", 4,
               {"solver.newton.predictor: expected one of: extrapolate, none, got 'secant'"});
  expect_error(head + "solver:\n  linear: {preconditioner: amg}\n", 4,
               {"solver.linear.preconditioner: expected one of: auto, gamg, hypre, direct, block-jacobi, schwarz, "
                "got 'amg'"});
  expect_error(head + "solver:\n  newton: {eta_max: 1.5}\n", 4, {"solver.newton.eta_max: expected a number in (0, 1)"});
  expect_error(head + "solver:\n  linear: {reuse: sometimes}\n", 4, {"solver.linear.reuse: expected true or false"});
  expect_error(head + "solver:\n  linear: {precond: gamg}\n", 4,
               {"unknown key 'solver.linear.precond' (expected one of: preconditioner, aggregation, rtol, reuse, "
                "rebuild_ratio, rebuild_eigenvalue, corotational, direct_max_dofs, block_operator)"});
  expect_error(head + "solver:\n  linear: {rebuild_eigenvalue: 0.8}\n", 4,
               {"solver.linear.rebuild_eigenvalue: expected 0 (off) or a number > 1"});
  expect_error(head + "solver:\n  linear: {aggregation: smooth}\n", 4,
               {"solver.linear.aggregation: expected one of: auto, smoothed, unsmoothed, got 'smooth'"});
}

TEST_F(JobTest, MinimalGeneratedJobGetsDefaults) {
  const std::string path = write(R"(mesh:
  generate: {shape: box, size: [10, 1, 1], cells: [40, 4, 4]}
materials:
  - {young: 1e4, poisson: 0.3}
)",
                                 "cantilever.yaml");
  const Job job = read_job(path);
  EXPECT_FALSE(job.mesh_file.has_value());
  ASSERT_TRUE(job.generate.has_value());
  EXPECT_EQ(job.generate->shape, GeneratedShape::box);
  EXPECT_EQ(job.generate->size, (std::array<double, 3>{10, 1, 1}));
  EXPECT_EQ(job.generate->cells, (std::array<int, 3>{40, 4, 4}));
  ASSERT_EQ(job.materials.size(), 1u);
  EXPECT_FALSE(job.materials[0].region.has_value());
  EXPECT_EQ(job.materials[0].model->name, "stvk");
  EXPECT_TRUE(job.boundary.empty());
  EXPECT_EQ(job.steps, 1);
  EXPECT_EQ(job.analysis_type, AnalysisType::statics);
  EXPECT_DOUBLE_EQ(job.newton_rtol, 1e-10);
  EXPECT_EQ(job.output_directory, (dir_ / "out" / "cantilever").string());
  EXPECT_EQ(job.output_every, 1);
  EXPECT_EQ(job.output.format, OutputFormat::vtu);  // today's output stays the default
  EXPECT_TRUE(job.output.fields.empty());
  EXPECT_FALSE(job.output.gzip);

  const Job sheet =
      read_job(write("mesh:\n  generate: {shape: sheet, size: [1, 2], cells: [64, 32]}\n"
                     "materials: [{young: 1, poisson: 0.25, thickness: 0.01}]\n"));
  ASSERT_TRUE(sheet.generate.has_value());
  EXPECT_EQ(sheet.generate->shape, GeneratedShape::sheet);
  EXPECT_EQ(sheet.generate->size[0], 1.0);
  EXPECT_EQ(sheet.generate->size[1], 2.0);
  EXPECT_EQ(sheet.generate->cells[0], 64);
  EXPECT_EQ(sheet.generate->cells[1], 32);
}

TEST_F(JobTest, BadValueNamesLineKeyValueAndExpectation) {
  const std::string text = R"(mesh:
  file: meshes/beam.msh
materials:
  - region: 1
    model: stvk
    poisson: 0.3
    young: abc
)";
  const std::string msg = expect_error(text, 7, {"materials[0].young: expected a positive number, got 'abc'"});
  EXPECT_EQ(msg, write(text) + ":7: materials[0].young: expected a positive number, got 'abc'");
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: -3, poisson: 0.3}\n", 3,
               {"materials[0].young", "positive", "'-3'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0.5}\n", 3,
               {"materials[0].poisson", "-1 < poisson < 0.5", "'0.5'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - young: 1\n    poisson: 0.1\n    density:\n", 5,
               {"materials[0].density", "positive number", "an empty value"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0.1, volumetric_penalty: maybe}\n",
               3, {"materials[0].volumetric_penalty", "true or false", "'maybe'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nanalysis:\n  steps: 0\n", 4,
               {"analysis.steps: expected an integer >= 1, got '0'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nanalysis:\n  steps: 2.5\n", 4,
               {"analysis.steps", "'2.5'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\noutput:\n  every: [1]\n", 4,
               {"output.every", "got a list of 1 entry"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: '5', poisson: 0.1}]\n", 2,
               {"materials[0].young", "got '5'"});
}

TEST_F(JobTest, UnknownAndDuplicateKeysAreErrors) {
  expect_error("mesh:\n  fiel: beam.msh\nmaterials: []\n", 2,
               {"unknown key 'mesh.fiel' (expected one of: file, generate)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nsolvr: {}\n", 3,
               {"unknown key 'solvr' (expected one of: mesh, materials, boundary, loads, attachments, "
                "obstacles, contact, discretization, analysis, solver, output, partition)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - young: 1\n    poisson: 0.1\n    yung: 3\n", 5,
               {"unknown key 'materials[0].yung'"});
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nsolver:\n  newton: {rtol: 1, maxit: 3}\n",
      4,
      {"unknown key 'solver.newton.maxit' (expected one of: rtol, atol, max_it, predictor, line_search, forcing, "
       "eta_max)"});
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nboundary:\n"
      "  - select: {regoin: 3}\n    fix: [x]\n",
      4, {"unknown key 'boundary[0].select.regoin' (expected one of: region, box, all, point, points)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nmaterials: []\n", 3,
               {"duplicate key 'materials'"});
}

TEST_F(JobTest, YamlSyntaxErrorNamesTheLine) {
  expect_error("mesh:\n  file: beam.msh\nmaterials: [{young: 1, poisson: 0.1}\nboundary: []\n", 4,
               {"YAML syntax error"});
  expect_error("mesh: {file: meshes/beam.msh}\n  bad: indent\n", 2, {"YAML syntax error"});
}

TEST_F(JobTest, DeepYamlNestingSaysSoInsteadOfBadFile) {
  // yaml-cpp stops deep nesting with the message "bad file"; the reader names the nesting instead.
  const std::string msg = expect_error("mesh: " + std::string(3000, '['), 1, {"YAML nesting deeper than", "levels"});
  EXPECT_EQ(msg.find("bad file"), std::string::npos) << msg;
}

TEST_F(JobTest, MissingMeshFileNamesTheResolvedPath) {
  const std::string msg = expect_error("mesh:\n  file: beam.msh\nmaterials: [{young: 1, poisson: 0.1}]\n", 2,
                                       {"mesh.file: file 'beam.msh' not found (resolved to " +
                                        (dir_ / "beam.msh").string() + ")"});
  expect_error("mesh:\n  file: meshes\nmaterials: [{young: 1, poisson: 0.1}]\n", 2, {"mesh.file", "is a directory"});
}

TEST_F(JobTest, MissingAndConflictingKeys) {
  expect_error("materials: [{young: 1, poisson: 0.1}]\n", 1, {"missing required key 'mesh'"});
  expect_error("mesh: {file: meshes/beam.msh}\n", 1, {"missing required key 'materials'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: []\n", 2,
               {"materials: expected a non-empty list of materials"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {poisson: 0.1}\n", 3,
               {"missing required key 'materials[0].young'"});
  expect_error(
      "mesh:\n  file: meshes/beam.msh\n  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}\n"
      "materials: [{young: 1, poisson: 0.1}]\n",
      2, {"mesh: expected exactly one of 'file' or 'generate', got both"});
  expect_error("mesh: {}\nmaterials: [{young: 1, poisson: 0.1}]\n", 1, {"got neither"});
  expect_error(
      "mesh:\n  generate: {shape: sheet, size: [1, 1, 1], cells: [4, 4]}\nmaterials: [{young: 1, poisson: 0.1}]\n", 2,
      {"mesh.generate.size: expected a list of 2 positive numbers, got a list of 3 entries"});
  expect_error(
      "mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [4, 0, 4]}\nmaterials: [{young: 1, poisson: 0.1}]\n", 2,
      {"mesh.generate.cells[1]: expected an integer >= 1, got '0'"});
  expect_error(
      "mesh:\n  generate: {shape: cylinder, size: [1, 1, 1], cells: [4, 4, 4]}\nmaterials: [{young: 1, poisson: "
      "0.1}]\n",
      2, {"mesh.generate.shape: expected one of: box, sheet, got 'cylinder'"});
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {region: 1, young: 1, poisson: 0.1}\n"
      "  - {region: 1, young: 2, poisson: 0.1}\n",
      4, {"materials[1]: a second material for region 1"});
}

TEST_F(JobTest, PartitionMethod) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\n";
  expect_error(head + "partition: {method: parmetis}\n", 3,
               {"partition.method: expected one of: metis, ptscotch, got 'parmetis'"});
  expect_error(head + "partition: {method: ptscotsh}\n", 3, {"partition.method", "did you mean 'ptscotch'?"});
  expect_error(head + "partition: {methd: metis}\n", 3,
               {"unknown key 'partition.methd' (expected one of: method, renumber)"});
  expect_error(head + "partition: {renumber: sometimes}\n", 3, {"partition.renumber", "sometimes"});
  EXPECT_TRUE(read_job(write(head)).renumber_vertices);
  EXPECT_TRUE(read_job(write(head + "partition: {}\n")).renumber_vertices);
  const Job kept = read_job(write(head + "partition: {renumber: false}\n"));
  EXPECT_FALSE(kept.renumber_vertices);
  EXPECT_EQ(kept.partition_method, PartitionMethod::automatic);
  expect_error(head + "partition: metis\n", 3, {"partition"});
  EXPECT_EQ(read_job(write(head)).partition_method, PartitionMethod::automatic);
  EXPECT_EQ(read_job(write(head + "partition: {method: metis}\n")).partition_method, PartitionMethod::metis);
  EXPECT_EQ(read_job(write(head + "partition: {method: ptscotch}\n")).partition_method, PartitionMethod::ptscotch);
  EXPECT_EQ(to_string(PartitionMethod::ptscotch), "ptscotch");
}

TEST_F(JobTest, ModelNamesAndMembranePoissonRange) {
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: neo-hooke, young: 1, poisson: 0.1}\n", 3,
      {"materials[0].model: expected one of: stvk, stvk-nsn, stvk-tl, linear, neo-hookean (tetrahedra), trbs, trqs, "
       "springs, linear-membrane, volino (triangles), got 'neo-hooke'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nanalysis:\n  type: modal\n", 4,
               {"analysis.type: expected one of: static, dynamic, got 'modal'"});
  // Plane stress: a membrane takes 0.5 <= poisson < 1, a solid does not.
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: stvk, young: 1, poisson: 0.6}\n", 3,
               {"materials[0].poisson: expected a number with -1 < poisson < 0.5, got '0.6'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: trbs, young: 1, poisson: 1.0}\n", 3,
               {"materials[0].poisson: expected a number with -1 < poisson < 1 (membrane, plane stress), got '1.0'"});
  const Job job =
      read_job(write("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: trqs, young: 2, "
                     "poisson: 0.6, thickness: 0.01}\n"));
  EXPECT_EQ(job.materials[0].model->name, "trqs");
  EXPECT_DOUBLE_EQ(job.materials[0].poisson, 0.6);
  EXPECT_DOUBLE_EQ(job.materials[0].thickness, 0.01);
  EXPECT_EQ(job.materials[0].model->cell, CellKind::triangle);
  EXPECT_EQ(model_named("linear-membrane").cell, CellKind::triangle);
  EXPECT_EQ(model_named("linear").cell, CellKind::tetrahedron);
  // bending: {stiffness: kb} on membrane models only, kb >= 0.
  const std::string sheet = "mesh:\n  generate: {shape: sheet, size: [1, 1], cells: [2, 2]}\nmaterials:\n";
  EXPECT_EQ(read_job(write(sheet + "  - {model: trbs, young: 1, poisson: 0.3, bending: {stiffness: 0.25}}\n"))
                .materials[0]
                .bending_stiffness,
            0.25);
  EXPECT_TRUE(any_bending(read_job(write(sheet +
                                         "  - {model: volino, young: 1, poisson: 0, bending: {stiffness: 1}}\n"))));
  EXPECT_FALSE(any_bending(read_job(write(sheet + "  - {model: trbs, young: 1, poisson: 0.3}\n"))));
  expect_error(sheet + "  - {model: trbs, young: 1, poisson: 0.3, bending: {stiffness: -1}}\n", 4,
               {"materials[0].bending.stiffness: expected a non-negative number (bending stiffness kb), got '-1'"});
  expect_error(sheet + "  - {model: trbs, young: 1, poisson: 0.3, bending: {stiff: 1}}\n", 4, {"materials[0].bending"});
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: stvk, young: 1, poisson: 0.3, bending: "
      "{stiffness: 1}}\n",
      3, {"materials[0].bending: only for membrane models trbs, trqs, springs, linear-membrane and volino"});
  // neo-hookean: isotropic young and poisson only (no anisotropy block), the solid's Poisson range.
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: neo-hookean, young: 1, poisson: 0.5}\n", 3,
               {"materials[0].poisson: expected a number with -1 < poisson < 0.5, got '0.5'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - model: neo-hookean\n    anisotropy: {type: x}\n", 4,
               {"materials[0].anisotropy: only for model"});
  EXPECT_EQ(read_job(write("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: neo-hookean, young: 2, "
                           "poisson: 0.3}\n"))
                .materials[0]
                .model->name,
            "neo-hookean");
}

TEST_F(JobTest, UnknownChoicesListTheValidOnesAndSuggestTheNearest) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n";
  // The model list comes from the registry; a near miss gets a suggestion.
  const std::string msg = expect_error(head + "  - {model: stvk_tl, young: 1, poisson: 0.1}\n", 3,
                                       {"materials[0].model: expected one of: " + model_list() + ", got 'stvk_tl'",
                                        "(did you mean 'stvk-tl'?)"});
  for (const ModelInfo& m : models()) EXPECT_NE(msg.find(std::string(m.name)), std::string::npos) << m.name;
  expect_error(head + "  - {model: volnio, young: 1, poisson: 0.1}\n", 3, {"got 'volnio' (did you mean 'volino'?)"});
  expect_error(head + "  - {model: TRBS, young: 1, poisson: 0.1}\n", 3, {"got 'TRBS' (did you mean 'trbs'?)"});
  expect_error(
      head + "  - {young: 1, poisson: 0.1, volumetric: cubical}\n", 3,
      {"materials[0].volumetric: expected one of: cubic, quadratic, none, got 'cubical' (did you mean 'cubic'?)"});
  const std::string dyn = head + "  - {young: 1, poisson: 0.1}\nanalysis:\n  type: dynamic\n  dt: 1\n  end_time: 2\n";
  expect_error(dyn + "  integrator: backward_euler\n", 8,
               {"analysis.integrator: expected one of: backward-euler, linearized-euler, newmark, position-based, got "
                "'backward_euler' (did you mean 'backward-euler'?)"});
  expect_error(dyn + "  integrator: newmrak\n", 8, {"(did you mean 'newmark'?)"});
  expect_error(head + "  - {young: 1, poisson: 0.1}\nsolver:\n  linear: {preconditioner: block_jacobi}\n", 5,
               {"(did you mean 'block-jacobi'?)"});
  // Nothing close: no suggestion.
  for (const std::string& bad : {std::string("  integrator: rk4\n"), std::string("  mass: diagonal\n")}) {
    const std::string m = expect_error(dyn + bad, 8, {"expected one of: "});
    EXPECT_EQ(m.find("did you mean"), std::string::npos) << m;
  }
  // Model-specific keys: the models that take them, from the registry.
  expect_error(head + "  - {model: stvk, young: 1, poisson: 0.1, spring_damping: 0.1}\n", 3,
               {"materials[0].spring_damping: only for models trbs, trqs and springs"});
  expect_error(head + "  - {model: trbs, young: 1, poisson: 0.1, stabilization: clamp}\n", 3,
               {"materials[0].stabilization: only for model volino"});
}

TEST_F(JobTest, VolinoMaterials) {
  std::ofstream(dir_ / "warp.csv") << "strain,stress\n0,0\n0.01,20\n";
  const Job job =
      read_job(write("mesh: {file: meshes/beam.msh}\nmaterials:\n"
                     "  - model: volino\n    thickness: 2\n    warp: {direction: [1, 0, 0], angle: 30}\n"
                     "    curves: {weft: [[0, 0], [0.1, 10]], warp: warp.csv, shear: [[0, 0], [1, 1]]}\n"
                     "    stabilization: eigen-clamp\n"
                     "  - {region: 2, model: volino, orthotropic: {weft: 10, warp: 20, shear: 3, poisson: 0.2}}\n"));
  const VolinoSpec& v = job.materials[0].volino.value();
  EXPECT_EQ(v.warp_direction, (std::array<double, 3>{1, 0, 0}));
  EXPECT_DOUBLE_EQ(v.warp_angle_degrees, 30.0);
  EXPECT_EQ(v.stabilization, VolinoStabilization::eigen_clamp);
  ASSERT_TRUE(v.curves);
  EXPECT_EQ((*v.curves)[0].points.size(), 2u);
  EXPECT_EQ((*v.curves)[1].file, (dir_ / "warp.csv").string());
  EXPECT_EQ((*job.materials[1].volino->orthotropic), (std::array<double, 4>{10, 20, 3, 0.2}));
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n";
  expect_error(head + "  - {model: trbs, young: 1, poisson: 0.1, warp: {angle: 10}}\n", 3,
               {"materials[0].warp: only for model volino"});
  expect_error(head + "  - {model: volino, young: 1, poisson: 0.1, orthotropic: {weft: 1, warp: 1, shear: 1}}\n", 3,
               {"materials[0].young: not used with 'orthotropic' or 'curves'"});
  expect_error(
      head + "  - model: volino\n    curves: {weft: [[0, 0], [0.2, 1], [0.1, 2]], warp: [[0, 0]], shear: [[0, 0]]}\n",
      4, {"materials[0].curves.weft[2]: strain 0.1 is not after the strain of row 1 (0.2)"});
  expect_error(head + "  - model: volino\n    curves: {weft: missing.csv, warp: [[0, 0]], shear: [[0, 0]]}\n", 4,
               {"materials[0].curves.weft: curve file", "missing.csv' does not exist"});
  expect_error(head + "  - {model: volino, young: 1, poisson: 0.1, stabilization: hard}\n", 3,
               {"materials[0].stabilization: expected one of: none, clamp, eigen-clamp, got 'hard'"});
}

TEST_F(JobTest, BoundaryConditionErrors) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nboundary:\n";
  expect_error(head + "  - select: {region: 11}\n    fix: [x, z]\n    displace: [~, 0, 0.5]\n", 6,
               {"boundary[0]: component 'z' is both fixed and displaced"});
  expect_error(head + "  - select: {region: 11}\n", 4, {"boundary[0]: expected 'fix', 'displace' or 'rotate'"});
  expect_error(head + "  - select: {region: 11}\n    displace: [~, null, ~]\n", 4,
               {"boundary[0]: expected 'fix', 'displace' or 'rotate'"});
  expect_error(head + "  - select: {region: 11, all: true}\n    fix: [x]\n", 4,
               {"boundary[0].select: expected exactly one of 'region', 'box', 'all', 'point' or 'points', got 2"});
  expect_error(head + "  - select: {all: true}\n    fix: [x, w]\n", 5,
               {"boundary[0].fix[1]: expected one of: x, y, z, got 'w'"});
  expect_error(head +
                   "  - select: {all: true}\n    fix: [x]\n  - select: {box: [[0, 0, 0], [1, -1, 1]]}\n    fix: [y]\n",
               6, {"boundary[1].select.box: expected the first corner to be below the second"});
  expect_error(head + "  - select: {box: [[0, 0], [1, 1, 1]]}\n    fix: [y]\n", 4,
               {"boundary[0].select.box[0]: expected a list of 3 numbers, got a list of 2 entries"});
  expect_error(head + "  - select: {all: true}\n    displace: [1, 2]\n", 5,
               {"boundary[0].displace: expected a list of 3"});
  expect_error(head + "  - fix: [x]\n", 4, {"missing required key 'boundary[0].select'"});
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nloads:\n  tractions:\n"
      "    - select: {region: 12}\n      traction: [0, x, 0]\n",
      6, {"loads.tractions[0].traction[1]: expected a number, got 'x'"});
}

TEST_F(JobTest, UnreadableJobFile) {
  try {
    read_job((dir_ / "nope.yaml").string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.yaml: cannot open job file"), std::string::npos) << e.what();
  }
  expect_error("", 1, {"expected a mapping", "empty document", "attachments"});
  expect_error("- 1\n- 2\n", 1, {"expected a mapping", "got a list of 2 entries"});
}

TEST_F(JobTest, AnisotropyLinearModelAndVolumetricChoice) {
  const std::string path = write(R"(mesh:
  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}
materials:
  - region: 1
    model: linear
    anisotropy:
      type: transversely-isotropic
      fibre: [0, 3, 4]
      young_fibre: 5.0e4
      young_transverse: 1.0e4
      shear_fibre: 4.0e3
      poisson_fibre: 0.3
      poisson_transverse: 0.4
    volumetric: quadratic
  - region: 2
    model: stvk
    young: 10
    poisson: 0.2
)");
  const Job job = read_job(path);
  ASSERT_EQ(job.materials.size(), 2u);
  const MaterialSpec& m = job.materials[0];
  EXPECT_EQ(m.model->name, "linear");
  EXPECT_EQ(m.volumetric, VolumetricPenalty::quadratic);
  ASSERT_TRUE(m.anisotropy.has_value());
  EXPECT_DOUBLE_EQ(m.anisotropy->fibre[0], 0.0);
  EXPECT_DOUBLE_EQ(m.anisotropy->fibre[1], 0.6);  // normalised
  EXPECT_DOUBLE_EQ(m.anisotropy->fibre[2], 0.8);
  EXPECT_DOUBLE_EQ(m.anisotropy->young_fibre, 5.0e4);
  EXPECT_DOUBLE_EQ(m.anisotropy->young_transverse, 1.0e4);
  EXPECT_DOUBLE_EQ(m.anisotropy->shear_fibre, 4.0e3);
  EXPECT_DOUBLE_EQ(m.anisotropy->poisson_fibre, 0.3);
  EXPECT_DOUBLE_EQ(m.anisotropy->poisson_transverse, 0.4);
  EXPECT_EQ(m.line, 4);
  EXPECT_FALSE(job.materials[1].anisotropy.has_value());
  EXPECT_EQ(job.materials[1].volumetric, VolumetricPenalty::cubic);  // the default
}

TEST_F(JobTest, AnisotropyErrors) {
  const std::string head = "mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}\nmaterials:\n";
  expect_error(head +
                   "  - young: 1\n    anisotropy: {type: transversely-isotropic, fibre: [1, 0, 0], young_fibre: 1,"
                   " young_transverse: 1, shear_fibre: 1, poisson_fibre: 0, poisson_transverse: 0}\n",
               4, {"materials[0].young", "not used with 'anisotropy'"});
  expect_error(head + "  - anisotropy: {type: orthotropic}\n", 4,
               {"materials[0].anisotropy.type", "transversely-isotropic"});
  expect_error(head +
                   "  - anisotropy: {type: transversely-isotropic, fibre: [0, 0, 0], young_fibre: 1,"
                   " young_transverse: 1, shear_fibre: 1, poisson_fibre: 0, poisson_transverse: 0}\n",
               4, {"materials[0].anisotropy.fibre", "non-zero direction"});
  expect_error(head +
                   "  - anisotropy: {type: transversely-isotropic, fibre: [1, 0, 0], young_fibre: 1,"
                   " young_transverse: 1, poisson_fibre: 0, poisson_transverse: 0}\n",
               4, {"missing required key 'materials[0].anisotropy.shear_fibre'"});
  expect_error(head + "  - young: 1\n    poisson: 0.3\n    volumetric: cubical\n", 6,
               {"materials[0].volumetric", "cubic, quadratic, none", "cubical"});
}

// ---- implicit dynamics: analysis.dynamic, schedules, attachments, checkpoints ----------------------------

void expect_vec(const std::array<double, 3>& got, const std::array<double, 3>& want, const std::string& what) {
  for (std::size_t d = 0; d < 3; ++d) EXPECT_DOUBLE_EQ(got[d], want[d]) << what << " component " << d;
}

const char* const dynamic_job = R"(mesh:
  file: meshes/beam.msh
materials:
  - {young: 1.0e4, poisson: 0.3, density: 2}
boundary:
  - select: {region: 11}
    fix: [x, y, z]
  - select: {region: 12}
    displace: [0, ~, -0.5]
    schedule: {ramp: [0.25, 0.75]}
  - select: {all: true}
    rotate: {axis: [0, 0, 1], center: [0, 0, 0], angle: 90, components: [x, y]}
    schedule:
      table:
        - [0, 0]
        - [0.5, 1]
        - [1, 0.25]
loads:
  tractions:
    - select: {region: 13}
      traction: [0, 1, 0]
      schedule: {table: [[0.1, 2]]}
    - select: {region: 14}
      traction: [1, 0, 0]
attachments:
  - select: {box: [[0, 0, 0], [1, 1, 1]]}
    stiffness: 1.0e3
    damping: 2.5
    path: [[0, 0, 0, 0], [0.5, 0.1, 0, -0.2]]
  - select: {region: 15}
    stiffness: 50
    velocity: [0, 0, -1]
  - select: {all: true}
    stiffness: 7
analysis:
  type: dynamic
  steps: 3
  dt: 0.01
  end_time: 1.5
  integrator: newmark
  damping: {mass: 0.5, stiffness: 0.1}
  mass: consistent
  max_step_cuts: 0
  initial_velocity: [1, -2, 0.5]
  initial_state: static
output:
  directory: out/dyn
  every: 10
  checkpoint_every: 25
  format: xdmf
  fields: [displacement, von_mises, region]
  compression: gzip
)";

TEST_F(JobTest, DynamicJobParsesEveryValue) {
  const Job job = read_job(write(dynamic_job));
  EXPECT_EQ(job.analysis_type, AnalysisType::dynamics);
  EXPECT_EQ(job.steps, 3);
  ASSERT_TRUE(job.dynamic.has_value());
  const DynamicSpec& d = *job.dynamic;
  EXPECT_DOUBLE_EQ(d.dt, 0.01);
  EXPECT_DOUBLE_EQ(d.end_time, 1.5);
  EXPECT_EQ(d.integrator, Integrator::newmark);
  EXPECT_DOUBLE_EQ(d.damping_mass, 0.5);
  EXPECT_DOUBLE_EQ(d.damping_stiffness, 0.1);
  EXPECT_EQ(d.mass, MassMatrix::consistent);
  EXPECT_EQ(d.max_step_cuts, 0);
  EXPECT_EQ(d.initial_velocity, (std::array<double, 3>{1, -2, 0.5}));
  EXPECT_EQ(d.initial_state, InitialState::static_equilibrium);
  EXPECT_EQ(job.output_directory, (dir_ / "out" / "dyn").string());
  EXPECT_EQ(job.output_every, 10);
  EXPECT_EQ(job.checkpoint_every, 25);
  EXPECT_EQ(job.output.format, OutputFormat::xdmf);
  EXPECT_EQ(job.output.fields, (std::vector<std::string>{"displacement", "von_mises", "region"}));
  EXPECT_TRUE(job.output.gzip);

  ASSERT_EQ(job.boundary.size(), 3u);
  EXPECT_FALSE(job.boundary[0].schedule.has_value());
  ASSERT_TRUE(job.boundary[1].schedule.has_value());
  EXPECT_EQ(job.boundary[1].schedule->points, (std::vector<std::array<double, 2>>{{0.25, 0.0}, {0.75, 1.0}}));
  EXPECT_EQ(job.boundary[1].schedule->line, 10);
  EXPECT_EQ(job.boundary[1].displace[2], -0.5);
  ASSERT_TRUE(job.boundary[2].schedule.has_value());
  EXPECT_EQ(job.boundary[2].schedule->points, (std::vector<std::array<double, 2>>{{0, 0}, {0.5, 1}, {1, 0.25}}));
  EXPECT_EQ(job.boundary[2].schedule->line, 14);
  ASSERT_TRUE(job.boundary[2].rotate.has_value());
  EXPECT_DOUBLE_EQ(job.boundary[2].rotate->angle_degrees, 90.0);

  ASSERT_EQ(job.loads.tractions.size(), 2u);
  ASSERT_TRUE(job.loads.tractions[0].schedule.has_value());
  EXPECT_EQ(job.loads.tractions[0].schedule->points, (std::vector<std::array<double, 2>>{{0.1, 2.0}}));
  EXPECT_EQ(job.loads.tractions[0].schedule->line, 22);
  EXPECT_EQ(job.loads.tractions[0].traction, (std::array<double, 3>{0, 1, 0}));
  EXPECT_FALSE(job.loads.tractions[1].schedule.has_value());

  ASSERT_EQ(job.attachments.size(), 3u);
  const AttachmentSpec& a0 = job.attachments[0];
  EXPECT_EQ(a0.select.kind, Selection::Kind::box);
  EXPECT_EQ(a0.select.hi, (std::array<double, 3>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(a0.stiffness, 1.0e3);
  EXPECT_DOUBLE_EQ(a0.damping, 2.5);
  EXPECT_EQ(a0.path, (std::vector<std::array<double, 4>>{{0, 0, 0, 0}, {0.5, 0.1, 0, -0.2}}));
  EXPECT_FALSE(a0.velocity.has_value());
  EXPECT_EQ(a0.line, 26);
  const AttachmentSpec& a1 = job.attachments[1];
  EXPECT_EQ(a1.select.kind, Selection::Kind::region);
  EXPECT_EQ(a1.select.region, 15);
  EXPECT_DOUBLE_EQ(a1.stiffness, 50);
  EXPECT_DOUBLE_EQ(a1.damping, 0.0);
  EXPECT_TRUE(a1.path.empty());
  ASSERT_TRUE(a1.velocity.has_value());
  EXPECT_EQ(*a1.velocity, (std::array<double, 3>{0, 0, -1}));
  EXPECT_EQ(a1.line, 30);
  const AttachmentSpec& a2 = job.attachments[2];
  EXPECT_EQ(a2.select.kind, Selection::Kind::all);
  EXPECT_DOUBLE_EQ(a2.stiffness, 7);
  EXPECT_TRUE(a2.path.empty());
  EXPECT_FALSE(a2.velocity.has_value());
  EXPECT_EQ(a2.line, 33);
}

TEST_F(JobTest, DynamicDefaultsAndStaticHasNoDynamic) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\n";
  const Job job = read_job(write(head + "analysis: {type: dynamic, dt: 0.25, end_time: 1}\n"));
  EXPECT_EQ(job.analysis_type, AnalysisType::dynamics);
  EXPECT_EQ(job.steps, 1);
  ASSERT_TRUE(job.dynamic.has_value());
  EXPECT_DOUBLE_EQ(job.dynamic->dt, 0.25);
  EXPECT_DOUBLE_EQ(job.dynamic->end_time, 1.0);
  EXPECT_EQ(job.dynamic->integrator, Integrator::backward_euler);
  EXPECT_EQ(job.dynamic->damping_mass, 0.0);
  EXPECT_EQ(job.dynamic->damping_stiffness, 0.0);
  EXPECT_EQ(job.dynamic->mass, MassMatrix::lumped);
  EXPECT_EQ(job.dynamic->max_step_cuts, 6);
  EXPECT_EQ(job.dynamic->initial_velocity, (std::array<double, 3>{0, 0, 0}));
  EXPECT_EQ(job.dynamic->initial_state, InitialState::rest);
  EXPECT_EQ(job.checkpoint_every, 0);
  EXPECT_TRUE(job.attachments.empty());

  // end_time / dt within rounding of an integer (0.3 / 0.1 = 2.9999999999999996) is accepted.
  const Job rounded = read_job(write(head + "analysis: {type: dynamic, dt: 0.1, end_time: 0.3}\n"));
  ASSERT_TRUE(rounded.dynamic.has_value());
  EXPECT_DOUBLE_EQ(rounded.dynamic->end_time, 0.3);
  // A single step: end_time == dt.
  EXPECT_TRUE(read_job(write(head + "analysis: {type: dynamic, dt: 0.5, end_time: 0.5}\n")).dynamic.has_value());

  // Each damping coefficient alone; the other stays 0.
  const Job beta = read_job(write(head + "analysis: {type: dynamic, dt: 1, end_time: 2, damping: {stiffness: 0.3}}\n"));
  ASSERT_TRUE(beta.dynamic.has_value());
  EXPECT_EQ(beta.dynamic->damping_mass, 0.0);
  EXPECT_DOUBLE_EQ(beta.dynamic->damping_stiffness, 0.3);
  for (const char* integrator : {"backward-euler", "linearized-euler", "newmark", "position-based"}) {
    const Job j = read_job(write(head + "analysis: {type: dynamic, dt: 1, end_time: 2, integrator: " + integrator +
                                 "}\n"));
    ASSERT_TRUE(j.dynamic.has_value());
    EXPECT_EQ(to_string(j.dynamic->integrator), integrator);
  }

  // Static: no DynamicSpec; checkpoint_every 0 is allowed.
  const Job stat = read_job(write(head + "analysis: {type: static, steps: 2}\noutput: {checkpoint_every: 0}\n"));
  EXPECT_EQ(stat.analysis_type, AnalysisType::statics);
  EXPECT_FALSE(stat.dynamic.has_value());
  EXPECT_EQ(stat.checkpoint_every, 0);
  EXPECT_FALSE(read_job(write(head)).dynamic.has_value());
}

TEST_F(JobTest, DynamicNestedFormMatchesFlatForm) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\n";
  const Job nested = read_job(write(head + R"(analysis:
  type: dynamic
  steps: 2
  dynamic:
    dt: 0.1
    end_time: 0.3
    integrator: linearized-euler
    damping: {mass: 0.25, stiffness: 0.02}
    mass: consistent
    max_step_cuts: 3
    initial_velocity: [0, 4, 0]
    initial_state: static
)"));
  EXPECT_EQ(nested.analysis_type, AnalysisType::dynamics);
  EXPECT_EQ(nested.steps, 2);
  ASSERT_TRUE(nested.dynamic.has_value());
  const DynamicSpec& d = *nested.dynamic;
  EXPECT_DOUBLE_EQ(d.dt, 0.1);
  EXPECT_DOUBLE_EQ(d.end_time, 0.3);
  EXPECT_EQ(d.integrator, Integrator::linearized_euler);
  EXPECT_DOUBLE_EQ(d.damping_mass, 0.25);
  EXPECT_DOUBLE_EQ(d.damping_stiffness, 0.02);
  EXPECT_EQ(d.mass, MassMatrix::consistent);
  EXPECT_EQ(d.max_step_cuts, 3);
  EXPECT_EQ(d.initial_velocity, (std::array<double, 3>{0, 4, 0}));
  EXPECT_EQ(d.initial_state, InitialState::static_equilibrium);

  // Different keys may come from both places.
  const Job mixed =
      read_job(write(head + "analysis:\n  type: dynamic\n  dt: 0.5\n  dynamic: {end_time: 2, mass: consistent}\n"));
  ASSERT_TRUE(mixed.dynamic.has_value());
  EXPECT_DOUBLE_EQ(mixed.dynamic->dt, 0.5);
  EXPECT_DOUBLE_EQ(mixed.dynamic->end_time, 2.0);
  EXPECT_EQ(mixed.dynamic->mass, MassMatrix::consistent);
}

TEST_F(JobTest, DynamicFixtureFileParses) {
  const Job job = read_job(std::string(EDGEFEM_SOURCE_DIR) + "/tests/data/dyn_cantilever_small.yaml");
  EXPECT_EQ(job.analysis_type, AnalysisType::dynamics);
  ASSERT_TRUE(job.dynamic.has_value());
  EXPECT_DOUBLE_EQ(job.dynamic->dt, 0.05);
  EXPECT_DOUBLE_EQ(job.dynamic->end_time, 2.0);
  EXPECT_EQ(job.dynamic->integrator, Integrator::newmark);
  EXPECT_EQ(job.checkpoint_every, 10);
  ASSERT_EQ(job.attachments.size(), 1u);
  EXPECT_EQ(job.attachments[0].path.size(), 3u);
  ASSERT_EQ(job.loads.tractions.size(), 1u);
  ASSERT_TRUE(job.loads.tractions[0].schedule.has_value());
  EXPECT_DOUBLE_EQ((*job.loads.tractions[0].schedule)(0.25), 0.5);
}

TEST_F(JobTest, DynamicAnalysisErrors) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nanalysis:\n";
  // Dynamic-only keys without type dynamic (the first such key in the file is named).
  expect_error(head + "  type: static\n  dt: 0.1\n", 5,
               {"analysis.dt: only for analysis type dynamic", "analysis.type is 'static'"});
  expect_error(head + "  steps: 2\n  dynamic: {dt: 0.1, end_time: 1}\n", 5,
               {"analysis.dynamic: only for analysis type dynamic", "not given"});
  expect_error(head + "  integrator: newmark\n  type: static\n  damping: {mass: 1}\n", 4,
               {"analysis.integrator: only for analysis type dynamic"});
  for (const char* key : {"end_time: 1", "damping: {mass: 1}", "mass: lumped", "max_step_cuts: 2",
                          "initial_velocity: [0, 0, 0]", "initial_state: rest"}) {
    const std::string name = std::string(key).substr(0, std::string(key).find(':'));
    expect_error(head + "  type: static\n  " + key + "\n", 5,
                 {"analysis." + name + ": only for analysis type dynamic"});
  }
  expect_error(head + "  type: modal\n", 4, {"analysis.type: expected one of: static, dynamic, got 'modal'"});
  // Required keys.
  expect_error(head + "  type: dynamic\n  end_time: 1\n", 4, {"missing required key 'analysis.dt'"});
  expect_error(head + "  type: dynamic\n  dt: 0.1\n", 4, {"missing required key 'analysis.end_time'"});
  expect_error(head + "  type: dynamic\n  dynamic:\n    dt: 0.1\n", 6,
               {"missing required key 'analysis.dynamic.end_time'"});
  // Ranges.
  expect_error(head + "  type: dynamic\n  dt: 0\n  end_time: 1\n", 5,
               {"analysis.dt: expected a positive number, got '0'"});
  expect_error(head + "  type: dynamic\n  dt: 0.1\n  end_time: -1\n", 6,
               {"analysis.end_time: expected a positive number, got '-1'"});
  expect_error(head + "  type: dynamic\n  dt: 0.5\n  end_time: 0.25\n", 6,
               {"analysis.end_time: expected a number >= dt (0.5), got '0.25'"});
  expect_error(head + "  type: dynamic\n  dt: 0.3\n  end_time: 1\n", 6,
               {"analysis.end_time: end_time / dt = 3.33333", "not a whole number of steps", "nearest: 3 steps"});
  expect_error(head + "  type: dynamic\n  dt: 0.1\n  end_time: 0.36\n", 6, {"analysis.end_time", "nearest: 4 steps"});
  expect_error(head + "  type: dynamic\n  dt: 1\n  end_time: 1.0000001\n", 6,
               {"analysis.end_time", "nearest: 1 step, end_time = 1)"});
  expect_error(head + "  type: dynamic\n  dt: 1.0e-300\n  end_time: 1\n", 6,
               {"analysis.end_time", "more than supported"});
  // Flat and nested at once.
  expect_error(head + "  type: dynamic\n  dt: 0.1\n  dynamic:\n    dt: 0.2\n    end_time: 1\n", 7,
               {"analysis.dynamic.dt: given twice, as 'analysis.dt' and as 'analysis.dynamic.dt'"});
  expect_error(head + "  type: dynamic\n  dynamic: {dt: 0.1, end_time: 1}\n  end_time: 1\n", 6,
               {"analysis.end_time: given twice, as 'analysis.end_time' and as 'analysis.dynamic.end_time'"});
  expect_error(head + "  type: dynamic\n  dynamic: {dt: 0.1, end_time: 1, steps: 3}\n", 5,
               {"unknown key 'analysis.dynamic.steps' (expected one of: dt, end_time, integrator, damping, mass, "
                "max_step_cuts, initial_velocity, initial_state, position_based)"});
  expect_error(head + "  type: dynamic\n  dynamic: [0.1]\n", 5,
               {"analysis.dynamic: expected a mapping with keys dt, "});
  // Choices and values.
  const std::string dyn = head + "  type: dynamic\n  dt: 0.1\n  end_time: 1\n";
  expect_error(
      dyn + "  integrator: rk4\n", 7,
      {"analysis.integrator: expected one of: backward-euler, linearized-euler, newmark, position-based, got 'rk4'"});
  expect_error(dyn + "  damping: {mass: 0.1, stiffness: -0.1}\n", 7,
               {"analysis.damping.stiffness: expected a non-negative number, got '-0.1'"});
  expect_error(dyn + "  damping: {mass: -1}\n", 7, {"analysis.damping.mass: expected a non-negative number, got '-1'"});
  expect_error(dyn + "  damping: {alpha: 1}\n", 7,
               {"unknown key 'analysis.damping.alpha' (expected one of: mass, stiffness)"});
  expect_error(dyn + "  mass: diagonal\n", 7, {"analysis.mass: expected one of: lumped, consistent, got 'diagonal'"});
  expect_error(dyn + "  max_step_cuts: -1\n", 7, {"analysis.max_step_cuts: expected an integer >= 0, got '-1'"});
  expect_error(dyn + "  max_step_cuts: 1.5\n", 7, {"analysis.max_step_cuts: expected an integer >= 0, got '1.5'"});
  expect_error(dyn + "  initial_velocity: [1, 2]\n", 7,
               {"analysis.initial_velocity: expected a list of 3 numbers [vx, vy, vz], got a list of 2 entries"});
  expect_error(dyn + "  initial_state: moving\n", 7,
               {"analysis.initial_state: expected one of: rest, static, got 'moving'"});
  expect_error(head + "  type: dynamic\n  dynamic:\n    dt: 0.1\n    end_time: 1\n    mass: diagonal\n", 8,
               {"analysis.dynamic.mass: expected one of: lumped, consistent, got 'diagonal'"});
}

TEST_F(JobTest, ScheduleErrors) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\n";
  const std::string bc = head + "boundary:\n  - select: {region: 11}\n";
  expect_error(bc + "    fix: [x]\n    schedule: {ramp: [0, 1]}\n", 6,
               {"boundary[0].schedule: schedule has no effect on fixed components"});
  expect_error(bc + "    fix: [x]\n    displace: [~, ~, ~]\n    schedule: {ramp: [0, 1]}\n", 7,
               {"boundary[0].schedule: schedule has no effect on fixed components"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {ramp: [1, 1]}\n", 6,
               {"boundary[0].schedule.ramp: expected a ramp [t0, t1] with t1 > t0, got [1, 1]"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {ramp: [2, 1]}\n", 6,
               {"boundary[0].schedule.ramp", "got [2, 1]"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {ramp: [0, 1, 2]}\n", 6,
               {"boundary[0].schedule.ramp: expected a list of 2 times [t0, t1], got a list of 3 entries"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {ramp: [0, x]}\n", 6,
               {"boundary[0].schedule.ramp[1]: expected a number, got 'x'"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {ramp: [0, 1], table: [[0, 1]]}\n", 6,
               {"boundary[0].schedule: expected exactly one of 'ramp' or 'table', got both"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {}\n", 6,
               {"boundary[0].schedule: expected exactly one of 'ramp' or 'table', got neither"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: {steps: 3}\n", 6,
               {"unknown key 'boundary[0].schedule.steps' (expected one of: ramp, table)"});
  expect_error(bc + "    displace: [1, ~, ~]\n    schedule: [0, 1]\n", 6,
               {"boundary[0].schedule: expected a mapping with keys ramp, table, got a list of 2 entries"});
  const std::string tr = head + "loads:\n  tractions:\n    - select: {region: 12}\n      traction: [0, 0, 1]\n";
  expect_error(
      tr + "      schedule: {table: []}\n", 7,
      {"loads.tractions[0].schedule.table: expected a non-empty list of rows [t, s], got a list of 0 entries"});
  expect_error(tr + "      schedule: {table: 3}\n", 7,
               {"loads.tractions[0].schedule.table: expected a non-empty list of rows [t, s], got '3'"});
  expect_error(tr + "      schedule: {table: [[0, 0], [1, 2, 3]]}\n", 7,
               {"loads.tractions[0].schedule.table[1]: expected a row [t, s] of 2 numbers, got a list of 3 entries"});
  expect_error(tr + "      schedule:\n        table:\n          - [0, 0]\n          - [1, 0.5]\n          - [1, 1]\n",
               11,
               {"loads.tractions[0].schedule.table[2]: time 1 is not after the time of row 1 (1); times must be "
                "strictly increasing"});
  expect_error(tr + "      schedule:\n        table:\n          - [2, 0]\n          - [1, 0.5]\n", 10,
               {"loads.tractions[0].schedule.table[1]: time 1 is not after the time of row 0 (2)"});
  expect_error(tr + "      schedul: {ramp: [0, 1]}\n", 7,
               {"unknown key 'loads.tractions[0].schedul' (expected one of: select, traction, schedule)"});
}

TEST_F(JobTest, AttachmentErrors) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nattachments:\n";
  expect_error(head + "  select: {all: true}\n", 4, {"attachments: expected a list of attachments, got a mapping"});
  expect_error(head + "  - select: {all: true}\n", 4, {"missing required key 'attachments[0].stiffness'"});
  expect_error(head + "  - stiffness: 1\n", 4, {"missing required key 'attachments[0].select'"});
  expect_error(head + "  - select: {all: true, region: 2}\n    stiffness: 1\n", 4,
               {"attachments[0].select: expected exactly one of 'region', 'box', 'all', 'point' or 'points', got 2"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 0\n", 5,
               {"attachments[0].stiffness: expected a positive number, got '0'"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    damping: -2\n", 6,
               {"attachments[0].damping: expected a non-negative number, got '-2'"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    spring: 2\n", 6,
               {"unknown key 'attachments[0].spring' (expected one of: select, stiffness, damping, path, velocity)"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    path: [[0, 0, 0, 0]]\n    velocity: [1, 0, 0]\n",
               7, {"attachments[0].velocity: not allowed together with 'attachments[0].path'"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    velocity: [1, 0, 0]\n    path: [[0, 0, 0, 0]]\n",
               7, {"attachments[0].path: not allowed together with 'attachments[0].velocity'"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    path: []\n", 6,
               {"attachments[0].path: expected a non-empty list of rows [t, dx, dy, dz], got a list of 0 entries"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    path: [[0, 0, 0]]\n", 6,
               {"attachments[0].path[0]: expected a row [t, dx, dy, dz] of 4 numbers, got a list of 3 entries"});
  expect_error(
      head +
          "  - select: {all: true}\n    stiffness: 1\n    path:\n      - [0, 0, 0, 0]\n      - [0.5, 1, 1, 1]\n"
          "      - [0.25, 1, 1, 1]\n",
      9, {"attachments[0].path[2]: time 0.25 is not after the time of row 1 (0.5)"});
  expect_error(head + "  - select: {all: true}\n    stiffness: 1\n    velocity: [1, 0]\n", 6,
               {"attachments[0].velocity: expected a list of 3 numbers [vx, vy, vz], got a list of 2 entries"});
  expect_error(head + "  - {select: {all: true}, stiffness: 1}\n  - {select: {region: 3}, stiffness: x}\n", 5,
               {"attachments[1].stiffness: expected a positive number, got 'x'"});
}

TEST_F(JobTest, CheckpointEveryNeedsDynamicWhateverTheKeyOrder) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\n";
  const std::string only = "output.checkpoint_every: checkpoints are written by dynamic analyses only";
  expect_error(head + "analysis: {type: static}\noutput:\n  checkpoint_every: 5\n", 5, {only});
  expect_error(head + "output:\n  checkpoint_every: 5\nanalysis: {type: static}\n", 4, {only});
  expect_error(head + "output:\n  every: 2\n  checkpoint_every: 1\n", 5, {only});
  expect_error(head + "output:\n  checkpoint_every: -1\n", 4,
               {"output.checkpoint_every: expected an integer >= 0, got '-1'"});
  const Job job = read_job(write(head +
                                 "output:\n  checkpoint_every: 5\nanalysis: {type: dynamic, dt: 1, end_time: 10}\n"));
  EXPECT_EQ(job.checkpoint_every, 5);
}

TEST_F(JobTest, ScheduleEvaluation) {
  Schedule ramp;
  ramp.points = {{0.5, 0.0}, {1.5, 1.0}};
  EXPECT_DOUBLE_EQ(ramp(-1.0), 0.0);
  EXPECT_DOUBLE_EQ(ramp(0.5), 0.0);
  EXPECT_DOUBLE_EQ(ramp(0.75), 0.25);
  EXPECT_DOUBLE_EQ(ramp(1.0), 0.5);
  EXPECT_DOUBLE_EQ(ramp(1.5), 1.0);
  EXPECT_DOUBLE_EQ(ramp(3.0), 1.0);

  Schedule table;
  table.points = {{0.0, 1.0}, {1.0, 3.0}, {3.0, -1.0}};
  EXPECT_DOUBLE_EQ(table(-0.5), 1.0);  // constant before the first point
  EXPECT_DOUBLE_EQ(table(0.0), 1.0);
  EXPECT_DOUBLE_EQ(table(0.5), 2.0);
  EXPECT_DOUBLE_EQ(table(1.0), 3.0);  // at an interior knot
  EXPECT_DOUBLE_EQ(table(1.5), 2.0);
  EXPECT_DOUBLE_EQ(table(2.5), 0.0);
  EXPECT_DOUBLE_EQ(table(3.0), -1.0);
  EXPECT_DOUBLE_EQ(table(10.0), -1.0);  // constant after the last point

  Schedule single;
  single.points = {{2.0, 0.7}};
  EXPECT_DOUBLE_EQ(single(0.0), 0.7);
  EXPECT_DOUBLE_EQ(single(2.0), 0.7);
  EXPECT_DOUBLE_EQ(single(5.0), 0.7);

  // A parsed ramp evaluates the same way.
  const Job job =
      read_job(write("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nboundary:\n"
                     "  - select: {all: true}\n    displace: [1, ~, ~]\n    schedule: {ramp: [1, 3]}\n"));
  ASSERT_EQ(job.boundary.size(), 1u);
  ASSERT_TRUE(job.boundary[0].schedule.has_value());
  const Schedule& parsed = *job.boundary[0].schedule;
  EXPECT_EQ(parsed.line, 6);
  EXPECT_DOUBLE_EQ(parsed(0.0), 0.0);
  EXPECT_DOUBLE_EQ(parsed(2.5), 0.75);
  EXPECT_DOUBLE_EQ(parsed(4.0), 1.0);
}

TEST_F(JobTest, AttachmentAnchorEvaluation) {
  AttachmentSpec fixed;
  expect_vec(fixed.displacement(0.0), {0, 0, 0}, "fixed d(0)");
  expect_vec(fixed.displacement(7.0), {0, 0, 0}, "fixed d(7)");
  expect_vec(fixed.rate(7.0), {0, 0, 0}, "fixed d'(7)");

  AttachmentSpec moving;
  moving.velocity = std::array<double, 3>{1.0, -2.0, 0.5};
  expect_vec(moving.displacement(0.0), {0, 0, 0}, "velocity d(0)");
  expect_vec(moving.displacement(2.0), {2.0, -4.0, 1.0}, "velocity d(2)");
  expect_vec(moving.rate(0.0), {1.0, -2.0, 0.5}, "velocity d'(0)");
  expect_vec(moving.rate(3.0), {1.0, -2.0, 0.5}, "velocity d'(3)");

  AttachmentSpec path;
  path.path = {{1.0, 0.5, 0.0, 0.0}, {2.0, 1.5, 2.0, -1.0}, {4.0, 1.5, 6.0, 3.0}};
  expect_vec(path.displacement(0.0), {0.5, 0.0, 0.0}, "path d(0), before the first row");
  expect_vec(path.displacement(1.0), {0.5, 0.0, 0.0}, "path d(1)");
  expect_vec(path.displacement(1.5), {1.0, 1.0, -0.5}, "path d(1.5)");
  expect_vec(path.displacement(2.0), {1.5, 2.0, -1.0}, "path d(2)");
  expect_vec(path.displacement(3.0), {1.5, 4.0, 1.0}, "path d(3)");
  expect_vec(path.displacement(4.0), {1.5, 6.0, 3.0}, "path d(4)");
  expect_vec(path.displacement(9.0), {1.5, 6.0, 3.0}, "path d(9), after the last row");
  expect_vec(path.rate(0.5), {0, 0, 0}, "path d'(0.5), before the path");
  expect_vec(path.rate(1.0), {1.0, 2.0, -1.0}, "path d'(1), first knot: the first segment");
  expect_vec(path.rate(1.5), {1.0, 2.0, -1.0}, "path d'(1.5)");
  expect_vec(path.rate(2.0), {0.0, 2.0, 2.0}, "path d'(2), interior knot: the segment starting there");
  expect_vec(path.rate(3.5), {0.0, 2.0, 2.0}, "path d'(3.5)");
  expect_vec(path.rate(4.0), {0, 0, 0}, "path d'(4), the last knot");
  expect_vec(path.rate(5.0), {0, 0, 0}, "path d'(5), after the path");

  AttachmentSpec one;
  one.path = {{1.0, 0.25, -0.5, 2.0}};
  expect_vec(one.displacement(0.0), {0.25, -0.5, 2.0}, "one-row d(0)");
  expect_vec(one.displacement(3.0), {0.25, -0.5, 2.0}, "one-row d(3)");
  expect_vec(one.rate(1.0), {0, 0, 0}, "one-row d'(1)");
}

// Fuzzing finding (fuzz/corpus/job/regression_long_curve_file.yaml): a curve file name longer than the system
// allows escaped as std::filesystem::filesystem_error ("File name too long") instead of an InputError.
TEST_F(JobTest, CurveFileNameTooLongIsAnInputError) {
  const std::string name(300, 'a');
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - model: volino\n    curves: {weft: " + name +
                   ", warp: [[0, 0]], shear: [[0, 0]]}\n",
               4, {"materials[0].curves.weft: curve file", name + "' does not exist"});
}
TEST_F(JobTest, PositionBasedKeys) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0.1}\n";
  const std::string dyn = head + "analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.1\n";
  // Defaults, then every key.
  const Job plain = read_job(write(dyn + "  integrator: position-based\n"));
  ASSERT_TRUE(plain.dynamic.has_value());
  EXPECT_EQ(plain.dynamic->integrator, Integrator::position_based);
  EXPECT_EQ(plain.dynamic->position_based.iterations, 5);
  EXPECT_EQ(plain.dynamic->position_based.sweep, PbdSweep::colored);
  EXPECT_TRUE(plain.dynamic->position_based.xpbd);
  EXPECT_EQ(plain.dynamic->position_based.velocity_damping, 0.0);
  const Job full = read_job(write(dyn + "  integrator: position-based\n  position_based:\n    iterations: 20\n"
                                        "    sweep: jacobi\n    xpbd: false\n    velocity_damping: 0.25\n"));
  const PositionBasedSpec& p = full.dynamic->position_based;
  EXPECT_EQ(p.iterations, 20);
  EXPECT_EQ(p.sweep, PbdSweep::jacobi);
  EXPECT_FALSE(p.xpbd);
  EXPECT_DOUBLE_EQ(p.velocity_damping, 0.25);
  EXPECT_EQ(to_string(PbdSweep::jacobi), "jacobi");
  // Bad values: file, line, key, value and what was expected.
  const std::string pbd = dyn + "  integrator: position-based\n  position_based:\n";
  expect_error(pbd + "    iterations: 0\n", 10,
               {"analysis.position_based.iterations: expected an integer in [1, 10000], got '0'"});
  expect_error(pbd + "    iterations: 2.5\n", 10,
               {"analysis.position_based.iterations: expected an integer in [1, 10000]"});
  // Issue 55: a huge sweep count would hang the first step.
  expect_error(pbd + "    iterations: 2000000000\n", 10,
               {"analysis.position_based.iterations: expected an integer in [1, 10000], got '2000000000'"});
  expect_error(pbd + "    sweep: gauss-seidel\n", 10,
               {"analysis.position_based.sweep: expected one of: colored, jacobi, got 'gauss-seidel'"});
  expect_error(pbd + "    sweep: colord\n", 10, {"(did you mean 'colored'?)"});
  expect_error(pbd + "    xpbd: sometimes\n", 10, {"analysis.position_based.xpbd: expected true or false"});
  expect_error(pbd + "    velocity_damping: 1.0\n", 10,
               {"analysis.position_based.velocity_damping: expected a number in [0, 1), got '1.0'"});
  expect_error(pbd + "    velocity_damping: -0.1\n", 10, {"expected a number in [0, 1)"});
  expect_error(pbd + "    sweeps: 3\n", 10, {"sweeps"});
  // The block belongs to the position-based integrator; Newton-only keys are refused with it.
  expect_error(dyn + "  integrator: newmark\n  position_based: {iterations: 3}\n", 9,
               {"analysis.position_based: only for integrator position-based (analysis.integrator is 'newmark')"});
  expect_error(dyn + "  integrator: position-based\n  damping: {mass: 0.1}\n", 9,
               {"analysis.damping: not used by integrator position-based"});
  expect_error(dyn + "  integrator: position-based\n  mass: consistent\n", 9, {"analysis.mass: not used by"});
  // Inversion handling and the collapsed / inverted starts (Bender et al. §4.2, Fig. 6).
  EXPECT_EQ(plain.dynamic->position_based.inversion, PbdInversion::svd);
  EXPECT_EQ(plain.dynamic->position_based.initial_shape, PbdInitialShape::rest);
  EXPECT_EQ(read_job(write(pbd + "    inversion: none\n")).dynamic->position_based.inversion, PbdInversion::none);
  expect_error(pbd + "    inversion: clamp\n", 10,
               {"analysis.position_based.inversion: expected one of: svd, none, got 'clamp'"});
  const std::string pb = dyn + "  integrator: position-based\n";
  const Job mirrored = read_job(write(pb + "  initial_state: {mirror: y}\n"));
  EXPECT_EQ(mirrored.dynamic->position_based.initial_shape, PbdInitialShape::mirror);
  EXPECT_EQ(mirrored.dynamic->position_based.initial_axis, 1);
  const Job flat = read_job(write(pb + "  initial_state: {flatten: z}\n"));
  EXPECT_EQ(flat.dynamic->position_based.initial_shape, PbdInitialShape::flatten);
  EXPECT_EQ(flat.dynamic->position_based.initial_axis, 2);
  EXPECT_EQ(read_job(write(pb + "  initial_state: rest\n")).dynamic->position_based.initial_shape,
            PbdInitialShape::rest);
  expect_error(pb + "  initial_state: {flatten: w}\n", 9,
               {"analysis.initial_state.flatten: expected one of: x, y, z, got 'w'"});
  expect_error(pb + "  initial_state: static\n", 9,
               {"analysis.initial_state: expected 'rest' or a mapping with one key, flatten or mirror"});
  expect_error(pb + "  initial_state: {flatten: z, mirror: x}\n", 9, {"analysis.initial_state: expected"});
  expect_error(pb + "  initial_state: {squash: z}\n", 9, {"unknown key 'analysis.initial_state.squash'"});
  expect_error(dyn + "  integrator: newmark\n  initial_state: {mirror: x}\n", 9,
               {"analysis.initial_state: expected one of: rest, static"});
  // Models without an element energy, and attachments, are refused naming the entry.
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: stvk-nsn, young: 1, poisson: 0.1}\n"
      "analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.1\n  integrator: position-based\n",
      3,
      {"materials[0].model: model 'stvk-nsn' has no element energy for integrator position-based (models "
       "that have one: stvk, stvk-tl, neo-hookean, trbs and volino)"});
  // Attachments are energy constraints; their dampers are not.
  expect_error(head +
                   "attachments:\n  - {select: {all: true}, stiffness: 1, damping: 0.5}\nanalysis:\n  type: dynamic\n"
                   "  dt: 0.01\n  end_time: 0.1\n  integrator: position-based\n",
               5, {"attachments[0].damping: integrator position-based has no attachment dampers", "got 0.5"});
}

// Chebyshev acceleration of the coloured XPBD sweep (issue 47, pbd/pbd_chebyshev.hpp): off by default; with it the
// spectral radius is required, in (0, 1), and only the coloured XPBD sweep takes it.
TEST_F(JobTest, PositionBasedAcceleration) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0.1}\n";
  const std::string pbd = head +
                          "analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.1\n"
                          "  integrator: position-based\n  position_based:\n";
  const Job plain = read_job(write(pbd + "    iterations: 3\n"));
  EXPECT_EQ(plain.dynamic->position_based.acceleration, PbdAcceleration::none);
  const Job fast = read_job(write(pbd + "    acceleration: chebyshev\n    spectral_radius: 0.85\n"));
  EXPECT_EQ(fast.dynamic->position_based.acceleration, PbdAcceleration::chebyshev);
  EXPECT_DOUBLE_EQ(fast.dynamic->position_based.spectral_radius, 0.85);
  EXPECT_EQ(to_string(PbdAcceleration::chebyshev), "chebyshev");
  EXPECT_EQ(read_job(write(pbd + "    acceleration: none\n")).dynamic->position_based.acceleration,
            PbdAcceleration::none);
  expect_error(pbd + "    acceleration: multigrid\n", 10,
               {"analysis.position_based.acceleration: expected one of: none, chebyshev, got 'multigrid'"});
  expect_error(pbd + "    acceleration: chebyshev\n", 10,
               {"missing required key 'analysis.position_based.spectral_radius'", "e.g. 0.85"});
  expect_error(pbd + "    acceleration: chebyshev\n    spectral_radius: 1.0\n", 11,
               {"analysis.position_based.spectral_radius: expected a number in (0, 1), got '1.0'"});
  expect_error(pbd + "    acceleration: chebyshev\n    spectral_radius: 0\n", 11, {"expected a number in (0, 1)"});
  expect_error(pbd + "    spectral_radius: 0.9\n", 10,
               {"analysis.position_based.spectral_radius: only with acceleration: chebyshev "
                "(analysis.position_based.acceleration is none)"});
  expect_error(pbd + "    sweep: jacobi\n    acceleration: chebyshev\n    spectral_radius: 0.9\n", 11,
               {"analysis.position_based.acceleration: chebyshev accelerates the coloured XPBD sweep (needs sweep: "
                "colored and xpbd: true, got sweep: jacobi, xpbd: true)"});
  expect_error(pbd + "    xpbd: false\n    acceleration: chebyshev\n    spectral_radius: 0.9\n", 11,
               {"got sweep: colored, xpbd: false"});
}

// Plasticity (Bender et al. §4.1, materials/plasticity.hpp): the typed law, and every refusal with file, line, key.
TEST_F(JobTest, PlasticityKeys) {
  const std::string dyn = "analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.1\n  integrator: position-based\n"
                          "  position_based: {inversion: none}\n";
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n  - young: 1\n    poisson: 0.1\n";
  const Job job = read_job(write(head + "    plasticity: {yield: 0.01, creep: 20, max: 0.2}\n" + dyn));
  ASSERT_TRUE(job.materials[0].plasticity.has_value());
  EXPECT_DOUBLE_EQ(job.materials[0].plasticity->yield, 0.01);
  EXPECT_DOUBLE_EQ(job.materials[0].plasticity->creep, 20.0);
  // Issue 55: a step moves E_p by at most all of the deviatoric elastic strain (creep <= 1/dt = 100 here).
  expect_error(head + "    plasticity: {yield: 0.01, creep: 100.5, max: 0.2}\n" + dyn, 5,
               {"materials[0].plasticity.creep: expected at most 1/dt = 100", "got 100.5"});
  EXPECT_NO_THROW(read_job(write(head + "    plasticity: {yield: 0.01, creep: 100, max: 0.2}\n" + dyn)));
  EXPECT_DOUBLE_EQ(job.materials[0].plasticity->max, 0.2);
  EXPECT_EQ(job.materials[0].plasticity_line, 5);
  EXPECT_FALSE(read_job(write(head + dyn)).materials[0].plasticity.has_value());
  expect_error(head + "    plasticity: {yield: -0.01, creep: 20, max: 0.2}\n" + dyn, 5,
               {"materials[0].plasticity.yield: expected a non-negative number (the yield strain gamma_yield), got "
                "'-0.01'"});
  expect_error(head + "    plasticity: {yield: 0.01, creep: fast, max: 0.2}\n" + dyn, 5,
               {"materials[0].plasticity.creep: expected a non-negative number"});
  expect_error(head + "    plasticity: {yield: 0.01, creep: 1}\n" + dyn, 5, {"materials[0].plasticity", "max"});
  expect_error(head + "    plasticity: {yield: 0.01, creep: 1, max: 1, hardening: 2}\n" + dyn, 5,
               {"materials[0].plasticity.hardening"});
  // Models other than StVK, membranes: refused at the key.
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - model: neo-hookean\n    young: 1\n    poisson: 0.1\n"
               "    plasticity: {yield: 0, creep: 1, max: 1}\n" + dyn,
               6, {"materials[0].plasticity: only for model stvk or stvk-tl", "got model 'neo-hookean'"});
  // The Newton solvers (static, other integrators) refuse it; so does the position-based solver with inversion svd.
  expect_error(head + "    plasticity: {yield: 0, creep: 1, max: 1}\n", 5,
               {"materials[0].plasticity: only for analysis.type dynamic with integrator position-based (the Newton "
                "solvers do not support plasticity)"});
  expect_error(head + "    plasticity: {yield: 0, creep: 1, max: 1}\nanalysis:\n  type: dynamic\n  dt: 0.01\n"
                      "  end_time: 0.1\n  integrator: newmark\n",
               5, {"materials[0].plasticity: only for analysis.type dynamic with integrator position-based"});
  expect_error(head + "    plasticity: {yield: 0, creep: 1, max: 1}\nanalysis:\n  type: dynamic\n  dt: 0.01\n"
                      "  end_time: 0.1\n  integrator: position-based\n",
               5, {"materials[0].plasticity: plastic materials need analysis.position_based.inversion: none"});
}


// discretization: type frames (issue 14): the typed values, and each bad value named with file, line and key.
TEST_F(JobTest, DiscretizationFramesParses) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0}\n";
  const Job nodes = read_job(write(head));
  EXPECT_EQ(nodes.discretization.type, DiscretizationType::nodes);
  const Job counted = read_job(write(head + "discretization: {type: frames, frames: 4, weights: hat}\n"));
  EXPECT_EQ(counted.discretization.type, DiscretizationType::frames);
  EXPECT_EQ(counted.discretization.frame_count, 4);
  EXPECT_TRUE(counted.discretization.positions.empty());
  EXPECT_EQ(counted.discretization.weights, FrameWeights::hat);
  EXPECT_EQ(counted.discretization.line, 4);
  const Job placed = read_job(write(head +
                                    "discretization:\n  type: frames\n  positions: [[0, 0.5, 0.5], [2, 0.5, 1]]\n"));
  ASSERT_EQ(placed.discretization.positions.size(), 2u);
  EXPECT_EQ(placed.discretization.positions[1], (std::array<double, 3>{2, 0.5, 1}));
  EXPECT_EQ(placed.discretization.weights, FrameWeights::harmonic);
  EXPECT_FALSE(placed.discretization.sample_grid.has_value());
  const Job voxels = read_job(write(head + "discretization: {type: frames, frames: 3, sample_grid: [5, 2, 1]}\n"));
  ASSERT_TRUE(voxels.discretization.sample_grid.has_value());
  EXPECT_EQ(*voxels.discretization.sample_grid, (std::array<int, 3>{5, 2, 1}));
  EXPECT_EQ(to_string(FrameWeights::hat), "hat");
  EXPECT_EQ(to_string(DiscretizationType::frames), "frames");
  // Issue 47: frame_type, placement and the diffused weights; the defaults rigid, farthest, harmonic (as first offered).
  EXPECT_EQ(counted.discretization.frame_type, FrameType::rigid);
  EXPECT_EQ(counted.discretization.placement, FramePlacementRule::farthest);
  const Job rigid = read_job(write(
      head + "discretization: {type: frames, frames: 8, frame_type: rigid, placement: farthest, weights: harmonic}\n"));
  EXPECT_EQ(rigid.discretization.frame_type, FrameType::rigid);
  EXPECT_EQ(rigid.discretization.placement, FramePlacementRule::farthest);
  EXPECT_EQ(rigid.discretization.weights, FrameWeights::harmonic);
  EXPECT_EQ(to_string(FrameType::affine), "affine");
  EXPECT_EQ(to_string(FramePlacementRule::kmeans), "kmeans");
  EXPECT_EQ(to_string(FrameWeights::diffused), "diffused");
}

TEST_F(JobTest, DiscretizationBadValuesAreNamed) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0}\n";
  expect_error(head + "discretization: {type: frame}\n", 4,
               {"discretization.type: expected one of: nodes, frames", "'frame'", "did you mean 'frames'"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 0\n", 6,
               {"discretization.frames: expected a frame count (an integer >= 1), got '0'"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2.5\n", 6, {"discretization.frames", "'2.5'"});
  expect_error(head + "discretization:\n  type: frames\n", 5,
               {"discretization: expected exactly one of 'frames'", "got neither"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  positions: [[0, 0, 0]]\n", 5, {"got both"});
  expect_error(head + "discretization:\n  type: frames\n  positions: [[0, 0]]\n", 6,
               {"discretization.positions[0]: expected a list of 3 numbers [x, y, z]"});
  expect_error(head + "discretization:\n  type: frames\n  positions: []\n", 6,
               {"discretization.positions: expected a non-empty list of frame positions"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  weights: linear\n", 7,
               {"discretization.weights: expected one of: harmonic, hat, diffused", "'linear'"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  frame_type: quadratic\n", 7,
               {"discretization.frame_type: expected one of: rigid, affine", "'quadratic'"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  placement: random\n", 7,
               {"discretization.placement: expected one of: farthest, kmeans", "'random'"});
  expect_error(head + "discretization:\n  type: frames\n  positions: [[0, 0, 0]]\n  placement: kmeans\n", 7,
               {"discretization.placement: only with 'frames' (a count)"});
  expect_error(head + "discretization:\n  frame_type: affine\n", 5,
               {"discretization.frame_type: only for type frames"});
  expect_error(head + "discretization:\n  placement: kmeans\n", 5, {"discretization.placement: only for type frames"});

  expect_error(head + "discretization:\n  frames: 2\n", 5, {"discretization.frames: only for type frames"});
  expect_error(head + "discretization:\n  sample_grid: [2, 2, 2]\n", 5,
               {"discretization.sample_grid: only for type frames"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  sample_grid: [4, 2]\n", 7,
               {"discretization.sample_grid: expected a list of 3 integers >= 1 [nx, ny, nz]"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  sample_grid: [4, 0, 1]\n", 7,
               {"discretization.sample_grid[1]: expected an integer in [1, 100000], got '0'"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  sample_grid: [4, 1, 100001]\n", 7,
               {"discretization.sample_grid[2]: expected an integer in [1, 100000], got '100001'"});
  expect_error(head + "discretization:\n  type: frames\n  frames: 2\n  spacing: 1\n", 7,
               {"unknown key 'discretization.spacing'"});
  // Cross-section checks: what the frame model does not support is named, not ignored.
  expect_error(head +
                   "discretization: {type: frames, frames: 2}\nanalysis:\n  type: dynamic\n  dynamic: {dt: 0.1, "
                   "end_time: 1, integrator: newmark}\n",
               4, {"discretization: type frames integrates in time with linearized-euler (the paper's step) or "
                   "backward-euler", "'newmark'"});
  expect_error(head +
                   "discretization: {type: frames, frames: 2}\nanalysis:\n  type: dynamic\n  dynamic: {dt: 0.1, "
                   "end_time: 1, integrator: linearized-euler, mass: consistent}\n",
               4, {"discretization: type frames has lumped frame masses only", "'consistent'"});
  EXPECT_EQ(read_job(write(head + "discretization: {type: frames, frames: 2}\nanalysis:\n  type: dynamic\n  dynamic: "
                                  "{dt: 0.1, end_time: 1, integrator: linearized-euler}\n"))
                .discretization.type,
            DiscretizationType::frames);
  expect_error(head +
                   "discretization: {type: frames, frames: 2}\nboundary:\n  - select: {all: true}\n    displace: "
                   "[0.1, ~, ~]\n",
               6, {"boundary[0]: with discretization type frames a boundary entry may only fix components"});
  expect_error(head +
                   "discretization: {type: frames, frames: 2}\nboundary:\n  - select: {all: true}\n    fix: [x, y]\n",
               6, {"boundary[0]: with discretization type frames a boundary entry must fix x, y and z"});
  expect_error(
      "mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: linear, young: 1, poisson: 0}\n"
      "discretization: {type: frames, frames: 2}\n",
      3, {"materials[0]: discretization type frames evaluates isotropic StVK", "model 'linear'"});
}

// Every unknown key names the nearest valid one when it is a plausible slip (issue 54), not only model names.
TEST_F(JobTest, UnknownKeysSayWhichKeyWasMeant) {
  const std::string mesh = "mesh: {file: meshes/beam.msh}\n";
  expect_error(mesh + "materials:\n  - young: 1\n    poison: 0.3\n", 4,
               {"unknown key 'materials[0].poison' (expected one of: ", "); did you mean 'poisson'?"});
  expect_error("mesh:\n  fiel: beam.msh\nmaterials: []\n", 2, {"did you mean 'file'?"});
  expect_error(mesh + "materials: [{young: 1, poisson: 0.1}]\nsolvr: {}\n", 3, {"did you mean 'solver'?"});
  expect_error(mesh + "materials: [{young: 1, poisson: 0.1}]\nsolver:\n  newton: {maxit: 3}\n", 4,
               {"did you mean 'max_it'?"});
  expect_error(mesh + "materials: [{young: 1, poisson: 0.1}]\nboundary:\n  - select: {regoin: 3}\n    fix: [x]\n",
               4, {"did you mean 'region'?"});
  // Nothing close: the list only.
  const std::string far = expect_error(mesh + "materials: [{young: 1, poisson: 0.1}]\nwhatever: 1\n", 3,
                                       {"unknown key 'whatever' (expected one of: "});
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
}

TEST_F(JobTest, PointSelections) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nboundary:\n";
  const Job job = read_job(write(head + "  - select: {point: [0, 1, 2]}\n    fix: [x]\n"
                              "  - select: {points: [[1, 2, 3], [4, 5, 6]]}\n    fix: [y]\n"));
  ASSERT_EQ(job.boundary.size(), 2u);
  EXPECT_EQ(job.boundary[0].select.kind, Selection::Kind::points);
  EXPECT_EQ(job.boundary[0].select.points, (std::vector<std::array<double, 3>>{{0, 1, 2}}));
  EXPECT_EQ(job.boundary[1].select.points, (std::vector<std::array<double, 3>>{{1, 2, 3}, {4, 5, 6}}));
  expect_error(head + "  - select: {point: [0, 1]}\n    fix: [x]\n", 4, {"boundary[0].select.point", "a point [x, y, z]"});
  expect_error(head + "  - select: {points: []}\n    fix: [x]\n", 4,
               {"boundary[0].select.points", "a non-empty list of points"});
  expect_error(head + "  - select: {point: [0, 1, 2], box: [[0, 0, 0], [1, 1, 1]]}\n    fix: [x]\n", 4,
               {"expected exactly one of 'region', 'box', 'all', 'point' or 'points', got 2"});
}
}  // namespace
}  // namespace edgefem
