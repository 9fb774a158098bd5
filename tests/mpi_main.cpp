// GoogleTest main for executables that link PETSc: initialises MPI and PETSc once (also serially).
#include <gtest/gtest.h>
#include <petscsys.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  PetscInitialize(&argc, &argv, nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  PetscFinalize();
  return result;
}
