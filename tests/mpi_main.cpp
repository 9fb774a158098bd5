// SPDX-License-Identifier: BSD-3-Clause
// GoogleTest main for executables that link PETSc: initialises MPI and PETSc once (also serially).
#include <gtest/gtest.h>
#include <petscsys.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <system_error>

#include "runtime/mpi_startup.hpp"

namespace {

/// A process started without mpiexec (a singleton, as CTest runs the unit tests, two at a time) gets its own Open
/// MPI session directory: Open MPI 4.1 creates /tmp/ompi.<host>.<uid> with a check-then-mkdir, and two singletons
/// starting at once can both see it missing, the second failing MPI_Init with "mkdir ... File exists" (seen once
/// in a CI-like run). Returns the directory to remove at exit, or "" when mpiexec started the process.
std::string private_session_directory() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("OMPI_MCA_orte_tmpdir_base") != nullptr) return "";
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path(ec) / ("edgefem-test-ompi-" + std::to_string(getpid()));
  if (ec || !std::filesystem::create_directories(dir, ec) || ec) return "";
  setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), 1);
  return dir.string();
}

/// Whether `name` matches the glob `pattern` (`*` any text, `?` one character), as GoogleTest's filter matches.
bool glob_matches(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return name.empty();
  if (pattern[0] == '*')
    return glob_matches(pattern.substr(1), name) || (!name.empty() && glob_matches(pattern, name.substr(1)));
  return !name.empty() && (pattern[0] == '?' || pattern[0] == name[0]) && glob_matches(pattern.substr(1), name.substr(1));
}

/// Whether `name` matches one of the ':'-separated globs of `patterns`.
bool any_glob_matches(std::string_view patterns, std::string_view name) {
  while (true) {
    const std::size_t colon = patterns.find(':');
    if (glob_matches(patterns.substr(0, colon), name)) return true;
    if (colon == std::string_view::npos) return false;
    patterns.remove_prefix(colon + 1);
  }
}

/// Whether GoogleTest's --gtest_filter (`positive[-negative]`) selects the test `name`.
bool filter_selects(const std::string& filter, const std::string& name) {
  const std::size_t dash = filter.find('-');
  const std::string positive = filter.substr(0, dash);
  const bool in = positive.empty() || any_glob_matches(positive, name);
  return in && (dash == std::string::npos || !any_glob_matches(std::string_view(filter).substr(dash + 1), name));
}

/// `--file test_<topic>.cpp[,test_<other>.cpp...]` (the unit test executable holds every tests/unit file, the
/// distributed one every tests/mpi file: tests/edgefem_tests.cmake): keeps only the cases defined in those files (GoogleTest records each case's file), within --gtest_filter if one is given.
/// Removes the argument; returns false after a message when no case was defined in one of the files, so that a
/// misspelt or emptied file fails instead of passing with nothing run.
bool select_file(int& argc, char** argv) {
  std::string file;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
      file = argv[++i];
    } else if (std::strncmp(argv[i], "--file=", 7) == 0) {
      file = argv[i] + 7;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (file.empty()) return true;
  std::map<std::string, int> defined;  // file name -> its cases in this executable
  for (std::size_t begin = 0; begin <= file.size();) {
    const std::size_t comma = std::min(file.find(',', begin), file.size());
    defined[file.substr(begin, comma - begin)] = 0;
    begin = comma + 1;
  }
  const std::string filter = ::testing::GTEST_FLAG(filter);
  std::string selected;
  const ::testing::UnitTest& tests = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < tests.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *tests.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(t);
      const auto it = defined.find(std::filesystem::path(info.file()).filename().string());
      if (it == defined.end()) continue;
      ++it->second;
      const std::string name = std::string(suite.name()) + "." + info.name();
      if (filter_selects(filter, name)) selected += (selected.empty() ? "" : ":") + name;
    }
  }
  for (const auto& [name, cases] : defined) {
    if (cases > 0) continue;
    std::fprintf(stderr, "%s: --file %s: no test case of this executable is defined in a file of that name\n", argv[0],
                 name.c_str());
    return false;
  }
  // A filter that selects none of the file's cases runs none (an empty filter would run them all).
  ::testing::GTEST_FLAG(filter) = selected.empty() ? "-*" : selected;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!select_file(argc, argv)) return 1;
  const std::string session_directory = private_session_directory();
  edgefem::prefer_ob1_on_one_node();  // as the edgefem executable does (runtime/mpi_startup.hpp)
  edgefem::yield_when_idle();
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  PetscFinalize();
  if (!session_directory.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(session_directory, ec);
  }
  return result;
}
