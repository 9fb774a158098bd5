// SPDX-License-Identifier: BSD-3-Clause
// The run summary writer (io/summary.*): JSON string escaping, numbers, nulls, the document's shape and its atomic
// write. The CLI tests (tests/python/check_summary.py) read real runs' summaries with Python's json module.
#include "io/summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "run/report.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

class SummaryFile : public testing::DirectoryTest {
 protected:
  SummaryFile() : DirectoryTest("edgefem_summary") {}
};

/// Whether `s` is valid UTF-8 (nlohmann-json's parser refuses anything else).
bool valid_json(const std::string& s) { return nlohmann::json::accept(s); }

TEST(Summary, StringEscapes) {
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string("line\nnext\ttab\rcr\bbs\fff"), "\"line\\nnext\\ttab\\rcr\\bbs\\fff\"");
  EXPECT_EQ(json_string(std::string("nul\0x\x01\x1f", 7)), "\"nul\\u0000x\\u0001\\u001f\"");
  // Valid UTF-8 passes through; a stray byte, a truncated sequence, an overlong form and a surrogate become U+FFFD.
  EXPECT_EQ(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(json_string("a\xff"
                        "b"),
            "\"a\xef\xbf\xbd"
            "b\"");
  for (const char* bad : {"end\xe2\x82", "\xc0\xaf", "\xed\xa0\x80"}) {
    const std::string j = json_string(bad);
    EXPECT_TRUE(valid_json(j)) << j;
    EXPECT_NE(j.find("\xef\xbf\xbd"), std::string::npos) << j;
  }
  // Whatever the bytes, the text reads back (as nlohmann-json, Python's json module) to the same valid string.
  const std::string awkward = std::string("q\"\\\x01\x7f caf\xc3\xa9", 12);
  EXPECT_EQ(nlohmann::json::parse(json_string(awkward)).get<std::string>(), awkward);
}

TEST(Summary, Numbers) {
  EXPECT_EQ(json_number(0.05), "0.05");                     // the shortest that reads back, not 0.050000000000000003
  EXPECT_EQ(json_number(1.0 / 3.0), "0.3333333333333333");  // 16 digits suffice
  EXPECT_EQ(std::strtod(json_number(1.0 / 3.0).c_str(), nullptr), 1.0 / 3.0);
  EXPECT_EQ(std::strtod(json_number(2.0).c_str(), nullptr), 2.0);
  EXPECT_EQ(json_number(-1.5e-300), "-1.5e-300");
  EXPECT_EQ(json_number(0.123456789012, 9), "0.123456789");
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_number(-std::numeric_limits<double>::infinity(), 9), "null");
}

RunSummary example() {
  RunSummary s;
  s.version = "0.1.0";
  s.job = "jobs/a \"quoted\" job.yaml";
  s.started = "2026-11-26T14:00:00Z";
  s.command = "edgefem run job.yaml";
  s.ranks = 2;
  s.threads_per_rank = 3;
  s.mesh = RunSummary::Mesh{"generated box", 189, 480, "tet", 567};
  s.partition = RunSummary::Partition{"metis", {90, 99, 94.5}, {0, 9, 4.5}, Spread{230, 250, 240}};
  s.analysis_type = "static";
  s.analysis = {{"steps", "2"}};
  s.phases_s.read = 0.25;
  s.phases_s.total = std::numeric_limits<double>::quiet_NaN();
  s.phases_per_rank_s.assign(rank_phase_names().size(), {0.5, std::numeric_limits<double>::quiet_NaN()});
  const auto& names = rank_phase_names();
  s.phases_per_rank_s[static_cast<std::size_t>(std::find(names.begin(), names.end(), "assembly_local") - names.begin())] =
      {0.125, 0.375};
  s.solver = RunSummary::Solver{10, 47, 3, "GAMG"};
  s.peak_mb_per_rank = {58.5, 60.25};
  s.largest_displacement = RunSummary::Displacement{1.5, {10, 0.5, 1}, {0, 0, -1.5}};
  s.output = "out/solution.pvd";
  return s;
}

