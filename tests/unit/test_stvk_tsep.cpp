// Tests of the edge/TSEP StVK and NSN formulations (materials/stvk_tsep.cpp): finite-difference consistency of
// f and K for all three tetrahedral formulations, Kikuuwe's eq. 19 against the closed-form coefficients, the
// edge-sum structure of the energy (eq. 24), the block pattern and input checks.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include "materials/formulation.hpp"
#include "materials/formulation_testing.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {
namespace {

using testing::TetMesh;

std::unique_ptr<TetFormulation> make(const std::string& name, const TetMesh& m, std::span<const TetMaterial> mat) {
  if (name == "stvk-tl") return make_stvk_tl(m.coords, m.tets, mat);
  return make_stvk_tsep(m.coords, m.tets, mat, name == "stvk-nsn");
}

/// Per-tet different materials; with `volumetric`, two thirds of the tets get the penalty.
std::vector<TetMaterial> random_materials(LocalIndex n_tets, bool volumetric, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> young(1.0, 5.0), nu(0.2, 0.45);
  std::vector<TetMaterial> mat;
  for (LocalIndex t = 0; t < n_tets; ++t) {
    const double E = young(rng), p = nu(rng);
    mat.push_back(TetMaterial::from_young_poisson(E, p, volumetric && t % 3 != 2));
  }
  return mat;
}

TetMesh single_tet(bool negative) {
  TetMesh m;
  m.coords = {0.1, -0.05, 0.02, 1.0, 0.1, -0.1, 0.2, 0.9, 0.05, -0.1, 0.15, 1.1};
  m.tets = negative ? std::vector<LocalIndex>{0, 2, 1, 3} : std::vector<LocalIndex>{0, 1, 2, 3};
  return m;
}

TetMesh mesh_by_name(const std::string& name) {
  if (name == "tet") return single_tet(false);
  if (name == "tet_neg") return single_tet(true);
  return testing::kuhn_box(2, 2, 2, 0.5, 0.12, 3);  // 48 tets sharing faces, jittered interior vertex
}

/// Deformations x = c + A (X - c) + t + noise of the reference X (centroid c).
std::vector<double> deform(const TetMesh& m, const std::string& kind, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::Matrix3d A = Eigen::Matrix3d::Identity();
  double noise = 0.0;
  Eigen::Vector3d shift = Eigen::Vector3d::Zero();
  if (kind == "random") {
    noise = 0.15;
  } else if (kind == "stretched") {
    A << 1.4, 0.1, 0.0, 0.05, 0.8, 0.1, 0.0, -0.1, 1.15;
    noise = 0.02;
  } else if (kind == "compressed") {  // J ~ 0.4: volumetric penalty active
    A = 0.75 * Eigen::Matrix3d::Identity();
    noise = 0.03;
  } else if (kind == "rotated") {
    Eigen::Matrix3d S;
    S << 1.3, 0.1, 0.0, 0.0, 0.9, 0.05, 0.1, 0.0, 1.1;
    A = Eigen::AngleAxisd(1.1, Eigen::Vector3d(0.3, -0.5, 0.8).normalized()).toRotationMatrix() * S;
    shift << 3.0, -1.0, 2.0;
    noise = 0.02;
  } else if (kind == "near_flat") {  // J ~ 0.03
    A.diagonal() << 1.0, 1.0, 0.03;
    noise = 0.005;
  } else if (kind == "inverted") {  // J < 0
    A.diagonal() << 1.0, 1.0, -0.6;
    noise = 0.02;
  }
  const LocalIndex nv = m.n_vertices();
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (LocalIndex v = 0; v < nv; ++v) c += Eigen::Vector3d(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
  c /= nv;
  std::vector<double> x(m.coords.size());
  for (LocalIndex v = 0; v < nv; ++v) {
    const Eigen::Vector3d X(m.coords[3 * v], m.coords[3 * v + 1], m.coords[3 * v + 2]);
    const Eigen::Vector3d y = c + A * (X - c) + shift;
    for (int k = 0; k < 3; ++k) x[3 * v + k] = y[k] + noise * u(rng);
  }
  return x;
}

// ---------------------------------------------------------------------------------------------------------
// 1. Finite differences: f = dW/dx and K = df/dx for every formulation, mesh, deformation, with/without penalty.

using FdParam = std::tuple<std::string, std::string, std::string, bool>;  // formulation, mesh, deformation, vol

class FormulationFd : public ::testing::TestWithParam<FdParam> {};

TEST_P(FormulationFd, ForceAndStiffnessMatchFiniteDifferences) {
  const auto& [form_name, mesh_name, def, volumetric] = GetParam();
  const TetMesh m = mesh_by_name(mesh_name);
  const auto mat = random_materials(m.n_tets(), volumetric, 11);
  const auto form = make(form_name, m, mat);
  EXPECT_EQ(form->name(), form_name);
  const auto x = deform(m, def, 5);

  std::vector<double> f;
  const auto K = testing::dense_stiffness(*form, x, &f);
  const double h = 1e-6;
  const auto f_fd = testing::fd_force(*form, x, h);
  const auto K_fd = testing::fd_stiffness(*form, x, h);
  EXPECT_LT(testing::rel_max_diff(f, f_fd), 1e-6) << "f vs dW/dx";
  EXPECT_LT(testing::rel_max_diff(K, K_fd), 1e-6) << "K vs df/dx";

  std::vector<double> f_only(f.size());
  form->force(x, f_only);
  EXPECT_LT(testing::rel_max_diff(f_only, f), 1e-14) << "force() and force_and_stiffness() agree";

  const std::size_t n = f.size();
  double asym = 0.0, kmax = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      asym = std::max(asym, std::abs(K[i * n + j] - K[j * n + i]));
      kmax = std::max(kmax, std::abs(K[i * n + j]));
    }
  EXPECT_LT(asym, 1e-13 * kmax) << "K symmetric";
  if (volumetric && (def == "compressed" || def == "near_flat" || def == "inverted")) {
    // The penalty must actually be active here: the energy differs from the one without it.
    const auto plain = make(form_name, m, random_materials(m.n_tets(), false, 11));
    EXPECT_GT(form->energy(x), plain->energy(x) * (1 + 1e-3));
  }
}

INSTANTIATE_TEST_SUITE_P(
    StvkTsepAllFormulations, FormulationFd,
    ::testing::Combine(::testing::Values("stvk", "stvk-nsn", "stvk-tl"), ::testing::Values("tet", "tet_neg", "cube2"),
                       ::testing::Values("random", "stretched", "compressed", "rotated", "near_flat", "inverted"),
                       ::testing::Bool()),
    [](const auto& info) {
      std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" + std::get<2>(info.param) +
                      (std::get<3>(info.param) ? "_vol" : "");
      for (char& c : s)
        if (c == '-') c = '_';
      return s;
    });

// ---------------------------------------------------------------------------------------------------------
// 2. Kikuuwe eq. 19, L_T = (C_ini/12) Q^-T D Q^-1 with q = [x^2, y^2, z^2, xy, yz, zx] and
//    eps = [Exx, Eyy, Ezz, 2Exy, 2Eyz, 2Ezx], against the closed form used by the code.

Eigen::Matrix<double, 6, 6> eq19(const double* X, double lambda, double mu) {
  Eigen::Matrix<double, 6, 6> Q, D = Eigen::Matrix<double, 6, 6>::Zero();
  for (int e = 0; e < 6; ++e) {
    const int i = tetgeo::kEdgeLocal[e][0], j = tetgeo::kEdgeLocal[e][1];
    const double x = X[3 * i] - X[3 * j], y = X[3 * i + 1] - X[3 * j + 1], z = X[3 * i + 2] - X[3 * j + 2];
    Q.row(e) << x * x, y * y, z * z, x * y, y * z, z * x;
  }
  D.topLeftCorner<3, 3>().setConstant(lambda);
  for (int k = 0; k < 3; ++k) D(k, k) += 2 * mu, D(3 + k, 3 + k) = mu;
  const double C = std::abs(tetgeo::reference_tet(X, 0).c_ini);
  const Eigen::Matrix<double, 6, 6> Qi = Q.inverse();
  return C / 12.0 * Qi.transpose() * D * Qi;
}

TEST(StvkTsep, CoefficientsMatchEq19) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    double X[12];
    for (double& v : X) v = u(rng);
    const double lambda = 1.0 + trial, mu = 0.5 + 0.3 * trial;
    const auto ref = eq19(X, lambda, mu);
    double L[6][6];
    tetgeo::edge_coefficients(tetgeo::reference_tet(X, 0), lambda, mu, L);
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b) EXPECT_NEAR(L[a][b], ref(a, b), 1e-8 * ref.cwiseAbs().maxCoeff()) << trial;
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. Energy structure (eq. 24): stvk = sum_T zeta_T^T L_T zeta_T / 4, NSN = its diagonal part only.

