// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file vtk_output_testing.hpp
/// The fixture of the io/vtk_output tests (test_vtk_output.cpp, test_vtk_pvd.cpp: one GoogleTest suite across
/// both files, so one fixture class). Test-only, header-only.
#include "tests/support/test_directory.hpp"

namespace edgefem::testing {

/// Every VtkOutput test writes into a fresh directory of its own, removed afterwards.
class VtkOutput : public DirectoryTest {
 protected:
  VtkOutput() : DirectoryTest("edgefem_vtk") {}
};

}  // namespace edgefem::testing
