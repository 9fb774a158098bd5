// SPDX-License-Identifier: BSD-3-Clause
// Tests of the edge/TSEP StVK and NSN formulations (materials/stvk_tsep.cpp): finite-difference consistency of
// f and K for all four tetrahedral formulations (stvk, stvk-nsn, stvk-tl, linear) with isotropic and transversely
// isotropic materials and every volumetric penalty, Kikuuwe's eq. 19 against the closed-form coefficients
// (isotropic and general D), the edge-sum structure of the energy (eq. 24), the block pattern and input checks.
#include <gtest/gtest.h>

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"
#include "tests/support/formulation_testing.hpp"

namespace edgefem {
namespace {

using testing::make_formulation;
using testing::penalty_name;
using testing::TetMesh;

/// Per-tet different materials (one table entry per tet); two thirds of the tets get `penalty`; with
/// `anisotropic`, half of them are transversely isotropic.
std::vector<TetMaterial> random_materials(LocalIndex n_tets, VolumetricPenalty penalty, unsigned seed,
                                          bool anisotropic = false) {
  return testing::random_materials(n_tets, penalty, anisotropic, seed);
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
  return testing::affine_deformation(m.coords, A, shift, noise, seed);
}

// ---------------------------------------------------------------------------------------------------------
// 1. Finite differences: f = dW/dx and K = df/dx for every formulation, mesh, deformation, with/without penalty.

// formulation, mesh, deformation, volumetric penalty, anisotropic materials
using TsepFdParam = std::tuple<std::string, std::string, std::string, VolumetricPenalty, bool>;

class FormulationFd : public ::testing::TestWithParam<TsepFdParam> {};

TEST_P(FormulationFd, ForceAndStiffnessMatchFiniteDifferences) {
  const auto& [form_name, mesh_name, def, penalty, aniso] = GetParam();
  const TetMesh m = mesh_by_name(mesh_name);
  const auto mat = random_materials(m.n_tets(), penalty, 11, aniso);
  const auto form = make_formulation(form_name, m, mat);
  EXPECT_EQ(form->name(), form_name);
  const auto x = deform(m, def, 5);

  const auto c = testing::compare_with_finite_differences(*form, x, 1e-6);
  EXPECT_LT(c.force_error, 1e-6) << "f vs dW/dx";
  EXPECT_LT(c.stiffness_error, 1e-6) << "K vs df/dx";
  EXPECT_LT(testing::rel_max_diff(c.f_only, c.f), 1e-14) << "force() and force_and_stiffness() agree";
  EXPECT_LT(c.asymmetry, 1e-13 * testing::max_abs(c.K)) << "K symmetric";
  // The penalty must actually be active here: the energy differs from the one without it (linear + cubic has
  // no penalty term: its Hessian at rest is zero).
  const bool compressed = def == "compressed" || def == "near_flat" || def == "inverted";
  const bool active = penalty == VolumetricPenalty::quadratic ||
                      (penalty == VolumetricPenalty::cubic && compressed && form_name != "linear");
  if (active && def != "rotated" && def != "random") {
    const auto plain = make_formulation(form_name, m, random_materials(m.n_tets(), VolumetricPenalty::none, 11, aniso));
    EXPECT_GT(form->energy(x), plain->energy(x) * (1 + 1e-3));
  }
}

INSTANTIATE_TEST_SUITE_P(StvkTsepAllFormulations, FormulationFd,
                         ::testing::Combine(::testing::Values("stvk", "stvk-nsn", "stvk-tl", "linear"),
                                            ::testing::Values("tet", "tet_neg", "cube2"),
                                            ::testing::Values("random", "stretched", "compressed", "rotated",
                                                              "near_flat", "inverted"),
                                            ::testing::Values(VolumetricPenalty::none, VolumetricPenalty::cubic,
                                                              VolumetricPenalty::quadratic),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                           std::get<2>(info.param) + "_" + penalty_name(std::get<3>(info.param)) +
                                           (std::get<4>(info.param) ? "_aniso" : "");
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// ---------------------------------------------------------------------------------------------------------
// 2. Kikuuwe eq. 19, L_T = (C_ini/12) Q^-T D Q^-1 with q = [x^2, y^2, z^2, xy, yz, zx] and
//    eps = [Exx, Eyy, Ezz, 2Exy, 2Eyz, 2Ezx], against the closed form used by the code.

Eigen::Matrix<double, 6, 6> eq19(const double* X, const std::array<double, 36>& Dv) {
  Eigen::Matrix<double, 6, 6> Q, D;
  for (int e = 0; e < 6; ++e) {
    const int i = tetgeo::kEdgeLocal[e][0], j = tetgeo::kEdgeLocal[e][1];
    const double x = X[3 * i] - X[3 * j], y = X[3 * i + 1] - X[3 * j + 1], z = X[3 * i + 2] - X[3 * j + 2];
    Q.row(e) << x * x, y * y, z * z, x * y, y * z, z * x;
  }
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) D(r, c) = Dv[6 * r + c];
  const double C = std::abs(tetgeo::reference_tet(X, 0).c_ini);
  const Eigen::Matrix<double, 6, 6> Qi = Q.inverse();
  return C / 12.0 * Qi.transpose() * D * Qi;
}

TEST(StvkTsep, CoefficientsMatchEq19) {
  // Isotropic closed form and the general-D form (isotropic and transversely isotropic D) against eq. 19.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    double X[12];
    for (double& v : X) v = u(rng);
    const auto r = tetgeo::reference_tet(X, 0);
    const auto iso = TetMaterial::isotropic_material(1.0 + trial, 0.1 + 0.015 * trial, VolumetricPenalty::none);
    const auto ti = testing::random_transverse(rng, {u(rng), u(rng), u(rng) + 0.1}, VolumetricPenalty::none);
    const auto ref_iso = eq19(X, iso.D), ref_ti = eq19(X, ti.D);
    double L[6][6], Lg[6][6], Lti[6][6];
    tetgeo::edge_coefficients(r, iso.lambda, iso.mu, L);
    tetgeo::edge_coefficients(r, iso.D.data(), Lg);
    tetgeo::edge_coefficients(r, ti.D.data(), Lti);
    // Q is ill-conditioned for random tets: eq. 19 itself is only accurate to ~1e-8 relative.
    const double s_iso = ref_iso.cwiseAbs().maxCoeff(), s_ti = ref_ti.cwiseAbs().maxCoeff();
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b) {
        EXPECT_NEAR(L[a][b], ref_iso(a, b), 1e-8 * s_iso) << trial;
        EXPECT_NEAR(Lg[a][b], L[a][b], 1e-13 * s_iso) << trial << ": general D vs isotropic closed form";
        EXPECT_NEAR(Lti[a][b], ref_ti(a, b), 1e-8 * s_ti) << trial;
      }
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. Energy structure (eq. 24): stvk = sum_T zeta_T^T L_T zeta_T / 4, NSN = its diagonal part only.

class EdgeSum : public ::testing::TestWithParam<bool> {};  // anisotropic

TEST_P(EdgeSum, EnergyIsEdgeSumOfEq19AndNsnIsItsDiagonal) {
  const TetMesh m = testing::kuhn_box(2, 1, 2, 0.7, 0.1, 9);
  const auto mat = random_materials(m.n_tets(), VolumetricPenalty::none, 4, GetParam());
  const auto stvk = make_formulation("stvk", m, mat), nsn = make_formulation("stvk-nsn", m, mat);
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
        for (int c = 0; c < 3; ++c)
          p[c] = x[3 * a + c] - x[3 * b + c], P[c] = m.coords[3 * a + c] - m.coords[3 * b + c];
        zeta[e] = p.squaredNorm() - P.squaredNorm();
      }
      const auto L = eq19(X, mat[t].D);
      w_full += 0.25 * zeta.dot(L * zeta);
      w_diag += 0.25 * zeta.dot(L.diagonal().cwiseProduct(zeta));
    }
    EXPECT_NEAR(stvk->energy(x), w_full, 1e-8 * std::abs(w_full));
    EXPECT_NEAR(nsn->energy(x), w_diag, 1e-8 * std::abs(w_diag));
    EXPECT_GT(std::abs(stvk->energy(x) - nsn->energy(x)), 1e-3 * std::abs(w_full)) << "NSN != StVK in general";
  }
}

