// SPDX-License-Identifier: BSD-3-Clause
#include "io/output_timing.hpp"

#include <algorithm>
#include <ctime>

namespace edgefem {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double OutputLap::cpu() const {
  if (thread_only_) return thread_cpu_seconds();
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void OutputTimes::add(const std::string& name, double wall, double cpu) {
  auto it = std::find_if(phases_.begin(), phases_.end(), [&](const Phase& p) { return p.name == name; });
  if (it == phases_.end()) it = phases_.insert(phases_.end(), Phase{name});
  it->wall += wall;
  it->cpu += cpu;
  ++it->calls;
}

void OutputTimes::merge(const OutputTimes& other) {
  for (const Phase& p : other.phases()) {
    auto it = std::find_if(phases_.begin(), phases_.end(), [&](const Phase& q) { return q.name == p.name; });
    if (it == phases_.end()) it = phases_.insert(phases_.end(), Phase{p.name});
    it->wall += p.wall;
    it->cpu += p.cpu;
    it->calls += p.calls;
  }
}

void OutputLap::restart() {
  wall_ = std::chrono::steady_clock::now();
  cpu_ = cpu();
}

void OutputLap::lap(OutputTimes& times, const std::string& name) {
  const auto now = std::chrono::steady_clock::now();
  const double cpu = this->cpu();
  times.add(name, std::chrono::duration<double>(now - wall_).count(), cpu - cpu_);
  wall_ = now;
  cpu_ = cpu;
}

}  // namespace edgefem