TEST(StvkTsep, EnergyIsEdgeSumOfEq19AndNsnIsItsDiagonal) {
  const TetMesh m = testing::kuhn_box(2, 1, 2, 0.7, 0.1, 9);
  const auto mat = random_materials(m.n_tets(), false, 4);
  const auto stvk = make("stvk", m, mat), nsn = make("stvk-nsn", m, mat);
  for (unsigned seed : {1u, 2u, 3u}) {
    const auto x = deform(m, "random", seed);
    double w_full = 0.0, w_diag = 0.0;
    for (LocalIndex t = 0; t < m.n_tets(); ++t) {
      double X[12];
      Eigen::Matrix<double, 6, 1> zeta;
      for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tets[4 * t + i] + c];
      for (int e = 0; e < 6; ++e) {
        const LocalIndex a = m.tets[4 * t + tetgeo::kEdgeLocal[e][0]], b = m.tets[4 * t + tetgeo::kEdgeLocal[e][1]];
        Eigen::Vector3d p, P;
        for (int c = 0; c < 3; ++c) p[c] = x[3 * a + c] - x[3 * b + c], P[c] = m.coords[3 * a + c] - m.coords[3 * b + c];
        zeta[e] = p.squaredNorm() - P.squaredNorm();
      }
      const auto L = eq19(X, mat[t].lambda, mat[t].mu);
      w_full += 0.25 * zeta.dot(L * zeta);
      w_diag += 0.25 * zeta.dot(L.diagonal().cwiseProduct(zeta));
    }
    EXPECT_NEAR(stvk->energy(x), w_full, 1e-8 * std::abs(w_full));
    EXPECT_NEAR(nsn->energy(x), w_diag, 1e-8 * std::abs(w_diag));
    EXPECT_GT(std::abs(stvk->energy(x) - nsn->energy(x)), 1e-3 * std::abs(w_full)) << "NSN != StVK in general";
  }
}