INSTANTIATE_TEST_SUITE_P(StvkTsepMaterials, EdgeSum, ::testing::Bool());

TEST(StvkTsep, UniformScalingGivesExactStvkEnergy) {
  // x = s X: uniform Green strain e I, eps = e [1,1,1,0,0,0], so W = sum_T V0 e^2/2 sum_{i,j<3} D_ij exactly
  // (isotropic: V0 (9 lambda/2 + 3 mu) e^2). Heterogeneous isotropic and transversely isotropic tets.
  const TetMesh m = testing::kuhn_box(2, 2, 1, 1.0, 0.1, 2);
  for (bool aniso : {false, true}) {
    const auto mat = random_materials(m.n_tets(), VolumetricPenalty::none, 8, aniso);
    const double s = 1.2, e = (s * s - 1) / 2;
    std::vector<double> x(m.coords);
    for (double& v : x) v *= s;
    double expected = 0.0;
    for (LocalIndex t = 0; t < m.n_tets(); ++t) {
      double X[12];
      for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 3; ++c) X[3 * i + c] = m.coords[3 * m.tets[4 * t + i] + c];
      double sumD = 0.0;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) sumD += mat[t].D[6 * i + j];
      if (mat[t].isotropic) {
        EXPECT_NEAR(sumD, 9 * mat[t].lambda + 6 * mat[t].mu, 1e-13 * sumD);
      }
      expected += tetgeo::reference_tet(X, t).v0 * 0.5 * sumD * e * e;
    }
    for (const char* name : {"stvk", "stvk-tl"})
      EXPECT_NEAR(make_formulation(name, m, mat)->energy(x), expected, 1e-12 * expected) << name;
  }
}

