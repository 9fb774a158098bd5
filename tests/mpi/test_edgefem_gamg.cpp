// SPDX-License-Identifier: BSD-3-Clause
// The preconditioner type edgefem_gamg (linalg/edgefem_gamg.hpp): GAMG's first set-up with our Galerkin products
// and with PETSc's MatPtAP (the fallback of other PETSc versions, chosen here by -pc_edgefem_gamg_petsc_galerkin)
// give the same solution; `-pc_type edgefem_gamg` works when a user gives it, and plain `-pc_type gamg` is PETSc's
// own GAMG; our defaults set the finest level's smoothing step on the PC, not in the process-wide options database,
// and a user's -mg_levels_ksp_max_it wins; the type works in a KSP of its own under an options prefix. Every
// assertion holds on every rank; CTest runs it on 1, 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "linalg/edgefem_gamg.hpp"
#include "linalg/galerkin.hpp"
#include "linalg/petsc_util.hpp"
#include "run/load_mesh.hpp"
#include "solver/model.hpp"
#include "solver/newton.hpp"
#include "solver/static_solver.hpp"
#include "tests/support/mpi_testing.hpp"

namespace edgefem {
namespace test_edgefem_gamg {  // one per file: the distributed test files share unity batches

using mpitest::world_rank;
using mpitest::world_size;

/// PETSc options persist in the process-wide database: every job below names the ones it relies on, and a test
/// clears those it added.
constexpr const char* kOptions = "-ksp_type cg -ksp_max_it 2000";

void clear_options(std::initializer_list<const char*> names) {
  for (const char* name : names) EDGEFEM_PETSC(PetscOptionsClearValue(nullptr, name));
}

/// The cantilever of the Newton tests (StVK, gravity, 16 x 4 x 4 cells: 1275 unknowns), 3 load steps, Newton rtol
/// 1e-12, with `linear` as the solver.linear keys and `petsc` as the job's PETSc options.
Job cantilever(const std::string& name, const std::string& linear, const std::string& petsc) {
  const std::string yaml =
      "mesh:\n  generate: {shape: box, size: [10, 1, 1], cells: [16, 4, 4]}\n"
      "materials:\n  - {model: stvk, young: 1.0e4, poisson: 0.3, volumetric: none}\n"
      "boundary:\n  - select: {region: 11}\n    fix: [x, y, z]\n"
      "loads:\n  gravity: [0, 0, -1.0]\n"
      "analysis: {type: static, steps: 3}\n"
      "solver:\n  newton: {rtol: 1.0e-12, atol: 1.0e-14, max_it: 30}\n" +
      (linear.empty() ? std::string() : "  linear: {" + linear + "}\n") +
      (petsc.empty() ? std::string() : "  petsc: \"" + petsc + "\"\n");
  return mpitest::job_from_yaml(mpitest::scratch_dir("edgefem_gamg"), name, yaml);
}

/// What a solve leaves: the owned positions and references, the counts, and what the test looked at in the solver
/// before it went away.
struct Solved {
  std::vector<double> reference, position;
  NewtonStats stats;
  std::string preconditioner;
  std::string pc_type;
  bool own_first_products = false;  ///< the level below the finest was made by our Galerkin product (galerkin.hpp)
  bool shells = false;              ///< the finest interpolation is one of our products' shells
  std::vector<PetscInt> smoothing_steps;  ///< per level, coarsest first (the coarsest: its solve's)
};

/// Solves `job` with StaticSolver and records the above.
Solved solve(const Job& job) {
  const LocalMesh mesh = mpitest::distributed_job_mesh(MPI_COMM_WORLD, job);
  StaticSolver solver(MPI_COMM_WORLD, job, mesh, build_model(MPI_COMM_WORLD, job, mesh), kOptions, true);
  solver.run({});
  Solved r;
  const std::vector<double> x = solver.local_positions();
  const auto n = 3 * static_cast<std::ptrdiff_t>(mesh.n_owned);
  r.position.assign(x.begin(), x.begin() + n);
  r.reference.assign(mesh.mesh.coords.begin(), mesh.mesh.coords.begin() + n);
  r.stats = solver.stats();
  r.preconditioner = solver.preconditioner_name();
  PC pc = nullptr;
  PCType type = nullptr;
  EDGEFEM_PETSC(KSPGetPC(solver.newton().ksp(), &pc));
  EDGEFEM_PETSC(PCGetType(pc, &type));
  r.pc_type = type;
  PC mg = is_edgefem_gamg(pc) ? edgefem_gamg_inner(pc) : has_type(pc, {PCGAMG}) ? pc : nullptr;
  if (!mg) return r;
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(mg, &n_levels));
  for (PetscInt l = 0; l < n_levels; ++l) {
    KSP smoother = nullptr;
    PetscInt max_it = 0;
    EDGEFEM_PETSC(PCMGGetSmoother(mg, l, &smoother));
    EDGEFEM_PETSC(KSPGetTolerances(smoother, nullptr, nullptr, nullptr, &max_it));
    r.smoothing_steps.push_back(max_it);
  }
  if (n_levels >= 3) {
    KSP below = nullptr;
    Mat operator_below = nullptr;
    EDGEFEM_PETSC(PCMGGetSmoother(mg, n_levels - 2, &below));
    EDGEFEM_PETSC(KSPGetOperators(below, nullptr, &operator_below));  // the AIJ matrix (the shell is the Amat)
    r.own_first_products = galerkin_product_of(operator_below) != nullptr;
  }
  Mat finest_interpolation = nullptr;
  EDGEFEM_PETSC(PCMGGetInterpolation(mg, n_levels - 1, &finest_interpolation));
  r.shells = has_type(finest_interpolation, {MATSHELL});
  return r;
}

double global_max(double local) {
  double g = 0;
  MPI_Allreduce(&local, &g, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return g;
}

/// max |a - b| / max |u_a| over all ranks (same mesh, same partition). Collective.
double relative_difference(const Solved& a, const Solved& b) {
  double d = 0, u = 0;
  for (std::size_t i = 0; i < a.position.size(); ++i) {
    d = std::max(d, std::abs(a.position[i] - b.position[i]));
    u = std::max(u, std::abs(a.position[i] - a.reference[i]));
  }
  return global_max(d) / global_max(u);
}

TEST(EdgefemGamg, PetscsGalerkinProductsInTheFirstSetUpGiveTheSameSolution) {
  // GAMG with four levels (-pc_gamg_coarse_eq_limit 12), kept across iterations and steps (our cheap rebuilds with
  // the corotational interpolation in between): the first set-up's coarse operators by our GalerkinProduct (where
  // the PETSc version has the hook: kOwnGalerkinHook) or by PETSc's MatPtAP (-pc_edgefem_gamg_petsc_galerkin, what
  // other PETSc versions get). P is kept in single precision by ours, so the hierarchies differ by its rounding; the
  // converged states agree to the Newton tolerance and the counts stay close.
  const std::string linear = "preconditioner: gamg";
  const Solved own = solve(cantilever("own_galerkin", linear, "-pc_gamg_coarse_eq_limit 12"));
  const Solved petsc = solve(cantilever("petsc_galerkin", linear,
                                        "-pc_gamg_coarse_eq_limit 12 -pc_edgefem_gamg_petsc_galerkin"));
  clear_options({"-pc_gamg_coarse_eq_limit", "-pc_edgefem_gamg_petsc_galerkin"});
  const double d = relative_difference(own, petsc);
  if (world_rank() == 0)
    std::printf(
        "edgefem_gamg: first set-up's Galerkin products ours (%d Newton, %d KSP iterations, %d set-ups) vs PETSc's "
        "(%d, %d, %d) on %d ranks: max |dx| / max |u| = %.2e\n",
        own.stats.newton_iterations, own.stats.ksp_iterations, own.stats.pc_setups, petsc.stats.newton_iterations,
        petsc.stats.ksp_iterations, petsc.stats.pc_setups, world_size(), d);
  EXPECT_LT(d, 1e-10);
  EXPECT_EQ(own.pc_type, kPcEdgefemGamg);
  EXPECT_EQ(own.preconditioner, "GAMG");
  EXPECT_EQ(own.own_first_products, kOwnGalerkinHook);
  EXPECT_FALSE(petsc.own_first_products);
  EXPECT_TRUE(own.shells);
  EXPECT_TRUE(petsc.shells);
  EXPECT_NEAR(own.stats.newton_iterations, petsc.stats.newton_iterations, 1);
  EXPECT_NEAR(own.stats.ksp_iterations, petsc.stats.ksp_iterations, 0.1 * petsc.stats.ksp_iterations);
  EXPECT_LT(own.stats.pc_setups, own.stats.newton_iterations);  // kept, and rebuilt cheaply at times
  EXPECT_LT(petsc.stats.ksp_iterations, 40 * petsc.stats.newton_iterations);
}

TEST(EdgefemGamg, UsersPcTypeWorksOnAJobThatWouldPickAnother) {
  // 1275 unknowns: the defaults choose a sparse Cholesky factorization (MUMPS). The job's -pc_type edgefem_gamg
  // replaces it with our GAMG, products and cheap rebuilds included, with PETSc's settings (no defaults of ours:
  // a -pc_type of the user's keeps them out); the summary names it as a user's choice. The same solution.
  clear_options({"-mg_levels_ksp_max_it"});
  const Solved direct = solve(cantilever("users_direct", "", ""));
  const Solved users = solve(cantilever("users_edgefem_gamg", "", "-pc_type edgefem_gamg"));
  clear_options({"-pc_type"});
  const double d = relative_difference(direct, users);
  if (world_rank() == 0)
    std::printf(
        "edgefem_gamg: -pc_type edgefem_gamg (%d Newton, %d KSP iterations, %d set-ups) vs %s (%d, %d, %d): "
        "max |dx| / max |u| = %.2e\n",
        users.stats.newton_iterations, users.stats.ksp_iterations, users.stats.pc_setups, direct.preconditioner.c_str(),
        direct.stats.newton_iterations, direct.stats.ksp_iterations, direct.stats.pc_setups, d);
  EXPECT_EQ(direct.preconditioner, "Cholesky (MUMPS)");
  EXPECT_EQ(users.pc_type, kPcEdgefemGamg);
  EXPECT_EQ(users.preconditioner, "edgefem_gamg (-pc_type)");
  EXPECT_TRUE(users.shells);
  ASSERT_FALSE(users.smoothing_steps.empty());
  EXPECT_EQ(users.smoothing_steps.back(), 2);  // PETSc's
  EXPECT_LT(d, 1e-10);
}

TEST(EdgefemGamg, PlainGamgIsPetscsOwn) {
  // -pc_type gamg is PETSc's GAMG untouched: no products of ours around it (its interpolations stay AIJ), PETSc's
  // set-ups at every rebuild; the same solution as ours.
  const Solved ours = solve(cantilever("plain_ours", "preconditioner: gamg", ""));
  const Solved plain = solve(cantilever("plain_gamg", "preconditioner: gamg", "-pc_type gamg"));
  clear_options({"-pc_type"});
  const double d = relative_difference(ours, plain);
  if (world_rank() == 0)
    std::printf(
        "edgefem_gamg: -pc_type gamg (%d Newton, %d KSP iterations, %d set-ups) vs edgefem_gamg (%d, %d, "
        "%d): max |dx| / max |u| = %.2e\n",
        plain.stats.newton_iterations, plain.stats.ksp_iterations, plain.stats.pc_setups, ours.stats.newton_iterations,
        ours.stats.ksp_iterations, ours.stats.pc_setups, d);
  EXPECT_EQ(plain.pc_type, PCGAMG);
  EXPECT_EQ(plain.preconditioner, "gamg (-pc_type)");
  EXPECT_FALSE(plain.shells);
  EXPECT_TRUE(ours.shells);
  EXPECT_LT(d, 1e-10);
}

TEST(EdgefemGamg, DefaultsLeaveTheOptionsDatabaseAloneAndTheUsersSmoothingWins) {
  // Our default GAMG smooths its finest level with one Chebyshev step and the levels below it (but the coarsest)
  // with PETSc's two, set on the PC's own smoothers: -mg_levels_ksp_max_it stays out of the options database. A
  // user's -mg_levels_ksp_max_it applies to every level; a level's own -mg_levels_<l>_ksp_max_it to that level.
  clear_options({"-mg_levels_ksp_max_it"});
  const std::string linear = "preconditioner: gamg";
  const Solved ours = solve(cantilever("smoothing_ours", linear, "-pc_gamg_coarse_eq_limit 12"));
  PetscBool written = PETSC_TRUE;
  EDGEFEM_PETSC(PetscOptionsHasName(nullptr, nullptr, "-mg_levels_ksp_max_it", &written));
  EXPECT_FALSE(written);
  const Solved users = solve(cantilever("smoothing_users", linear,
                                        "-pc_gamg_coarse_eq_limit 12 -mg_levels_ksp_max_it 3"));
  clear_options({"-mg_levels_ksp_max_it"});
  ASSERT_GE(ours.smoothing_steps.size(), 3u);
  const std::string finest = "-mg_levels_" + std::to_string(ours.smoothing_steps.size() - 1) + "_ksp_max_it";
  const Solved level = solve(cantilever("smoothing_level", linear, "-pc_gamg_coarse_eq_limit 12 " + finest + " 4"));
  clear_options({"-pc_gamg_coarse_eq_limit", finest.c_str()});
  ASSERT_EQ(users.smoothing_steps.size(), ours.smoothing_steps.size());
  ASSERT_EQ(level.smoothing_steps.size(), ours.smoothing_steps.size());
  for (std::size_t l = 1; l < ours.smoothing_steps.size(); ++l) {
    const bool is_finest = l + 1 == ours.smoothing_steps.size();
    EXPECT_EQ(ours.smoothing_steps[l], is_finest ? 1 : 2) << "level " << l;
    EXPECT_EQ(users.smoothing_steps[l], 3) << "level " << l;
    EXPECT_EQ(level.smoothing_steps[l], is_finest ? 4 : 2) << "level " << l;
  }
  if (world_rank() == 0)
    std::printf("edgefem_gamg: %zu levels; KSP iterations with our smoothing %d, -mg_levels_ksp_max_it 3 %d, %s 4 %d\n",
                ours.smoothing_steps.size(), ours.stats.ksp_iterations, users.stats.ksp_iterations, finest.c_str(),
                level.stats.ksp_iterations);
}

/// A KSP of its own (no Newton driver) on the 3-D grid Laplacian of 3 unknowns per vertex (block size 3, shifted to
/// be positive definite), n^3 vertices split among the ranks in contiguous slabs.
struct GridSystem {
  PetscOwner<Mat, MatDestroy> matrix;
  PetscOwner<Vec, VecDestroy> x, b;
  explicit GridSystem(PetscInt n) {
    const PetscInt vertices = n * n * n;
    PetscInt begin = 0, end = 0;
    EDGEFEM_PETSC(MatCreateAIJ(MPI_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, 3 * vertices, 3 * vertices, 21, nullptr, 21,
                               nullptr, matrix.address()));
    EDGEFEM_PETSC(MatSetBlockSize(matrix, 3));
    EDGEFEM_PETSC(MatGetOwnershipRange(matrix, &begin, &end));
    for (PetscInt row = begin; row < end; ++row) {
      const PetscInt v = row / 3, c = row % 3, i = v % n, j = (v / n) % n, k = v / (n * n);
      // Whole 3 x 3 blocks (zeros stored off their diagonals), as the Galerkin products want them.
      const auto block = [&](PetscInt vertex, double diagonal) {
        for (PetscInt c2 = 0; c2 < 3; ++c2)
          EDGEFEM_PETSC(MatSetValue(matrix, row, 3 * vertex + c2, c2 == c ? diagonal : 0.0, INSERT_VALUES));
      };
      block(v, 6.0 + 0.01);
      const PetscInt steps[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
      for (const auto& s : steps) {
        const PetscInt ii = i + s[0], jj = j + s[1], kk = k + s[2];
        if (ii < 0 || jj < 0 || kk < 0 || ii >= n || jj >= n || kk >= n) continue;
        block(ii + n * (jj + n * kk), -1.0);
      }
    }
    EDGEFEM_PETSC(MatAssemblyBegin(matrix, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(matrix, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatCreateVecs(matrix, x.address(), b.address()));
    EDGEFEM_PETSC(VecSet(b, 1.0));
  }
};

TEST(EdgefemGamg, WorksInAKspOfItsOwnUnderAnOptionsPrefix) {
  // -standalone_pc_type edgefem_gamg on a KSP with the prefix standalone_: the PC's own option and the inner GAMG's
  // standard ones are read under that prefix (-standalone_pc_edgefem_gamg_petsc_galerkin,
  // -standalone_pc_gamg_coarse_eq_limit, -standalone_mg_levels_ksp_max_it); a set-up PETSc starts itself (a new
  // matrix, no request of ours) is a full one. Both Galerkin paths solve to the tolerance.
  register_edgefem_gamg();
  const GridSystem grid(12);
  for (const bool petsc_galerkin : {false, true}) {
    EDGEFEM_PETSC(PetscOptionsInsertString(
        nullptr, (std::string("-standalone_pc_type edgefem_gamg -standalone_pc_gamg_coarse_eq_limit 30 "
                              "-standalone_mg_levels_ksp_max_it 1 -standalone_pc_edgefem_gamg_petsc_galerkin ") +
                  (petsc_galerkin ? "true" : "false"))
                     .c_str()));
    PetscOwner<KSP, KSPDestroy> ksp;
    EDGEFEM_PETSC(KSPCreate(MPI_COMM_WORLD, ksp.address()));
    EDGEFEM_PETSC(KSPSetOptionsPrefix(ksp, "standalone_"));
    EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
    EDGEFEM_PETSC(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
    EDGEFEM_PETSC(KSPSetOperators(ksp, grid.matrix, grid.matrix));
    EDGEFEM_PETSC(KSPSetFromOptions(ksp));
    EDGEFEM_PETSC(KSPSolve(ksp, grid.b, grid.x));
    KSPConvergedReason reason;
    PetscInt its = 0;
    EDGEFEM_PETSC(KSPGetConvergedReason(ksp, &reason));
    EDGEFEM_PETSC(KSPGetIterationNumber(ksp, &its));
    PC pc = nullptr;
    EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
    ASSERT_TRUE(is_edgefem_gamg(pc));
    PC inner = edgefem_gamg_inner(pc);
    const char* prefix = nullptr;
    EDGEFEM_PETSC(PCGetOptionsPrefix(inner, &prefix));
    PetscInt n_levels = 0;
    EDGEFEM_PETSC(PCMGGetLevels(inner, &n_levels));
    KSP finest = nullptr, below = nullptr;
    PetscInt finest_steps = 0;
    EDGEFEM_PETSC(PCMGGetSmoother(inner, n_levels - 1, &finest));
    EDGEFEM_PETSC(KSPGetTolerances(finest, nullptr, nullptr, nullptr, &finest_steps));
    Mat operator_below = nullptr;
    EDGEFEM_PETSC(PCMGGetSmoother(inner, n_levels - 2, &below));
    EDGEFEM_PETSC(KSPGetOperators(below, nullptr, &operator_below));
    if (world_rank() == 0)
      std::printf("edgefem_gamg: a KSP of its own, %s Galerkin products: %d levels, %d CG iterations (%s)\n",
                  petsc_galerkin ? "PETSc's" : "our", static_cast<int>(n_levels), static_cast<int>(its),
                  KSPConvergedReasons[reason]);
    EXPECT_GT(reason, 0);
    EXPECT_LT(its, 60);
    EXPECT_STREQ(prefix, "standalone_");
    EXPECT_GE(n_levels, 3);
    EXPECT_EQ(finest_steps, 1);
    EXPECT_EQ(edgefem_gamg_petsc_galerkin(pc), petsc_galerkin || !kOwnGalerkinHook);
    EXPECT_EQ(galerkin_product_of(operator_below) != nullptr, !petsc_galerkin && kOwnGalerkinHook);
  }
  clear_options({"-standalone_pc_type", "-standalone_pc_gamg_coarse_eq_limit", "-standalone_mg_levels_ksp_max_it",
                 "-standalone_pc_edgefem_gamg_petsc_galerkin"});
}

}  // namespace test_edgefem_gamg
}  // namespace edgefem