TEST(StvkTsep, UniformScalingGivesExactStvkEnergy) {
  // x = s X: uniform Green strain e I, e = (s^2 - 1)/2, so W = sum_T V0 (9 lambda/2 + 3 mu) e^2 exactly.
  const TetMesh m = testing::kuhn_box(2, 2, 1, 1.0, 0.1, 2);
  const auto mat = random_materials(m.n_tets(), false, 8);
  const auto stvk = make("stvk", m, mat);
  const double s = 1.2, e = (s * s - 1) / 2;
  std::vector<double> x(m.coords);
  for (double& v : x) v *= s;
  double expected = 0.0;
  for (LocalIndex t = 0; t < m.n_tets(); ++t) {
    double X[12];
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tets[4 * t + i] + c];
    expected += tetgeo::reference_tet(X, t).v0 * (4.5 * mat[t].lambda + 3 * mat[t].mu) * e * e;
  }
  EXPECT_NEAR(stvk->energy(x), expected, 1e-12 * expected);
}

// ---------------------------------------------------------------------------------------------------------
// 4. Block pattern, untouched vertices, input checks.

TEST(StvkTsep, BlockPatternAndUntouchedVertices) {
  TetMesh m = single_tet(false);
  m.coords.insert(m.coords.end(), {5.0, 5.0, 5.0});  // vertex 4: no tet
  const auto mat = random_materials(1, true, 1);
  for (const char* name : {"stvk", "stvk-nsn"}) {
    const auto form = make(name, m, mat);
    const auto& pat = form->block_pattern();
    ASSERT_EQ(pat.size(), 4u + 2 * 6u);  // (v,v) per touched vertex, then both orientations of each edge
    for (LocalIndex v = 0; v < 4; ++v) EXPECT_EQ(pat[v], (std::array<LocalIndex, 2>{v, v}));
    for (std::size_t e = 0; e < 6; ++e) {
      EXPECT_LT(pat[4 + 2 * e][0], pat[4 + 2 * e][1]);
      EXPECT_EQ(pat[4 + 2 * e + 1][0], pat[4 + 2 * e][1]);
      EXPECT_EQ(pat[4 + 2 * e + 1][1], pat[4 + 2 * e][0]);
    }
    std::vector<double> x = deform(m, "compressed", 2), f(x.size(), 7.0);
    form->force(x, f);
    EXPECT_EQ(f[12], 0.0);
    EXPECT_EQ(f[14], 0.0);
    EXPECT_GT(form->bytes(), 0u);
  }
}