// ---------------------------------------------------------------------------------------------------------
// 4. Block pattern, untouched vertices, input checks.

TEST(StvkTsep, BlockPatternAndUntouchedVertices) {
  // Every formulation uses the same pattern: (v, v) per touched vertex, then both orientations of each edge.
  TetMesh m = single_tet(false);
  m.coords.insert(m.coords.end(), {5.0, 5.0, 5.0});  // vertex 4: no tet
  const auto mat = random_materials(1, VolumetricPenalty::cubic, 1);
  for (const char* name : {"stvk", "stvk-nsn", "stvk-tl", "linear"}) {
    const auto form = make_formulation(name, m, mat);
    const auto& pat = form->block_pattern();
    ASSERT_EQ(pat.size(), 4u + 2 * 6u) << name;
    for (LocalIndex v = 0; v < 4; ++v) EXPECT_EQ(pat[v], (std::array<LocalIndex, 2>{v, v}));
    for (std::size_t e = 0; e < 6; ++e) {
      EXPECT_LT(pat[4 + 2 * e][0], pat[4 + 2 * e][1]);
      EXPECT_EQ(pat[4 + 2 * e + 1][0], pat[4 + 2 * e][1]);
      EXPECT_EQ(pat[4 + 2 * e + 1][1], pat[4 + 2 * e][0]);
      if (e > 0) {
        EXPECT_LT(pat[4 + 2 * (e - 1)], pat[4 + 2 * e]) << "edges sorted";
      }
    }
    std::vector<double> x = deform(m, "compressed", 2), f(x.size(), 7.0);
    form->force(x, f);
    EXPECT_EQ(f[12], 0.0);
    EXPECT_EQ(f[14], 0.0);
    EXPECT_GT(form->bytes(), 0u);
  }
  const TetMesh box = testing::kuhn_box(3, 2, 2, 0.5, 0.1, 5);
  const auto box_mat = random_materials(box.n_tets(), VolumetricPenalty::none, 2);
  const auto stvk = make_formulation("stvk", box, box_mat);
  for (const char* name : {"stvk-nsn", "stvk-tl", "linear"})
    EXPECT_EQ(make_formulation(name, box, box_mat)->block_pattern(), stvk->block_pattern()) << name;
}

// ---------------------------------------------------------------------------------------------------------
// 5. Distributed exactness (docs/theory/design.md, "The exact-partition argument"): formulations built from disjoint
//    subsets of the tets (as ranks do, with partial L(E), L(P)) sum to the whole; the race-free gathers give
//    thread-count independent results.

