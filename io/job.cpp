// SPDX-License-Identifier: BSD-3-Clause
/// \file job.cpp
/// Job-file parsing (docs/theory/design.md, "Job contract"): YAML -> typed Job, with messages that name the file, the line,
/// the full key path, the bad value and what was expected.
#include "io/job.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "io/job_keys.hpp"
#include "io/job_parser.hpp"

namespace edgefem {
namespace job_parsing {

/// A job-file spelling and the value it stands for: Choice (io/job_parser.hpp). The tables of this file's choices.
constexpr std::array<Choice<GeneratedShape>, 2> shapes = {
    {{"box", GeneratedShape::box}, {"sheet", GeneratedShape::sheet}}};
constexpr std::array<Choice<PartitionMethod>, 2> partition_methods = {
    {{"metis", PartitionMethod::metis}, {"ptscotch", PartitionMethod::ptscotch}}};
constexpr std::array<Choice<AnalysisType>, 2> analysis_types = {
    {{"static", AnalysisType::statics}, {"dynamic", AnalysisType::dynamics}}};
constexpr std::array<Choice<Integrator>, 4> integrators = {{{"backward-euler", Integrator::backward_euler},
                                                            {"linearized-euler", Integrator::linearized_euler},
                                                            {"newmark", Integrator::newmark},
                                                            {"position-based", Integrator::position_based}}};
constexpr std::array<Choice<PbdInversion>, 2> pbd_inversions = {
    {{"svd", PbdInversion::svd}, {"none", PbdInversion::none}}};
constexpr std::array<Choice<int>, 3> axes = {{{"x", 0}, {"y", 1}, {"z", 2}}};
constexpr std::array<Choice<PbdSweep>, 2> pbd_sweeps = {{{"colored", PbdSweep::colored}, {"jacobi", PbdSweep::jacobi}}};
constexpr std::array<Choice<PbdAcceleration>, 2> pbd_accelerations = {
    {{"none", PbdAcceleration::none}, {"chebyshev", PbdAcceleration::chebyshev}}};
constexpr std::array<Choice<MassMatrix>, 2> masses = {
    {{"lumped", MassMatrix::lumped}, {"consistent", MassMatrix::consistent}}};
constexpr std::array<Choice<InitialState>, 2> initial_states = {
    {{"rest", InitialState::rest}, {"static", InitialState::static_equilibrium}}};
constexpr std::array<Choice<VolumetricPenalty>, 3> volumetrics = {{{"cubic", VolumetricPenalty::cubic},
                                                                   {"quadratic", VolumetricPenalty::quadratic},
                                                                   {"none", VolumetricPenalty::none}}};
constexpr std::array<Choice<VolinoStabilization>, 3> stabilizations = {
    {{"none", VolinoStabilization::none},
     {"clamp", VolinoStabilization::clamp},
     {"eigen-clamp", VolinoStabilization::eigen_clamp}}};

using Spec = SolverSpec;
constexpr std::array<Choice<Spec::Predictor>, 2> predictors = {
    {{"extrapolate", Spec::Predictor::extrapolate}, {"none", Spec::Predictor::none}}};
constexpr std::array<Choice<Spec::LineSearch>, 4> line_searches = {{{"full", Spec::LineSearch::full},
                                                                    {"cp", Spec::LineSearch::cp},
                                                                    {"bt", Spec::LineSearch::bt},
                                                                    {"basic", Spec::LineSearch::basic}}};
constexpr std::array<Choice<Spec::Forcing>, 2> forcings = {
    {{"eisenstat-walker", Spec::Forcing::eisenstat_walker}, {"fixed", Spec::Forcing::fixed}}};
constexpr std::array<Choice<Spec::Preconditioner>, 6> preconditioners = {
    {{"auto", Spec::Preconditioner::automatic},
     {"gamg", Spec::Preconditioner::gamg},
     {"hypre", Spec::Preconditioner::hypre},
     {"direct", Spec::Preconditioner::direct},
     {"block-jacobi", Spec::Preconditioner::block_jacobi},
     {"schwarz", Spec::Preconditioner::schwarz}}};
constexpr std::array<Choice<Spec::Aggregation>, 3> aggregations = {{{"auto", Spec::Aggregation::automatic},
                                                                    {"smoothed", Spec::Aggregation::smoothed},
                                                                    {"unsmoothed", Spec::Aggregation::unsmoothed}}};

constexpr std::array<Choice<OutputFormat>, 2> output_formats = {
    {{"vtu", OutputFormat::vtu}, {"xdmf", OutputFormat::xdmf}}};
constexpr std::array<Choice<bool>, 2> compressions = {{{"none", false}, {"gzip", true}}};
constexpr std::array<Choice<bool>, 2> precisions = {{{"single", true}, {"double", false}}};

constexpr std::array<Choice<DiscretizationType>, 2> discretizations = {
    {{"nodes", DiscretizationType::nodes}, {"frames", DiscretizationType::frames}}};
constexpr std::array<Choice<FrameWeights>, 3> frame_weights = {
    {{"harmonic", FrameWeights::harmonic}, {"hat", FrameWeights::hat}, {"diffused", FrameWeights::diffused}}};
constexpr std::array<Choice<FrameType>, 2> frame_types = {{{"rigid", FrameType::rigid}, {"affine", FrameType::affine}}};
constexpr std::array<Choice<FrameMass>, 2> frame_masses = {{{"blocks", FrameMass::blocks}, {"weighted", FrameMass::weighted}}};
constexpr std::array<Choice<FramePlacementRule>, 2> frame_placements = {
    {{"farthest", FramePlacementRule::farthest}, {"kmeans", FramePlacementRule::kmeans}}};


/// " volino" or "s trbs, trqs and springs": the models of the registry for which `has` holds, after "model".
template <class Predicate>
std::string only_for(Predicate has) {
  const std::string names = model_names_where(has);
  return (names.find(' ') == std::string::npos ? " " : "s ") + names;
}

Job JobParser::parse(const YAML::Node& root, const std::string& path) {
  Job job;
  job.job_file = path;
  job_dir_ = fs::absolute(fs::path(path)).lexically_normal().parent_path().string();
  job.job_dir = job_dir_;

  const Value top{root, "", 1};
  if (!root.IsMap()) {
    fail(line_of(root.Mark()),
         "expected a mapping with keys mesh, materials, boundary, loads, attachments, obstacles, contact, "
         "discretization, analysis, solver, output, partition at the top level, got " +
             (root.IsNull() ? std::string("an empty document") : describe(root)));
  }
  const Map map(*this, top, "");
  parse_mesh(map.require("mesh"), job);
  if (const Value* partition = map.get("partition")) parse_partition(*partition, job);
  const Value& materials = map.require("materials");
  parse_materials(materials, job);
  if (const Value* boundary = map.get("boundary")) {
    for (const auto& item : list(*boundary, "a list of boundary conditions"))
      job.boundary.push_back(parse_boundary(item));
  }
  if (const Value* loads = map.get("loads")) parse_loads(*loads, job);
  if (const Value* attachments = map.get("attachments")) {
    for (const auto& item : list(*attachments, "a list of attachments"))
      job.attachments.push_back(parse_attachment(item));
  }
  const Value* obstacles = map.get("obstacles");
  if (obstacles) parse_obstacles(*obstacles, job);
  const Value* contact = map.get("contact");
  if (contact) parse_contact(*contact, job);
  if (const Value* analysis = map.get("analysis")) parse_analysis(*analysis, job);
  if (const Value* discretization = map.get("discretization")) parse_discretization(*discretization, job);
  if (const Value* solver = map.get("solver")) parse_solver(*solver, job);
  job.output_directory = resolve("out/" + fs::path(path).stem().string());
  std::optional<Value> checkpoint;
  if (const Value* output = map.get("output")) checkpoint = parse_output(*output, job);
  // Cross-section checks, after every section is read (independent of the order of the keys in the file).
  check_plasticity(job, materials.path);
  if (job.dynamic && job.dynamic->integrator == Integrator::position_based) check_position_based(job, materials.path);
  if (job.discretization.type == DiscretizationType::frames) check_frames(job);
  check_contact(job, obstacles, contact);
  if (checkpoint && job.checkpoint_every > 0 && job.analysis_type != AnalysisType::dynamics) {
    fail(checkpoint->line, checkpoint->path + ": checkpoints are written by dynamic analyses only (analysis type is '" +
                               std::string(to_string(job.analysis_type)) + "'; set it to 0 or remove it)");
  }
  return job;
}

void JobParser::parse_partition(const Value& v, Job& job) const {
  const Map m(*this, v, "partition");
  if (const Value* method = m.get("method")) job.partition_method = choice(*method, partition_methods);
  if (const Value* renumber = m.get("renumber")) job.renumber_vertices = boolean(*renumber);
}

void JobParser::parse_materials(const Value& materials, Job& job) const {
  const auto material_items = list(materials, "a non-empty list of materials");
  if (material_items.empty()) expected(materials, "a non-empty list of materials");
  for (const auto& item : material_items) {
    job.materials.push_back(parse_material(item));
    const auto& added = job.materials.back();
    for (std::size_t i = 0; i + 1 < job.materials.size(); ++i) {
      if (job.materials[i].region == added.region) {
        const std::string which = added.region ? "region " + std::to_string(*added.region) : "every cell (no region)";
        fail(item.line, item.path + ": a second material for " + which + " (first in " + materials.path + "[" +
                            std::to_string(i) + "])");
      }
    }
  }
}

void JobParser::check_plasticity(const Job& job, const std::string& materials) const {
  for (std::size_t i = 0; i < job.materials.size(); ++i) {
    const MaterialSpec& m = job.materials[i];
    if (!m.plasticity) continue;
    const std::string key = materials + "[" + std::to_string(i) + "].plasticity";
    if (!job.dynamic || job.dynamic->integrator != Integrator::position_based)
      fail(m.plasticity_line, key +
                                  ": only for analysis.type dynamic with integrator position-based (the Newton "
                                  "solvers do not support plasticity)");
    if (job.dynamic->position_based.inversion != PbdInversion::none)
      fail(m.plasticity_line, key +
                                  ": plastic materials need analysis.position_based.inversion: none (the inversion "
                                  "handling's principal route has no plastic strain; got inversion svd, the "
                                  "default)");
    // A step moves E_p by dt * creep of the deviatoric elastic strain: beyond all of it, the flow overshoots, and
    // far beyond, E_p and the stresses overflow into NaN positions.
    if (m.plasticity->creep * job.dynamic->dt > 1.0) {
      std::ostringstream msg;
      msg << key << ".creep: expected at most 1/dt = " << 1.0 / job.dynamic->dt
          << " (a step moves the plastic strain by dt * creep of the deviatoric elastic strain; more than all of it "
             "overshoots), got "
          << m.plasticity->creep;
      fail(m.plasticity_line, msg.str());
    }
  }
}

void JobParser::check_position_based(const Job& job, const std::string& materials) const {
  for (std::size_t i = 0; i < job.materials.size(); ++i) {
    const MaterialSpec& m = job.materials[i];
    if (!position_based_constraint(*m.model)) {
      fail(m.line, materials + "[" + std::to_string(i) + "].model: model '" + std::string(m.model->name) +
                       "' has no element energy for integrator position-based (models that have one: " +
                       model_names_where([](const ModelInfo& info) { return position_based_constraint(info); }) + ")");
    }
  }
  for (std::size_t i = 0; i < job.attachments.size(); ++i) {
    const AttachmentSpec& a = job.attachments[i];
    if (a.damping != 0.0) {
      std::ostringstream value;
      value << a.damping;
      fail(a.line, "attachments[" + std::to_string(i) +
                       "].damping: integrator position-based has no attachment "
                       "dampers (the springs are energy constraints; use analysis.position_based.velocity_damping), "
                       "expected 0, got " +
                       value.str());
    }
  }
}

void JobParser::check_frames(const Job& job) const {
  const int line = job.discretization.line;
  if (job.analysis_type == AnalysisType::dynamics) {
    const DynamicSpec& d = *job.dynamic;
    if (d.integrator != Integrator::linearized_euler && d.integrator != Integrator::backward_euler)
      fail(line,
           "discretization: type frames integrates in time with linearized-euler (the paper's step) or "
           "backward-euler (its Newton solve, needed with obstacles) only, got analysis.integrator '" +
               std::string(to_string(d.integrator)) + "'");
    if (d.mass != MassMatrix::lumped)
      fail(line, "discretization: type frames has lumped frame masses only (a 6x6 or 12x12 block per frame), got "
                 "analysis.mass '" +
                     std::string(to_string(d.mass)) + "'");
    if (d.initial_state != InitialState::rest)
      fail(line, "discretization: type frames starts dynamics at rest only, got analysis.initial_state '" +
                     std::string(to_string(d.initial_state)) + "'");
    if (job.checkpoint_every > 0)
      fail(line, "discretization: type frames writes no checkpoints (output.checkpoint_every must be 0)");
  }
  if (!job.attachments.empty())
    fail(line, "discretization: type frames does not support attachments (remove 'attachments' or use type nodes)");
  for (std::size_t b = 0; b < job.boundary.size(); ++b) {
    const BoundarySpec& spec = job.boundary[b];
    const bool moves = spec.rotate || std::any_of(spec.displace.begin(), spec.displace.end(),
                                                  [](const auto& d) { return d.has_value() && *d != 0.0; });
    if (moves)
      fail(spec.select.line, "boundary[" + std::to_string(b) +
                                 "]: with discretization type frames a boundary entry may only fix components "
                                 "(held frames); 'displace' (non-zero) and 'rotate' need type nodes");
    if (!(spec.fix[0] && spec.fix[1] && spec.fix[2]))
      fail(spec.select.line, "boundary[" + std::to_string(b) +
                                 "]: with discretization type frames a boundary entry must fix x, y and z (it holds "
                                 "whole frames, 6 dofs each), got fix of fewer components");
  }
  for (std::size_t m = 0; m < job.materials.size(); ++m) {
    const MaterialSpec& mat = job.materials[m];
    const bool stvk_tet = mat.model->cell == CellKind::tetrahedron && mat.model->name.starts_with("stvk");
    if (!stvk_tet || mat.anisotropy)
      fail(mat.line, "materials[" + std::to_string(m) +
                         "]: discretization type frames evaluates isotropic StVK at the tets: expected model stvk, "
                         "stvk-nsn or stvk-tl without anisotropy, got model '" +
                         std::string(mat.model->name) + "'" + (mat.anisotropy ? " with anisotropy" : ""));
  }
}

void JobParser::parse_mesh(const Value& v, Job& job) const {
  const Map mesh(*this, v, "mesh");
  const Value* file = mesh.get("file");
  const Value* generate = mesh.get("generate");
  if ((file == nullptr) == (generate == nullptr)) {
    fail(v.line, v.path + ": expected exactly one of 'file' or 'generate', got " + (file ? "both" : "neither"));
  }
  if (file) {
    const std::string name = string(*file, "a file name");
    if (name.empty()) expected(*file, "a file name");
    const std::string resolved = resolve(name);
    std::error_code ec;
    const auto status = fs::status(resolved, ec);
    if (!fs::exists(status)) {
      fail(file->line, file->path + ": file '" + name + "' not found (resolved to " + resolved + ")");
    }
    if (fs::is_directory(status)) {
      fail(file->line,
           file->path + ": '" + name + "' is a directory, expected a mesh file (resolved to " + resolved + ")");
    }
    job.mesh_file = resolved;
    return;
  }
  const Map gen(*this, *generate, "mesh.generate");
  GenerateSpec spec;
  const Value& shape = gen.require("shape");
  spec.shape = choice(shape, shapes);
  const Value& size = gen.require("size");
  const Value& cells = gen.require("cells");
  auto positive = [](double x) { return x > 0.0; };
  auto read_cells = [&](std::size_t n) {
    const std::string what = "a list of " + std::to_string(n) + " integers >= 1";
    if (!cells.node.IsSequence() || cells.node.size() != n) expected(cells, what);
    const auto items = list(cells, what);
    for (std::size_t d = 0; d < n; ++d) {
      spec.cells[d] = int_value(items[d], "an integer >= 1", [](long long c) { return c >= 1; });
    }
  };
  double n_cells = 0;
  if (spec.shape == GeneratedShape::box) {
    spec.size = numbers<3>(size, "a list of 3 positive numbers", "a positive number", positive);
    read_cells(3);
    n_cells = 6.0 * spec.cells[0] * spec.cells[1] * static_cast<double>(spec.cells[2]);
  } else {
    const auto s = numbers<2>(size, "a list of 2 positive numbers", "a positive number", positive);
    spec.size = {s[0], s[1], 1.0};
    read_cells(2);
    n_cells = 2.0 * spec.cells[0] * static_cast<double>(spec.cells[1]);
  }
  constexpr double limit = std::numeric_limits<std::int32_t>::max();
  if (n_cells > limit) {
    std::ostringstream s;
    s << cells.path << ": " << n_cells << " " << (spec.shape == GeneratedShape::box ? "tetrahedra" : "triangles")
      << " is more than a mesh can hold (limit " << std::numeric_limits<std::int32_t>::max() << ")";
    fail(cells.line, s.str());
  }
  job.generate = spec;
}

MaterialSpec JobParser::parse_material(const Value& v) const {
  const Map m(*this, v, "materials[]");
  MaterialSpec spec;
  spec.line = v.line;
  if (const Value* region = m.get("region")) {
    spec.region = int_value(*region, "a region tag (an integer >= 0)", [](long long r) { return r >= 0; });
  }
  if (const Value* model = m.get("model")) spec.model = this->model(*model);
  const ModelInfo& info = *spec.model;
  const std::string name(info.name);
  const bool membrane = info.cell == CellKind::triangle;
  parse_elasticity(m, info, spec);
  if (const Value* density = m.get("density")) {
    spec.density = number(*density, "a positive number", [](double d) { return d > 0.0; });
  }
  if (const Value* penalty = m.get("volumetric_penalty")) spec.volumetric_penalty = boolean(*penalty);
  if (const Value* volumetric = m.get("volumetric")) {
    spec.volumetric = choice(*volumetric, volumetrics);
  }
  if (const Value* thickness = m.get("thickness")) {
    spec.thickness = number(*thickness, "a positive number", [](double t) { return t > 0.0; });
  }
  if (info.keys.volino) {
    spec.volino = parse_volino(m);
  } else {
    for (const char* key : {"warp", "orthotropic", "curves", "stabilization", "viscosity"})
      if (const Value* given = m.get(key))
        fail(given->line,
             given->path + ": only for model" + only_for([](const ModelInfo& i) { return i.keys.volino; }));
  }
  if (const Value* damping = m.get("spring_damping")) {
    if (!info.keys.spring_damping)
      fail(damping->line,
           damping->path + ": only for model" + only_for([](const ModelInfo& i) { return i.keys.spring_damping; }));
    spec.spring_damping = number(*damping, "a non-negative number (time)", [](double z) { return z >= 0.0; });
  }
  if (const Value* bending = m.get("bending")) {
    if (!membrane)
      fail(bending->line, bending->path + ": only for membrane model" +
                              only_for([](const ModelInfo& i) { return i.cell == CellKind::triangle; }));
    const Map b(*this, *bending, "materials[].bending");
    spec.bending_stiffness = number(b.require("stiffness"), "a non-negative number (bending stiffness kb)",
                                    [](double k) { return k >= 0.0; });
  }
  if (const Value* plastic = m.get("plasticity")) {
    // Bender et al. §4.1 on isotropic StVK tets (materials/plasticity.hpp); the integrator is checked later.
    if (info.element_energy != &stvk_element_energy_gradient)
      fail(plastic->line,
           plastic->path + ": only for model stvk or stvk-tl (StVK on the elastic strain), got model '" + name + "'");
    if (spec.anisotropy)
      fail(plastic->line, plastic->path + ": only for isotropic materials (young, poisson), not with 'anisotropy'");
    spec.plasticity = parse_plasticity(*plastic);
    spec.plasticity_line = plastic->line;
  }
  return spec;
}

void JobParser::parse_elasticity(const Map& m, const ModelInfo& info, MaterialSpec& spec) const {
  const std::string name(info.name);
  const bool membrane = info.cell == CellKind::triangle;
  // The model-specific keys the registry says this model does not take.
  if (const Value* aniso = m.get("anisotropy"); aniso && !info.keys.anisotropy) {
    if (membrane) fail(aniso->line, aniso->path + ": membrane model '" + name + "' takes isotropic young and poisson");
    fail(aniso->line,
         aniso->path + ": only for model" + only_for([](const ModelInfo& i) { return i.keys.anisotropy; }));
  }
  if (const Value* aniso = m.get("anisotropy")) {
    // Either isotropic constants or an anisotropy block, not both.
    for (const char* key : {"young", "poisson"})
      if (const Value* given = m.get(key))
        fail(given->line, given->path + ": not used with 'anisotropy' (give the moduli inside the anisotropy block)");
    spec.anisotropy = parse_anisotropy(*aniso);
  } else if (info.keys.volino && (m.get("orthotropic") || m.get("curves"))) {
    for (const char* key : {"young", "poisson"})
      if (const Value* given = m.get(key))
        fail(given->line, given->path + ": not used with 'orthotropic' or 'curves' (they define the law)");
  } else {
    spec.young = number(m.require("young"), "a positive number", [](double e) { return e > 0.0; });
    // Plane stress (membranes) allows Poisson ratios up to 1; a solid needs less than 1/2.
    if (membrane)
      spec.poisson = number(m.require("poisson"), "a number with -1 < poisson < 1 (membrane, plane stress)",
                            [](double nu) { return nu > -1.0 && nu < 1.0; });
    else
      spec.poisson = number(m.require("poisson"), "a number with -1 < poisson < 0.5",
                            [](double nu) { return nu > -1.0 && nu < 0.5; });
  }
}

TransverseIsotropySpec JobParser::parse_anisotropy(const Value& v) const {
  const Map a(*this, v, "materials[].anisotropy");
  const Value& type = a.require("type");
  if (string(type, "transversely-isotropic") != "transversely-isotropic") expected(type, "transversely-isotropic");
  TransverseIsotropySpec t;
  t.fibre = unit_vector(a.require("fibre"), "a list of 3 numbers (the fibre direction)", "direction");
  auto positive = [](double x) { return x > 0.0; };
  t.young_fibre = number(a.require("young_fibre"), "a positive number", positive);
  t.young_transverse = number(a.require("young_transverse"), "a positive number", positive);
  t.shear_fibre = number(a.require("shear_fibre"), "a positive number", positive);
  t.poisson_fibre = number(a.require("poisson_fibre"), "a number");
  t.poisson_transverse = number(a.require("poisson_transverse"), "a number with -1 < poisson < 1",
                                [](double nu) { return nu > -1.0 && nu < 1.0; });
  return t;
}

PlasticLaw JobParser::parse_plasticity(const Value& v) const {
  const Map p(*this, v, "materials[].plasticity");
  PlasticLaw law;
  law.yield = number(p.require("yield"), "a non-negative number (the yield strain gamma_yield)",
                     [](double y) { return y >= 0.0; });
  law.creep = number(p.require("creep"), "a non-negative number (the creep rate gamma_creep, 1/time)",
                     [](double c) { return c >= 0.0; });
  law.max = number(p.require("max"), "a non-negative number (the largest plastic strain norm gamma_max)",
                   [](double x) { return x >= 0.0; });
  return law;
}

VolinoSpec JobParser::parse_volino(const Map& m) const {
  VolinoSpec s;
  if (const Value* warp = m.get("warp")) {
    const Map w(*this, *warp, "materials[].warp");
    if (const Value* direction = w.get("direction")) {
      s.warp_direction = numbers<3>(*direction, "a list of 3 numbers (a direction)", "a number");
      if (s.warp_direction == std::array<double, 3>{0, 0, 0})
        fail(direction->line, direction->path + ": expected a non-zero direction, got [0, 0, 0]");
    }
    if (const Value* angle = w.get("angle")) s.warp_angle_degrees = number(*angle, "an angle in degrees");
  }
  const Value* orthotropic = m.get("orthotropic");
  const Value* curves = m.get("curves");
  if (orthotropic && curves)
    fail(curves->line, curves->path + ": give either 'orthotropic' or 'curves', not both (" + orthotropic->path + ")");
  auto positive = [](double x) { return x > 0.0; };
  if (orthotropic) {
    const Map o(*this, *orthotropic, "materials[].orthotropic");
    s.orthotropic = std::array<double, 4>{number(o.require("weft"), "a positive number", positive),
                                          number(o.require("warp"), "a positive number", positive),
                                          number(o.require("shear"), "a positive number", positive),
                                          o.get("poisson") ? number(*o.get("poisson"), "a number") : 0.0};
  }
  if (curves) {
    const Map c(*this, *curves, "materials[].curves");
    std::array<CurveSpec, 3> out;
    const char* const modes[] = {"weft", "warp", "shear"};
    for (int k = 0; k < 3; ++k) {
      const Value& curve = c.require(modes[k]);
      out[k].line = curve.line;
      if (curve.node.IsScalar()) {
        const std::string name = string(curve, "a CSV file name or a list of [strain, stress] rows");
        out[k].file = resolve(name);
        std::error_code ec;  // a name the system cannot look up (too long, ...) does not exist either
        if (!fs::exists(out[k].file, ec))
          fail(curve.line, curve.path + ": curve file '" + out[k].file + "' does not exist");
      } else {
        out[k].points = timed_rows<2>(curve, "a non-empty list of [strain, stress] rows", "a row [strain, stress]",
                                      "strain");
      }
    }
    s.curves = out;
  }
  if (const Value* viscosity = m.get("viscosity")) {
    s.viscosity = numbers<3>(*viscosity, "a list of 3 non-negative numbers [weft, warp, shear]",
                             "a non-negative number", [](double e) { return e >= 0.0; });
  }
  if (const Value* stab = m.get("stabilization")) s.stabilization = choice(*stab, stabilizations);
  return s;
}

Selection JobParser::parse_selection(const Value& v) const {
  const Map m(*this, v, "select");
  const Value* region = m.get("region");
  const Value* box = m.get("box");
  const Value* all = m.get("all");
  const Value* point = m.get("point");
  const Value* points = m.get("points");
  const int given = (region != nullptr) + (box != nullptr) + (all != nullptr) + (point != nullptr) + (points != nullptr);
  if (given != 1) {
    fail(v.line, v.path + ": expected exactly one of 'region', 'box', 'all', 'point' or 'points', got " +
                     (given == 0 ? std::string("none") : std::to_string(given)));
  }
  Selection s;
  s.line = v.line;
  if (point || points) {
    s.kind = Selection::Kind::points;
    if (point) s.points.push_back(numbers<3>(*point, "a point [x, y, z]", "a number"));
    const std::string what = "a non-empty list of points [[x, y, z], ...]";
    if (points && (!points->node.IsSequence() || points->node.size() == 0)) expected(*points, what);
    if (points)
      for (const Value& p : list(*points, what)) s.points.push_back(numbers<3>(p, "a point [x, y, z]", "a number"));
  } else if (region) {
    s.kind = Selection::Kind::region;
    s.region = int_value(*region, "a region tag (an integer >= 0)", [](long long r) { return r >= 0; });
  } else if (box) {
    s.kind = Selection::Kind::box;
    const std::string what = "two corners [[x0, y0, z0], [x1, y1, z1]]";
    if (!box->node.IsSequence() || box->node.size() != 2) expected(*box, what);
    const auto corners = list(*box, what);
    s.lo = numbers<3>(corners[0], "a list of 3 numbers", "a number");
    s.hi = numbers<3>(corners[1], "a list of 3 numbers", "a number");
    for (int d = 0; d < 3; ++d) {
      if (s.lo[d] > s.hi[d]) {
        std::ostringstream msg;
        msg << box->path << ": expected the first corner to be below the second in every component, got "
            << "[" << s.lo[0] << ", " << s.lo[1] << ", " << s.lo[2] << "] and [" << s.hi[0] << ", " << s.hi[1] << ", "
            << s.hi[2] << "]";
        fail(box->line, msg.str());
      }
    }
  } else {
    s.kind = Selection::Kind::all;
    if (!boolean(*all)) expected(*all, "true (to select every vertex)");
  }
  return s;
}

std::array<bool, 3> JobParser::components(const Value& v) const {
  static const char* const axes[3] = {"x", "y", "z"};
  std::array<bool, 3> out{false, false, false};
  for (const auto& item : list(v, "a list of components from x, y, z")) {
    const std::string c = item.node.IsScalar() ? item.node.Scalar() : std::string();
    const auto at = std::find(std::begin(axes), std::end(axes), c) - std::begin(axes);
    if (at == 3) expected(item, "one of: x, y, z");
    if (out[static_cast<std::size_t>(at)]) fail(item.line, item.path + ": component '" + c + "' is listed twice");
    out[static_cast<std::size_t>(at)] = true;
  }
  return out;
}

BoundarySpec JobParser::parse_boundary(const Value& v) const {
  const Map m(*this, v, "boundary[]");
  BoundarySpec spec;
  spec.select = parse_selection(m.require("select"));
  static const char* const axes[3] = {"x", "y", "z"};
  const Value* fix = m.get("fix");
  const Value* displace = m.get("displace");
  if (fix) spec.fix = components(*fix);
  if (displace) {
    const std::string what = "a list of 3 displacements [dx, dy, dz] (a number, or ~ for a free component)";
    if (!displace->node.IsSequence() || displace->node.size() != 3) expected(*displace, what);
    const auto items = list(*displace, what);
    for (std::size_t d = 0; d < 3; ++d) {
      if (items[d].node.IsNull()) continue;
      spec.displace[d] = number(items[d], "a number or ~ (free)");
      if (spec.fix[d]) {
        fail(items[d].line, v.path + ": component '" + axes[d] +
                                "' is both fixed and displaced (give it in 'fix' or in 'displace', not both)");
      }
    }
  }
  if (const Value* rotate = m.get("rotate")) {
    const Map r(*this, *rotate, "boundary[].rotate");
    RotationSpec rot;
    rot.axis = unit_vector(r.require("axis"), "a list of 3 numbers (the rotation axis)", "axis");
    rot.center = numbers<3>(r.require("center"), "a list of 3 numbers (a point on the axis)", "a number");
    rot.angle_degrees = number(r.require("angle"), "an angle in degrees");
    if (const Value* which = r.get("components")) rot.components = components(*which);
    for (std::size_t d = 0; d < 3; ++d)
      if (rot.components[d] && (spec.fix[d] || spec.displace[d]))
        fail(rotate->line,
             v.path + ": component '" + axes[d] + "' is prescribed twice (by 'rotate' and by 'fix' or 'displace')");
    spec.rotate = rot;
  }
  const bool constrains = std::any_of(spec.fix.begin(), spec.fix.end(), [](bool f) { return f; }) ||
                          std::any_of(spec.displace.begin(), spec.displace.end(),
                                      [](const auto& d) { return d.has_value(); }) ||
                          (spec.rotate && std::any_of(spec.rotate->components.begin(), spec.rotate->components.end(),
                                                      [](bool c) { return c; }));
  if (!constrains) {
    fail(v.line, v.path + ": expected 'fix', 'displace' or 'rotate' constraining at least one of x, y, z");
  }
  if (const Value* schedule = m.get("schedule")) {
    const bool moves = std::any_of(spec.displace.begin(), spec.displace.end(),
                                   [](const auto& d) { return d.has_value(); }) ||
                       (spec.rotate && std::any_of(spec.rotate->components.begin(), spec.rotate->components.end(),
                                                   [](bool c) { return c; }));
    if (!moves) {
      fail(schedule->line, schedule->path +
                               ": schedule has no effect on fixed components (it scales 'displace' and "
                               "'rotate', and this entry has neither)");
    }
    spec.schedule = parse_schedule(*schedule);
  }
  return spec;
}

void JobParser::parse_loads(const Value& v, Job& job) const {
  const Map m(*this, v, "loads");
  if (const Value* gravity = m.get("gravity"))
    job.loads.gravity = numbers<3>(*gravity, "a list of 3 numbers", "a number");
  if (const Value* tractions = m.get("tractions")) {
    for (const auto& item : list(*tractions, "a list of tractions")) {
      const Map t(*this, item, "loads.tractions[]");
      TractionSpec spec;
      spec.select = parse_selection(t.require("select"));
      spec.traction = numbers<3>(t.require("traction"), "a list of 3 numbers", "a number");
      if (const Value* schedule = t.get("schedule")) spec.schedule = parse_schedule(*schedule);
      job.loads.tractions.push_back(spec);
    }
  }
}

template <std::size_t N>
std::vector<std::array<double, N>> JobParser::timed_rows(const Value& v, const std::string& list_what,
                                                         const std::string& row_what, const char* key) const {
  const auto rows = list(v, list_what);
  if (rows.empty()) expected(v, list_what);
  std::vector<std::array<double, N>> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto row = numbers<N>(rows[i], row_what, "a number");
    if (i > 0 && !(row[0] > out.back()[0])) {
      std::ostringstream msg;
      msg << rows[i].path << ": " << key << " " << row[0] << " is not after the " << key << " of row " << i - 1 << " ("
          << out.back()[0] << "); " << key << "s must be strictly increasing";
      fail(rows[i].line, msg.str());
    }
    out.push_back(row);
  }
  return out;
}

Schedule JobParser::parse_schedule(const Value& v) const {
  const Map m(*this, v, "schedule");
  const Value* ramp = m.get("ramp");
  const Value* table = m.get("table");
  if ((ramp == nullptr) == (table == nullptr)) {
    fail(v.line, v.path + ": expected exactly one of 'ramp' or 'table', got " + (ramp ? "both" : "neither"));
  }
  Schedule schedule;
  schedule.line = v.line;
  if (ramp) {
    const auto t = numbers<2>(*ramp, "a list of 2 times [t0, t1]", "a number");
    if (!(t[1] > t[0])) {
      std::ostringstream msg;
      msg << ramp->path << ": expected a ramp [t0, t1] with t1 > t0, got [" << t[0] << ", " << t[1] << "]";
      fail(ramp->line, msg.str());
    }
    schedule.points = {{t[0], 0.0}, {t[1], 1.0}};
  } else {
    schedule.points = timed_rows<2>(*table, "a non-empty list of rows [t, s]", "a row [t, s] of 2 numbers");
  }
  return schedule;
}

AttachmentSpec JobParser::parse_attachment(const Value& v) const {
  const Map m(*this, v, "attachments[]");
  AttachmentSpec spec;
  spec.line = v.line;
  spec.select = parse_selection(m.require("select"));
  spec.stiffness = number(m.require("stiffness"), "a positive number", [](double k) { return k > 0.0; });
  if (const Value* damping = m.get("damping")) {
    spec.damping = number(*damping, "a non-negative number", [](double c) { return c >= 0.0; });
  }
  const Value* path = m.get("path");
  const Value* velocity = m.get("velocity");
  if (path && velocity) {
    const Value& second = velocity->line >= path->line ? *velocity : *path;
    const Value& first = velocity->line >= path->line ? *path : *velocity;
    fail(second.line, second.path + ": not allowed together with '" + first.path +
                          "' (the anchor follows either a path or a constant velocity)");
  }
  if (path)
    spec.path = timed_rows<4>(*path, "a non-empty list of rows [t, dx, dy, dz]", "a row [t, dx, dy, dz] of 4 numbers");
  if (velocity) spec.velocity = numbers<3>(*velocity, "a list of 3 numbers [vx, vy, vz]", "a number");
  return spec;
}

/// The dynamic keys, given directly under `analysis` or (older form) inside `analysis.dynamic`.
/// (job_keys.cpp's section "analysis.dynamic").

class JobParser::DynamicKeys {
 public:
  /// `flat`: the analysis mapping; `nested`: analysis.dynamic, if given.
  DynamicKeys(const JobParser& parser, const Map& flat, const Value* nested) : parser_(parser), flat_(flat) {
    if (nested) nested_.emplace(parser, *nested, "analysis.dynamic");
  }
  [[nodiscard]] const Value* get(const char* key) const {
    const Value* flat = flat_.get(key);
    const Value* inner = nested_ ? nested_->get(key) : nullptr;
    if (flat && inner) {
      const Value& second = inner->line >= flat->line ? *inner : *flat;
      parser_.fail(second.line, second.path + ": given twice, as '" + flat->path + "' and as '" + inner->path +
                                    "' (give it in one place)");
    }
    return flat ? flat : inner;
  }
  [[nodiscard]] const Value& require(const char* key) const {
    if (const Value* given = get(key)) return *given;
    if (nested_) return nested_->require(key);  // names analysis.dynamic.<key>
    return flat_.require(key);
  }

