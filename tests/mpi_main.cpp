// SPDX-License-Identifier: BSD-3-Clause
// GoogleTest main for executables that link PETSc: initialises MPI and PETSc once (also serially).
#include <gtest/gtest.h>
#include <petscsys.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
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
