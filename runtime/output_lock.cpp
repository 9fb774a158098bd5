// SPDX-License-Identifier: BSD-3-Clause
/// \file output_lock.cpp
/// The output folder's lock file (output_lock.hpp).
#include "runtime/output_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace edgefem {
namespace {

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

/// Fields 3 (state) and 22 (start, clock ticks since boot) of /proc/PID/stat; {'?', 0} when unknown.
std::pair<char, long long> process_state(long long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {'?', 0};
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return {'?', 0};
  std::istringstream rest(line.substr(close + 1));
  std::string state, field;
  if (!(rest >> state)) return {'?', 0};
  for (int i = 4; i <= 22; ++i)
    if (!(rest >> field)) return {state[0], 0};
  try {
    return {state[0], std::stoll(field)};
  } catch (const std::exception&) {
    return {state[0], 0};
  }
}

long long process_start(long long pid) { return process_state(pid).second; }

/// Whether process `pid` of this host still runs and is the one that took the lock (not a later one with its pid,
/// nor a zombie no one reaped: a container without an init process keeps those).
bool process_runs(long long pid, long long start) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  const auto [state, now] = process_state(pid);
  if (state == 'Z' || state == 'X') return false;
  return start == 0 || now == 0 || now == start;
}

std::string utc(long long t) {
  const std::time_t time = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&time, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string age(long long seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min";
  if (seconds < 172800) return std::to_string(seconds / 3600) + " h " + std::to_string(seconds / 60 % 60) + " min";
  return std::to_string(seconds / 86400) + " days";
}

std::string format(const LockOwner& o) {
  return "run: " + o.run_id + "\nhost: " + o.host + "\npid: " + std::to_string(o.pid) +
         "\npid_start: " + std::to_string(o.pid_start) + "\nstarted: " + std::to_string(o.started) + " (" +
         utc(o.started) + ")\njob: " + o.job + "\nscheduler_id: " + (o.scheduler_id ? "yes" : "no") + "\nattempt: " + std::to_string(o.attempt) + "\n";
}

std::optional<LockOwner> parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  LockOwner o;
  int seen = 0;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    try {
      if (key == "run") o.run_id = value, ++seen;
      if (key == "host") o.host = value, ++seen;
      if (key == "pid") o.pid = std::stoll(value), ++seen;
      if (key == "pid_start") o.pid_start = std::stoll(value);
      if (key == "started") o.started = std::stoll(value), ++seen;
      if (key == "job") o.job = value;
      if (key == "scheduler_id") o.scheduler_id = value == "yes";
      if (key == "attempt") o.attempt = std::stoll(value);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (seen < 4) return std::nullopt;
  return o;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Creates `path` exclusively with `content`; errno's value in `error` when it cannot.
bool create_exclusively(const std::string& path, const std::string& content, int& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    error = errno;
    return false;
  }
  const bool written = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::fsync(fd);
  ::close(fd);
  if (!written) ::unlink(path.c_str());
  error = written ? 0 : EIO;
  return written;
}

/// Seconds since `path` was last modified (0 when it cannot be seen).
long long file_age(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<long long>(std::time(nullptr)) - static_cast<long long>(st.st_mtime);
}

/// "run R (pid P on host H, job J, started T, A ago)"
std::string describe(const LockOwner& o, const LockOwner& me) {
  return "run " + o.run_id + " (pid " + std::to_string(o.pid) + " on " + (o.host == me.host ? "this host " : "host ") +
         o.host + (o.job.empty() ? "" : ", job " + o.job) + ", started " + utc(o.started) + ", " +
         age(me.started - o.started) + " ago)";
}

}  // namespace