 private:
  const JobParser& parser_;
  const Map& flat_;
  std::optional<Map> nested_;
};

void JobParser::parse_analysis(const Value& v, Job& job) const {
  const Map m(*this, v, "analysis");
  const Value* type = m.get("type");
  if (type) job.analysis_type = choice(*type, analysis_types);
  if (const Value* steps = m.get("steps")) {
    job.steps = int_value(*steps, "an integer >= 1", [](long long s) { return s >= 1; });
  }
  const Value* nested_value = m.get("dynamic");
  if (job.analysis_type != AnalysisType::dynamics) {
    refuse_dynamic_keys(m, nested_value, type != nullptr);
    return;
  }

  const DynamicKeys keys(*this, m, nested_value);
  DynamicSpec d;
  parse_time_span(keys, d);
  if (const Value* integrator = keys.get("integrator")) d.integrator = choice(*integrator, integrators);
  if (const Value* damping = keys.get("damping")) {
    auto non_negative = [](double x) { return x >= 0.0; };
    const Map r(*this, *damping, "analysis.damping");
    if (const Value* alpha = r.get("mass")) d.damping_mass = number(*alpha, "a non-negative number", non_negative);
    if (const Value* beta = r.get("stiffness"))
      d.damping_stiffness = number(*beta, "a non-negative number", non_negative);
  }
  if (const Value* mass = keys.get("mass")) d.mass = choice(*mass, masses);
  if (const Value* cuts = keys.get("max_step_cuts")) {
    d.max_step_cuts = int_value(*cuts, "an integer >= 0", [](long long c) { return c >= 0; });
  }
  if (const Value* velocity = keys.get("initial_velocity")) {
    d.initial_velocity = numbers<3>(*velocity, "a list of 3 numbers [vx, vy, vz]", "a number");
  }
  if (const Value* state = keys.get("initial_state")) parse_initial_state(*state, d);
  const Value* pbd = keys.get("position_based");
  if (pbd && d.integrator != Integrator::position_based) {
    fail(pbd->line, pbd->path + ": only for integrator position-based (analysis.integrator is '" +
                        std::string(to_string(d.integrator)) + "')");
  }
  if (pbd) parse_position_based(*pbd, d.position_based);
  if (d.integrator == Integrator::position_based) {
    // The integrator has no Newton: keys that only steer Newton's integrators are refused, not ignored.
    for (const char* key : {"damping", "mass", "max_step_cuts"}) {
      if (const Value* given = keys.get(key)) {
        fail(given->line, given->path +
                              ": not used by integrator position-based (use analysis.position_based."
                              "velocity_damping for damping; the mass is lumped)");
      }
    }
  }
  job.dynamic = d;
}

void JobParser::refuse_dynamic_keys(const Map& m, const Value* nested, bool type_given) const {
  // Report the first dynamic-only key in the file.
  const Value* first = nested;
  for (const JobKey& key : job_section("analysis.dynamic").keys) {
    if (const Value* given = m.get(std::string(key.name)); given && (!first || given->line < first->line)) first = given;
  }
  if (first) {
    fail(first->line,
         first->path + ": only for analysis type dynamic (" +
             (type_given ? "analysis.type is 'static'" : std::string("analysis.type is not given, so static")) + ")");
  }
}

void JobParser::parse_time_span(const DynamicKeys& keys, DynamicSpec& d) const {
  auto positive = [](double x) { return x > 0.0; };
  const Value& dt = keys.require("dt");
  const Value& end_time = keys.require("end_time");
  d.dt = number(dt, "a positive number", positive);
  d.end_time = number(end_time, "a positive number", positive);
  const double ratio = d.end_time / d.dt;
  if (ratio < 1.0 - 1e-9) {
    std::ostringstream msg;
    msg << end_time.path << ": expected a number >= dt (" << d.dt << "), got '" << end_time.node.Scalar() << "'";
    fail(end_time.line, msg.str());
  }
  const double nearest = std::round(ratio);
  if (nearest > static_cast<double>(std::numeric_limits<int>::max())) {
    std::ostringstream msg;
    msg << end_time.path << ": end_time / dt = " << ratio << " steps is more than supported (limit "
        << std::numeric_limits<int>::max() << ")";
    fail(end_time.line, msg.str());
  }
  if (std::abs(ratio - nearest) > 1e-9 * ratio) {
    std::ostringstream msg;
    msg.precision(12);
    msg << end_time.path << ": end_time / dt = " << ratio
        << " is not a whole number of steps (nearest: " << static_cast<long long>(nearest)
        << (nearest == 1.0 ? " step" : " steps") << ", end_time = " << nearest * d.dt << ")";
    fail(end_time.line, msg.str());
  }
}

void JobParser::parse_initial_state(const Value& state, DynamicSpec& d) const {
  if (d.integrator != Integrator::position_based) {
    d.initial_state = choice(state, initial_states);
  } else if (!state.node.IsScalar() || state.node.Scalar() != "rest") {
    // Position-based: rest, or a collapsed / inverted start (Bender et al. Fig. 6).
    if (!state.node.IsMap() || state.node.size() != 1)
      expected(state, "'rest' or a mapping with one key, flatten or mirror (integrator position-based)");
    const Map shape(*this, state, "analysis.initial_state");
    const Value* flatten = shape.get("flatten");
    const Value& axis = flatten ? *flatten : *shape.get("mirror");
    d.position_based.initial_shape = flatten ? PbdInitialShape::flatten : PbdInitialShape::mirror;
    d.position_based.initial_axis = choice(axis, axes);
  }
}

void JobParser::parse_position_based(const Value& v, PositionBasedSpec& s) const {
  const Map p(*this, v, "analysis.position_based");
  if (const Value* n = p.get("iterations"))
    s.iterations = int_value(*n, "an integer in [1, 10000]", [](long long i) { return i >= 1 && i <= 10000; });
  if (const Value* sweep = p.get("sweep")) s.sweep = choice(*sweep, pbd_sweeps);
  if (const Value* xpbd = p.get("xpbd")) s.xpbd = boolean(*xpbd);
  if (const Value* damping = p.get("velocity_damping"))
    s.velocity_damping = number(*damping, "a number in [0, 1)", [](double x) { return x >= 0.0 && x < 1.0; });
  if (const Value* inversion = p.get("inversion")) s.inversion = choice(*inversion, pbd_inversions);
  if (const Value* acceleration = p.get("acceleration")) s.acceleration = choice(*acceleration, pbd_accelerations);
  parse_acceleration(p, s);
}

void JobParser::parse_acceleration(const Map& p, PositionBasedSpec& s) const {
  const Value* rho = p.get("spectral_radius");
  if (s.acceleration == PbdAcceleration::none) {
    if (rho)
      fail(rho->line, rho->path + ": only with acceleration: chebyshev (" + p.child_path("acceleration") + " is none)");
    return;
  }
  const Value* acceleration = p.get("acceleration");
  if (s.sweep != PbdSweep::colored || !s.xpbd)
    fail(acceleration->line, acceleration->path +
                                 ": chebyshev accelerates the coloured XPBD sweep (needs sweep: colored and xpbd: "
                                 "true, got sweep: " +
                                 std::string(to_string(s.sweep)) + ", xpbd: " + (s.xpbd ? "true" : "false") + ")");
  if (!rho)
    fail(p.self().line, "missing required key '" + p.child_path("spectral_radius") +
                            "' (acceleration: chebyshev: the sweep's estimated spectral radius, e.g. 0.85)");
  s.spectral_radius = number(*rho, "a number in (0, 1)", [](double x) { return x > 0.0 && x < 1.0; });
}

void JobParser::parse_solver(const Value& v, Job& job) const {
  const Map m(*this, v, "solver");
  SolverSpec& s = job.solver;
  if (const Value* newton = m.get("newton")) {
    const Map n(*this, *newton, "solver.newton");
    auto non_negative = [](double x) { return x >= 0.0; };
    if (const Value* rtol = n.get("rtol")) job.newton_rtol = number(*rtol, "a non-negative number", non_negative);
    if (const Value* atol = n.get("atol")) job.newton_atol = number(*atol, "a non-negative number", non_negative);
    if (const Value* max_it = n.get("max_it")) {
      job.newton_max_it = int_value(*max_it, "an integer >= 1", [](long long i) { return i >= 1; });
    }
    if (const Value* p = n.get("predictor")) s.predictor = choice(*p, predictors);
    if (const Value* l = n.get("line_search")) s.line_search = choice(*l, line_searches);
    if (const Value* eta = n.get("eta_max"))
      s.eta_max = number(*eta, "a number in (0, 1)", [](double x) { return x > 0.0 && x < 1.0; });
    if (const Value* f = n.get("forcing")) s.forcing = choice(*f, forcings);
  }
  if (const Value* linear = m.get("linear")) {
    const Map l(*this, *linear, "solver.linear");
    if (const Value* p = l.get("preconditioner")) s.preconditioner = choice(*p, preconditioners);
    if (const Value* a = l.get("aggregation")) s.aggregation = choice(*a, aggregations);
    if (const Value* rtol = l.get("rtol"))
      s.linear_rtol = number(*rtol, "a number in (0, 1)", [](double x) { return x > 0.0 && x < 1.0; });
    if (const Value* reuse = l.get("reuse")) s.reuse_preconditioner = boolean(*reuse);
    if (const Value* block = l.get("block_operator")) s.block_operator = boolean(*block);
    if (const Value* corotational = l.get("corotational")) s.corotational = boolean(*corotational);
    if (const Value* ratio = l.get("rebuild_ratio"))
      s.rebuild_ratio = number(*ratio, "a positive number", [](double x) { return x > 0.0; });
    if (const Value* eig = l.get("rebuild_eigenvalue"))
      s.rebuild_eigenvalue = number(*eig, "0 (off) or a number > 1", [](double x) { return x == 0.0 || x > 1.0; });
    if (const Value* dofs = l.get("direct_max_dofs"))
      s.direct_max_dofs = integer(*dofs, "an integer >= 0", [](long long d) { return d >= 0; });
  }
  if (const Value* petsc = m.get("petsc")) {
    job.petsc_options = petsc->node.IsNull() ? std::string() : string(*petsc, "a string of PETSc options");
  }
}

void JobParser::parse_discretization(const Value& v, Job& job) const {
  const Map m(*this, v, "discretization");
  DiscretizationSpec& d = job.discretization;
  d.line = v.line;
  if (const Value* type = m.get("type")) d.type = choice(*type, discretizations);
  const Value* frames = m.get("frames");
  const Value* positions = m.get("positions");
  const Value* weights = m.get("weights");
  const Value* grid = m.get("sample_grid");
  const Value* frame_type = m.get("frame_type");
  const Value* placement = m.get("placement");
  const Value* frame_mass = m.get("frame_mass");
  if (d.type == DiscretizationType::nodes) {
    for (const Value* given : {frames, positions, weights, grid, frame_type, placement, frame_mass})
      if (given) fail(given->line, given->path + ": only for type frames (type is nodes)");
    return;
  }
  if ((frames == nullptr) == (positions == nullptr)) {
    fail(v.line, v.path + ": expected exactly one of 'frames' (a count) or 'positions' (a list of points), got " +
                     (frames ? "both" : "neither"));
  }
  if (frames) d.frame_count = int_value(*frames, "a frame count (an integer >= 1)", [](long long n) { return n >= 1; });
  if (positions) {
    const std::string what = "a non-empty list of frame positions [[x, y, z], ...]";
    const auto items = list(*positions, what);
    if (items.empty()) expected(*positions, what);
    for (const auto& item : items) d.positions.push_back(numbers<3>(item, "a list of 3 numbers [x, y, z]", "a number"));
  }
  if (weights) d.weights = choice(*weights, frame_weights);
  if (frame_type) d.frame_type = choice(*frame_type, frame_types);
  if (frame_mass) d.frame_mass = choice(*frame_mass, frame_masses);
  if (placement) {
    if (positions)
      fail(placement->line, placement->path +
                                ": only with 'frames' (a count); the frames of 'positions' are placed "
                                "where given");
    d.placement = choice(*placement, frame_placements);
  }
  if (grid) {
    const std::string what = "a list of 3 integers >= 1 [nx, ny, nz] (sample cells along x, y, z)";
    if (!grid->node.IsSequence() || grid->node.size() != 3) expected(*grid, what);
    const auto items = list(*grid, what);
    std::array<int, 3> n{};
    for (std::size_t k = 0; k < 3; ++k)
      n[k] = int_value(items[k], "an integer in [1, 100000]", [](long long c) { return c >= 1 && c <= 100000; });
    d.sample_grid = n;
  }
}

std::optional<Value> JobParser::parse_output(const Value& v, Job& job) const {
  const Map m(*this, v, "output");
  if (const Value* directory = m.get("directory")) {
    const std::string d = string(*directory, "a directory name");
    if (d.empty()) expected(*directory, "a directory name");
    job.output_directory = resolve(d);
  }
  if (const Value* every = m.get("every")) {
    job.output_every = int_value(*every, "an integer >= 1", [](long long e) { return e >= 1; });
  }
  if (const Value* format = m.get("format")) job.output.format = choice(*format, output_formats);
  if (const Value* compression = m.get("compression")) {
    job.output.gzip = choice(*compression, compressions);
    if (job.output.gzip && job.output.format != OutputFormat::xdmf)
      fail(compression->line, compression->path + ": gzip needs format: xdmf (the .vtu output is written uncompressed)");
  }
  if (const Value* precision = m.get("precision")) {
    job.output.single_precision = choice(*precision, precisions);
    if (job.output.single_precision && job.output.format != OutputFormat::xdmf)
      fail(precision->line, precision->path + ": single needs format: xdmf (the .vtu output is written in double)");
  }
  if (const Value* fields = m.get("fields")) {
    const std::vector<std::string>& known = output_field_names();
    const std::vector<std::string_view> names(known.begin(), known.end());
    const auto items = list(*fields, "a list of field names");
    if (items.empty()) expected(*fields, "a non-empty list of field names");
    for (const Value& item : items) {
      const std::string name(names[one_of(item, names)]);
      if (std::find(job.output.fields.begin(), job.output.fields.end(), name) != job.output.fields.end())
        fail(item.line, item.path + ": '" + name + "' is listed twice");
      job.output.fields.push_back(name);
    }
  }
  if (const Value* checkpoint = m.get("checkpoint_every")) {
    job.checkpoint_every = int_value(*checkpoint, "an integer >= 0", [](long long c) { return c >= 0; });
    return *checkpoint;
  }
  return std::nullopt;
}

}  // namespace job_parsing

