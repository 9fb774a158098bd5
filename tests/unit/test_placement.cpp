// SPDX-License-Identifier: BSD-3-Clause
// The oversubscription warning (issue 10, item 6): when a node's threads outnumber the cores its ranks may use.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/placement.hpp"

namespace edgefem {
namespace {

RankPlacement placed(int rank, int threads, std::vector<int> cpus) { return {rank, threads, std::move(cpus)}; }

TEST(Placement, SilentWhenEveryThreadHasACore) {
  EXPECT_EQ(oversubscription_warning({placed(0, 1, {0}), placed(1, 1, {1})}, "n"), "");  // 2 x 1, bound
  EXPECT_EQ(oversubscription_warning({placed(0, 2, {0, 1})}, "n"), "");                  // 1 x 2, unbound
  EXPECT_EQ(oversubscription_warning({placed(0, 2, {0, 1, 2, 3}), placed(1, 2, {0, 1, 2, 3})}, "n"), "");
}

TEST(Placement, WarnsWhenRanksTimesThreadsExceedTheCores) {
  // mpirun -n 2 with OMP_NUM_THREADS=4 on 2 cores; mpirun -n 4 --oversubscribe on 2 cores.
  const std::string threads = oversubscription_warning({placed(0, 4, {0, 1}), placed(1, 4, {0, 1})}, "vm");
  EXPECT_NE(threads.find("2 ranks x 4 threads = 8 threads share the 2 cores they may use on vm"), std::string::npos)
      << threads;
  EXPECT_NE(threads.find("ranks x OMP_NUM_THREADS <= 2"), std::string::npos) << threads;
  const std::string ranks = oversubscription_warning({placed(0, 1, {0, 1}), placed(1, 1, {0, 1}), placed(2, 1, {0, 1}),
                                                      placed(3, 1, {0, 1})},
                                                     "vm");
  EXPECT_NE(ranks.find("4 ranks x 1 thread = 4 threads share the 2 cores"), std::string::npos) << ranks;
}

TEST(Placement, WarnsWhenABoundRankRunsMoreThreadsThanItsCores) {
  // OMP_NUM_THREADS=2 mpirun -n 1 on 2 cores: Open MPI binds the rank to core 0; its two threads share it.
  const std::string w = oversubscription_warning({placed(0, 2, {0})}, "vm", 2);
  EXPECT_NE(w.find("1 rank x 2 threads = 2 threads share the 1 core the ranks are bound to, of 2 on vm"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("--bind-to none"), std::string::npos) << w;
  // The same binding on a 1-core machine: too few cores, not binding.
  const std::string one = oversubscription_warning({placed(0, 2, {0})}, "vm", 1);
  EXPECT_NE(one.find("2 threads share the 1 core they may use"), std::string::npos) << one;
  // Bound ranks whose threads fit the node but not their own core sets.
  const std::string bound = oversubscription_warning({placed(0, 2, {0, 1}), placed(1, 2, {2}), placed(2, 1, {3, 4})},
                                                     "vm");
  EXPECT_NE(bound.find("rank 1 runs 2 threads but is bound to 1 core on vm"), std::string::npos) << bound;
  EXPECT_NE(bound.find("--bind-to none"), std::string::npos) << bound;
}

}  // namespace
}  // namespace edgefem
