// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/stop_signal.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace edgefem {
namespace {

volatile std::sig_atomic_t received = 0;

extern "C" void on_stop_signal(int signal_number) { received = signal_number; }

}  // namespace

void install_stop_handlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write or MPI call the signal interrupts continues
  for (const int signal_number : {SIGTERM, SIGUSR1})
    if (sigaction(signal_number, &action, nullptr) != 0)
      throw Error(std::string("cannot install the handler of ") + stop_signal_name(signal_number) + ": " +
                      std::strerror(errno),
                  ErrorScope::this_rank);
}

int stop_signal_received() { return received; }

void clear_stop_signal() { received = 0; }

int agree_on_stop(MPI_Comm comm) {
  int mine = received, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any;
}

const char* stop_signal_name(int signal_number) {
  switch (signal_number) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: break;
  }
  static thread_local char text[32];
  std::snprintf(text, sizeof text, "signal %d", signal_number);
  return text;
}

}  // namespace edgefem