LockOwner this_process(const std::string& job) {
  LockOwner o;
  o.host = host_name();
  o.pid = static_cast<long long>(::getpid());
  o.pid_start = process_start(o.pid);
  o.started = static_cast<long long>(std::time(nullptr));
  o.job = job;
  for (const char* name : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"})
    if (const char* id = std::getenv(name); id != nullptr && *id != '\0') {
      o.run_id = std::string(name) + "=" + id;
      o.scheduler_id = true;
      if (const char* count = std::getenv("SLURM_RESTART_COUNT"); count != nullptr)
        o.attempt = std::strtoll(count, nullptr, 10);
      return o;
    }
  o.run_id = o.host + "-" + std::to_string(o.pid) + "-" + std::to_string(o.started);
  return o;
}

std::string lock_path(const std::string& directory) {
  return (std::filesystem::path(directory) / ".edgefem.lock").string();
}

namespace {

/// Why the lock `held` (read from `path`) is stale; empty when it is not, with `problem` saying why it is refused.
std::string stale_reason(const std::optional<LockOwner>& held, const std::string& path, const std::string& directory,
                         const LockOwner& me, std::string& problem) {
  const std::string folder = "output.directory '" + directory + "'";
  if (!held) {
    if (file_age(path) > 60) return "(an unreadable lock file " + path + " older than a minute)";
    problem = folder + ": its lock file " + path + " is being written by another run just now, or is damaged (remove " +
              "it if no run uses the folder)";
    return "";
  }
  if (held->scheduler_id && me.scheduler_id && held->run_id == me.run_id && held->attempt < me.attempt)
    return "of " + describe(*held, me) + ", an earlier attempt of this scheduler job (restart " +
           std::to_string(held->attempt) + "; this is restart " + std::to_string(me.attempt) + ")";
  if (held->host == me.host && !process_runs(held->pid, held->pid_start))
    return "of " + describe(*held, me) + ", whose process no longer runs (killed or crashed before it released it)";
  if (held->host == me.host)
    problem = folder + " is in use by another run: " + describe(*held, me) + " holds its lock " + path +
              "; two runs in one folder would overwrite each other's results and checkpoints: wait for that run to " +
              "end or stop it, or give this one another folder (--output DIR or output.directory)";
  else
    problem = folder + " is locked by " + describe(*held, me) + ", which this host (" + me.host + ") cannot check: " +
              "if that run still goes on, give this one another folder (--output DIR or output.directory); if it " +
              "ended without releasing the lock (a crashed node), remove " + path + " and run again";
  return "";
}

/// Removes the stale lock `path` whose content was `text`, one taker at a time (the take-over file, itself created
/// exclusively; one older than 30 s is a taker that died). False with `problem` when another run is taking it over.
bool remove_stale(const std::string& path, const std::string& text, const LockOwner& me, std::string& problem) {
  const std::string taker = path + ".takeover";
  int error = 0;
  if (!create_exclusively(taker, format(me), error)) {
    if (error == EEXIST && file_age(taker) > 30) {
      ::unlink(taker.c_str());
      return true;  // (try again)
    }
    problem = "cannot take over the stale lock " + path + ": " +
              (error == EEXIST ? std::string("another run is taking it over just now") : std::strerror(error));
    return false;
  }
  if (read_all(path) == text) ::unlink(path.c_str());
  ::unlink(taker.c_str());
  return true;
}

/// Interrupts that end the process at once (Ctrl-C without mpirun, a closed terminal) remove the lock first: the
/// handler unlinks the file (async-signal-safe), puts the previous action back and raises the signal again. SIGTERM
/// and SIGUSR1 are the stop signals (runtime/stop_signal.hpp): the run ends normally and releases the lock.
constexpr int kInterrupts[2] = {SIGINT, SIGHUP};
char held_path[4096] = {0};
struct sigaction previous_actions[2];
bool watching = false;

extern "C" void release_and_reraise(int signal_number) {
  if (held_path[0] != '\0') ::unlink(held_path);
  held_path[0] = '\0';
  for (int i = 0; i < 2; ++i)
    if (kInterrupts[i] == signal_number) ::sigaction(signal_number, &previous_actions[i], nullptr);
  ::raise(signal_number);
}

void watch_interrupts(const std::string& path) {
  if (watching || path.size() >= sizeof held_path) return;
  std::memcpy(held_path, path.c_str(), path.size() + 1);
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = release_and_reraise;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 2; ++i) ::sigaction(kInterrupts[i], &action, &previous_actions[i]);
  for (int i = 0; i < 2; ++i)  // an ignored interrupt (a background job's SIGINT) stays ignored
    if (previous_actions[i].sa_handler == SIG_IGN) ::sigaction(kInterrupts[i], &previous_actions[i], nullptr);
  watching = true;
}

void unwatch_interrupts() {
  if (!watching) return;
  for (int i = 0; i < 2; ++i) ::sigaction(kInterrupts[i], &previous_actions[i], nullptr);
  held_path[0] = '\0';
  watching = false;
}

}  // namespace

LockAttempt try_lock_directory(const std::string& directory, const LockOwner& me) {
  const std::string path = lock_path(directory);
  LockAttempt a;
  for (int attempt = 0; attempt < 5; ++attempt) {
    int error = 0;
    if (create_exclusively(path, format(me), error)) {
      a.taken = true;
      return a;
    }
    if (error != EEXIST) {
      a.problem = "output.directory '" + directory + "': cannot create its lock file " + path + ": " +
                  std::strerror(error);
      return a;
    }
    std::string text = read_all(path);
    std::optional<LockOwner> held = parse(text);
    for (int wait = 0; !held && wait < 5 && std::filesystem::exists(path); ++wait) {  // being written?
      ::usleep(100000);
      text = read_all(path);
      held = parse(text);
    }
    if (!std::filesystem::exists(path)) continue;  // released meanwhile
    const std::string reason = stale_reason(held, path, directory, me, a.problem);
    if (reason.empty()) return a;
    if (!remove_stale(path, text, me, a.problem)) return a;
    a.warning = "output.directory '" + directory + "': took over the stale lock " + reason;
  }
  a.problem = "output.directory '" + directory + "': cannot take its lock " + path + ": other runs keep taking it";
  return a;
}

void unlock_directory(const std::string& directory, const LockOwner& me) {
  const std::string path = lock_path(directory);
  const std::optional<LockOwner> held = parse(read_all(path));
  if (held && held->host == me.host && held->pid == me.pid && held->pid_start == me.pid_start &&
      held->started == me.started)
    ::unlink(path.c_str());
}

OutputLock::OutputLock(MPI_Comm comm, const std::string& directory, const std::string& job)
    : directory_(directory), me_(this_process(job)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string problem;
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec) {
      problem = "output.directory: cannot create '" + directory + "': " + ec.message();
    } else {
      const LockAttempt a = try_lock_directory(directory, me_);
      held_ = a.taken;
      problem = a.problem;
      if (held_) watch_interrupts(lock_path(directory));
      if (!a.warning.empty()) std::fprintf(stderr, "edgefem: warning: %s\n", a.warning.c_str());
    }
  }
  int length = static_cast<int>(problem.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  problem.resize(static_cast<std::size_t>(length));
  MPI_Bcast(problem.data(), length, MPI_CHAR, 0, comm);
  if (!problem.empty()) throw InputError(problem);
}

void OutputLock::release() noexcept {
  if (!held_) return;
  held_ = false;
  unwatch_interrupts();
  try {
    unlock_directory(directory_, me_);
  } catch (...) {  // (a destructor: nothing to report to)
  }
}

}  // namespace edgefem
