// SPDX-License-Identifier: BSD-3-Clause
// Checkpoints of several runs in one output directory (CTest: mpi.checkpoint_runs.npN, N = 1 and 2): runs
// `mpiexec -n N edgefem run JOB --output DIR` into a directory that holds the checkpoints of an earlier,
// longer run (higher step numbers) and checks that a run owns its checkpoints (io/checkpoint_series.hpp):
// the earlier run's are moved to DIR/previous_run_<id>/ untouched, rotation keeps the new run's two newest,
// `--restart DIR` continues the newest run (not the higher-numbered stale checkpoint), and the message of a
// failed run names a checkpoint that exists.
//
// This process is not an MPI program: it runs mpiexec. Usage: edgefem_checkpoint_runs RANKS [gtest options].
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "mesh/box.hpp"
#include "tests/support/checkpoint_files.hpp"
#include "tests/support/mpi_testing.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;
using testing::read_text;

int ranks = 1;  // from the command line

const std::string work_dir = std::string(EDGEFEM_BINARY_DIR) + "/test-out/checkpoint_runs";

/// A cantilever, dt 0.05, a checkpoint every 5 steps; END_TIME, GRAVITY and EXTRA (after the loads) filled in.
const std::string job_template = R"(mesh:
  generate: {shape: box, size: [4, 1, 1], cells: [4, 1, 1]}
materials:
  - {model: stvk, young: 1.0e4, poisson: 0.3, density: 1.0}
boundary:
  - select: {region: 11}
    fix: [x, y, z]
loads:
  gravity: [0, 0, GRAVITY]
EXTRA
analysis: {type: dynamic, dt: 0.05, end_time: END_TIME, integrator: newmark, max_step_cuts: 0}
output: {directory: out, every: 5, checkpoint_every: 5}
)";

std::string job_text(const std::string& end_time, const std::string& extra = "", const std::string& gravity = "-2.0") {
  std::string text = job_template;
  text.replace(text.find("END_TIME"), 8, end_time);
  text.replace(text.find("EXTRA"), 5, extra);
  text.replace(text.find("GRAVITY"), 7, gravity);
  return text;
}

std::string hex(std::uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, id);
  return text;
}

/// The "position" field of a checkpoint, read by hand (format: io/checkpoint.hpp).
std::vector<double> positions(const std::string& path) {
  const std::string bytes = read_text(path);
  if (bytes.size() < 512) return {};
  auto get = [&](std::size_t offset, auto value) {
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
  };
  const auto n_fields = get(20, std::uint32_t{});
  const auto n = static_cast<std::size_t>(get(24, std::int64_t{}));
  const std::size_t first = 512 + (get(56, std::uint64_t{}) + 7) / 8 * 8;
  for (std::uint32_t f = 0; f < n_fields; ++f) {
    if (std::string(bytes.data() + 96 + 32 * f) != "position") continue;
    std::vector<double> x(3 * n);
    std::memcpy(x.data(), bytes.data() + first + f * n * 24, n * 24);
    return x;
  }
  return {};
}

using mpitest::checkpoint_names;

/// Makes `path` look like a checkpoint of an edgefem without run ids: version 1 (no checksums), the run fields
/// (bytes 352..375) zeroed.
void strip_run_id(const std::string& path) { ckptfile::to_version1(path, true); }

class CheckpointRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(work_dir) / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_np" +
                                 std::to_string(ranks));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = (dir_ / "out").string();
    std::ofstream(dir_ / "long.yaml") << job_text("1.0");   // 20 steps
    std::ofstream(dir_ / "short.yaml") << job_text("0.5");  // 10 steps, the same motion
    // Fails at step 3: at rest until t = 0.1 (no gravity), then a traction on the free end jumps to 500 before
    // t = 0.15, with one Newton iteration allowed and no step cut.
    std::ofstream(dir_ / "fail.yaml") << job_text("1.0", R"(  tractions:
    - select: {region: 12}
      traction: [0, 0, -500.0]
      schedule: {table: [[0, 0], [0.1, 0], [0.15, 1], [1, 1]]}
solver:
  newton: {max_it: 1})",
                                                  "0");
  }

  /// `mpiexec -n ranks edgefem run dir/JOB.yaml --output out EXTRA`; output in log_, returns the exit code.
  int edgefem(const std::string& job, const std::string& extra = "") {
    const std::string log = (dir_ / (job + "_" + std::to_string(++n_runs_) + ".log")).string();
    const std::string command = std::string(EDGEFEM_MPIEXEC) + " -n " + std::to_string(ranks) + " --oversubscribe " +
                                EDGEFEM_BINARY + " run '" + (dir_ / (job + ".yaml")).string() + "' --output '" + out_ +
                                "' " + extra + " > '" + log + "' 2>&1";
    const int status = std::system(command.c_str());
    log_ = read_text(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  /// The run id in the header of out/NAME (or of PATH if it is absolute).
  CheckpointInfo info(const std::string& name) const {
    return read_checkpoint_info(fs::path(name).is_absolute() ? name : out_ + "/" + name);
  }

  fs::path dir_;
  std::string out_, log_;
  int n_runs_ = 0;
};

TEST_F(CheckpointRuns, AShorterFreshRunKeepsItsCheckpointsAndMovesTheOlderRunsAside) {
  ASSERT_EQ(edgefem("long"), 0) << log_;
  ASSERT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  const CheckpointInfo first = info("checkpoint_000020.ckpt");
  EXPECT_NE(first.run_id, 0u);
  EXPECT_EQ(info("checkpoint_000015.ckpt").run_id, first.run_id);
  EXPECT_GT(first.run_started, 0);
  EXPECT_GT(first.written, info("checkpoint_000015.ckpt").written);
  const std::string stale_15 = read_text(out_ + "/checkpoint_000015.ckpt");
  const std::string stale_20 = read_text(out_ + "/checkpoint_000020.ckpt");

  // A fresh, shorter run: its own checkpoints 5 and 10 stay, the older run's move aside unchanged.
  ASSERT_EQ(edgefem("short"), 0) << log_;
  const std::string aside = out_ + "/previous_run_" + hex(first.run_id);
  EXPECT_NE(log_.find("warning: moved 2 checkpoints of another run (run " + hex(first.run_id)), std::string::npos)
      << log_;
  EXPECT_NE(log_.find("steps 15 and 20) from '" + out_ + "' to '" + aside + "/'"), std::string::npos) << log_;
  EXPECT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000005.ckpt", "checkpoint_000010.ckpt"}));
  const CheckpointInfo second = info("checkpoint_000010.ckpt");
  EXPECT_NE(second.run_id, 0u);
  EXPECT_NE(second.run_id, first.run_id);
  EXPECT_GT(second.run_started, first.run_started);
  EXPECT_EQ(info("checkpoint_000005.ckpt").run_id, second.run_id);
  EXPECT_EQ(second.step, 10);
  EXPECT_DOUBLE_EQ(second.time, 0.5);
  EXPECT_EQ(checkpoint_names(aside), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  EXPECT_EQ(read_text(aside + "/checkpoint_000015.ckpt"), stale_15);
  EXPECT_EQ(read_text(aside + "/checkpoint_000020.ckpt"), stale_20);

  // The same again: the short run's checkpoints move to a folder of their own, the first folder is untouched.
  ASSERT_EQ(edgefem("short"), 0) << log_;
  EXPECT_EQ(checkpoint_names(out_ + "/previous_run_" + hex(second.run_id)),
            (std::vector<std::string>{"checkpoint_000005.ckpt", "checkpoint_000010.ckpt"}));
  EXPECT_EQ(checkpoint_names(aside), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  EXPECT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000005.ckpt", "checkpoint_000010.ckpt"}));
  EXPECT_NE(info("checkpoint_000010.ckpt").run_id, second.run_id);
}

TEST_F(CheckpointRuns, RestartFromTheDirectoryContinuesTheNewestRunNotTheHigherStep) {
  ASSERT_EQ(edgefem("long"), 0) << log_;
  const CheckpointInfo stale = info("checkpoint_000020.ckpt");
  const std::vector<double> uninterrupted = positions(out_ + "/checkpoint_000020.ckpt");
  ASSERT_FALSE(uninterrupted.empty());
  ASSERT_EQ(edgefem("short"), 0) << log_;
  const CheckpointInfo newest = info("checkpoint_000010.ckpt");
  // The stale, higher-numbered checkpoints of the first run back in the directory (as an older edgefem left them).
  const std::string aside = out_ + "/previous_run_" + hex(stale.run_id);
  for (const char* name : {"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"})
    fs::rename(aside + "/" + name, out_ + "/" + name);

  ASSERT_EQ(edgefem("long", "--restart '" + out_ + "'"), 0) << log_;
  EXPECT_NE(log_.find("restart from " + out_ + "/checkpoint_000010.ckpt: step 10, t = 0.5 (run " + hex(newest.run_id)),
            std::string::npos)
      << log_;
  EXPECT_NE(log_.find("warning: moved 2 checkpoints of another run (run " + hex(stale.run_id)), std::string::npos)
      << log_;
  EXPECT_NE(log_.find("summary: 10 time steps"), std::string::npos) << log_;
  // The restarted run continues the second run's series: steps 15 and 20 of that run; the first run's moved aside.
  EXPECT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  EXPECT_EQ(info("checkpoint_000020.ckpt").run_id, newest.run_id);
  EXPECT_EQ(info("checkpoint_000015.ckpt").run_id, newest.run_id);
  EXPECT_EQ(info("checkpoint_000020.ckpt").run_started, newest.run_started);
  EXPECT_EQ(checkpoint_names(aside), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  EXPECT_EQ(info(aside + "/checkpoint_000020.ckpt").run_id, stale.run_id);
  // 10 + 10 steps reproduce the uninterrupted 20 (same rank count).
  const std::vector<double> restarted = positions(out_ + "/checkpoint_000020.ckpt");
  ASSERT_EQ(restarted.size(), uninterrupted.size());
  const std::vector<double> reference = generate_box({4, 1, 1}, {4, 1, 1}).coords;  // the job's mesh
  ASSERT_EQ(reference.size(), restarted.size());
  double difference = 0, displacement = 0;
  for (std::size_t i = 0; i < restarted.size(); ++i) {
    difference = std::max(difference, std::abs(restarted[i] - uninterrupted[i]));
    displacement = std::max(displacement, std::abs(uninterrupted[i] - reference[i]));
  }
  EXPECT_GT(displacement, 1e-3) << "the beam sags under gravity";
  EXPECT_LT(difference, 1e-10 * displacement);
}

TEST_F(CheckpointRuns, CheckpointsWithoutRunIdAreAnOlderRunAndStillRestart) {
  ASSERT_EQ(edgefem("short"), 0) << log_;
  for (const char* name : {"checkpoint_000005.ckpt", "checkpoint_000010.ckpt"}) strip_run_id(out_ + "/" + name);
  EXPECT_EQ(info("checkpoint_000010.ckpt").run_id, 0u);

  ASSERT_EQ(edgefem("long", "--restart '" + out_ + "'"), 0) << log_;
  EXPECT_NE(log_.find("restart from " + out_ + "/checkpoint_000010.ckpt: step 10, t = 0.5 (a run without id " +
                      "(an older edgefem); continued under a new run id)"),
            std::string::npos)
      << log_;
  EXPECT_NE(log_.find("warning: " + out_ +
                      "/checkpoint_000010.ckpt is a checkpoint of format version 1, without checksums: its contents "
                      "cannot be verified"),
            std::string::npos)
      << log_;
  // The continued run has an id of its own; the files without one are moved aside, not deleted.
  EXPECT_NE(log_.find("warning: moved 2 checkpoints of another run (a run without id (an older edgefem), steps 5 "
                      "and 10)"),
            std::string::npos)
      << log_;
  EXPECT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  EXPECT_NE(info("checkpoint_000020.ckpt").run_id, 0u);
  EXPECT_EQ(checkpoint_names(out_ + "/previous_run_unknown"),
            (std::vector<std::string>{"checkpoint_000005.ckpt", "checkpoint_000010.ckpt"}));
}

TEST_F(CheckpointRuns, ADamagedCheckpointIsRefusedAndARestartThatFailsChangesNothingOnDisk) {
  ASSERT_EQ(edgefem("long"), 0) << log_;
  const CheckpointInfo stale = info("checkpoint_000020.ckpt");
  const std::vector<double> uninterrupted = positions(out_ + "/checkpoint_000020.ckpt");
  ASSERT_FALSE(uninterrupted.empty());
  ASSERT_EQ(edgefem("short"), 0) << log_;
  const CheckpointInfo newest = info("checkpoint_000010.ckpt");
  // The first run's higher steps back in the directory: a restart that moved other runs' files would show.
  const std::string aside = out_ + "/previous_run_" + hex(stale.run_id);
  for (const char* name : {"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"})
    fs::rename(aside + "/" + name, out_ + "/" + name);
  const std::string five = out_ + "/checkpoint_000005.ckpt", ten = out_ + "/checkpoint_000010.ckpt";
  const ckptfile::Offsets o = ckptfile::offsets(ckptfile::read_bytes(ten));
  ckptfile::flip_bit(ten, o.fields + o.field_bytes / 2 + 3, 5);  // inside the "position" field
  // Everything but summary.json, the record each run (failed or not) leaves of itself (docs/guide/running.md "Run summary").
  const auto files = [&] {
    auto s = ckptfile::snapshot(out_);
    s.erase("summary.json");
    return s;
  };
  const auto before = files();

  // --restart FILE: refused with the reason, exit status 1, nothing else changed.
  EXPECT_EQ(edgefem("long", "--restart '" + ten + "'"), 1) << log_;
  EXPECT_NE(log_.find(ten + ": damaged checkpoint: field 'position' fails its CRC-32 check (the trailer records 0x"),
            std::string::npos)
      << log_;
  EXPECT_EQ(files(), before);
  EXPECT_NE(read_text(out_ + "/summary.json").find("\"status\": \"error\""), std::string::npos);

  // --restart DIR with step 5's header damaged too: the newest run has no intact checkpoint; the other run's
  // higher steps are not taken; nothing changed.
  ckptfile::flip_bit(five, 40, 2);
  const auto before_dir = files();
  EXPECT_EQ(edgefem("long", "--restart '" + out_ + "'"), 1) << log_;
  EXPECT_NE(log_.find("--restart: no intact checkpoint of the newest run (run " + hex(newest.run_id)),
            std::string::npos)
      << log_;
  EXPECT_NE(log_.find("skipped " + five + ": damaged checkpoint: the header fails its CRC-32 check"), std::string::npos)
      << log_;
  EXPECT_EQ(files(), before_dir);

  // Step 5 repaired: --restart DIR skips step 10 saying why, continues from step 5, and ends where the
  // uninterrupted run did.
  ckptfile::flip_bit(five, 40, 2);
  ASSERT_EQ(edgefem("long", "--restart '" + out_ + "'"), 0) << log_;
  EXPECT_NE(log_.find("warning: skipping " + ten + ": damaged checkpoint: field 'position' fails its CRC-32 check"),
            std::string::npos)
      << log_;
  EXPECT_NE(log_.find("warning: using " + five + ", the newest intact checkpoint of run " + hex(newest.run_id)),
            std::string::npos)
      << log_;
  EXPECT_NE(log_.find("restart from " + five + ": step 5, t = 0.25"), std::string::npos) << log_;
  EXPECT_NE(log_.find("summary: 15 time steps"), std::string::npos) << log_;
  EXPECT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
  EXPECT_EQ(info("checkpoint_000020.ckpt").run_id, newest.run_id);
  const std::vector<double> restarted = positions(out_ + "/checkpoint_000020.ckpt");
  ASSERT_EQ(restarted.size(), uninterrupted.size());
  double difference = 0, scale = 0;
  for (std::size_t i = 0; i < restarted.size(); ++i) {
    difference = std::max(difference, std::abs(restarted[i] - uninterrupted[i]));
    scale = std::max(scale, std::abs(uninterrupted[i]));
  }
  EXPECT_LT(difference, 1e-10 * scale);
}

TEST_F(CheckpointRuns, AFailedRunNamesItsLastCheckpointWhichExists) {
  ASSERT_EQ(edgefem("long"), 0) << log_;
  const std::uint64_t stale = info("checkpoint_000020.ckpt").run_id;
  EXPECT_NE(edgefem("fail"), 0) << log_;
  const std::regex saved("the last converged state \\(t = 0\\.100000, after 2 complete steps\\) is saved in (\\S+) ");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(log_, match, saved)) << log_;
  const std::string path = match[1].str();
  EXPECT_EQ(path, out_ + "/checkpoint_000002.ckpt");
  ASSERT_TRUE(fs::is_regular_file(path)) << path;
  const CheckpointInfo last = info(path);
  EXPECT_EQ(last.step, 2);
  EXPECT_DOUBLE_EQ(last.time, 0.1);
  EXPECT_NE(last.run_id, stale);
  EXPECT_EQ(checkpoint_names(out_), (std::vector<std::string>{"checkpoint_000002.ckpt"}));
  EXPECT_EQ(checkpoint_names(out_ + "/previous_run_" + hex(stale)),
            (std::vector<std::string>{"checkpoint_000015.ckpt", "checkpoint_000020.ckpt"}));
}

}  // namespace
}  // namespace edgefem

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) edgefem::ranks = std::atoi(argv[1]);
  if (edgefem::ranks < 1) {
    std::fprintf(stderr, "usage: %s RANKS [gtest options]\n", argv[0]);
    return 2;
  }
  return RUN_ALL_TESTS();
}
