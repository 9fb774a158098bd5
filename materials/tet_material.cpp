// SPDX-License-Identifier: BSD-3-Clause
/// \file tet_material.cpp
/// Construction of TetMaterial (isotropic and transversely isotropic StVK) and the Voigt helpers of
/// elasticity.hpp.
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "materials/elasticity.hpp"
#include "materials/formulation.hpp"

namespace edgefem {

namespace elasticity {

std::array<double, 36> isotropic_stiffness(double lambda, double mu) {
  std::array<double, 36> D{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) D[6 * i + j] = lambda;
    D[6 * i + i] += 2.0 * mu;
    D[6 * (i + 3) + i + 3] = mu;
  }
  return D;
}

namespace {
constexpr int kVoigt[3][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}};
}  // namespace

std::array<double, 36> rotate_stiffness(const std::array<double, 36>& D_local, const std::array<double, 9>& R) {
  double a[81], b[81];  // C_ijkl at 27 i + 9 j + 3 k + l
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l) a[27 * i + 9 * j + 3 * k + l] = D_local[6 * kVoigt[i][j] + kVoigt[k][l]];
  // Rotate one index at a time: out_{..i..} = sum_p R_ip in_{..p..}.
  const int stride[4] = {27, 9, 3, 1};
  double* in = a;
  double* out = b;
  for (int slot = 0; slot < 4; ++slot) {
    const int s = stride[slot];
    for (int idx = 0; idx < 81; ++idx) {
      const int i = (idx / s) % 3, base = idx - i * s;
      out[idx] = R[3 * i] * in[base] + R[3 * i + 1] * in[base + s] + R[3 * i + 2] * in[base + 2 * s];
    }
    std::swap(in, out);
  }
  const int pair[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {1, 2}, {2, 0}};
  std::array<double, 36> D{};
  for (int I = 0; I < 6; ++I)
    for (int J = 0; J < 6; ++J) {
      const int i = pair[I][0], j = pair[I][1], k = pair[J][0], l = pair[J][1];
      D[6 * I + J] = in[27 * i + 9 * j + 3 * k + l];
    }
  for (int I = 0; I < 6; ++I)  // exact symmetry (round-off in the rotation is not symmetric)
    for (int J = I + 1; J < 6; ++J) D[6 * I + J] = D[6 * J + I] = 0.5 * (D[6 * I + J] + D[6 * J + I]);
  return D;
}

std::array<double, 9> frame_from_axis(const std::array<double, 3>& f) {
  // Second axis: f x e_k normalised, e_k the coordinate axis least aligned with f; third: f x t1.
  int k = 0;
  for (int c = 1; c < 3; ++c)
    if (std::abs(f[c]) < std::abs(f[k])) k = c;
  double e[3] = {0, 0, 0};
  e[k] = 1.0;
  double t1[3] = {f[1] * e[2] - f[2] * e[1], f[2] * e[0] - f[0] * e[2], f[0] * e[1] - f[1] * e[0]};
  const double n = std::sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (double& v : t1) v /= n;
  const double t2[3] = {f[1] * t1[2] - f[2] * t1[1], f[2] * t1[0] - f[0] * t1[2], f[0] * t1[1] - f[1] * t1[0]};
  std::array<double, 9> R{};
  for (int r = 0; r < 3; ++r) {
    R[3 * r] = f[r];
    R[3 * r + 1] = t1[r];
    R[3 * r + 2] = t2[r];
  }
  return R;
}

bool is_positive_definite(const std::array<double, 36>& D) {
  double L[6][6] = {};
  double scale = 0.0;
  for (int i = 0; i < 6; ++i) scale = std::max(scale, std::abs(D[7 * i]));
  if (!(scale > 0.0) || !std::isfinite(scale)) return false;
  for (int j = 0; j < 6; ++j) {
    double d = D[7 * j];
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    if (!(d > 1e-12 * scale)) return false;
    L[j][j] = std::sqrt(d);
    for (int i = j + 1; i < 6; ++i) {
      double s = D[6 * i + j];
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  return true;
}

}  // namespace elasticity

namespace {

double voigt_k_vol(const std::array<double, 36>& D) {
  double s = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) s += D[6 * i + j];
  return s / 12.0;  // 3/4 of the Voigt bulk modulus sum / 9
}

}  // namespace

