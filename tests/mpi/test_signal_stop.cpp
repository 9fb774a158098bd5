// SPDX-License-Identifier: BSD-3-Clause
// A scheduler's wall-time warning (SIGUSR1 or SIGTERM) stops a 2-rank run cleanly (CTest: mpi.signal_stop.np2).
//
// Dynamic: `mpirun -n 2 edgefem run tests/data/dyn_signal_stop.yaml` (100 Newmark steps, output every step, a
// checkpoint only at the end) gets SIGUSR1 through mpirun (which forwards it to both ranks; then to each rank every
// 10 ms until the run ends), or SIGTERM sent to one rank only (the other learns it through the per-step agreement),
// once step 6 is written. It must exit with 85 after a step K < 100, having written checkpoint_K (outside the
// schedule), energy.csv rows 0..K and the .pvd up to K; `--restart DIR` then finishes, and the results equal
// those of an uninterrupted run (every energy.csv and reactions.csv row, the final displacement field).
// Static: tests/data/static_many_steps.yaml (200 load steps) stops with 86 after a load step, whose output is
// written even though it is not an output step.
//
// This process is not an MPI program: it forks mpiexec (a process group of its own) and signals it or a rank.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/vtk_output.hpp"
#include "runtime/stop_signal.hpp"
#include "tests/support/processes.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;
using testing::Clock;
using testing::read_text;
using testing::seconds_since;
using testing::spawn;

const std::string data_dir = std::string(EDGEFEM_SOURCE_DIR) + "/tests/data/";
const std::string work_dir = std::string(EDGEFEM_BINARY_DIR) + "/test-out/signal_stop";
constexpr int n_steps = 100;  // dyn_signal_stop.yaml

/// Waits for `pid` (at most `timeout` s; then kills its process group): the exit code, -1 for a signal or timeout.
int wait_for(pid_t pid, double timeout = 180) {
  const auto t0 = Clock::now();
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (seconds_since(t0) > timeout) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

/// The children of `parent` running edgefem (mpirun's ranks), from /proc.
std::vector<pid_t> edgefem_children(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    char state = '?';
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && text.find("(edgefem)") != std::string::npos) out.push_back(std::stoi(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> edgefem_command(const std::string& job, const std::string& dir,
                                         const std::string& restart = "") {
  std::vector<std::string> args = {EDGEFEM_MPIEXEC, "-n", "2",      "--oversubscribe", EDGEFEM_BINARY, "run", job,
                                   "--output",      dir,  "--quiet"};
  if (!restart.empty()) args.insert(args.end(), {"--restart", restart});
  return args;
}

/// The rows of a CSV file after its header, as numbers (non-numeric cells: NaN, compared as equal text below).
std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

/// Largest difference between two CSV files with the same rows: the first `exact` columns (step, time, boundary)
/// must be equal, the others differ by at most the returned value relative to the largest magnitude of their row.
/// 1e300 when the rows or the exact columns differ.
double csv_difference(const std::string& a, const std::string& b, std::size_t exact) {
  const auto x = csv_rows(a), y = csv_rows(b);
  if (x.size() != y.size() || x.empty()) return 1e300;
  double worst = 0;
  for (std::size_t r = 0; r < x.size(); ++r) {
    if (x[r].size() != y[r].size()) return 1e300;
    double d = 0, m = 0;
    for (std::size_t c = 0; c < x[r].size(); ++c) {
      if (c < exact) {
        if (x[r][c] != y[r][c]) return 1e300;
        continue;
      }
      const double u = std::strtod(x[r][c].c_str(), nullptr), v = std::strtod(y[r][c].c_str(), nullptr);
      d = std::max(d, std::abs(u - v)), m = std::max(m, std::abs(v));
    }
    if (m > 0) worst = std::max(worst, d / m);
  }
  return worst;
}

/// The `displacement` point array of DIR/step_NNNNNN.pvtu (pieces in rank order).
std::vector<double> displacement(const std::string& dir, int step) {
  char name[64];
  std::snprintf(name, sizeof name, "/step_%06d.pvtu", step);
  vtkNew<vtkXMLPUnstructuredGridReader> reader;
  reader->SetFileName((dir + name).c_str());
  reader->Update();
  vtkDataArray* u = reader->GetOutput()->GetPointData()->GetArray("displacement");
  std::vector<double> out;
  if (u == nullptr) return out;
  for (vtkIdType i = 0; i < u->GetNumberOfTuples(); ++i)
    for (int d = 0; d < 3; ++d) out.push_back(u->GetComponent(i, d));
  return out;
}

/// The steps DIR/solution.pvd lists, read from the file names step_NNNNNN.pvtu.
std::vector<int> pvd_steps(const std::string& dir) {
  std::vector<int> steps;
  const PvdCollection pvd = PvdCollection::load(dir + "/solution.pvd");
  for (const auto& [time, file] : pvd.entries()) steps.push_back(std::stoi(file.substr(5, 6)));
  return steps;
}

/// The step K of "stopped by SIGNAL after time step K" / "after load step K" in a log (-1: none).
int stopped_after(const std::string& log, const std::string& signal) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("stopped by " + signal + " after (time|load) step ([0-9]+) of"))) return -1;
  return std::stoi(m[2].str());
}