using namespace job_parsing;  // (this file's: the choice tables and the parser)

const std::vector<std::string>& output_field_names() {
  static const std::vector<std::string> names = {"displacement", "velocity",       "force",       "green_strain",
                                                 "stress",       "von_mises",      "volume_ratio", "rank",
                                                 "region",       "plastic_strain", "contact_gap",  "contact_force"};
  return names;
}

double Schedule::operator()(double t) const {
  if (points.empty()) return 1.0;  // no points: a neutral factor (the reader always gives at least one)
  if (t <= points.front()[0]) return points.front()[1];
  if (t >= points.back()[0]) return points.back()[1];
  // First point after t; t lies in [points[k-1].t, points[k].t).
  const auto next = std::upper_bound(points.begin(), points.end(), t,
                                     [](double time, const std::array<double, 2>& p) { return time < p[0]; });
  const auto& a = *(next - 1);
  const auto& b = *next;
  return a[1] + (b[1] - a[1]) * (t - a[0]) / (b[0] - a[0]);
}

namespace {
/// The path segment [k, k+1] with path[k].t <= t < path[k+1].t, or path.size() if t is outside [first, last).
std::size_t path_segment(const std::vector<std::array<double, 4>>& path, double t) {
  if (path.size() < 2 || t < path.front()[0] || t >= path.back()[0]) return path.size();
  const auto next = std::upper_bound(path.begin(), path.end(), t,
                                     [](double time, const std::array<double, 4>& p) { return time < p[0]; });
  return static_cast<std::size_t>(next - path.begin()) - 1;
}
}  // namespace

