// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file job_parser.hpp
/// The job reader's parser, shared by the files that parse the job's sections (io/job.cpp, io/job_contact.cpp);
/// internal to io/ (the rest of the code sees io/job.hpp's read_job and the typed Job only). A Value is one YAML
/// value with its key path and line; JobParser's helpers turn values into numbers, lists, choices and checked
/// mappings, and every problem into an InputError "file:line: key: expected ..., got ...".
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "io/job.hpp"
#include "io/job_keys.hpp"

namespace edgefem::job_parsing {
namespace fs = std::filesystem;

/// One YAML value and where it came from.
struct Value {
  YAML::Node node;
  std::string path;  ///< full key path, e.g. "materials[0].young"
  int line = 1;      ///< 1-based line for messages
};

inline int line_of(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 1; }

inline std::string join(std::span<const JobKey> keys) {
  std::string out;
  for (const JobKey& k : keys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

/// How a value looks, for "got ..." in messages.
inline std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "an empty value";
  if (node.IsSequence()) return "a list of " + std::to_string(node.size()) + (node.size() == 1 ? " entry" : " entries");
  if (node.IsMap()) return "a mapping";
  std::string s = node.Scalar();
  if (s.size() > 60) s = s.substr(0, 60) + "...";
  return "'" + s + "'";
}

/// A job-file spelling and the value it stands for.
template <class E>
struct Choice {
  std::string_view name;
  E value;
};

/// The spelling of `value` among `choices`.
template <class E, std::size_t N>
std::string_view name_of(const std::array<Choice<E>, N>& choices, E value) {
  for (const auto& c : choices)
    if (c.value == value) return c.name;
  return "?";  // unreachable for a value of the enum
}

class JobParser {
 public:
  explicit JobParser(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(line) + ": " + what);
  }
  [[noreturn]] void expected(const Value& v, const std::string& what) const {
    fail(v.line, v.path + ": expected " + what + ", got " + describe(v.node));
  }

  // ---- scalars --------------------------------------------------------------------------------
  /// The scalar text of a plain (unquoted) scalar, or nothing.
  static std::optional<std::string> plain_scalar(const YAML::Node& node) {
    if (!node.IsScalar() || node.Tag() == "!") return std::nullopt;
    return node.Scalar();
  }
  double number(const Value& v, const std::string& what, const std::function<bool(double)>& ok = {}) const {
    const auto text = plain_scalar(v.node);
    double value = 0.0;
    bool parsed = false;
    if (text && !text->empty()) {
      const char* first = text->data() + ((*text)[0] == '+' ? 1 : 0);
      const char* last = text->data() + text->size();
      const auto [ptr, ec] = std::from_chars(first, last, value);
      parsed = ec == std::errc() && ptr == last && std::isfinite(value);
    }
    if (!parsed || (ok && !ok(value))) expected(v, what);
    return value;
  }
  long long integer(const Value& v, const std::string& what, const std::function<bool(long long)>& ok = {}) const {
    const auto text = plain_scalar(v.node);
    long long value = 0;
    bool parsed = false;
    if (text && !text->empty()) {
      const char* first = text->data() + ((*text)[0] == '+' ? 1 : 0);
      const char* last = text->data() + text->size();
      const auto [ptr, ec] = std::from_chars(first, last, value);
      parsed = ec == std::errc() && ptr == last;
    }
    if (!parsed || (ok && !ok(value))) expected(v, what);
    return value;
  }
  int int_value(const Value& v, const std::string& what, const std::function<bool(long long)>& ok = {}) const {
    const long long value = integer(v, what, ok);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) expected(v, what);
    return static_cast<int>(value);
  }
  bool boolean(const Value& v) const {
    if (const auto text = plain_scalar(v.node)) {
      std::string s = *text;
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (s == "true" || s == "yes" || s == "on") return true;
      if (s == "false" || s == "no" || s == "off") return false;
    }
    expected(v, "true or false");
  }
  std::string string(const Value& v, const std::string& what) const {
    if (!v.node.IsScalar()) expected(v, what);
    return v.node.Scalar();
  }
  /// The index of v's text in `names`. Anything else is an error naming the file, line, key, the bad value, the
  /// valid values (`listed`, or `names` joined) and the nearest valid spelling when one is close.
  std::size_t one_of(const Value& v, std::span<const std::string_view> names, std::string listed = {}) const {
    if (listed.empty())
      for (const std::string_view name : names) listed.append(listed.empty() ? "" : ", ").append(name);
    const std::string what = "one of: " + listed;
    const std::string s = string(v, what);
    for (std::size_t i = 0; i < names.size(); ++i)
      if (s == names[i]) return i;
    const std::string_view near = nearest_spelling(s, names);
    fail(v.line, v.path + ": expected " + what + ", got " + describe(v.node) +
                     (near.empty() ? "" : " (did you mean '" + std::string(near) + "'?)"));
  }
  /// One of the named choices (one_of over their names).
  template <class E, std::size_t N>
  E choice(const Value& v, const std::array<Choice<E>, N>& choices) const {
    std::array<std::string_view, N> names;
    for (std::size_t i = 0; i < N; ++i) names[i] = choices[i].name;
    return choices[one_of(v, names)].value;
  }
  /// A model of the registry (the message lists the registry's names).
  const ModelInfo* model(const Value& v) const {
    std::vector<std::string_view> names;
    for (const ModelInfo& m : models()) names.push_back(m.name);
    return &models()[one_of(v, names, model_list())];
  }