/// Starts the job, waits until `file_in_dir` exists in DIR (the run is under way), sends `signal` to mpirun
/// (`to_one_rank` false) or to its highest-pid rank only, and returns the exit code. `repeat`: then send it to every
/// rank directly every 10 ms until the run ends (signals during the stop and the checkpoint write must change
/// nothing; not to mpirun, which may die of a signal that arrives while it shuts down).
int run_and_signal(const std::string& job, const std::string& dir, const std::string& file_in_dir, int signal,
                   bool to_one_rank, bool repeat = false, const std::vector<std::string>& wrapper = {}) {
  std::vector<std::string> command = wrapper;
  for (const std::string& a : edgefem_command(job, dir)) command.push_back(a);
  const pid_t pid = spawn(command, dir + ".log");
  const auto t0 = Clock::now();
  while (!fs::exists(dir + "/" + file_in_dir) && seconds_since(t0) < 120) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  pid_t target = pid;
  if (to_one_rank) {
    const std::vector<pid_t> ranks = edgefem_children(pid);
    EXPECT_EQ(ranks.size(), 2u) << "the ranks of mpirun " << pid;
    if (!ranks.empty()) target = ranks.back();
  }
  kill(target, signal);
  // Repeated: signals to the ranks every 10 ms while they finish the step and write the checkpoint, until the run
  // says it stopped (the checkpoint is then complete). Not beyond: PetscFinalize restores the default action of
  // SIGUSR1/SIGTERM, so a signal during the last milliseconds of the process would kill a rank (exit 138).
  const std::string log = dir + ".log";
  for (const auto t_signal = Clock::now(); repeat && seconds_since(t_signal) < 120;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (read_text(log).find("edgefem: stopped by") != std::string::npos) break;
    for (const pid_t rank : edgefem_children(pid)) kill(rank, signal);
  }
  return wait_for(pid);
}

