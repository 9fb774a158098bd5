// SPDX-License-Identifier: BSD-3-Clause
// Kill a running dynamic job at random moments and restart it (CTest: mpi.kill_restart.np2).
//
// `mpirun -n 2 edgefem run tests/data/dyn_kill_restart.yaml --output DIR` (100 Newmark steps, output every
// step, a checkpoint every 5) is killed with SIGKILL at a random moment after its first checkpoint exists,
// then: DIR/solution.pvd parses, every .pvtu it lists exists, every piece those reference is readable by
// VTK, the newest checkpoint is complete, and `edgefem run ... --restart DIR` finishes with a final
// checkpoint equal to the one of an uninterrupted run. Repeated three times (the seed is printed; set
// EDGEFEM_KILL_SEED to repeat a sequence of delays).
//
// This process never initialises MPI: it forks mpirun (its own process group) and kills the whole process
// tree. Open MPI puts every rank in a process group of its own, so killing mpirun's group alone would leave
// the ranks running (and writing into DIR); the tree is collected from /proc and every member is killed.
// The checkpoints are read by hand following the format documented in io/checkpoint.hpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "io/vtk_output.hpp"
#include "mesh/box.hpp"
#include "tests/support/processes.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;
using testing::Clock;
using testing::read_text;
using testing::seconds_since;
using testing::spawn;

const std::string job_file = std::string(EDGEFEM_SOURCE_DIR) + "/tests/data/dyn_kill_restart.yaml";
const std::string work_dir = std::string(EDGEFEM_BINARY_DIR) + "/test-out/kill_restart";
constexpr int n_steps = 100;
constexpr int checkpoint_every = 5;
constexpr double dt = 0.05;
constexpr int n_cells = 12 * 2 * 2 * 6;
constexpr std::int64_t n_vertices = 13 * 3 * 3;

// ---------------------------------------------------------------------------------------------------------
// Processes.

/// (pid, ppid, pgid, state) of every process, from /proc/PID/stat.
struct ProcessInfo {
  pid_t ppid = 0, pgid = 0;
  char state = '?';
};
std::map<pid_t, ProcessInfo> processes() {
  std::map<pid_t, ProcessInfo> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream in(entry.path() / "stat");
    std::string text;
    std::getline(in, text);
    const auto close = text.rfind(')');  // the command name may contain spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    ProcessInfo p;
    rest >> p.state >> p.ppid >> p.pgid;
    out[static_cast<pid_t>(std::stol(name))] = p;
  }
  return out;
}

/// `root` and all its descendants.
std::set<pid_t> process_tree(pid_t root) {
  const auto all = processes();
  std::set<pid_t> tree{root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, p] : all)
      if (tree.count(p.ppid) != 0 && tree.insert(pid).second) grew = true;
  }
  return tree;
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return false;
  std::string text;
  std::getline(in, text);
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

/// SIGKILL the process group of `root` and every process of its tree (and their groups); reap `root`;
/// wait until none is left (at most 30 s). Returns the number of processes killed and of survivors.
std::pair<std::size_t, std::size_t> kill_tree(pid_t root) {
  const std::set<pid_t> tree = process_tree(root);
  const auto all = processes();
  std::set<pid_t> groups;
  for (pid_t pid : tree)
    if (auto it = all.find(pid); it != all.end() && it->second.pgid > 1) groups.insert(it->second.pgid);
  for (pid_t g : groups) kill(-g, SIGKILL);
  for (pid_t pid : tree) kill(pid, SIGKILL);
  int status = 0;
  waitpid(root, &status, 0);
  const auto t0 = Clock::now();
  std::size_t survivors = 0;
  for (pid_t pid : tree) {
    while (alive(pid) && seconds_since(t0) < 30) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    survivors += alive(pid) ? 1 : 0;
  }
  return {tree.size(), survivors};
}

