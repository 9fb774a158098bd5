// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file volino_testing.hpp
/// Fixtures of the tests of Volino's membrane (test_volino*.cpp): stiffening test curves, random warp directions and
/// material tables of each law family, the membrane on a TriMesh, one triangle's positions, a dense matrix as Eigen.
/// Test-only, header-only; not used by the library.
#include <Eigen/Dense>

#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "materials/curve.hpp"
#include "materials/volino.hpp"
#include "tests/support/formulation_testing.hpp"
#include "tests/support/meshes.hpp"

namespace edgefem::testing::volino {

/// Stiffening test curves (knots listed in the names' comments).
inline StressCurve weft_curve() { return StressCurve({{0.01, 0.4}, {0.05, 2.5}, {0.1, 7.0}, {0.2, 25.0}}, "weft"); }
inline StressCurve warp_curve() {
  return StressCurve({{0.02, 1.0}, {0.06, 3.5}, {0.1, 9.0}, {0.15, 20.0}, {0.3, 80.0}}, "warp");
}
inline StressCurve shear_curve() { return StressCurve({{0.05, 0.05}, {0.2, 0.3}, {0.5, 2.0}}, "shear"); }

/// A random warp direction, angle and up vector.
inline WarpDirection random_warp(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  WarpDirection w;
  w.direction = {u(rng), u(rng), u(rng)};
  w.angle = 3.0 * u(rng);
  w.up = {u(rng), u(rng), u(rng)};
  return w;
}

/// One material per triangle of the given law family: "iso" (E in [1, 5], nu in [-0.3, 0.9]), "ortho" (random
/// positive definite), "curves" (the test curves scaled by [0.5, 2]); h in [0.01, 0.2]; random warp directions.
inline std::vector<VolinoMaterial> random_volino(const std::string& law, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> E(1.0, 5.0), nu(-0.3, 0.9), h(0.01, 0.2), G(0.2, 2.0), s(0.5, 2.0);
  std::vector<VolinoMaterial> out(n);
  for (auto& m : out) {
    m.thickness = h(rng);
    m.warp = random_warp(rng);
    if (law == "iso") {
      m.law = VolinoLaw::isotropic(E(rng), nu(rng));
    } else if (law == "ortho") {
      const double e1 = E(rng), e2 = E(rng);
      const double lim = std::sqrt(e1 / e2);  // positive definite for nu^2 < E_weft / E_warp
      m.law = VolinoLaw::orthotropic(e1, e2, G(rng), 0.9 * lim * (s(rng) - 1.25) / 0.75);
    } else {
      auto scaled = [&](const StressCurve& c) {
        const double k = s(rng);
        std::vector<CurvePoint> p;
        for (std::size_t i = 1; i < c.knot_strains().size(); ++i)
          p.push_back({c.knot_strains()[i], k * c.knot_stresses()[i]});
        return StressCurve(p);
      };
      m.law = VolinoLaw::curves(scaled(weft_curve()), scaled(warp_curve()), scaled(shear_curve()));
    }
  }
  return out;
}

/// Volino's membrane on m, one material per triangle.
inline std::unique_ptr<VolinoMembrane> make(const TriMesh& m, std::span<const VolinoMaterial> mat,
                                            VolinoStabilization stab = VolinoStabilization::none) {
  return make_volino(m.coords, m.tris, mat, iota_ids(mat.size()), stab);
}

/// The 9 coordinates of triangle t's vertices in x.
inline std::array<double, 9> tri_coords(const TriMesh& m, std::span<const double> x, std::size_t t) {
  std::array<double, 9> X;
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) X[3 * i + c] = x[3 * std::size_t(m.tris[3 * t + i]) + c];
  return X;
}

/// A dense row-major n x n matrix as Eigen.
inline Eigen::MatrixXd as_matrix(const std::vector<double>& K, std::size_t n) {
  Eigen::MatrixXd M(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) M(i, j) = K[i * n + j];
  return M;
}

}  // namespace edgefem::testing::volino