  // ---- collections ----------------------------------------------------------------------------
  std::vector<Value> list(const Value& v, const std::string& what) const {
    if (!v.node.IsSequence()) expected(v, what);
    std::vector<Value> items;
    for (std::size_t i = 0; i < v.node.size(); ++i) {
      const YAML::Node item = v.node[i];
      const int line = item.IsNull() ? v.line : line_of(item.Mark());
      items.push_back({item, v.path + "[" + std::to_string(i) + "]", line});
    }
    return items;
  }
  /// A list of exactly N numbers (`list_what`), each an `item_what` accepted by `ok`.
  template <std::size_t N>
  std::array<double, N> numbers(const Value& v, const std::string& list_what, const std::string& item_what,
                                const std::function<bool(double)>& ok = {}) const {
    if (!v.node.IsSequence() || v.node.size() != N) expected(v, list_what);
    std::array<double, N> out{};
    const auto items = list(v, list_what);
    for (std::size_t i = 0; i < N; ++i) out[i] = number(items[i], item_what, ok);
    return out;
  }
  /// A list of 3 numbers (`list_what`) scaled to length 1; [0, 0, 0] is an error ("expected a non-zero `noun`").
  std::array<double, 3> unit_vector(const Value& v, const std::string& list_what, const char* noun) const {
    std::array<double, 3> x = numbers<3>(v, list_what, "a number");
    const double length = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (!(length > 0.0)) fail(v.line, v.path + ": expected a non-zero " + noun + ", got [0, 0, 0]");
    for (double& c : x) c /= length;
    return x;
  }