TEST(Summary, DocumentHasTheSchemaKeysInOrder) {
  const std::string json = to_json(example());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.substr(json.size() - 2), "}\n");
  const auto j = nlohmann::ordered_json::parse(json);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "version", "provenance", "job", "status", "exit_code", "error",
                                            "started", "command", "ranks", "threads_per_rank", "oversubscribed",
                                            "mesh", "partition", "analysis", "phases_s", "setup_split_s",
                                            "setup_split_cpu_s", "first_pc_setup_s", "phases_per_rank_s", "solver",
                                            "memory", "largest_displacement", "contact", "self_contact",
                                            "output", "output_split"}));
  EXPECT_TRUE(j["output_split"].is_null());  // no writer
  EXPECT_TRUE(j["contact"].is_null());  // no obstacles
  EXPECT_TRUE(j["self_contact"].is_null());
  EXPECT_EQ(j["schema"], "edgefem-summary/1");
  EXPECT_EQ(j["version"], "0.1.0");
  EXPECT_TRUE(j["provenance"].is_null());
  EXPECT_EQ(j["job"], "jobs/a \"quoted\" job.yaml");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j["started"], "2026-11-26T14:00:00Z");
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["threads_per_rank"], 3);
  EXPECT_EQ(j["oversubscribed"], false);
  EXPECT_EQ(j["mesh"]["cell_kind"], "tet");
  EXPECT_EQ(j["mesh"]["dofs"], 567);
  EXPECT_EQ(j["partition"]["owned_vertices"], (nlohmann::ordered_json{{"min", 90}, {"max", 99}, {"mean", 94.5}}));
  EXPECT_EQ(j["partition"]["cells"]["mean"], 240);
  EXPECT_EQ(j["analysis"], (nlohmann::ordered_json{{"type", "static"}, {"steps", 2}}));
  EXPECT_EQ(j["phases_s"]["read"], 0.25);
  EXPECT_TRUE(j["phases_s"]["partition"].is_null());  // not measured
  EXPECT_TRUE(j["phases_s"]["total"].is_null());      // NaN
  std::vector<std::string> phase_names;
  for (const auto& [key, value] : j["phases_per_rank_s"].items()) phase_names.push_back(key);
  EXPECT_EQ(phase_names, rank_phase_names());
  EXPECT_EQ(j["phases_per_rank_s"]["read"], (nlohmann::ordered_json{0.5, nullptr}));
  EXPECT_EQ(j["phases_per_rank_s"]["assembly_local"], (nlohmann::ordered_json{0.125, 0.375}));
  EXPECT_EQ(j["solver"]["newton_iterations"], 10);
  EXPECT_EQ(j["solver"]["preconditioner"], "GAMG");
  EXPECT_EQ(j["memory"]["peak_mb_max_rank"], 60.25);
  EXPECT_EQ(j["memory"]["peak_mb_total"], 118.75);
  EXPECT_EQ(j["memory"]["peak_mb_per_rank"], (nlohmann::ordered_json{58.5, 60.25}));
  EXPECT_EQ(j["largest_displacement"]["reference_point"], (nlohmann::ordered_json{10, 0.5, 1}));
  EXPECT_EQ(j["largest_displacement"]["u"], (nlohmann::ordered_json{0, 0, -1.5}));
  EXPECT_EQ(j["output"], "out/solution.pvd");
}

TEST(Summary, OutputSplit) {
  RunSummary s = example();
  OutputTimes times;
  times.add("arrays", 0.5, 0.25);
  times.add("writer_vtu", 2.0, 1.0);  // on the writer thread: not in the run's own time
  times.add("writer_start", 0.125, 0.125);
  times.add("arrays", 0.25, 0.125);
  s.output_split = RunSummary::OutputSplit{"vtu", 2, times};
  const auto j = nlohmann::ordered_json::parse(to_json(s))["output_split"];
  EXPECT_EQ(j["format"], "vtu");
  EXPECT_EQ(j["written_steps"], 2);
  EXPECT_DOUBLE_EQ(j["in_run_wall_s"].get<double>(), 0.875);
  EXPECT_DOUBLE_EQ(j["in_run_cpu_s"].get<double>(), 0.5);
  std::vector<std::string> names;
  for (const auto& [key, value] : j["wall_s"].items()) names.push_back(key);
  EXPECT_EQ(names, (std::vector<std::string>{"arrays", "writer_vtu", "writer_start"}));  // first-call order
  EXPECT_EQ(j["wall_s"]["arrays"], 0.75);
  EXPECT_EQ(j["cpu_s"]["writer_vtu"], 1.0);
  EXPECT_EQ(j["calls"]["arrays"], 2);
}

