// SPDX-License-Identifier: BSD-3-Clause
// runtime/mpi_startup.hpp: when edgefem asks Open MPI for the ob1 point-to-point layer (a job on one node) and when
// it leaves the choice alone (a user's OMPI_MCA_pml, ranks on several nodes, a launcher other than mpirun).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <utility>
#include <string>

#include "runtime/mpi_startup.hpp"

namespace edgefem {
namespace {

/// The variables prefer_ob1_on_one_node() reads, set as given (nullopt: unset) for one call, then restored.
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

  /// Returns (whether it set the variable, OMPI_MCA_pml afterwards or "unset").
  std::pair<bool, std::string> call(std::map<std::string, std::string> set) {
    for (const char* name : kNames) unsetenv(name);
    for (const auto& [name, value] : set) setenv(name.c_str(), value.c_str(), 1);
    const bool did = prefer_ob1_on_one_node();
    const char* pml = std::getenv("OMPI_MCA_pml");
    return {did, pml ? pml : "unset"};
  }

 private:
  static constexpr const char* kNames[] = {"OMPI_MCA_pml", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                           "PMIX_RANK", "PMI_RANK"};
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

TEST(MpiStartup, YieldsWhenIdleUnlessTheUserChose) {
  const char* saved = std::getenv("OMPI_MCA_mpi_yield_when_idle");
  const std::string kept = saved ? saved : "";
  unsetenv("OMPI_MCA_mpi_yield_when_idle");
  EXPECT_TRUE(yield_when_idle());
  EXPECT_STREQ(std::getenv("OMPI_MCA_mpi_yield_when_idle"), "1");
  setenv("OMPI_MCA_mpi_yield_when_idle", "0", 1);  // the user's choice (or mpirun --mca) wins
  EXPECT_FALSE(yield_when_idle());
  EXPECT_STREQ(std::getenv("OMPI_MCA_mpi_yield_when_idle"), "0");
  if (saved)
    setenv("OMPI_MCA_mpi_yield_when_idle", kept.c_str(), 1);
  else
    unsetenv("OMPI_MCA_mpi_yield_when_idle");
}

}  // namespace
}  // namespace edgefem
