// SPDX-License-Identifier: BSD-3-Clause
/// \file job_contact.cpp
/// The job's `obstacles` and `contact` sections (io/job.hpp: ObstacleSpec, ContactSpec; docs/design.md "Contact"),
/// parsed with the job reader's helpers (io/job_parser.hpp): every problem names the file, the line and the key.
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>

#include "io/job_parser.hpp"

namespace edgefem {
namespace job_parsing {
namespace {

constexpr std::array<Choice<ObstacleShape>, 5> obstacle_shapes = {{{"plane", ObstacleShape::plane},
                                                                   {"box", ObstacleShape::box},
                                                                   {"sphere", ObstacleShape::sphere},
                                                                   {"cylinder", ObstacleShape::cylinder},
                                                                   {"mesh", ObstacleShape::mesh}}};
constexpr std::array<Choice<contact::ContactMethod>, 2> contact_methods = {
    {{"barrier", contact::ContactMethod::barrier}, {"penalty", contact::ContactMethod::penalty}}};

}  // namespace

double JobParser::positive_or_auto(const Value& v) const {
  if (const auto text = plain_scalar(v.node); text && *text == "auto") return 0.0;
  return number(v, "a positive number or auto", [](double x) { return x > 0.0; });
}

std::array<double, 3> JobParser::exact_unit_vector(const Value& v, const char* noun) const {
  const std::array<double, 3> x = numbers<3>(v, std::string("a list of 3 numbers (the unit ") + noun + ")", "a number");
  const double length = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  if (!(length > 0.0)) fail(v.line, v.path + ": expected a unit " + noun + ", got [0, 0, 0]");
  if (std::abs(length - 1.0) > 1e-6) {
    char text[256];
    std::snprintf(text, sizeof text, ": expected a unit %s (length 1), got one of length %.9g; the unit one is [%.9g, %.9g, %.9g]",
                  noun, length, x[0] / length, x[1] / length, x[2] / length);
    fail(v.line, v.path + text);
  }
  return x;
}

std::string JobParser::obstacle_file(const Value& v) const {
  const std::string name = string(v, "a file name (a Gmsh .msh or an .stl)");
  const std::string resolved = resolve(name);
  std::error_code ec;
  const auto status = fs::status(resolved, ec);
  if (!fs::exists(status)) fail(v.line, v.path + ": file '" + name + "' not found (resolved to " + resolved + ")");
  if (fs::is_directory(status)) fail(v.line, v.path + ": '" + name + "' is a directory, expected a .msh or .stl file");
  std::string extension = fs::path(resolved).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension != ".msh" && extension != ".stl")
    fail(v.line, v.path + ": expected a Gmsh .msh or an .stl file, got '" + name + "'");
  return resolved;
}

void JobParser::check_shape_keys(const Map& m, ObstacleShape shape) const {
  static constexpr std::array<std::string_view, 8> shape_keys = {"point", "normal", "box",    "center",
                                                                 "radius", "axis",  "length", "file"};
  std::vector<std::string_view> own;
  switch (shape) {
    case ObstacleShape::plane: own = {"point", "normal"}; break;
    case ObstacleShape::box: own = {"box"}; break;
    case ObstacleShape::sphere: own = {"center", "radius"}; break;
    case ObstacleShape::cylinder: own = {"center", "axis", "radius", "length"}; break;
    case ObstacleShape::mesh: own = {"file"}; break;
  }
  for (const std::string_view key : shape_keys) {
    const Value* given = m.get(std::string(key));
    if (given == nullptr || std::find(own.begin(), own.end(), key) != own.end()) continue;
    std::string listed;
    for (const std::string_view k : own) listed.append(listed.empty() ? "" : ", ").append(k);
    fail(given->line, given->path + ": not a key of shape " + std::string(name_of(obstacle_shapes, shape)) +
                          " (its own keys: " + listed + "; every shape: name, shape, friction, motion)");
  }
}

void JobParser::parse_obstacle_motion(const Value& v, ObstacleSpec& spec) const {
  const Map m(*this, v, "obstacles[].motion");
  ObstacleMotion motion;
  motion.translate = numbers<3>(m.require("translate"), "a list of 3 numbers [dx, dy, dz]", "a number");
  if (const Value* schedule = m.get("schedule")) motion.schedule = parse_schedule(*schedule);
  spec.motion = motion;
}

ObstacleSpec JobParser::parse_obstacle(const Value& v, std::size_t index) const {
  ObstacleSpec spec;
  spec.key = v.path;
  spec.line = v.line;
  spec.name = "obstacle" + std::to_string(index);
  // Every obstacle key is checked against the table (io/job_keys.cpp, "obstacles[]"); then the shape decides which of
  // the shape keys may be given.
  const Map m(*this, v, "obstacles[]");
  spec.shape = choice(m.require("shape"), obstacle_shapes);
  check_shape_keys(m, spec.shape);
  if (const Value* name = m.get("name")) {
    spec.name = string(*name, "a name (letters, digits, '_', '-')");
    const bool plain = !spec.name.empty() && std::all_of(spec.name.begin(), spec.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!plain) expected(*name, "a name of letters, digits, '_' and '-' (it names the obstacle in reactions.csv)");
  }
  if (const Value* friction = m.get("friction"))
    spec.friction = number(*friction, "a non-negative number (Coulomb's coefficient)", [](double f) { return f >= 0.0; });
  if (const Value* motion = m.get("motion")) parse_obstacle_motion(*motion, spec);
  auto positive = [](double x) { return x > 0.0; };
  switch (spec.shape) {
    case ObstacleShape::plane:
      spec.point = numbers<3>(m.require("point"), "a list of 3 numbers (a point of the plane)", "a number");
      spec.normal = exact_unit_vector(m.require("normal"), "normal");
      break;
    case ObstacleShape::box: {
      const Value& box = m.require("box");
      const std::string what = "two corners [[x0, y0, z0], [x1, y1, z1]]";
      if (!box.node.IsSequence() || box.node.size() != 2) expected(box, what);
      const auto corners = list(box, what);
      spec.lo = numbers<3>(corners[0], "a list of 3 numbers", "a number");
      spec.hi = numbers<3>(corners[1], "a list of 3 numbers", "a number");
      for (int d = 0; d < 3; ++d)
        if (!(spec.lo[d] < spec.hi[d]))
          fail(box.line, box.path + ": expected the first corner below the second in every component (a box of "
                                    "positive volume)");
      break;
    }
    case ObstacleShape::sphere:
      spec.center = numbers<3>(m.require("center"), "a list of 3 numbers (the centre)", "a number");
      spec.radius = number(m.require("radius"), "a positive number", positive);
      break;
    case ObstacleShape::cylinder:
      spec.center = numbers<3>(m.require("center"), "a list of 3 numbers (the middle of the axis)", "a number");
      spec.axis = exact_unit_vector(m.require("axis"), "axis");
      spec.radius = number(m.require("radius"), "a positive number", positive);
      spec.length = number(m.require("length"), "a positive number (from cap to cap)", positive);
      break;
    case ObstacleShape::mesh: spec.file = obstacle_file(m.require("file")); break;
  }
  return spec;
}

void JobParser::parse_obstacles(const Value& v, Job& job) const {
  std::set<std::string> names;
  const auto items = list(v, "a list of obstacles");
  for (std::size_t i = 0; i < items.size(); ++i) {
    ObstacleSpec spec = parse_obstacle(items[i], i);
    if (!names.insert(spec.name).second)
      fail(spec.line, spec.key + ": the name '" + spec.name + "' is used by an earlier obstacle (names must differ)");
    job.obstacles.push_back(std::move(spec));
  }
}

void JobParser::parse_contact(const Value& v, Job& job) const {
  const Map m(*this, v, "contact");
  ContactSpec& c = job.contact;
  c.line = v.line;
  if (const Value* method = m.get("method")) c.method = choice(*method, contact_methods);
  if (const Value* distance = m.get("distance")) c.distance = positive_or_auto(*distance);
  if (const Value* stiffness = m.get("stiffness")) c.stiffness = positive_or_auto(*stiffness);
  if (const Value* velocity = m.get("friction_velocity")) c.friction_velocity = positive_or_auto(*velocity);
  if (const Value* self = m.get("self")) c.self = boolean(*self);
  if (const Value* friction = m.get("friction")) {
    c.self_friction = number(*friction, "a non-negative number (Coulomb's coefficient between parts of the body)",
                             [](double f) { return f >= 0.0; });
  }
}

void JobParser::check_contact(const Job& job, const Value* obstacles, const Value* contact) const {
  if (contact && job.obstacles.empty() && !job.contact.self)
    fail(contact->line, contact->path + ": given, but the job has no obstacles (add an 'obstacles' list, or "
                                        "self: true for self-contact)");
  if (contact && job.contact.self_friction > 0.0 && !job.contact.self)
    fail(contact->line, contact->path + ".friction: friction between parts of the body needs self: true (an "
                                        "obstacle takes its own 'friction')");
  if (job.contact.self) check_self_contact(job, contact);
  if (job.obstacles.empty()) return;
  if (job.dynamic && job.dynamic->integrator == Integrator::linearized_euler)
    fail(obstacles->line, obstacles->path + ": not supported with integrator linearized-euler yet (contact needs a "
                                            "Newton solve or the position-based sweep: integrator backward-euler, "
                                            "newmark or position-based, or a static analysis)");
}

void JobParser::check_self_contact(const Job& job, const Value* contact) const {
  const std::string where = contact->path + ".self";
  if (job.contact.method != contact::ContactMethod::barrier)
    fail(contact->line, where + ": self-contact needs method barrier (its guarantee: no iterate intersects itself)");
  if (job.discretization.type == DiscretizationType::frames ||
      (job.dynamic && job.dynamic->integrator == Integrator::linearized_euler))
    fail(contact->line, where + ": supported with the Newton solvers (a static analysis or integrator "
                                "backward-euler or newmark) and integrator position-based, on the nodal "
                                "discretization");
}

}  // namespace job_parsing

std::string_view to_string(ObstacleShape shape) { return job_parsing::name_of(job_parsing::obstacle_shapes, shape); }

}  // namespace edgefem
