// SPDX-License-Identifier: BSD-3-Clause
// runtime/mpi_startup.hpp: when edgefem asks Open MPI for the ob1 point-to-point layer (a job on one node) and when
// it leaves the choice alone (a user's OMPI_MCA_pml, ranks on several nodes, a launcher other than mpirun); when it
// asks waiting ranks to yield (several ranks) and when not (one rank, or the user's choice).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <utility>
#include <string>

#include "runtime/mpi_startup.hpp"

namespace edgefem {
namespace {

/// The variables prefer_ob1_on_one_node() and yield_when_idle() read, set as given (the rest unset) for one call of
/// either, then restored.
class LaunchEnvironment {
 public:
  LaunchEnvironment() {
    for (const char* name : kNames)
      if (const char* v = std::getenv(name)) saved_[name] = v;
  }
  ~LaunchEnvironment() {
    for (const char* name : kNames) {
      const auto it = saved_.find(name);
      if (it == saved_.end())
        unsetenv(name);
      else
        setenv(name, it->second.c_str(), 1);
    }
  }
  LaunchEnvironment(const LaunchEnvironment&) = delete;
  LaunchEnvironment& operator=(const LaunchEnvironment&) = delete;

  /// Returns (whether `function` set its variable, that variable afterwards or "unset"); by default the function
  /// is prefer_ob1_on_one_node() and its variable OMPI_MCA_pml.
  std::pair<bool, std::string> call(std::map<std::string, std::string> set, bool (*function)() = prefer_ob1_on_one_node,
                                    const char* variable = "OMPI_MCA_pml") {
    for (const char* name : kNames) unsetenv(name);
    for (const auto& [name, value] : set) setenv(name.c_str(), value.c_str(), 1);
    const bool did = function();
    const char* value = std::getenv(variable);
    return {did, value ? value : "unset"};
  }

 private:
  static constexpr const char* kNames[] = {"OMPI_MCA_pml", "OMPI_MCA_mpi_yield_when_idle", "OMPI_COMM_WORLD_SIZE",
                                           "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS", "PMI_SIZE", "PMIX_RANK",
                                           "PMI_RANK"};
  std::map<std::string, std::string> saved_;
};

TEST(MpiStartup, AsksForOb1OnlyWhenEveryRankIsOnThisNodeAndTheUserDidNotChoose) {
  LaunchEnvironment env;
  using Result = std::pair<bool, std::string>;
  // mpirun, all 4 ranks here.
  EXPECT_EQ(env.call({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), Result(true, "ob1"));
  // mpirun, 4 ranks of 8 here: several nodes, Open MPI chooses.
  EXPECT_EQ(env.call({{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), Result(false, "unset"));
  // The user's (or mpirun --mca pml's) choice wins, on one node too.
  EXPECT_EQ(env.call({{"OMPI_MCA_pml", "^ucx"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
            Result(false, "^ucx"));
  // No launcher: a singleton, one process on one node.
  EXPECT_EQ(env.call({}), Result(true, "ob1"));
  // Another launcher (srun with PMIx or PMI-2): the node count is not known here, Open MPI chooses.
  EXPECT_EQ(env.call({{"PMIX_RANK", "0"}}), Result(false, "unset"));
  EXPECT_EQ(env.call({{"PMI_RANK", "3"}}), Result(false, "unset"));
}

TEST(MpiStartup, YieldsWhenIdleOnlyWithSeveralRanksUnlessTheUserChose) {
  LaunchEnvironment env;
  const auto yield = [&env](std::map<std::string, std::string> set) {
    return env.call(std::move(set), yield_when_idle, "OMPI_MCA_mpi_yield_when_idle");
  };
  using Result = std::pair<bool, std::string>;
  EXPECT_EQ(yield({{"OMPI_COMM_WORLD_SIZE", "2"}}), Result(true, "1"));
  EXPECT_EQ(yield({{"SLURM_NTASKS", "64"}, {"PMIX_RANK", "5"}}), Result(true, "1"));
  EXPECT_EQ(yield({{"PMI_SIZE", "3"}, {"PMI_RANK", "1"}}), Result(true, "1"));
  // A launcher that does not say how many: yield, as a waiting rank should.
  EXPECT_EQ(yield({{"PMIX_RANK", "0"}}), Result(true, "1"));
  // One rank has no one to wait for: no yield (a singleton, mpirun -n 1, srun -n 1).
  EXPECT_EQ(yield({}), Result(false, "unset"));
  EXPECT_EQ(yield({{"OMPI_COMM_WORLD_SIZE", "1"}}), Result(false, "unset"));
  EXPECT_EQ(yield({{"SLURM_NTASKS", "1"}, {"PMIX_RANK", "0"}}), Result(false, "unset"));
  // The user's choice (or mpirun --mca) wins.
  EXPECT_EQ(yield({{"OMPI_MCA_mpi_yield_when_idle", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}}), Result(false, "0"));
}

}  // namespace
}  // namespace edgefem
