// Job-file tests: a full job parses with every value; each class of error names file, line and key path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/error.hpp"
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
      for (const auto& piece : pieces) EXPECT_NE(msg.find(piece), std::string::npos) << "missing '" << piece << "' in: " << msg;
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
  EXPECT_EQ(m0.model, "stvk");
  EXPECT_DOUBLE_EQ(m0.young, 1.0e4);
  EXPECT_DOUBLE_EQ(m0.poisson, 0.3);
  EXPECT_DOUBLE_EQ(m0.density, 2.5);
  EXPECT_FALSE(m0.volumetric_penalty);
  EXPECT_DOUBLE_EQ(m0.thickness, 0.1);
  const MaterialSpec& m1 = job.materials[1];
  EXPECT_EQ(m1.region, 2);
  EXPECT_EQ(m1.model, "stvk-tl");
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
  EXPECT_EQ(job.analysis_type, "static");
  EXPECT_EQ(job.steps, 4);
  EXPECT_DOUBLE_EQ(job.newton_rtol, 1e-8);
  EXPECT_DOUBLE_EQ(job.newton_atol, 1e-11);
  EXPECT_EQ(job.newton_max_it, 25);
  EXPECT_EQ(job.petsc_options, "-ksp_type cg -pc_type gamg");
  EXPECT_EQ(job.output_directory, (dir_ / "out" / "beam").string());
  EXPECT_EQ(job.output_every, 2);
}