TEST(Summary, ContactRecord) {
  RunSummary s = example();
  RunSummary::Contact c;
  c.method = "barrier";
  c.activation_distance = 1e-3;
  c.stiffness = 2.5e4;
  c.max_active = 12;
  c.obstacles = {"floor", "wall"};
  c.forces = {0, 0, 10, -1, 0, 0};
  c.step = {1, 2};
  c.active = {10, 12};
  c.min_gap = {4e-4, 3e-4};
  c.penetration = {0, 0};
  c.seconds_residual = 0.25;
  s.contact = c;
  const auto j = nlohmann::ordered_json::parse(to_json(s))["contact"];
  EXPECT_EQ(j["method"], "barrier");
  EXPECT_EQ(j["activation_distance"].get<double>(), 1e-3);
  EXPECT_EQ(j["max_active"].get<long long>(), 12);
  EXPECT_EQ(j["obstacles"][1]["name"], "wall");
  EXPECT_EQ(j["obstacles"][0]["force"][2].get<double>(), 10.0);
  EXPECT_EQ(j["obstacles"][1]["force"][0].get<double>(), -1.0);
  EXPECT_EQ(j["steps"]["active"][1].get<long long>(), 12);
  EXPECT_EQ(j["steps"]["min_gap"][0].get<double>(), 4e-4);
  EXPECT_EQ(j["seconds"]["residual"].get<double>(), 0.25);
}

TEST(Summary, SelfContactRecord) {
  RunSummary s = example();
  RunSummary::SelfContact c;
  c.activation_distance = 2e-3;
  c.stiffness = 150.0;
  c.surface_vertices = 717;
  c.max_active = 442;
  c.min_distance = 1.7e-3;
  c.step = {1, 2};
  c.active = {0, 442};
  c.min_distances = {1e300, 1.7e-3};
  c.broad = {0.5, 0.25}, c.narrow = {1.0, 2.0}, c.ccd = {0.125, 0.125}, c.exchange = {0.5, 0.5};
  c.assembly = {0.0, 0.25}, c.total = {2.5, 3.5};
  c.narrow_pairs = {10, 30}, c.ccd_pairs = {4, 5};
  c.step_seconds = 24.0;
  c.bytes_per_iteration = {1000, 2000}, c.messages_per_iteration = {20, 22}, c.neighbours = {1, 1};
  c.layers_built = {2, 2}, c.owned_vertices = {300, 417};
  c.newton_iterations = 52;
  c.calls = {1, 2, 3, 4, 5, 6, 7};
  c.output_step = {0, 2}, c.intersecting_pairs = {0, 3};
  s.self_contact = c;
  const auto j = nlohmann::ordered_json::parse(to_json(s))["self_contact"];
  EXPECT_EQ(j["surface_vertices"].get<long long>(), 717);
  EXPECT_EQ(j["seconds"]["narrow_phase"].get<double>(), 3.0);  // the steps' sum
  EXPECT_EQ(j["seconds"]["total"].get<double>(), 6.0);
  EXPECT_EQ(j["seconds"]["steps"].get<double>(), 24.0);
  EXPECT_EQ(j["pairs"]["narrow_phase"].get<long long>(), 40);
  EXPECT_EQ(j["pairs"]["ccd"].get<long long>(), 9);
  EXPECT_EQ(j["exchange"]["bytes_received_per_iteration"][1].get<double>(), 2000.0);
  EXPECT_EQ(j["exchange"]["calls"]["products"].get<long long>(), 3);
  EXPECT_EQ(j["steps"]["active"][1].get<long long>(), 442);
  EXPECT_EQ(j["steps"]["seconds"]["broad_phase"][0].get<double>(), 0.5);
  EXPECT_EQ(j["intersections"]["output_step"][1].get<long long>(), 2);
  EXPECT_EQ(j["intersections"]["intersecting_pairs"][1].get<long long>(), 3);
}