class SignalStop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::remove_all(work_dir);
    fs::create_directories(work_dir);
  }
  /// The uninterrupted dynamic run, made once.
  static const std::string& reference() {
    static const std::string dir = [] {
      const std::string d = work_dir + "/uninterrupted";
      const int code = wait_for(spawn(edgefem_command(data_dir + "dyn_signal_stop.yaml", d), d + ".log"));
      EXPECT_EQ(code, 0) << read_text(d + ".log");
      return d;
    }();
    return dir;
  }

  /// Signal a dynamic run once its step-6 output exists, then restart it and compare with the reference.
  static void stop_and_restart(const std::string& name, int signal, bool to_one_rank, bool repeat) {
    const std::string job = data_dir + "dyn_signal_stop.yaml";
    const std::string ref = reference();
    const std::string dir = work_dir + "/" + name;
    const int code = run_and_signal(job, dir, "step_000006.pvtu", signal, to_one_rank, repeat);
    const std::string log = read_text(dir + ".log");
    ASSERT_EQ(code, kExitStoppedRestartable) << log;
    const int k = stopped_after(log, signal == SIGTERM ? "SIGTERM" : "SIGUSR1");
    ASSERT_GE(k, 6) << log;
    ASSERT_LT(k, n_steps) << log;
    EXPECT_NE(log.find("continue with: edgefem run " + job + " --output " + dir + " --restart " + dir),
              std::string::npos)
        << log;
    // What a restart continues from: the checkpoint of step K, and every per-step row up to K, none after.
    char checkpoint[64];
    std::snprintf(checkpoint, sizeof checkpoint, "/checkpoint_%06d.ckpt", k);
    std::vector<std::string> checkpoints;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".ckpt") checkpoints.push_back(e.path().filename().string());
    EXPECT_EQ(checkpoints, std::vector<std::string>{checkpoint + 1});
    const auto energy = csv_rows(dir + "/energy.csv");
    ASSERT_EQ(energy.size(), static_cast<std::size_t>(k + 1));
    EXPECT_EQ(energy.back().front(), std::to_string(k));
    const std::vector<int> written = pvd_steps(dir);
    ASSERT_EQ(written.size(), static_cast<std::size_t>(k + 1));  // output every step
    EXPECT_EQ(written.back(), k);
    // summary.json records the stop (docs/guide/running.md "Run summary").
    const std::string summary = read_text(dir + "/summary.json");
    EXPECT_NE(summary.find("\"status\": \"stopped\""), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"exit_code\": 85"), std::string::npos) << summary;

    // The restart finishes to the uninterrupted result.
    ASSERT_EQ(wait_for(spawn(edgefem_command(job, dir, dir), dir + "_restart.log")), 0)
        << read_text(dir + "_restart.log");
    EXPECT_NE(read_text(dir + "_restart.log").find("step " + std::to_string(k) + ", t = "), std::string::npos);
    std::vector<int> all(n_steps + 1);
    for (int s = 0; s <= n_steps; ++s) all[s] = s;
    EXPECT_EQ(pvd_steps(dir), all);
    const double d_energy = csv_difference(dir + "/energy.csv", ref + "/energy.csv", 2);
    const double d_reactions = csv_difference(dir + "/reactions.csv", ref + "/reactions.csv", 3);
    const std::vector<double> u = displacement(dir, n_steps), u_ref = displacement(ref, n_steps);
    ASSERT_EQ(u.size(), u_ref.size());
    ASSERT_FALSE(u.empty());
    double du = 0, u_max = 0;
    for (std::size_t i = 0; i < u.size(); ++i)
      du = std::max(du, std::abs(u[i] - u_ref[i])), u_max = std::max(u_max, std::abs(u_ref[i]));
    std::printf(
        "signal_stop: %s: stopped after step %d; restarted run vs uninterrupted: energy.csv %.2e, "
        "reactions.csv %.2e (row-relative), final max |du| / max |u| = %.2e (max |u| = %.4f)\n",
        name.c_str(), k, d_energy, d_reactions, du / u_max, u_max);
    EXPECT_LT(d_energy, 1e-10);
    EXPECT_LT(d_reactions, 1e-10);
    EXPECT_LT(du / u_max, 1e-10);
    EXPECT_GT(u_max, 0.05);
  }
};

// SIGUSR1 to mpirun, then to the ranks every 10 ms until the run ends: some land in the stop and the checkpoint
// write.
TEST_F(SignalStop, RepeatedUsrOneThroughMpirunCheckpointsAndRestartsToTheUninterruptedResult) {
  stop_and_restart("usr1_mpirun", SIGUSR1, false, true);
}

TEST_F(SignalStop, TermToOneRankStopsBothAndRestartsToTheUninterruptedResult) {
  stop_and_restart("term_one_rank", SIGTERM, true, false);
}

TEST_F(SignalStop, StaticRunStopsAfterALoadStepNotRestartable) {
  const std::string job = data_dir + "static_many_steps.yaml";
  const std::string dir = work_dir + "/static";
  // reactions.csv has its header and step 0 once the solve is under way.
  const int code = run_and_signal(job, dir, "step_000000.pvtu", SIGUSR1, false);
  const std::string log = read_text(dir + ".log");
  ASSERT_EQ(code, kExitStoppedNotRestartable) << log;
  const int k = stopped_after(log, "SIGUSR1");
  ASSERT_GE(k, 1) << log;
  ASSERT_LT(k, 200) << log;
  EXPECT_NE(log.find("cannot be continued: run the job again from the start"), std::string::npos) << log;
  const std::string summary = read_text(dir + "/summary.json");
  EXPECT_NE(summary.find("\"status\": \"stopped\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"exit_code\": 86"), std::string::npos) << summary;
  // Reactions of steps 0..K (one row per boundary entry), and the stopped state written even between outputs.
  const auto reactions = csv_rows(dir + "/reactions.csv");
  ASSERT_EQ(reactions.size(), static_cast<std::size_t>(k + 1));
  EXPECT_EQ(reactions.back().front(), std::to_string(k));
  const std::vector<int> written = pvd_steps(dir);
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(written.back(), k);
  for (std::size_t i = 0; i + 1 < written.size(); ++i) EXPECT_EQ(written[i], 50 * static_cast<int>(i));
  EXPECT_EQ(displacement(dir, k).size(), displacement(dir, 0).size());
  std::printf("signal_stop: static run stopped after load step %d of 200; .pvd lists %zu steps\n", k, written.size());
}