std::array<double, 3> AttachmentSpec::displacement(double t) const {
  if (velocity) return {(*velocity)[0] * t, (*velocity)[1] * t, (*velocity)[2] * t};
  if (path.empty()) return {0.0, 0.0, 0.0};
  const auto& first = path.front();
  const auto& last = path.back();
  if (t <= first[0]) return {first[1], first[2], first[3]};
  if (t >= last[0]) return {last[1], last[2], last[3]};
  const std::size_t k = path_segment(path, t);
  const auto& a = path[k];
  const auto& b = path[k + 1];
  const double w = (t - a[0]) / (b[0] - a[0]);
  return {a[1] + w * (b[1] - a[1]), a[2] + w * (b[2] - a[2]), a[3] + w * (b[3] - a[3])};
}

std::array<double, 3> AttachmentSpec::rate(double t) const {
  if (velocity) return *velocity;
  const std::size_t k = path_segment(path, t);
  if (k >= path.size()) return {0.0, 0.0, 0.0};
  const auto& a = path[k];
  const auto& b = path[k + 1];
  const double h = b[0] - a[0];
  return {(b[1] - a[1]) / h, (b[2] - a[2]) / h, (b[3] - a[3]) / h};
}

std::string_view to_string(GeneratedShape shape) { return name_of(shapes, shape); }
std::string_view to_string(PartitionMethod method) {
  return method == PartitionMethod::automatic ? "automatic" : name_of(partition_methods, method);
}
std::string_view to_string(AnalysisType type) { return name_of(analysis_types, type); }
std::string_view to_string(Integrator integrator) { return name_of(integrators, integrator); }
std::string_view to_string(PbdSweep sweep) { return name_of(pbd_sweeps, sweep); }
std::string_view to_string(PbdAcceleration acceleration) { return name_of(pbd_accelerations, acceleration); }
std::string_view to_string(MassMatrix mass) { return name_of(masses, mass); }
std::string_view to_string(InitialState state) { return name_of(initial_states, state); }
std::string_view to_string(VolumetricPenalty volumetric) { return name_of(volumetrics, volumetric); }
std::string_view to_string(DiscretizationType type) { return name_of(discretizations, type); }
std::string_view to_string(FrameWeights weights) { return name_of(frame_weights, weights); }
std::string_view to_string(FrameType type) { return name_of(frame_types, type); }
std::string_view to_string(FrameMass mass) { return name_of(frame_masses, mass); }
std::string_view to_string(FramePlacementRule rule) { return name_of(frame_placements, rule); }

bool any_bending(const Job& job) {
  return std::any_of(job.materials.begin(), job.materials.end(),
                     [](const MaterialSpec& m) { return m.bending_stiffness > 0.0; });
}

Job read_job(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open job file: " + std::strerror(errno));
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": cannot read job file: it is a directory");
  std::ostringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::DeepRecursion& e) {  // its message is a bare "bad file"
    throw InputError(path + ":" + std::to_string(line_of(e.mark)) + ": YAML nesting deeper than " +
                     std::to_string(e.depth() - 1) +
                     " levels (unclosed '[' or '{', or runaway indentation?); a job file nests a few levels");
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(line_of(e.mark)) + ": YAML syntax error: " + e.msg);
  }
  JobParser parser(path);
  try {
    return parser.parse(root, path);
  } catch (const YAML::Exception& e) {  // defensive: yaml-cpp conversions we did not anticipate
    throw InputError(path + ":" + std::to_string(line_of(e.mark)) + ": " + e.msg);
  }
}

}  // namespace edgefem