TEST(Summary, ProvenanceBlock) {
  RunSummary s = example();
  s.provenance = Provenance{"0.1.0", "v0.1.0-3-gabcdef0-dirty", "3.18.5", "Open MPI v4.1.4", "9.1.0", "5.1.0",
                            {"node1", "node2"}, 4, 2};
  const auto p = nlohmann::ordered_json::parse(to_json(s))["provenance"];
  std::vector<std::string> keys;
  for (const auto& [key, value] : p.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"version", "git_describe", "petsc", "mpi", "vtk", "metis", "hosts", "ranks",
                                            "threads_per_rank"}));
  EXPECT_EQ(p["git_describe"], "v0.1.0-3-gabcdef0-dirty");
  EXPECT_EQ(p["hosts"], (nlohmann::ordered_json{"node1", "node2"}));
  EXPECT_EQ(p["ranks"], 4);
}

TEST(Summary, FailedRunBeforeTheMesh) {
  RunSummary s;
  s.exit_code = 1;
  s.error = "job.yaml: bad\n  second line";
  const std::string json = to_json(s);
  for (const char* key : {"\"status\": \"error\"", "\"exit_code\": 1", "\"error\": \"job.yaml: bad\\n  second line\"",
                          "\"mesh\": null", "\"partition\": null", "\"analysis\": null", "\"solver\": null",
                          "\"phases_per_rank_s\": null", "\"memory\": null", "\"largest_displacement\": null", "\"output\": null"})
    EXPECT_NE(json.find(key), std::string::npos) << key << " missing in\n" << json;
}

TEST(Summary, SetupSplitByNameAndPerRank) {
  RunSummary s;
  s.phases_s.setup = 0.75;
  s.setup_split_s.assign(setup_split_names().size(), 0.0);
  s.setup_split_s[1] = 0.25;  // memory_plan
  s.setup_split_s[4] = 0.5;   // topology
  s.first_pc_setup = 0.125;
  const auto j = nlohmann::ordered_json::parse(to_json(s));
  std::vector<std::string> keys;
  for (const auto& [key, value] : j["setup_split_s"].items()) keys.push_back(key);
  EXPECT_EQ(keys, setup_split_names());
  EXPECT_EQ(keys.size(), 15U);
  EXPECT_EQ(j["setup_split_s"]["memory_plan"], 0.25);
  EXPECT_EQ(j["setup_split_s"]["topology"], 0.5);
  EXPECT_EQ(j["first_pc_setup_s"], 0.125);
  const auto& names = rank_phase_names();
  const std::vector<double> values = rank_phase_values(s);
  const auto at = [&](const std::string& name) {
    const auto k = std::find(names.begin(), names.end(), name);
    EXPECT_NE(k, names.end()) << name;
    return values[static_cast<std::size_t>(k - names.begin())];
  };
  EXPECT_EQ(at("setup"), 0.75);
  EXPECT_EQ(at("setup_memory_plan"), 0.25);
  EXPECT_EQ(at("setup_topology"), 0.5);
  EXPECT_EQ(at("setup_output_files"), 0.0);
  EXPECT_EQ(at("first_pc_setup"), 0.125);
  EXPECT_TRUE(std::isnan(at("before_steps")));
  EXPECT_TRUE(RunSummary{}.setup_split_s.empty());
  EXPECT_TRUE(nlohmann::ordered_json::parse(to_json(RunSummary{}))["setup_split_s"].is_null());
  EXPECT_TRUE(j["setup_split_cpu_s"].is_null());  // (not set here)
}

