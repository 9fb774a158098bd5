// SPDX-License-Identifier: BSD-3-Clause
// The stop flag of runtime/stop_signal.hpp: a real signal sets it, and the ranks agree on it even when only one
// rank received the signal (np 1, 2, 3).
#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>
#include <string>

#include "runtime/stop_signal.hpp"

namespace edgefem {
namespace test_stop_signal {  // one per file: the distributed test files share unity batches

class StopSignal : public ::testing::Test {
 protected:
  void SetUp() override {
    install_stop_handlers();
    clear_stop_signal();
  }
  void TearDown() override { clear_stop_signal(); }
};

TEST_F(StopSignal, RaisedSignalIsRecordedAndTheProcessSurvives) {
  EXPECT_EQ(stop_signal_received(), 0);
  ASSERT_EQ(std::raise(SIGUSR1), 0);  // the default action would end the process
  EXPECT_EQ(stop_signal_received(), SIGUSR1);
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(stop_signal_received(), SIGTERM);
  clear_stop_signal();
  EXPECT_EQ(stop_signal_received(), 0);
  EXPECT_STREQ(stop_signal_name(SIGTERM), "SIGTERM");
  EXPECT_STREQ(stop_signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_STREQ(stop_signal_name(SIGUSR2), (std::string("signal ") + std::to_string(SIGUSR2)).c_str());
}

TEST_F(StopSignal, EveryRankAgreesOnASignalOnlyTheLastRankReceived) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(agree_on_stop(MPI_COMM_WORLD), 0);  // nothing received anywhere
  if (rank == size - 1) {
    ASSERT_EQ(std::raise(SIGUSR1), 0);
  }
  EXPECT_EQ(stop_signal_received(), rank == size - 1 ? SIGUSR1 : 0);
  EXPECT_EQ(agree_on_stop(MPI_COMM_WORLD), SIGUSR1);
  // SIGTERM on rank 0 and SIGUSR1 on the last: every rank sees the larger number, SIGTERM.
  if (rank == 0) {
    ASSERT_EQ(std::raise(SIGTERM), 0);
  }
  EXPECT_EQ(agree_on_stop(MPI_COMM_WORLD), SIGTERM);
}

}  // namespace test_stop_signal
}  // namespace edgefem