TEST(StvkTsep, SubsetsSumToWhole) {
  // Each subset uses the WHOLE material table with its tets' ids (as build_model does per rank and model).
  const TetMesh m = testing::kuhn_box(3, 2, 2, 0.5, 0.1, 5);
  for (VolumetricPenalty pen : {VolumetricPenalty::cubic, VolumetricPenalty::quadratic}) {
    const auto mat = random_materials(m.n_tets(), pen, 21, true);
    const auto ids = testing::iota_ids(mat.size());
    const auto x = deform(m, "compressed", 8);
    for (const char* name : {"stvk", "stvk-nsn", "stvk-tl", "linear"}) {
      std::vector<double> f_whole;
      const auto whole = testing::make_formulation(name, m, mat, ids);
      const auto K_whole = testing::dense_stiffness(*whole, x, &f_whole);
      std::vector<double> f_sum(f_whole.size(), 0.0), K_sum(K_whole.size(), 0.0);
      double w_sum = 0.0;
      for (int part = 0; part < 3; ++part) {
        TetMesh sub{m.coords, {}};
        std::vector<std::int32_t> sub_ids;
        for (LocalIndex t = 0; t < m.n_tets(); ++t)
          if ((t * 7 + t / 5) % 3 == part) {
            sub.tets.insert(sub.tets.end(), m.tets.begin() + 4 * t, m.tets.begin() + 4 * t + 4);
            sub_ids.push_back(t);
          }
        const auto form = testing::make_formulation(name, sub, mat, sub_ids);
        std::vector<double> f;
        const auto K = testing::dense_stiffness(*form, x, &f);
        for (std::size_t i = 0; i < f.size(); ++i) f_sum[i] += f[i];
        for (std::size_t i = 0; i < K.size(); ++i) K_sum[i] += K[i];
        w_sum += form->energy(x);
      }
      EXPECT_NEAR(w_sum, whole->energy(x), 1e-13 * std::abs(w_sum)) << name;
      EXPECT_LT(testing::rel_max_diff(f_sum, f_whole), 1e-13) << name;
      // K's TSEP terms keep their coefficients in single precision (edge_assembly::GroupedEdgeTerms, issue 56): each
      // subset rounds its own partial L(P), so the blocks agree to float's rounding (2^-24 ~ 6e-8), the forces exactly.
      EXPECT_LT(testing::rel_max_diff(K_sum, K_whole), name == std::string("stvk") ? 2e-7 : 1e-13) << name;
    }
  }
}

/// The mesh with its vertices renumbered randomly (a large bandwidth: stresses the deferred passes of stvk-tl).
TetMesh shuffled_vertices(const TetMesh& m, unsigned seed) {
  std::vector<LocalIndex> perm(m.n_vertices());
  for (LocalIndex v = 0; v < m.n_vertices(); ++v) perm[v] = v;
  std::mt19937 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  TetMesh out{std::vector<double>(m.coords.size()), m.tets};
  for (LocalIndex v = 0; v < m.n_vertices(); ++v)
    for (int c = 0; c < 3; ++c) out.coords[3 * perm[v] + c] = m.coords[3 * v + c];
  for (auto& v : out.tets) v = perm[v];
  return out;
}

TEST(StvkTsep, ThreadCountDoesNotChangeForcesOrBlocks) {
  const int saved = omp_get_max_threads();
  for (bool shuffled : {false, true}) {
    const TetMesh box = testing::kuhn_box(6, 5, 4, 0.3, 0.1, 6);
    const TetMesh m = shuffled ? shuffled_vertices(box, 3) : box;
    const auto mat = random_materials(m.n_tets(), VolumetricPenalty::cubic, 2, true);
    const auto x = deform(m, "compressed", 3);
    std::vector<double> f_stvk, b_stvk;
    for (const char* name : {"stvk", "stvk-nsn", "stvk-tl", "linear"}) {
      const auto form = make_formulation(name, m, mat);
      std::vector<double> f1(x.size()), f2(x.size()), b1(9 * form->block_pattern().size()), b2(b1.size());
      omp_set_num_threads(1);
      form->force_and_stiffness(x, f1, b1);
      for (int threads : {2, 3, 7}) {
        omp_set_num_threads(threads);
        form->force_and_stiffness(x, f2, b2);
        EXPECT_EQ(f1, f2) << name << ", " << threads << " threads: gathers must be deterministic (bitwise)";
        EXPECT_EQ(b1, b2) << name << ", " << threads << " threads";
        form->force(x, f2);
        EXPECT_EQ(f1, f2) << name << ", " << threads << " threads, force()";
      }
      if (std::string(name) == "stvk") f_stvk = f1, b_stvk = b1;
      if (std::string(name) == "stvk-tl") {  // same pattern: the blocks themselves agree
        EXPECT_LT(testing::rel_max_diff(f1, f_stvk), 1e-12) << (shuffled ? "shuffled" : "");
        // (stvk's K terms in single precision: float's rounding, 2^-24 ~ 6e-8)
        EXPECT_LT(testing::rel_max_diff(b1, b_stvk), 2e-7) << (shuffled ? "shuffled" : "");
      }
    }
  }
  omp_set_num_threads(saved);
}