TEST(Summary, RankPhaseValuesFollowTheNames) {
  RunSummary s;
  s.phases_s.assembly = 2.0;
  s.phases_s.total = 5.0;
  s.assembly_split_s = {1.25, 1.0, 0.5, 0.125, std::nullopt};
  const auto& names = rank_phase_names();
  const std::vector<double> values = rank_phase_values(s);
  ASSERT_EQ(values.size(), names.size());
  const auto at = [&](const std::string& name) {
    return values[static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin())];
  };
  EXPECT_EQ(at("assembly"), 2.0);
  EXPECT_EQ(at("assembly_local"), 1.25);
  EXPECT_EQ(at("assembly_local_cpu"), 1.0);
  EXPECT_EQ(at("assembly_insertion"), 0.5);
  EXPECT_EQ(at("assembly_exchange"), 0.125);
  EXPECT_TRUE(std::isnan(at("assembly_barrier_wait")));
  EXPECT_TRUE(std::isnan(at("read")));
  EXPECT_EQ(at("total"), 5.0);
  EXPECT_EQ(names.front(), "job");
  EXPECT_EQ(names.back(), "total");
}

TEST_F(SummaryFile, WriteCreatesTheDirectoryAndLeavesNoTemporary) {
  const std::string out = (dir_ / "new" / "dir").string();
  write_summary(out, example());
  EXPECT_EQ(testing::read_text(std::filesystem::path(out) / "summary.json"), to_json(example()));
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(out)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(SummaryFile, UnwritableDirectoryIsAnInputErrorNamingTheFile) {
  const std::string file = write("a_file", "x");
  try {
    write_summary(file, example());  // a file where the directory should be
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a_file"), std::string::npos) << e.what();
  }
}

// The position-based run's energy check (run/report.hpp): a cloth falling from rest (kinetic energy equal to the
// loads' work, the total 0), then its strain energy growing beyond all it was given: the warning names the first
// such step; a run that only loses energy, or whose energy is NaN, gets none.
TEST(EnergyGrowth, WarnsAtTheFirstStepThatGainedMoreThanTheRunWasGiven) {
  const auto step = [](long long n, double kinetic, double strain, double work) {
    TimeStepReport r;
    r.step = n, r.time = 0.002 * static_cast<double>(n);
    r.energy.kinetic = kinetic, r.energy.strain = strain, r.energy.external_work = work;
    return r;
  };
  const EnergyReport first;  // at rest, unstrained
  std::vector<TimeStepReport> reports = {step(1, 0.1, 0.0, 0.1), step(2, 0.2, 0.05, 0.3), step(3, 0.2, 0.1, 0.3)};
  EXPECT_EQ(energy_growth_warning(first, reports), "");  // (lost 0.05 in step 2; step 3's growth 0 <= 0.3)
  reports.push_back(step(4, 0.2, 0.45, 0.35));           // total 0.3 = the 0.35 given: not more
  EXPECT_EQ(energy_growth_warning(first, reports), "");
  reports.push_back(step(5, 0.2, 0.6, 0.4));            // total 0.4 = the 0.4 given
  EXPECT_EQ(energy_growth_warning(first, reports), "");
  reports.push_back(step(6, 0.2, 2.0, 0.4));  // total 1.8 > 0.4
  const std::string w = energy_growth_warning(first, reports);
  EXPECT_NE(w.find("grew by 1.800e+00 by step 6"), std::string::npos) << w;
  EXPECT_NE(w.find("the 4.000e-01 the run was given"), std::string::npos) << w;
  std::vector<TimeStepReport> unknown = {step(1, 0.1, std::nan(""), 0.1)};
  EXPECT_EQ(energy_growth_warning(first, unknown), "");
  EnergyReport strained;  // a start with energy: counted as given
  strained.strain = 5.0;
  EXPECT_EQ(energy_growth_warning(strained, {step(1, 1.0, 8.0, 0.0)}), "");   // 9 - 5 = 4 <= 5
  EXPECT_NE(energy_growth_warning(strained, {step(1, 1.0, 10.0, 0.0)}), "");  // 11 - 5 = 6 > 5
}

}  // namespace
}  // namespace edgefem
