// SPDX-License-Identifier: BSD-3-Clause
// Tests of the material layer (materials/tet_material.cpp, elasticity.hpp): transversely isotropic StVK against
// its defining compliance (uniaxial and shear tests in the global frame), its isotropic limit, independence of
// the completion of the fibre frame, k_vol = 3/4 of the Voigt bulk modulus, and the error messages.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>

#include "materials/elasticity.hpp"
#include "materials/formulation.hpp"

namespace edgefem {
namespace {

using Mat6 = Eigen::Matrix<double, 6, 6>;

Mat6 to_eigen(const std::array<double, 36>& D) {
  Mat6 m;
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) m(r, c) = D[6 * r + c];
  return m;
}

double rel_diff(const std::array<double, 36>& a, const std::array<double, 36>& b) {
  return (to_eigen(a) - to_eigen(b)).cwiseAbs().maxCoeff() / to_eigen(b).cwiseAbs().maxCoeff();
}

/// Voigt vector (engineering shear for strains, plain for stresses) of the symmetric tensor sym(a b^T) * scale.
Eigen::Matrix<double, 6, 1> voigt_stress(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  const Eigen::Matrix3d s = 0.5 * (a * b.transpose() + b * a.transpose());
  Eigen::Matrix<double, 6, 1> v;
  v << s(0, 0), s(1, 1), s(2, 2), s(0, 1), s(1, 2), s(2, 0);
  return v;
}

/// Tensor strain from the Voigt vector with engineering shear.
Eigen::Matrix3d strain_tensor(const Eigen::Matrix<double, 6, 1>& e) {
  Eigen::Matrix3d E;
  E << e[0], e[3] / 2, e[5] / 2, e[3] / 2, e[1], e[4] / 2, e[5] / 2, e[4] / 2, e[2];
  return E;
}

struct TiConstants {
  double Ef, Et, G, nft, ntt;
};
const TiConstants kCarbon{10.0, 2.0, 1.3, 0.28, 0.4};

const std::array<std::array<double, 3>, 5> kFibres = {
    {{1, 0, 0}, {0, 0, 2}, {1, 1, 0}, {0.3, -0.5, 0.8}, {-2.0, 0.1, 0.7}}};

TEST(Anisotropic, UniaxialAndShearComplianceInTheGlobalFrame) {
  const auto& c = kCarbon;
  for (const auto& fib : kFibres) {
    const auto m = TetMaterial::transversely_isotropic(fib, c.Ef, c.Et, c.G, c.nft, c.ntt, VolumetricPenalty::none);
    EXPECT_FALSE(m.isotropic);
    const Mat6 Dinv = to_eigen(m.D).inverse();
    const Eigen::Vector3d f = Eigen::Vector3d(fib[0], fib[1], fib[2]).normalized();
    // Any two transverse unit vectors (not the library's frame): rotate a perpendicular by 0.7 rad about f.
    const Eigen::Vector3d p = f.unitOrthogonal();
    const Eigen::Vector3d t1 = Eigen::AngleAxisd(0.7, f) * p, t2 = f.cross(t1);
    const double tol = 1e-12;
    {  // unit uniaxial stress along the fibre: 1/Ef along it, -nu_ft/Ef across, no shear
      const Eigen::Matrix3d E = strain_tensor(Dinv * voigt_stress(f, f));
      EXPECT_NEAR(f.dot(E * f), 1 / c.Ef, tol);
      EXPECT_NEAR(t1.dot(E * t1), -c.nft / c.Ef, tol);
      EXPECT_NEAR(t2.dot(E * t2), -c.nft / c.Ef, tol);
      EXPECT_NEAR(f.dot(E * t1), 0.0, tol);
      EXPECT_NEAR(t1.dot(E * t2), 0.0, tol);
    }
    {  // across the fibre (along t1): 1/Et along it, -nu_tt/Et along t2, -nu_ft/Ef along the fibre
      const Eigen::Matrix3d E = strain_tensor(Dinv * voigt_stress(t1, t1));
      EXPECT_NEAR(t1.dot(E * t1), 1 / c.Et, tol);
      EXPECT_NEAR(t2.dot(E * t2), -c.ntt / c.Et, tol);
      EXPECT_NEAR(f.dot(E * f), -c.nft / c.Ef, tol);
      EXPECT_NEAR(f.dot(E * t2), 0.0, tol);
    }
    {  // unit shear stress in a plane containing the fibre: engineering shear 1/G_ft
      // voigt_stress(f, t2) is sym(f t2^T): shear stress tau = 1/2; engineering shear 2 E(f, t2) = tau / G.
      const Eigen::Matrix3d E = strain_tensor(Dinv * voigt_stress(f, t2));
      EXPECT_NEAR(2 * f.dot(E * t2), 0.5 / c.G, tol);
      EXPECT_NEAR(f.dot(E * f), 0.0, tol);
    }
    {  // shear in the transverse plane: engineering shear tau / G_tt, G_tt = Et / (2 (1 + nu_tt))
      const Eigen::Matrix3d E = strain_tensor(Dinv * voigt_stress(t1, t2));
      EXPECT_NEAR(2 * t1.dot(E * t2), 0.5 * 2 * (1 + c.ntt) / c.Et, tol);
      EXPECT_NEAR(f.dot(E * f), 0.0, tol);
    }
  }
}

TEST(Anisotropic, IsotropicLimitEqualsIsotropicD) {
  for (double E : {1.0, 250.0})
    for (double nu : {0.0, 0.3, 0.45, -0.2}) {
      const auto iso = TetMaterial::isotropic_material(E, nu, VolumetricPenalty::cubic);
      for (const auto& fib : kFibres) {
        const auto ti = TetMaterial::transversely_isotropic(fib, E, E, E / (2 * (1 + nu)), nu, nu,
                                                            VolumetricPenalty::cubic);
        EXPECT_LT(rel_diff(ti.D, iso.D), 1e-12) << "E=" << E << " nu=" << nu;
        EXPECT_NEAR(ti.k_vol, iso.k_vol, 1e-12 * iso.k_vol);
        EXPECT_EQ(ti.volumetric, VolumetricPenalty::cubic);
      }
      // The isotropic material's own constants.
      EXPECT_NEAR(iso.k_vol, E / (4 * (1 - 2 * nu)), 1e-14 * iso.k_vol);
      EXPECT_TRUE(iso.isotropic);
      EXPECT_NEAR(iso.D[0], iso.lambda + 2 * iso.mu, 1e-14 * iso.D[0]);
      EXPECT_NEAR(iso.D[1], iso.lambda, 1e-14 * iso.D[0]);
      EXPECT_NEAR(iso.D[21], iso.mu, 1e-14 * iso.D[0]);
    }
}

TEST(Anisotropic, IndependentOfTheCompletionOfTheFibreFrame) {
  const auto& c = kCarbon;
  // D_local = S^-1 from the compliance of the specification (Eigen inverse, independent of the library's).
  Mat6 S = Mat6::Zero();
  S(0, 0) = 1 / c.Ef;
  S(1, 1) = S(2, 2) = 1 / c.Et;
  S(0, 1) = S(1, 0) = S(0, 2) = S(2, 0) = -c.nft / c.Ef;
  S(1, 2) = S(2, 1) = -c.ntt / c.Et;
  S(3, 3) = S(5, 5) = 1 / c.G;
  S(4, 4) = 2 * (1 + c.ntt) / c.Et;
  const Mat6 Dl = S.inverse();
  std::array<double, 36> D_local;
  for (int r = 0; r < 6; ++r)
    for (int q = 0; q < 6; ++q) D_local[6 * r + q] = Dl(r, q);
  for (const auto& fib : kFibres) {
    const Eigen::Vector3d f = Eigen::Vector3d(fib[0], fib[1], fib[2]).normalized();
    const auto ref = TetMaterial::transversely_isotropic(fib, c.Ef, c.Et, c.G, c.nft, c.ntt, VolumetricPenalty::none).D;
    for (double angle : {0.0, 0.4, 1.3, 2.9, 4.0})
      for (bool left_handed : {false, true}) {
        const Eigen::Vector3d t1 = Eigen::AngleAxisd(angle, f) * f.unitOrthogonal();
        const Eigen::Vector3d t2 = left_handed ? Eigen::Vector3d(-f.cross(t1)) : Eigen::Vector3d(f.cross(t1));
        std::array<double, 9> R;
        for (int r = 0; r < 3; ++r) R[3 * r] = f[r], R[3 * r + 1] = t1[r], R[3 * r + 2] = t2[r];
        const auto D = elasticity::rotate_stiffness(D_local, R);
        EXPECT_LT(rel_diff(D, ref), 1e-12) << "angle " << angle << (left_handed ? " (left-handed)" : "");
      }
    // The library's frame is orthonormal, right-handed and starts with the fibre.
    const auto R = elasticity::frame_from_axis({f[0], f[1], f[2]});
    Eigen::Matrix3d Rm;
    for (int q = 0; q < 9; ++q) Rm(q / 3, q % 3) = R[q];
    EXPECT_LT((Rm.transpose() * Rm - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff(), 1e-15);
    EXPECT_NEAR(Rm.determinant(), 1.0, 1e-15);
    EXPECT_LT((Rm.col(0) - f).norm(), 1e-15);
  }
}

TEST(Anisotropic, KvolIsThreeQuartersOfTheVoigtBulkModulus) {
  const auto& c = kCarbon;
  const auto m = TetMaterial::transversely_isotropic({0.3, 0.2, 0.1}, c.Ef, c.Et, c.G, c.nft, c.ntt,
                                                     VolumetricPenalty::quadratic);
  double sum = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) sum += m.D[6 * i + j];
  EXPECT_NEAR(m.k_vol, 0.75 * sum / 9, 1e-14 * m.k_vol);
  EXPECT_EQ(m.volumetric, VolumetricPenalty::quadratic);
  // D symmetric positive definite.
  const Mat6 D = to_eigen(m.D);
  EXPECT_EQ((D - D.transpose()).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Mat6>(D).eigenvalues().minCoeff(), 0.0);
}

/// The message of the std::invalid_argument thrown by f(), or "" if none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Anisotropic, ErrorsNameTheViolatedCondition) {
  const auto ti = [](double Ef, double Et, double G, double nft, double ntt, std::array<double, 3> fib = {1, 0, 0}) {
    return error_of([&] { TetMaterial::transversely_isotropic(fib, Ef, Et, G, nft, ntt, VolumetricPenalty::none); });
  };
  auto contains = [](const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; };