  /// A mapping whose keys are checked against `allowed` (unknown and duplicate keys are errors).
  class Map {
   public:
    /// `section`: the table's (io/job_keys.hpp) name of this mapping; its keys are the allowed ones.
    Map(const JobParser& parser, Value self, std::string_view section) : parser_(parser), self_(std::move(self)) {
      const std::span<const JobKey> allowed = job_section(section).keys;
      const std::string expected_keys = join(allowed);
      if (!self_.node.IsMap()) parser_.expected(self_, "a mapping with keys " + expected_keys);
      for (auto it = self_.node.begin(); it != self_.node.end(); ++it) {
        const int key_line = line_of(it->first.Mark());
        if (!it->first.IsScalar()) {
          parser_.fail(key_line,
                       where() + "expected a plain key (one of: " + expected_keys + "), got " + describe(it->first));
        }
        const std::string key = it->first.Scalar();
        const std::string path = child_path(key);
        if (std::none_of(allowed.begin(), allowed.end(), [&](const JobKey& a) { return key == a.name; })) {
          std::vector<std::string_view> keys;
          for (const JobKey& a : allowed) keys.push_back(a.name);
          const std::string_view near = nearest_spelling(key, keys);
          parser_.fail(key_line, "unknown key '" + path + "' (expected one of: " + expected_keys + ")" +
                                     (near.empty() ? "" : "; did you mean '" + std::string(near) + "'?"));
        }
        if (std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; })) {
          parser_.fail(key_line, "duplicate key '" + path + "'");
        }
        const YAML::Node value = it->second;
        // A null value's mark points past the key's line; use the key's line for it.
        const int line = value.IsNull() ? key_line : line_of(value.Mark());
        entries_.emplace_back(key, Value{value, path, line});
      }
    }
    [[nodiscard]] const Value* get(const std::string& key) const {
      for (const auto& e : entries_) {
        if (e.first == key) return &e.second;
      }
      return nullptr;
    }
    [[nodiscard]] const Value& require(const std::string& key) const {
      if (const Value* v = get(key)) return *v;
      parser_.fail(self_.line, "missing required key '" + child_path(key) + "'");
    }
    [[nodiscard]] const Value& self() const { return self_; }
    [[nodiscard]] std::string child_path(const std::string& key) const {
      return self_.path.empty() ? key : self_.path + "." + key;
    }

   private:
    [[nodiscard]] std::string where() const { return self_.path.empty() ? "" : self_.path + ": "; }
    const JobParser& parser_;
    Value self_;
    std::vector<std::pair<std::string, Value>> entries_;
  };

  // ---- job sections ---------------------------------------------------------------------------
  Job parse(const YAML::Node& root, const std::string& path);

 private:
  void parse_mesh(const Value& v, Job& job) const;
  void parse_partition(const Value& v, Job& job) const;
  /// The non-empty list of materials, at most one per region (or one for every cell).
  void parse_materials(const Value& materials, Job& job) const;
  MaterialSpec parse_material(const Value& v) const;
  /// The elastic constants of material `m`: an anisotropy block, the Volino law's own keys, or young and poisson.
  void parse_elasticity(const Map& m, const ModelInfo& info, MaterialSpec& spec) const;
  TransverseIsotropySpec parse_anisotropy(const Value& v) const;
  PlasticLaw parse_plasticity(const Value& v) const;
  VolinoSpec parse_volino(const Map& m) const;
  Selection parse_selection(const Value& v) const;
  BoundarySpec parse_boundary(const Value& v) const;
  Schedule parse_schedule(const Value& v) const;
  AttachmentSpec parse_attachment(const Value& v) const;
  /// Rows of N numbers whose first entry (`key`: a time, a strain) is strictly increasing; at least one row.
  template <std::size_t N>
  std::vector<std::array<double, N>> timed_rows(const Value& v, const std::string& list_what,
                                                const std::string& row_what, const char* key = "time") const;
  /// A list of components from x, y, z (each at most once).
  std::array<bool, 3> components(const Value& v) const;
  void parse_loads(const Value& v, Job& job) const;
  void parse_analysis(const Value& v, Job& job) const;
  /// A dynamic key of `analysis`, given directly under it or inside `analysis.dynamic` (giving it in both is an error).
  class DynamicKeys;
  /// A static analysis: the first dynamic-only key in the file (`nested`: analysis.dynamic) is an error.
  void refuse_dynamic_keys(const Map& m, const Value* nested, bool type_given) const;
  /// dt and end_time: positive, and end_time a whole number of steps.
  void parse_time_span(const DynamicKeys& keys, DynamicSpec& d) const;
  void parse_initial_state(const Value& state, DynamicSpec& d) const;
  void parse_position_based(const Value& v, PositionBasedSpec& s) const;
  /// position_based.acceleration and spectral_radius (p: the position_based map).
  void parse_acceleration(const Map& p, PositionBasedSpec& s) const;
  void parse_discretization(const Value& v, Job& job) const;
  /// `obstacles` (io/job_contact.cpp): the list, each entry's shape keys, unique names.
  void parse_obstacles(const Value& v, Job& job) const;
  ObstacleSpec parse_obstacle(const Value& v, std::size_t index) const;
  void parse_obstacle_motion(const Value& v, ObstacleSpec& spec) const;
  /// The shape keys given in obstacle `m` are the shape's own (a sphere takes no normal).
  void check_shape_keys(const Map& m, ObstacleShape shape) const;
  /// `contact`: method, distance, stiffness, friction_velocity (numbers > 0 or auto).
  void parse_contact(const Value& v, Job& job) const;
  /// A number > 0, or `auto` (0).
  double positive_or_auto(const Value& v) const;
  /// A list of 3 numbers of length 1 (to 1e-6); a zero or non-unit vector is an error that shows the unit one.
  std::array<double, 3> exact_unit_vector(const Value& v, const char* noun) const;
  /// A mesh obstacle's file: it exists, is not a directory and is a .msh or an .stl.
  std::string obstacle_file(const Value& v) const;
  void parse_solver(const Value& v, Job& job) const;
  /// Returns output.checkpoint_every if given (checked against the analysis type once every section is read).
  std::optional<Value> parse_output(const Value& v, Job& job) const;

  // ---- cross-section checks (`materials`: the key path of the materials list) ----------------
  /// Plastic materials need integrator position-based without the inversion handling.
  void check_plasticity(const Job& job, const std::string& materials) const;
  /// Integrator position-based: every model has an element energy, no attachment has a damper.
  void check_position_based(const Job& job, const std::string& materials) const;
  /// Discretization type frames: its integrator, mass and start, no attachments, held frames, isotropic StVK tets.
  void check_frames(const Job& job) const;
  /// Obstacles: a solver that handles them (Newton: static, backward Euler, Newmark; position-based; frames: static
  /// or backward-euler, check_frames); `contact` only with obstacles.
  void check_contact(const Job& job, const Value* obstacles, const Value* contact) const;
  void check_self_contact(const Job& job, const Value* contact) const;

  [[nodiscard]] std::string resolve(const std::string& p) const {
    const fs::path given(p);
    return (given.is_absolute() ? given : fs::path(job_dir_) / given).lexically_normal().string();
  }

  std::string file_;
  std::string job_dir_;
};

}  // namespace edgefem::job_parsing
