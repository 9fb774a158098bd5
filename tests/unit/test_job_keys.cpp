// SPDX-License-Identifier: BSD-3-Clause
// The job key table (io/job_keys): the parser validates against it (an unknown key's message lists exactly the
// table's keys of that section), every section a key points to exists, every key has a type and a meaning, the
// reference lists every key, and `edgefem check`'s resolved job fills the defaults.
#include "io/job_keys.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "core/error.hpp"
#include "io/job.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

class JobKeys : public testing::DirectoryTest {
 protected:
  JobKeys() : DirectoryTest("edgefem_job_keys") {}
  /// The InputError message of reading `text` as a job file.
  std::string error_of(const std::string& text) {
    try {
      (void)read_job(write("job.yaml", text));
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
};

std::string listed(std::string_view section) {
  std::string out;
  for (const JobKey& k : job_section(section).keys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

constexpr const char* base =
    "mesh: {generate: {shape: box, size: [1, 1, 1], cells: [1, 1, 1]}}\n"
    "materials: [{young: 100, poisson: 0.3}]\n";

TEST(JobKeyTable, EveryChildSectionExistsAndEveryKeyIsDescribed) {
  std::set<std::string_view> names;
  for (const JobSection& s : job_sections()) {
    EXPECT_TRUE(names.insert(s.name).second) << "section twice: " << s.name;
    EXPECT_FALSE(s.keys.empty()) << s.name;
    std::set<std::string_view> keys;
    for (const JobKey& k : s.keys) {
      EXPECT_TRUE(keys.insert(k.name).second) << s.name << "." << k.name << " twice";
      EXPECT_FALSE(k.type.empty()) << s.name << "." << k.name;
      EXPECT_FALSE(k.meaning.empty()) << s.name << "." << k.name;
      if (!k.child.empty()) {
        EXPECT_NO_THROW((void)job_section(k.child)) << k.child;
      }
    }
  }
  EXPECT_THROW((void)job_section("no.such.section"), std::logic_error);
}

TEST(JobKeyTable, ReferenceListsEveryKeyOfEverySection) {
  const std::string md = job_reference_markdown();
  for (const JobSection& s : job_sections()) {
    const std::string heading = s.name.empty() ? std::string("## Top level") : "## `" + std::string(s.name) + "`";
    const std::size_t at = md.find(heading);
    ASSERT_NE(at, std::string::npos) << heading;
    for (const JobKey& k : s.keys) EXPECT_NE(md.find("| `" + std::string(k.name) + "` |", at), std::string::npos);
  }
  EXPECT_NE(md.find("neo-hookean"), std::string::npos);  // the models come from the registry
}

TEST_F(JobKeys, UnknownKeysListTheTablesKeys) {
  EXPECT_NE(error_of(std::string(base) + "solvr: {}\n").find("(expected one of: " + listed("") + ")"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(base) + "analysis: {type: dynamic, dt: 0.1, end_time: 1, integrator: position-based,"
                                         " position_based: {iteratons: 3}}\n")
                .find("unknown key 'analysis.position_based.iteratons' (expected one of: " +
                      listed("analysis.position_based") + ")"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(base) + "solver: {linear: {precond: gamg}}\n")
                .find("(expected one of: " + listed("solver.linear") + ")"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(base) + "boundary: [{select: {regoin: 1}, fix: [x]}]\n")
                .find("(expected one of: " + listed("select") + ")"),
            std::string::npos);
}

/// A job whose key `key` of section `section` has the value "bogus" (empty: no template for that section).
std::string job_with_bad_value(std::string_view section, std::string_view key) {
  const std::string k(key);
  const std::string dynamic = "analysis: {type: dynamic, dt: 0.1, end_time: 1, ";
  if (section == "partition") return std::string(base) + "partition: {" + k + ": bogus}\n";
  if (section == "mesh.generate")
    return "mesh: {generate: {shape: bogus, size: [1, 1, 1], cells: [1, 1, 1]}}\nmaterials: [{young: 1, poisson: 0}]\n";
  if (section == "materials[]" && key != "stabilization")
    return std::string(base).substr(0, std::string(base).find("materials")) + "materials: [{young: 100, poisson: 0.3, " +
           k + ": bogus}]\n";
  if (section == "analysis") return std::string(base) + (key == "type" ? "analysis: {type: bogus}\n" : dynamic + k + ": bogus}\n");
  if (section == "analysis.position_based")
    return std::string(base) + dynamic + "integrator: position-based, position_based: {" + k + ": bogus}}\n";
  if (section == "solver.newton" || section == "solver.linear")
    return std::string(base) + "solver: {" + std::string(section.substr(7)) + ": {" + k + ": bogus}}\n";
  if (section == "discretization")
    return std::string(base) + (key == "type" ? "discretization: {type: bogus}\n"
                                              : "discretization: {type: frames, frames: 2, " + k + ": bogus}\n");
  return "";
}

TEST_F(JobKeys, ChoicesInTheTableAreTheParsersChoices) {
  // For every key whose type is a list of words ("one of: a, b, c"), a bad value's message lists the same words:
  // the table's types cannot drift from the parser's choice lists either.
  int checked = 0;
  for (const JobSection& s : job_sections()) {
    for (const JobKey& k : s.keys) {
      if (!k.type.starts_with("one of: ")) continue;
      const std::string job = job_with_bad_value(s.name, k.name);
      if (job.empty()) continue;
      const std::string expected = "expected one of: " + std::string(k.type.substr(8)) + ", got 'bogus'";
      EXPECT_NE(error_of(job).find(expected), std::string::npos)
          << s.name << "." << k.name << ": " << error_of(job) << "\nexpected: " << expected;
      ++checked;
    }
  }
  EXPECT_GE(checked, 18);
}

TEST_F(JobKeys, EveryDocumentedSectionKeyIsAccepted) {
  // Each key of these sections given alone (where that is valid) passes the key check: the table and the
  // parser agree in both directions.
  EXPECT_EQ(error_of(std::string(base) + "output: {directory: o, every: 2}\npartition: {method: metis, renumber: "
                                         "false}\nsolver: {newton: {rtol: 1e-9, atol: 1e-12, max_it: 20, predictor: "
                                         "none, line_search: bt, forcing: fixed, eta_max: 0.01}, petsc: \"\"}\n"),
            "no error");
}

TEST_F(JobKeys, ResolvedJobIsAValidJob) {
  // What `edgefem check` prints reads back as a job (the defaults it fills are values the parser accepts).
  const std::string text = std::string(base) +
                           "analysis: {type: dynamic, dt: 0.1, end_time: 1, damping: {mass: 0.1}}\n"
                           "solver: {newton: {rtol: 1e-9}, linear: {reuse: false}}\noutput: {every: 2}\n"
                           "partition: {method: metis}\n";
  const std::string resolved = resolved_job_yaml(YAML::Load(text));
  EXPECT_EQ(error_of(resolved), "no error") << resolved;
  EXPECT_NE(resolved.find("direct_max_dofs: 10000  # default"), std::string::npos) << resolved;
}

TEST(JobKeyTable, ResolvedJobFillsDefaults) {
  const YAML::Node root = YAML::Load(std::string(base) + "analysis: {type: dynamic, dt: 0.1, end_time: 1}\n");
  const std::string yaml = resolved_job_yaml(root);
  EXPECT_NE(yaml.find("integrator: backward-euler  # default"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("density: 1  # default"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("dt: 0.1"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("dt: 0.1  # default"), std::string::npos);  // given, not a default
  // A static analysis does not list the dynamic defaults.
  const std::string still = resolved_job_yaml(YAML::Load(std::string(base) + "analysis: {type: static}\n"));
  EXPECT_EQ(still.find("integrator"), std::string::npos) << still;
  EXPECT_NE(still.find("steps: 1  # default"), std::string::npos) << still;
}

}  // namespace
}  // namespace edgefem