  const std::string pd = ti(10, 2, 1, 0.3, 1.2);  // nu_tt = 1.2
  EXPECT_TRUE(contains(pd, "not positive definite")) << pd;
  EXPECT_TRUE(contains(pd, "1 - nu_tt - 2 nu_ft^2 Et/Ef > 0")) << pd;
  EXPECT_TRUE(contains(pd, "poisson_transverse=1.2")) << pd;
  EXPECT_TRUE(contains(pd, "young_fibre=10")) << pd;

  const std::string big_nft = ti(1, 1, 0.5, 0.8, 0.3);  // 1 - 0.3 - 2 * 0.64 < 0
  EXPECT_TRUE(contains(big_nft, "1 - nu_tt - 2 nu_ft^2 Et/Ef > 0")) << big_nft;
  EXPECT_TRUE(contains(big_nft, "it is -0.58")) << big_nft;  // the value of the violated expression
  EXPECT_TRUE(ti(2, 1, 0.5, 0.8, 0.3).empty()) << "the same nu_ft is fine with Ef / Et = 2";

  const std::string neg_ntt = ti(10, 2, 1, 0.3, -1.5);
  EXPECT_TRUE(contains(neg_ntt, "1 + poisson_transverse > 0")) << neg_ntt;
  EXPECT_TRUE(contains(ti(0, 2, 1, 0.3, 0.3), "young_fibre > 0"));
  EXPECT_TRUE(contains(ti(10, -2, 1, 0.3, 0.3), "young_transverse > 0"));
  EXPECT_TRUE(contains(ti(10, 2, 0, 0.3, 0.3), "shear_fibre > 0"));
  EXPECT_TRUE(contains(ti(10, 2, 1, 0.3, 0.3, {0, 0, 0}), "fibre direction"));
  EXPECT_TRUE(contains(ti(10, 2, 1, NAN, 0.3), "finite"));
  EXPECT_TRUE(ti(10, 2, 1, 0.3, 0.3).empty());

  for (double nu : {0.5, -1.0, 0.7})
    EXPECT_TRUE(contains(error_of([&] { TetMaterial::isotropic_material(1.0, nu, VolumetricPenalty::none); }),
                         "-1 < poisson < 0.5"));
  EXPECT_TRUE(contains(error_of([] { TetMaterial::isotropic_material(0.0, 0.3, VolumetricPenalty::none); }),
                       "young > 0"));
}

}  // namespace
}  // namespace edgefem
