// SPDX-License-Identifier: BSD-3-Clause
// Finite-difference tests of Delingette's membranes (materials/membrane.hpp, materials/trbs.cpp): f = dW/dx and
// K = df/dx for "trbs", "trqs", "springs" and "linear-membrane" on single triangles (generic, obtuse, sliver) and
// on a curved, shuffled multi-triangle patch, deformed randomly, stretched, compressed, rotated and nearly
// collapsed; force() = force_and_stiffness(); K exactly symmetric.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include "materials/formulation.hpp"
#include "materials/membrane.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/membrane_testing.hpp"

namespace edgefem {
namespace {

using namespace testing;            // tests/support: meshes, finite differences
using namespace testing::membrane;  // tests/support/membrane_testing.hpp

using FdParam = std::tuple<std::string, std::string, std::string>;  // model, mesh, deformation
class MembraneFd : public ::testing::TestWithParam<FdParam> {};

TEST_P(MembraneFd, ForceAndStiffnessMatchFiniteDifferences) {
  const auto& [model, mesh_name, def] = GetParam();
  const TriMesh m = triangle_mesh_by_name(mesh_name);
  const auto mat = random_materials(m.n_tris(), 11);
  const auto form = make(model, m, mat);
  EXPECT_EQ(form->name(), model);
  const auto x = deform_triangles(m, def, 5);

  const auto c = testing::compare_with_finite_differences(*form, x, 1e-6);
  EXPECT_LT(c.force_error, 1e-6) << "f vs dW/dx";
  EXPECT_LT(c.stiffness_error, 1e-6) << "K vs df/dx";
  record_fd_errors(c);
  EXPECT_GT(max_abs(c.f), 0.0);
  EXPECT_EQ(c.f_only, c.f) << "force() and force_and_stiffness() agree";
  EXPECT_EQ(c.asymmetry, 0.0) << "K exactly symmetric (edge blocks stored with their transposes, diagonal blocks "
                                 "symmetrised), max |K| "
                              << max_abs(c.K);
}

INSTANTIATE_TEST_SUITE_P(MembraneAllModels, MembraneFd,
                         ::testing::Combine(::testing::Values("trbs", "trqs", "springs", "linear-membrane"),
                                            ::testing::Values("tri", "obtuse", "sliver", "patch"),
                                            ::testing::Values("random", "stretched", "compressed", "rotated",
                                                              "collapsed")),
                         [](const auto& info) {
                           std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                           std::get<2>(info.param);
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace edgefem