TetMaterial TetMaterial::isotropic_material(double young, double poisson, VolumetricPenalty volumetric) {
  if (!(young > 0.0) || !std::isfinite(young) || !(poisson > -1.0 && poisson < 0.5)) {
    std::ostringstream msg;
    msg.precision(10);
    msg << "isotropic material needs young > 0 and -1 < poisson < 0.5; got young=" << young << ", poisson=" << poisson;
    throw std::invalid_argument(msg.str());
  }
  TetMaterial m;
  m.isotropic = true;
  m.lambda = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
  m.mu = young / (2.0 * (1.0 + poisson));
  m.D = elasticity::isotropic_stiffness(m.lambda, m.mu);
  m.k_vol = young / (4.0 * (1.0 - 2.0 * poisson));
  m.volumetric = volumetric;
  return m;
}

TetMaterial TetMaterial::transversely_isotropic(std::array<double, 3> fibre, double young_fibre,
                                                double young_transverse, double shear_fibre, double poisson_fibre,
                                                double poisson_transverse, VolumetricPenalty volumetric) {
  std::ostringstream values;
  values.precision(10);
  values << "young_fibre=" << young_fibre << ", young_transverse=" << young_transverse
         << ", shear_fibre=" << shear_fibre << ", poisson_fibre=" << poisson_fibre
         << ", poisson_transverse=" << poisson_transverse;
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("transversely isotropic material " + what + "; got " + values.str());
  };
  const double norm = std::sqrt(fibre[0] * fibre[0] + fibre[1] * fibre[1] + fibre[2] * fibre[2]);
  if (!(norm > 0.0) || !std::isfinite(norm)) {
    std::ostringstream f;
    f.precision(10);
    f << "transversely isotropic material needs a nonzero, finite fibre direction; got fibre=[" << fibre[0] << ", "
      << fibre[1] << ", " << fibre[2] << "]";
    throw std::invalid_argument(f.str());
  }
  for (double& v : fibre) v /= norm;
  const double Ef = young_fibre, Et = young_transverse, G = shear_fibre, nft = poisson_fibre, ntt = poisson_transverse;
  for (double v : {Ef, Et, G, nft, ntt})
    if (!std::isfinite(v)) fail("needs finite constants");
  if (!(Ef > 0.0)) fail("needs young_fibre > 0");
  if (!(Et > 0.0)) fail("needs young_transverse > 0");
  if (!(G > 0.0)) fail("needs shear_fibre > 0");
  if (!(ntt > -1.0))
    fail(
        "is not positive definite: need 1 + poisson_transverse > 0 (shear modulus Et/(2(1+nu_tt)) in the "
        "transverse plane)");
  const double c = 1.0 - ntt - 2.0 * nft * nft * Et / Ef;
  if (!(c > 0.0)) {
    std::ostringstream msg;
    msg.precision(6);
    msg << "is not positive definite: need 1 - nu_tt - 2 nu_ft^2 Et/Ef > 0 (nu_tt = poisson_transverse, nu_ft = "
           "poisson_fibre, Et/Ef = young_transverse/young_fibre), but it is "
        << c;
    fail(msg.str());
  }
  // Local compliance (axis 0 = fibre), normal block inverted in closed form, shear diagonal reciprocals.
  double S[3][3] = {{1.0 / Ef, -nft / Ef, -nft / Ef},
                    {-nft / Ef, 1.0 / Et, -ntt / Et},
                    {-nft / Ef, -ntt / Et, 1.0 / Et}};
  double cof[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      cof[i][j] = S[i1][j1] * S[i2][j2] - S[i1][j2] * S[i2][j1];
    }
  const double det = S[0][0] * cof[0][0] + S[0][1] * cof[0][1] + S[0][2] * cof[0][2];
  std::array<double, 36> D_local{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) D_local[6 * i + j] = cof[j][i] / det;
  D_local[6 * 3 + 3] = G;                         // 2e12 (fibre-transverse)
  D_local[6 * 4 + 4] = Et / (2.0 * (1.0 + ntt));  // 2e23 (transverse plane)
  D_local[6 * 5 + 5] = G;                         // 2e31 (transverse-fibre)
  TetMaterial m;
  m.isotropic = false;
  m.D = elasticity::rotate_stiffness(D_local, elasticity::frame_from_axis(fibre));
  if (!elasticity::is_positive_definite(m.D)) fail("is not positive definite (numerically; check the constants)");
  m.k_vol = voigt_k_vol(m.D);
  m.volumetric = volumetric;
  return m;
}

}  // namespace edgefem
