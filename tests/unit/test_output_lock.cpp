// SPDX-License-Identifier: BSD-3-Clause
// The output folder's lock (runtime/output_lock.hpp, issue 50): taken once, refused to a second run while its holder
// lives (the message names it), a stale lock of a dead process on this host taken over with a warning, another host's
// refused with its host and age, an earlier attempt of the same scheduler job taken over, released only by its owner.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>

#include "runtime/output_lock.hpp"
#include "tests/support/test_directory.hpp"

namespace edgefem {
namespace {

namespace fs = std::filesystem;

std::string fresh_folder(const std::string& name) {
  const fs::path dir = fs::path(EDGEFEM_BINARY_DIR) / "test-out" / "output_lock" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

/// A lock file as another run would have written it.
void plant(const std::string& dir, const LockOwner& o) {
  testing::write_text(lock_path(dir), "run: " + o.run_id + "\nhost: " + o.host + "\npid: " + std::to_string(o.pid) +
                                          "\npid_start: " + std::to_string(o.pid_start) + "\nstarted: " +
                                          std::to_string(o.started) + "\njob: " + o.job + "\nscheduler_id: " +
                                          (o.scheduler_id ? "yes" : "no") + "\nattempt: " +
                                          std::to_string(o.attempt) + "\n");
}

/// The pid of a process that has ended (a child reaped).
long long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(OutputLock, TakenOnceAndReleasedByItsOwner) {
  const std::string dir = fresh_folder("once");
  const LockOwner me = this_process("job.yaml");
  const LockAttempt first = try_lock_directory(dir, me);
  ASSERT_TRUE(first.taken) << first.problem;
  EXPECT_TRUE(first.warning.empty());
  const std::string text = testing::read_text(lock_path(dir));
  EXPECT_NE(text.find("pid: " + std::to_string(::getpid())), std::string::npos) << text;
  EXPECT_NE(text.find("host: " + me.host), std::string::npos) << text;
  LockOwner other = me;
  other.pid = me.pid + 1, other.started += 1;  // not the holder: cannot release it
  unlock_directory(dir, other);
  EXPECT_TRUE(fs::exists(lock_path(dir)));
  unlock_directory(dir, me);
  EXPECT_FALSE(fs::exists(lock_path(dir)));
}

TEST(OutputLock, LiveHolderOnThisHostIsRefusedByName) {
  const std::string dir = fresh_folder("live");
  LockOwner holder = this_process("first.yaml");  // this very process: alive
  holder.run_id = "run-A";
  plant(dir, holder);
  LockOwner me = this_process("second.yaml");
  me.pid = holder.pid + 100000;  // another process of this host
  const LockAttempt a = try_lock_directory(dir, me);
  EXPECT_FALSE(a.taken);
  EXPECT_NE(a.problem.find("is in use by another run: run run-A (pid " + std::to_string(holder.pid) +
                           " on this host " + holder.host + ", job first.yaml"),
            std::string::npos)
      << a.problem;
  EXPECT_NE(a.problem.find("--output DIR"), std::string::npos) << a.problem;
  EXPECT_TRUE(fs::exists(lock_path(dir)));
}

TEST(OutputLock, StaleLockOfADeadProcessIsTakenOver) {
  const std::string dir = fresh_folder("stale");
  LockOwner dead = this_process("crashed.yaml");
  dead.pid = dead_pid(), dead.pid_start = 0, dead.run_id = "run-dead", dead.started -= 300;
  plant(dir, dead);
  const LockOwner me = this_process("job.yaml");
  const LockAttempt a = try_lock_directory(dir, me);
  ASSERT_TRUE(a.taken) << a.problem;
  EXPECT_NE(a.warning.find("took over the stale lock of run run-dead (pid " + std::to_string(dead.pid)), std::string::npos)
      << a.warning;
  EXPECT_NE(a.warning.find("5 min ago), whose process no longer runs"), std::string::npos) << a.warning;
  EXPECT_NE(testing::read_text(lock_path(dir)).find("pid: " + std::to_string(me.pid)), std::string::npos);
  EXPECT_FALSE(fs::exists(lock_path(dir) + ".takeover"));
}

TEST(OutputLock, ReusedPidIsStale) {
  const std::string dir = fresh_folder("reused");
  LockOwner old = this_process("old.yaml");  // this pid, but another process start: the pid was reused
  old.pid_start += 12345, old.run_id = "run-old";
  plant(dir, old);
  LockOwner me = this_process("job.yaml");
  const LockAttempt a = try_lock_directory(dir, me);
  EXPECT_TRUE(a.taken) << a.problem;
  EXPECT_NE(a.warning.find("run-old"), std::string::npos) << a.warning;
}

TEST(OutputLock, AnotherHostsLockIsRefusedWithItsHostAndAge) {
  const std::string dir = fresh_folder("other_host");
  LockOwner far = this_process("far.yaml");
  far.host = "node-elsewhere", far.run_id = "run-far", far.started -= 2 * 3600 + 5 * 60;
  plant(dir, far);
  const LockAttempt a = try_lock_directory(dir, this_process("job.yaml"));
  EXPECT_FALSE(a.taken);
  EXPECT_NE(a.problem.find("is locked by run run-far (pid " + std::to_string(far.pid) + " on host node-elsewhere"),
            std::string::npos)
      << a.problem;
  EXPECT_NE(a.problem.find("2 h 5 min ago"), std::string::npos) << a.problem;
  EXPECT_NE(a.problem.find("remove " + lock_path(dir)), std::string::npos) << a.problem;
}

TEST(OutputLock, EarlierAttemptOfTheSameSchedulerJobIsTakenOver) {
  const std::string dir = fresh_folder("requeued");
  ::setenv("SLURM_JOB_ID", "4242", 1);
  LockOwner before = this_process("job.yaml");
  before.host = "node-before";  // the requeued job landed on another node
  plant(dir, before);
  // The same attempt (two steps of one job on one folder) is refused; the next attempt takes it over.
  const LockAttempt same = try_lock_directory(dir, this_process("job.yaml"));
  ::setenv("SLURM_RESTART_COUNT", "1", 1);
  const LockAttempt a = try_lock_directory(dir, this_process("job.yaml"));
  ::unsetenv("SLURM_JOB_ID");
  ::unsetenv("SLURM_RESTART_COUNT");
  EXPECT_FALSE(same.taken);
  EXPECT_NE(same.problem.find("is locked by run SLURM_JOB_ID=4242"), std::string::npos) << same.problem;
  EXPECT_TRUE(a.taken) << a.problem;
  EXPECT_NE(a.warning.find("an earlier attempt of this scheduler job (restart 0; this is restart 1)"),
            std::string::npos)
      << a.warning;
}

TEST(OutputLock, FolderThatCannotHoldTheFileIsAClearError) {
  const LockAttempt a = try_lock_directory("/proc/no-such-folder", this_process("job.yaml"));
  EXPECT_FALSE(a.taken);
  EXPECT_NE(a.problem.find("cannot create its lock file /proc/no-such-folder/.edgefem.lock"), std::string::npos)
      << a.problem;
}

}  // namespace
}  // namespace edgefem