/// SIGTERM to the launcher, as `timeout`, a shell script or a scheduler killing it sends it (issue 54). Open MPI 4.1's
/// mpirun cannot forward SIGTERM; it aborts the job: SIGCONT to the ranks, odls_base_sigkill_timeout s, SIGTERM,
/// the same time again, SIGKILL, and exit status 1 whatever the ranks return.
class TermToLauncher : public SignalStop {
 protected:
  /// The stop as the ranks record it: checkpoint_K only, summary.json "stopped" with the ranks' 85, the message.
  /// `message_forwarded` false: mpirun is aborting the job when the ranks print the stop message, and Open MPI 4.1
  /// may drop the ranks' output by then (seen in CI: an empty log with the checkpoint and summary written), so K
  /// comes from the one checkpoint left in DIR; the message is checked only when it is there.
  static void expect_stopped_with_checkpoint(const std::string& dir, int steps = n_steps,
                                             bool message_forwarded = true) {
    const std::string log = read_text(dir + ".log");
    std::vector<std::string> checkpoints;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".ckpt") checkpoints.push_back(e.path().filename().string());
    ASSERT_EQ(checkpoints.size(), 1u) << "one checkpoint expected in " << dir << "\n" << log;
    const int k = std::stoi(checkpoints[0].substr(std::string("checkpoint_").size()));
    ASSERT_GE(k, 6) << log;
    ASSERT_LT(k, steps) << log;
    const int k_log = stopped_after(log, "SIG[A-Z0-9]+");
    if (message_forwarded || k_log >= 0) {
      EXPECT_EQ(k_log, k) << log;
    }
    char checkpoint[64];
    std::snprintf(checkpoint, sizeof checkpoint, "checkpoint_%06d.ckpt", k);
    EXPECT_EQ(checkpoints[0], checkpoint) << log;
    const std::string summary = read_text(dir + "/summary.json");
    EXPECT_NE(summary.find("\"status\": \"stopped\""), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"exit_code\": 85"), std::string::npos) << summary;
    std::printf("signal_stop: SIGTERM to the launcher: stopped after step %d, %s written\n", k, checkpoint);
  }
};

// scripts/stoppable.sh turns SIGTERM/SIGINT into the SIGUSR1 mpirun forwards: the documented stop, exit 85.
TEST_F(TermToLauncher, TermToStoppableScriptExits85WithCheckpoint) {
  const std::string dir = work_dir + "/term_stoppable";
  const int code = run_and_signal(data_dir + "dyn_signal_stop.yaml", dir, "step_000006.pvtu", SIGTERM, false, false,
                                  {std::string(EDGEFEM_SOURCE_DIR) + "/scripts/stoppable.sh"});
  EXPECT_EQ(code, kExitStoppedRestartable) << read_text(dir + ".log");
  expect_stopped_with_checkpoint(dir);
}

// Plain mpirun with a grace period (docs/ux-notes.md): the ranks get SIGTERM after 4 s and have 4 s more to
// finish the step and write the checkpoint; mpirun itself exits with 1 (Open MPI 4.1). 100,000 steps (end_time
// 5000), so that the run is still going when the ranks get SIGTERM (1000 steps took 6 s on a quiet machine and
// ended first).
TEST_F(TermToLauncher, TermToMpirunWithGracePeriodStopsWithCheckpoint) {
  const std::string dir = work_dir + "/term_mpirun", job = work_dir + "/dyn_signal_stop_long.yaml";
  std::string text = read_text(data_dir + "dyn_signal_stop.yaml");
  const std::string end = "end_time: 5.0";
  ASSERT_NE(text.find(end), std::string::npos);
  text.replace(text.find(end), end.size(), "end_time: 5000.0");
  std::ofstream(job) << text;
  setenv("OMPI_MCA_odls_base_sigkill_timeout", "4", 1);
  const int code = run_and_signal(job, dir, "step_000006.pvtu", SIGTERM, false);
  unsetenv("OMPI_MCA_odls_base_sigkill_timeout");
  EXPECT_EQ(code, 1) << "Open MPI 4.1's mpirun exits 1 after SIGTERM; if this changed, update docs/ux-notes.md\n"
                     << read_text(dir + ".log");
  expect_stopped_with_checkpoint(dir, 1000 * n_steps, false);
}

}  // namespace
}  // namespace edgefem

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