/// Run to completion (timeout: kill and fail); returns the exit code (-1: signal or timeout).
int run(const std::vector<std::string>& args, const std::string& log, double timeout = 120) {
  const pid_t pid = spawn(args, log);
  const auto t0 = Clock::now();
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (seconds_since(t0) > timeout) {
      (void)kill_tree(pid);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<std::string> edgefem_command(int ranks, const std::string& dir, const std::string& restart = "") {
  std::vector<std::string> args = {EDGEFEM_MPIEXEC,   "-n",           std::to_string(ranks),
                                   "--oversubscribe", EDGEFEM_BINARY, "run",
                                   job_file,          "--output",     dir,
                                   "--quiet"};
  if (!restart.empty()) {
    args.push_back("--restart");
    args.push_back(restart);
  }
  return args;
}

// ---------------------------------------------------------------------------------------------------------
// Files.

/// A checkpoint read by hand (io/checkpoint.hpp): header, job text, fields, trailer.
struct Checkpoint {
  std::string error;  ///< empty: complete and consistent
  std::int64_t step = -1;
  double time = 0, dt = 0;
  std::string integrator;
  std::map<std::string, std::vector<double>> fields;  ///< 3 per vertex, by original vertex index
};

Checkpoint read_checkpoint_file(const std::string& path) {
  Checkpoint c;
  const std::string bytes = read_text(path);
  auto get = [&](std::size_t offset, auto value) {
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
  };
  if (bytes.size() < 512) return c.error = path + ": " + std::to_string(bytes.size()) + " bytes, no header", c;
  if (std::memcmp(bytes.data(), "EDGEFEM-CKPT\0\0\0\0", 16) != 0) return c.error = path + ": bad magic", c;
  const std::uint32_t version = get(16, std::uint32_t{});
  if (version != 1 && version != 2) return c.error = path + ": version is not 1 or 2", c;
  const std::uint32_t n_fields = get(20, std::uint32_t{});
  const std::int64_t n = get(24, std::int64_t{});
  c.step = get(32, std::int64_t{});
  c.time = get(40, double{});
  c.dt = get(48, double{});
  const std::uint64_t job_bytes = get(56, std::uint64_t{});
  c.integrator = std::string(bytes.data() + 64, strnlen(bytes.data() + 64, 32));
  if (n_fields > 8 || n != n_vertices) return c.error = path + ": bad field or vertex count", c;
  const std::size_t first = 512 + (job_bytes + 7) / 8 * 8;
  const std::size_t field_bytes = static_cast<std::size_t>(n) * 24;
  const std::size_t total = first + n_fields * field_bytes + (version == 2 ? 48 : 0) + 16;  // checksums, end marker
  if (bytes.size() != total)
    return c.error = path + ": " + std::to_string(bytes.size()) + " bytes, the header announces " +
                     std::to_string(total),
           c;
  if (std::memcmp(bytes.data() + total - 16, "EDGEFEM-END\0\0\0\0\0", 16) != 0)
    return c.error = path + ": no trailer", c;
  for (std::uint32_t f = 0; f < n_fields; ++f) {
    const char* name = bytes.data() + 96 + 32 * f;
    std::vector<double> values(static_cast<std::size_t>(3 * n));
    std::memcpy(values.data(), bytes.data() + first + f * field_bytes, field_bytes);
    c.fields[std::string(name, strnlen(name, 32))] = std::move(values);
  }
  if (c.fields.count("position") == 0 || c.fields.count("velocity") == 0) c.error = path + ": no position/velocity";
  return c;
}

/// Checkpoints in `dir`, sorted by name (= by step).
std::vector<std::string> checkpoints(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint_", 0) == 0 && e.path().extension() == ".ckpt") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Counts VTK errors and warnings reported by a reader.
struct VtkErrors {
  int count = 0;
  vtkNew<vtkCallbackCommand> callback;
  VtkErrors() {
    callback->SetClientData(this);
    callback->SetCallback([](vtkObject*, unsigned long, void* self, void*) { ++static_cast<VtkErrors*>(self)->count; });
  }
  void watch(vtkObject* o) {
    o->AddObserver(vtkCommand::ErrorEvent, callback);
    o->AddObserver(vtkCommand::WarningEvent, callback);
  }
};

/// A piece or a whole .pvtu is readable: no VTK error, points with a 3-component displacement and velocity.
std::string check_grid(vtkUnstructuredGrid* grid, int errors, const std::string& path, vtkIdType cells) {
  if (errors != 0) return path + ": VTK reported " + std::to_string(errors) + " errors";
  if (grid->GetNumberOfPoints() == 0 || grid->GetNumberOfCells() == 0) return path + ": empty grid";
  if (cells > 0 && grid->GetNumberOfCells() != cells)
    return path + ": " + std::to_string(grid->GetNumberOfCells()) + " cells, expected " + std::to_string(cells);
  for (const char* name : {"displacement", "velocity"}) {
    vtkDataArray* a = grid->GetPointData()->GetArray(name);
    if (a == nullptr || a->GetNumberOfComponents() != 3 || a->GetNumberOfTuples() != grid->GetNumberOfPoints())
      return path + ": no valid point array '" + name + "'";
  }
  return "";
}

struct OutputCheck {
  std::vector<std::string> problems;
  std::size_t entries = 0, pieces = 0;
  long long last_step = -1;  ///< largest step listed, when the entries are steps 0, 1, ..., last_step
};

/// DIR/solution.pvd parses, lists steps 0, 1, 2, ... at times k dt in order, every .pvtu exists and reads,
/// every piece it references exists and reads.
OutputCheck check_output(const std::string& dir) {
  OutputCheck out;
  PvdCollection pvd("");
  try {
    pvd = PvdCollection::load(dir + "/solution.pvd");
  } catch (const std::exception& e) {
    out.problems.push_back(std::string("solution.pvd does not parse: ") + e.what());
    return out;
  }
  out.entries = pvd.entries().size();
  const std::regex source_re("<Piece[^>]*Source=\"([^\"]+)\"");
  for (std::size_t k = 0; k < pvd.entries().size(); ++k) {
    const auto& [time, file] = pvd.entries()[k];
    char expected[64];
    std::snprintf(expected, sizeof expected, "step_%06zu.pvtu", k);
    if (file != expected || std::abs(time - static_cast<double>(k) * dt) > 1e-9) {
      out.problems.push_back("entry " + std::to_string(k) + " is (" + std::to_string(time) + ", " + file +
                             "), expected (" + std::to_string(static_cast<double>(k) * dt) + ", " + expected + ")");
      continue;
    }
    out.last_step = static_cast<long long>(k);
    const std::string pvtu = dir + "/" + file;
    if (!fs::exists(pvtu)) {
      out.problems.push_back(file + " is listed but does not exist");
      continue;
    }
    const std::string text = read_text(pvtu);
    std::vector<std::string> sources;
    for (std::sregex_iterator it(text.begin(), text.end(), source_re), end; it != end; ++it)
      sources.push_back((*it)[1].str());
    if (sources.size() != 2)
      out.problems.push_back(file + ": " + std::to_string(sources.size()) + " pieces, expected 2");
    for (const auto& s : sources) {
      const std::string piece = (fs::path(pvtu).parent_path() / s).string();
      if (!fs::exists(piece)) {
        out.problems.push_back(file + " references the missing piece " + s);
        continue;
      }
      vtkNew<vtkXMLUnstructuredGridReader> reader;
      VtkErrors errors;
      errors.watch(reader);
      reader->SetFileName(piece.c_str());
      reader->Update();
      if (auto p = check_grid(reader->GetOutput(), errors.count, piece, 0); !p.empty()) out.problems.push_back(p);
      ++out.pieces;
    }
    vtkNew<vtkXMLPUnstructuredGridReader> reader;
    VtkErrors errors;
    errors.watch(reader);
    reader->SetFileName(pvtu.c_str());
    reader->Update();
    if (auto p = check_grid(reader->GetOutput(), errors.count, pvtu, n_cells); !p.empty()) out.problems.push_back(p);
  }
  return out;
}

/// max |a - b| over the fields `name` of two checkpoints, relative to max |b - reference| (the displacement,
/// for positions) when `reference` is given, else to max |b|.
double relative(const Checkpoint& a, const Checkpoint& b, const std::string& name,
                const std::vector<double>* reference) {
  const auto& x = a.fields.at(name);
  const auto& y = b.fields.at(name);
  double d = 0, s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    d = std::max(d, std::abs(x[i] - y[i]));
    s = std::max(s, std::abs(reference ? y[i] - (*reference)[i] : y[i]));
  }
  return d / s;
}

/// energy.csv: rows for steps 0..n in order, each once.
std::string check_energy_csv(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);
  if (line != "step,time,kinetic,strain,attachment,external_work,total") return "energy.csv: header '" + line + "'";
  long long expected = 0;
  while (std::getline(in, line)) {
    long long step = -1;
    if (std::sscanf(line.c_str(), "%lld,", &step) != 1 || step != expected)
      return "energy.csv: row '" + line + "' where step " + std::to_string(expected) + " was expected";
    ++expected;
  }
  if (expected != n_steps + 1) return "energy.csv: " + std::to_string(expected) + " rows";
  return "";
}

/// Largest difference of the energies in two energy.csv rows (columns kinetic .. total), relative to the
/// largest energy magnitude in `b`; the step and time columns must be equal.
double row_difference(const std::string& a, const std::string& b) {
  std::vector<double> x, y;
  for (auto [row, out] : {std::pair{&a, &x}, std::pair{&b, &y}}) {
    std::istringstream in(*row);
    std::string cell;
    while (std::getline(in, cell, ',')) out->push_back(std::strtod(cell.c_str(), nullptr));
  }
  if (x.size() != 7 || y.size() != 7 || x[0] != y[0] || x[1] != y[1]) return 1e300;
  double d = 0, m = 0;
  for (std::size_t i = 2; i < x.size(); ++i) d = std::max(d, std::abs(x[i] - y[i])), m = std::max(m, std::abs(y[i]));
  return d / m;
}

std::string last_line(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

TEST(KillRestart, KilledRunsRestartToTheUninterruptedResult) {
  const char* seed_env = std::getenv("EDGEFEM_KILL_SEED");
  const unsigned seed = seed_env ? static_cast<unsigned>(std::strtoul(seed_env, nullptr, 10)) : std::random_device{}();
  std::printf("kill_restart: seed %u (EDGEFEM_KILL_SEED=%u repeats the delays)\n", seed, seed);
  std::mt19937 rng(seed);
  fs::remove_all(work_dir);
  fs::create_directories(work_dir);

  // The uninterrupted run, 2 ranks.
  const std::string ref_dir = work_dir + "/uninterrupted";
  const auto t_ref = Clock::now();
  ASSERT_EQ(run(edgefem_command(2, ref_dir), work_dir + "/uninterrupted.log"), 0)
      << read_text(work_dir + "/uninterrupted.log");
  const double ref_seconds = seconds_since(t_ref);
  char name[64];
  std::snprintf(name, sizeof name, "/checkpoint_%06d.ckpt", n_steps);
  const Checkpoint ref = read_checkpoint_file(ref_dir + name);
  ASSERT_EQ(ref.error, "");
  ASSERT_EQ(ref.step, n_steps);
  {
    const OutputCheck o = check_output(ref_dir);
    EXPECT_TRUE(o.problems.empty()) << o.problems.front();
    EXPECT_EQ(o.last_step, n_steps);
  }
  const std::string ref_energy = last_line(ref_dir + "/energy.csv");
  const std::vector<double> reference = generate_box({6, 1, 1}, {12, 2, 2}).coords;  // the job's mesh
  ASSERT_EQ(reference.size(), static_cast<std::size_t>(3 * n_vertices));
  std::printf("kill_restart: uninterrupted run on 2 ranks: %.2f s\n", ref_seconds);

  int killed_mid_run = 0;
  const int trials = 3;
  for (int trial = 0; trial < trials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::string dir = work_dir + "/trial" + std::to_string(trial);
    const std::string log = dir + ".log";
    const auto t0 = Clock::now();
    const pid_t pid = spawn(edgefem_command(2, dir), log);
    ASSERT_GT(pid, 0);
    // Wait for the first checkpoint, then for the output of a random later step, then a random fraction of a
    // step (a step with its output takes 10 to 50 ms here): the kill lands anywhere in the solve, the output
    // or a checkpoint write.
    std::snprintf(name, sizeof name, "/checkpoint_%06d.ckpt", checkpoint_every);
    const int target = std::uniform_int_distribution<int>(checkpoint_every + 1, n_steps - 5)(rng);
    const double delay = std::uniform_real_distribution<double>(0.0, 0.05)(rng);
    char target_name[64];
    std::snprintf(target_name, sizeof target_name, "/step_%06d.pvtu", target);
    bool exited = false, first_seen = false;
    double first_checkpoint = 0;
    while (!exited && seconds_since(t0) < 120) {
      if (!first_seen && fs::exists(dir + name)) first_seen = true, first_checkpoint = seconds_since(t0);
      if (first_seen && fs::exists(dir + target_name)) break;
      int status = 0;
      exited = waitpid(pid, &status, WNOHANG) == pid;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ASSERT_FALSE(exited) << "the run ended before step " << target << ":\n" << read_text(log);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    int status = 0;
    const bool finished = waitpid(pid, &status, WNOHANG) == pid;
    std::size_t n_killed = 0, survivors = 0;
    const double kill_time = seconds_since(t0);
    if (!finished) std::tie(n_killed, survivors) = kill_tree(pid);
    EXPECT_EQ(survivors, 0u) << "processes of the killed job still run";
    killed_mid_run += finished ? 0 : 1;

    // What the killed run left behind.
    const OutputCheck o = check_output(dir);
    for (const auto& p : o.problems) ADD_FAILURE() << p;
    const std::vector<std::string> ckpts = checkpoints(dir);
    ASSERT_FALSE(ckpts.empty());
    const Checkpoint newest = read_checkpoint_file(ckpts.back());
    EXPECT_EQ(newest.error, "");
    EXPECT_EQ(newest.step % checkpoint_every, 0);
    EXPECT_LE(newest.step, o.last_step) << "the output lags behind the newest checkpoint";
    // Two are kept; a kill between writing a checkpoint and removing the oldest leaves three.
    EXPECT_LE(ckpts.size(), 3u);
    std::printf(
        "kill_restart: trial %d: first checkpoint after %.2f s; %s %.3f s after the output of step %d "
        "(%.2f s; %zu processes); left %zu outputs (steps 0..%lld, %zu pieces read), newest checkpoint step "
        "%lld\n",
        trial, first_checkpoint, finished ? "finished before the kill" : "killed", delay, target, kill_time, n_killed,
        o.entries, o.last_step, o.pieces, static_cast<long long>(newest.step));

    // Restart from the directory (its newest checkpoint) and finish.
    const auto t_restart = Clock::now();
    const int code = run(edgefem_command(2, dir, dir), dir + "_restart.log");
    ASSERT_EQ(code, 0) << read_text(dir + "_restart.log");
    const double restart_seconds = seconds_since(t_restart);
    const std::string restart_log = read_text(dir + "_restart.log");
    if (!finished) {
      char expected[64];
      std::snprintf(expected, sizeof expected, "step %lld, t = ", static_cast<long long>(newest.step));
      EXPECT_NE(restart_log.find(expected), std::string::npos) << restart_log;
    }
    std::snprintf(name, sizeof name, "/checkpoint_%06d.ckpt", n_steps);
    const Checkpoint final = read_checkpoint_file(dir + name);
    ASSERT_EQ(final.error, "");
    // Positions relative to the largest displacement (stricter than relative to the positions).
    const double dx = relative(final, ref, "position", &reference);
    // Velocities: the run ends nearly at rest (max |v| ~ 1e-4), so their relative difference shows the solver
    // tolerance magnified; compare dt * max |dv| (the position change it makes in one step) with max |u|.
    const double dv = relative(final, ref, "velocity", nullptr);
    double dv_abs = 0;
    for (std::size_t i = 0; i < ref.fields.at("velocity").size(); ++i)
      dv_abs = std::max(dv_abs, std::abs(final.fields.at("velocity")[i] - ref.fields.at("velocity")[i]));
    double u_max = 0;
    for (std::size_t i = 0; i < reference.size(); ++i)
      u_max = std::max(u_max, std::abs(ref.fields.at("position")[i] - reference[i]));
    EXPECT_GT(u_max, 0.05);  // 0.0904 at the tip: the generated mesh has the checkpoint's vertex order
    EXPECT_LT(u_max, 0.2);
    const OutputCheck after = check_output(dir);
    for (const auto& p : after.problems) ADD_FAILURE() << "after the restart: " << p;
    EXPECT_EQ(after.last_step, n_steps);
    EXPECT_EQ(after.entries, static_cast<std::size_t>(n_steps + 1));
    EXPECT_EQ(check_energy_csv(dir + "/energy.csv"), "");
    EXPECT_EQ(checkpoints(dir).size(), 2u) << "the two newest checkpoints are kept";
    const std::string energy = last_line(dir + "/energy.csv");
    std::printf(
        "kill_restart: trial %d: restart %.2f s; final checkpoint vs uninterrupted (max |u| = %.4f): max |dx| / max "
        "|u| = "
        "%.2e, max |dv| / max |v| = %.2e, dt max |dv| / max |u| = %.2e; energy.csv last rows differ by %.2e\n",
        trial, restart_seconds, u_max, dx, dv, dt * dv_abs / u_max, row_difference(energy, ref_energy));
    EXPECT_LT(row_difference(energy, ref_energy), 1e-10) << energy << "\n" << ref_energy;
    EXPECT_LT(dx, 1e-12);
    EXPECT_LT(dt * dv_abs / u_max, 1e-12);
  }
  EXPECT_GE(killed_mid_run, 1) << "no trial was killed before the run finished";
}

}  // namespace
}  // namespace edgefem

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