/// The TSEP lists are built in parallel (build_csr_parallel: one chunk of TSEPs per thread, at least 65,536 TSEPs a
/// chunk): a formulation built on 1, 2 or 3 threads evaluates bitwise identically. 26,880 tets, about 250,000
/// TSEPs, vertices shuffled so the chunks' rows interleave.
TEST(StvkTsep, ThreadCountOfTheSetUpDoesNotChangeForcesOrBlocks) {
  const int saved = omp_get_max_threads();
  const TetMesh m = shuffled_vertices(testing::kuhn_box(20, 16, 14, 0.2, 0.05, 5), 7);
  const auto mat = random_materials(m.n_tets(), VolumetricPenalty::cubic, 4, true);
  const auto x = deform(m, "compressed", 5);
  for (const char* name : {"stvk", "stvk-nsn"}) {
    std::vector<double> f1, b1;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      const auto form = make_formulation(name, m, mat);
      omp_set_num_threads(1);
      std::vector<double> f(x.size()), b(9 * form->block_pattern().size());
      form->force_and_stiffness(x, f, b);
      if (threads == 1) {
        f1 = f, b1 = b;
        continue;
      }
      EXPECT_EQ(f, f1) << name << ", built on " << threads << " threads";
      EXPECT_EQ(b, b1) << name << ", built on " << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

/// The per-tet coefficients are computed on the threads by chunks of tets: degenerate tets in a later chunk stop the
/// set-up with the first of them named, on any number of threads.
TEST(StvkTsep, FirstDegenerateTetIsNamedOnAnyThreadCount) {
  const int saved = omp_get_max_threads();
  TetMesh m = testing::kuhn_box(20, 16, 14, 0.2, 0.0, 5);
  const auto flat = [&](LocalIndex t, LocalIndex i) {  // four vertices of the bottom plane z = 0
    const LocalIndex v[4] = {i, i + 1, i + 21, i + 22};
    std::copy(v, v + 4, m.tets.begin() + 4 * t);
  };
  flat(15000, 2);  // the same chunk of 8,192 tets, another thread
  flat(12000, 5);
  const auto mat = random_materials(m.n_tets(), VolumetricPenalty::none, 4);
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    try {
      make_formulation("stvk", m, mat);
      ADD_FAILURE() << threads << " threads: degenerate tets accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("tetrahedron 12000 has zero reference volume"), std::string::npos)
          << threads << " threads: " << e.what();
    }
  }
  omp_set_num_threads(saved);
}

TEST(StvkTsep, RejectsBadInput) {
  const TetMesh m = single_tet(false);
  const auto mat = random_materials(1, VolumetricPenalty::none, 1);
  const std::vector<std::int32_t> id0 = {0}, id1 = {1}, none;
  std::vector<double> flat = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};  // zero volume
  EXPECT_THROW(make_stvk_tsep(flat, m.tets, mat, id0), std::invalid_argument);
  EXPECT_THROW(make_stvk_tl(flat, m.tets, mat, id0), std::invalid_argument);
  EXPECT_THROW(make_linear(flat, m.tets, mat, id0), std::invalid_argument);
  EXPECT_THROW(make_stvk_tsep(m.coords, m.tets, mat, none), std::invalid_argument);  // no id for the tet
  EXPECT_THROW(make_stvk_tsep(m.coords, m.tets, {}, id0), std::invalid_argument);    // empty table
  for (const char* name : {"stvk", "stvk-nsn", "stvk-tl", "linear"}) {
    try {
      testing::make_formulation(name, m, mat, id1);
      ADD_FAILURE() << name << ": material id out of range accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("material id 1"), std::string::npos) << e.what();
    }
    const auto form = make_formulation(name, m, mat);
    std::vector<double> x(m.coords), f(3);
    EXPECT_THROW(form->force(x, f), std::invalid_argument) << name;
  }
}

}  // namespace
}  // namespace edgefem