TEST_F(JobTest, MinimalGeneratedJobGetsDefaults) {
  const std::string path = write(R"(mesh:
  generate: {shape: box, size: [10, 1, 1], cells: [40, 4, 4]}
materials:
  - {young: 1e4, poisson: 0.3}
)", "cantilever.yaml");
  const Job job = read_job(path);
  EXPECT_FALSE(job.mesh_file.has_value());
  ASSERT_TRUE(job.generate.has_value());
  EXPECT_EQ(job.generate->shape, "box");
  EXPECT_EQ(job.generate->size, (std::array<double, 3>{10, 1, 1}));
  EXPECT_EQ(job.generate->cells, (std::array<int, 3>{40, 4, 4}));
  ASSERT_EQ(job.materials.size(), 1u);
  EXPECT_FALSE(job.materials[0].region.has_value());
  EXPECT_EQ(job.materials[0].model, "stvk");
  EXPECT_TRUE(job.boundary.empty());
  EXPECT_EQ(job.steps, 1);
  EXPECT_EQ(job.analysis_type, "static");
  EXPECT_DOUBLE_EQ(job.newton_rtol, 1e-10);
  EXPECT_EQ(job.output_directory, (dir_ / "out" / "cantilever").string());
  EXPECT_EQ(job.output_every, 1);

  const Job sheet = read_job(write("mesh:\n  generate: {shape: sheet, size: [1, 2], cells: [64, 32]}\n"
                                   "materials: [{young: 1, poisson: 0.25, thickness: 0.01}]\n"));
  ASSERT_TRUE(sheet.generate.has_value());
  EXPECT_EQ(sheet.generate->shape, "sheet");
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
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {young: 1, poisson: 0.1, volumetric_penalty: maybe}\n", 3,
               {"materials[0].volumetric_penalty", "true or false", "'maybe'"});
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
               {"unknown key 'solvr' (expected one of: mesh, materials, boundary, loads, analysis, solver, output)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - young: 1\n    poisson: 0.1\n    yung: 3\n", 5,
               {"unknown key 'materials[0].yung'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nsolver:\n  newton: {rtol: 1, maxit: 3}\n",
               4, {"unknown key 'solver.newton.maxit' (expected one of: rtol, atol, max_it)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nboundary:\n"
               "  - select: {regoin: 3}\n    fix: [x]\n",
               4, {"unknown key 'boundary[0].select.regoin' (expected one of: region, box, all)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nmaterials: []\n", 3,
               {"duplicate key 'materials'"});
}

TEST_F(JobTest, YamlSyntaxErrorNamesTheLine) {
  expect_error("mesh:\n  file: beam.msh\nmaterials: [{young: 1, poisson: 0.1}\nboundary: []\n", 4, {"YAML syntax error"});
  expect_error("mesh: {file: meshes/beam.msh}\n  bad: indent\n", 2, {"YAML syntax error"});
}

TEST_F(JobTest, MissingMeshFileNamesTheResolvedPath) {
  const std::string msg = expect_error("mesh:\n  file: beam.msh\nmaterials: [{young: 1, poisson: 0.1}]\n", 2,
                                       {"mesh.file: file 'beam.msh' not found (resolved to " + (dir_ / "beam.msh").string() + ")"});
  expect_error("mesh:\n  file: meshes\nmaterials: [{young: 1, poisson: 0.1}]\n", 2, {"mesh.file", "is a directory"});
}

TEST_F(JobTest, MissingAndConflictingKeys) {
  expect_error("materials: [{young: 1, poisson: 0.1}]\n", 1, {"missing required key 'mesh'"});
  expect_error("mesh: {file: meshes/beam.msh}\n", 1, {"missing required key 'materials'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: []\n", 2, {"materials: expected a non-empty list of materials"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {poisson: 0.1}\n", 3,
               {"missing required key 'materials[0].young'"});
  expect_error("mesh:\n  file: meshes/beam.msh\n  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}\n"
               "materials: [{young: 1, poisson: 0.1}]\n",
               2, {"mesh: expected exactly one of 'file' or 'generate', got both"});
  expect_error("mesh: {}\nmaterials: [{young: 1, poisson: 0.1}]\n", 1, {"got neither"});
  expect_error("mesh:\n  generate: {shape: sheet, size: [1, 1, 1], cells: [4, 4]}\nmaterials: [{young: 1, poisson: 0.1}]\n",
               2, {"mesh.generate.size: expected a list of 2 positive numbers, got a list of 3 entries"});
  expect_error("mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [4, 0, 4]}\nmaterials: [{young: 1, poisson: 0.1}]\n",
               2, {"mesh.generate.cells[1]: expected an integer >= 1, got '0'"});
  expect_error("mesh:\n  generate: {shape: cylinder, size: [1, 1, 1], cells: [4, 4, 4]}\nmaterials: [{young: 1, poisson: 0.1}]\n",
               2, {"mesh.generate.shape: expected one of: box, sheet, got 'cylinder'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {region: 1, young: 1, poisson: 0.1}\n"
               "  - {region: 1, young: 2, poisson: 0.1}\n",
               4, {"materials[1]: a second material for region 1"});
}

TEST_F(JobTest, ReservedModelsAndDynamicAreNotSupportedYet) {
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - young: 1\n    poisson: 0.1\n    model: trbs\n", 5,
               {"materials[0].model: model 'trbs' is not supported yet (supported: stvk, stvk-nsn, stvk-tl, linear)"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials:\n  - {model: neo-hooke, young: 1, poisson: 0.1}\n", 3,
               {"materials[0].model: expected one of: stvk, stvk-nsn, stvk-tl, linear, got 'neo-hooke'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nanalysis:\n  type: dynamic\n", 4,
               {"analysis.type: analysis type 'dynamic' is not supported yet"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nanalysis:\n  type: modal\n", 4,
               {"analysis.type: expected one of: static, dynamic, got 'modal'"});
}

TEST_F(JobTest, BoundaryConditionErrors) {
  const std::string head = "mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nboundary:\n";
  expect_error(head + "  - select: {region: 11}\n    fix: [x, z]\n    displace: [~, 0, 0.5]\n", 6,
               {"boundary[0]: component 'z' is both fixed and displaced"});
  expect_error(head + "  - select: {region: 11}\n", 4, {"boundary[0]: expected 'fix', 'displace' or 'rotate'"});
  expect_error(head + "  - select: {region: 11}\n    displace: [~, null, ~]\n", 4, {"boundary[0]: expected 'fix', 'displace' or 'rotate'"});
  expect_error(head + "  - select: {region: 11, all: true}\n    fix: [x]\n", 4,
               {"boundary[0].select: expected exactly one of 'region', 'box' or 'all', got 2"});
  expect_error(head + "  - select: {all: true}\n    fix: [x, w]\n", 5, {"boundary[0].fix[1]: expected one of: x, y, z, got 'w'"});
  expect_error(head + "  - select: {all: true}\n    fix: [x]\n  - select: {box: [[0, 0, 0], [1, -1, 1]]}\n    fix: [y]\n", 6,
               {"boundary[1].select.box: expected the first corner to be below the second"});
  expect_error(head + "  - select: {box: [[0, 0], [1, 1, 1]]}\n    fix: [y]\n", 4,
               {"boundary[0].select.box[0]: expected a list of 3 numbers, got a list of 2 entries"});
  expect_error(head + "  - select: {all: true}\n    displace: [1, 2]\n", 5, {"boundary[0].displace: expected a list of 3"});
  expect_error(head + "  - fix: [x]\n", 4, {"missing required key 'boundary[0].select'"});
  expect_error("mesh: {file: meshes/beam.msh}\nmaterials: [{young: 1, poisson: 0.1}]\nloads:\n  tractions:\n"
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
  expect_error("", 1, {"expected a mapping", "empty document"});
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
  EXPECT_EQ(m.model, "linear");
  EXPECT_EQ(m.volumetric, "quadratic");
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
  EXPECT_EQ(job.materials[1].volumetric, "cubic");  // the default
}

TEST_F(JobTest, AnisotropyErrors) {
  const std::string head = "mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}\nmaterials:\n";
  expect_error(head + "  - young: 1\n    anisotropy: {type: transversely-isotropic, fibre: [1, 0, 0], young_fibre: 1,"
                      " young_transverse: 1, shear_fibre: 1, poisson_fibre: 0, poisson_transverse: 0}\n",
               4, {"materials[0].young", "not used with 'anisotropy'"});
  expect_error(head + "  - anisotropy: {type: orthotropic}\n", 4, {"materials[0].anisotropy.type", "transversely-isotropic"});
  expect_error(head + "  - anisotropy: {type: transversely-isotropic, fibre: [0, 0, 0], young_fibre: 1,"
                      " young_transverse: 1, shear_fibre: 1, poisson_fibre: 0, poisson_transverse: 0}\n",
               4, {"materials[0].anisotropy.fibre", "non-zero direction"});
  expect_error(head + "  - anisotropy: {type: transversely-isotropic, fibre: [1, 0, 0], young_fibre: 1,"
                      " young_transverse: 1, poisson_fibre: 0, poisson_transverse: 0}\n",
               4, {"missing required key 'materials[0].anisotropy.shear_fibre'"});
  expect_error(head + "  - young: 1\n    poisson: 0.3\n    volumetric: cubical\n", 6,
               {"materials[0].volumetric", "cubic, quadratic, none", "cubical"});
}

}  // namespace
}  // namespace edgefem