// ---------------------------------------------------------------------------------------------------------
// 5. Distributed exactness (DESIGN.md): formulations built from disjoint subsets of the tets (as ranks do, with
//    partial L(E), L(P)) sum to the whole; and the race-free gathers give thread-count independent results.

TEST(StvkTsep, SubsetsSumToWhole) {
  const TetMesh m = testing::kuhn_box(3, 2, 2, 0.5, 0.1, 5);
  const auto mat = random_materials(m.n_tets(), true, 21);
  const auto x = deform(m, "compressed", 8);
  for (const char* name : {"stvk", "stvk-nsn", "stvk-tl"}) {
    std::vector<double> f_whole;
    const auto K_whole = testing::dense_stiffness(*make(name, m, mat), x, &f_whole);
    std::vector<double> f_sum(f_whole.size(), 0.0), K_sum(K_whole.size(), 0.0);
    double w_sum = 0.0;
    for (int part = 0; part < 3; ++part) {
      TetMesh sub{m.coords, {}};
      std::vector<TetMaterial> sub_mat;
      for (LocalIndex t = 0; t < m.n_tets(); ++t)
        if ((t * 7 + t / 5) % 3 == part) {
          sub.tets.insert(sub.tets.end(), m.tets.begin() + 4 * t, m.tets.begin() + 4 * t + 4);
          sub_mat.push_back(mat[t]);
        }
      const auto form = make(name, sub, sub_mat);
      std::vector<double> f;
      const auto K = testing::dense_stiffness(*form, x, &f);
      for (std::size_t i = 0; i < f.size(); ++i) f_sum[i] += f[i];
      for (std::size_t i = 0; i < K.size(); ++i) K_sum[i] += K[i];
      w_sum += form->energy(x);
    }
    EXPECT_NEAR(w_sum, make(name, m, mat)->energy(x), 1e-13 * std::abs(w_sum)) << name;
    EXPECT_LT(testing::rel_max_diff(f_sum, f_whole), 1e-13) << name;
    EXPECT_LT(testing::rel_max_diff(K_sum, K_whole), 1e-13) << name;
  }
}

TEST(StvkTsep, ThreadCountDoesNotChangeForcesOrBlocks) {
  const TetMesh m = testing::kuhn_box(6, 5, 4, 0.3, 0.1, 6);
  const auto mat = random_materials(m.n_tets(), true, 2);
  const auto x = deform(m, "compressed", 3);
  const int saved = omp_get_max_threads();
  for (const char* name : {"stvk", "stvk-nsn", "stvk-tl"}) {
    const auto form = make(name, m, mat);
    std::vector<double> f1(x.size()), f2(x.size()), b1(9 * form->block_pattern().size()), b2(b1.size());
    omp_set_num_threads(1);
    form->force_and_stiffness(x, f1, b1);
    omp_set_num_threads(3);
    form->force_and_stiffness(x, f2, b2);
    EXPECT_EQ(f1, f2) << name << ": gathers must be deterministic (bitwise)";
    EXPECT_EQ(b1, b2) << name;
  }
  omp_set_num_threads(saved);
}

TEST(StvkTsep, RejectsBadInput) {
  const TetMesh m = single_tet(false);
  const auto mat = random_materials(1, false, 1);
  std::vector<double> flat = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};  // zero volume
  EXPECT_THROW(make_stvk_tsep(flat, m.tets, mat), std::invalid_argument);
  EXPECT_THROW(make_stvk_tl(flat, m.tets, mat), std::invalid_argument);
  EXPECT_THROW(make_stvk_tsep(m.coords, m.tets, {}), std::invalid_argument);
  const auto form = make("stvk", m, mat);
  std::vector<double> x(m.coords), f(3);
  EXPECT_THROW(form->force(x, f), std::invalid_argument);
}

}  // namespace
}  // namespace edgefem
