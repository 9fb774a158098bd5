// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file processes.hpp
/// Child processes for the tests that run `mpirun edgefem` and signal or kill it (test_kill_restart.cpp,
/// test_signal_stop.cpp).
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace edgefem::testing {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// fork + exec `args` in a new process group, stdout and stderr to `log`.
inline pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid);  // also from the parent: no race with a kill of the group
  return pid;
}

}  // namespace edgefem::testing
