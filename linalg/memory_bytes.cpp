// SPDX-License-Identifier: BSD-3-Clause
/// \file memory_bytes.cpp
/// The linear solver's objects in bytes (memory_bytes.hpp).
#include "linalg/memory_bytes.hpp"

#include <algorithm>

#include <petsc/private/kspimpl.h>
#include <petsc/private/pcmgimpl.h>
#include <petsc/private/snesimpl.h>

#include "linalg/edgefem_gamg.hpp"
#include "linalg/galerkin.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {
namespace {

std::size_t vec_bytes(Vec v) {
  if (!v) return 0;
  PetscInt n = 0;
  if (VecGetLocalSize(v, &n) != 0) return 0;
  return static_cast<std::size_t>(n) * sizeof(PetscScalar);
}

std::size_t vecs_bytes(const Vec* v, PetscInt n) {
  std::size_t b = 0;
  for (PetscInt k = 0; v && k < n; ++k) b += vec_bytes(v[k]);
  return b;
}

/// A KSP's own work vectors (not its PC's).
std::size_t ksp_work_bytes(KSP ksp) {
  if (!ksp) return 0;
  std::size_t b = vecs_bytes(ksp->work, ksp->nwork);
  PetscBool cheb = PETSC_FALSE;
  PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp), KSPCHEBYSHEV, &cheb);
  if (cheb) {
    KSP est = nullptr;
    if (KSPChebyshevEstEigGetKSP(ksp, &est) == 0 && est) b += vecs_bytes(est->work, est->nwork);
  }
  return b;
}

/// A direct solve's factor: LU or Cholesky, or the blocks of block Jacobi (GAMG's coarsest level in parallel: one
/// block, on the rank the coarse problem was gathered to) or redundant solves, with their matrices.
std::size_t factor_bytes(PC pc) {
  if (!pc) return 0;
  Mat factor = nullptr;
  if (has_type(pc, {PCLU, PCCHOLESKY}))
    return PCFactorGetMatrix(pc, &factor) == 0 ? aij_bytes(factor) : 0;
  std::size_t b = 0;
  if (has_type(pc, {PCBJACOBI})) {
    PetscInt n = 0, first = 0;
    KSP* sub = nullptr;
    if (pc->setupcalled && PCBJacobiGetSubKSP(pc, &n, &first, &sub) == 0)
      for (PetscInt k = 0; k < n; ++k) {
        PC sub_pc = nullptr;
        Mat a = nullptr, p = nullptr;
        KSPGetPC(sub[k], &sub_pc);
        KSPGetOperators(sub[k], &a, &p);
        b += factor_bytes(sub_pc) + aij_bytes(p) + ksp_work_bytes(sub[k]);
      }
  } else if (has_type(pc, {PCREDUNDANT})) {
    KSP inner = nullptr;
    if (pc->setupcalled && PCRedundantGetKSP(pc, &inner) == 0 && inner) {
      PC inner_pc = nullptr;
      Mat a = nullptr, p = nullptr;
      KSPGetPC(inner, &inner_pc);
      KSPGetOperators(inner, &a, &p);
      b += factor_bytes(inner_pc) + aij_bytes(p);
    }
  }
  return b;
}

/// The PCMG data under `pc` (PCMG, PCGAMG, or the GAMG inside edgefem_gamg), or null.
PC multigrid_of(PC pc) {
  if (!pc) return nullptr;
  if (is_edgefem_gamg(pc)) return edgefem_gamg_inner(pc);
  return has_type(pc, {PCMG, PCGAMG}) ? pc : nullptr;
}

}  // namespace

std::size_t aij_bytes(Mat m) {
  if (!m) return 0;
  PetscBool shell = PETSC_FALSE;
  PetscObjectTypeCompare(reinterpret_cast<PetscObject>(m), MATSHELL, &shell);
  if (shell) return 0;
  MatInfo info{};
  if (MatGetInfo(m, MAT_LOCAL, &info) != 0) return 0;
  PetscInt rows = 0, columns = 0;
  MatGetLocalSize(m, &rows, &columns);
  PetscInt bs = 1;
  MatGetBlockSize(m, &bs);
  // BAIJ: one column index per block; AIJ: one per entry. Row arrays: i, ilen, imax, diag (4 each) and inodes.
  const bool blocked = !has_type(m, {MATSEQAIJ, MATMPIAIJ});
  const double per_value = sizeof(PetscScalar) + (blocked ? double(sizeof(PetscInt)) / (bs * bs) : sizeof(PetscInt));
  // (a matrix made on caller's arrays reports no allocated entries: its used ones then)
  const double entries = std::max(info.nz_allocated, info.nz_used);
  std::size_t b = static_cast<std::size_t>(entries * per_value) + static_cast<std::size_t>(rows) * 20;
  if (has_type(m, {MATMPIAIJ})) {
    Mat d = nullptr, o = nullptr;
    const PetscInt* garray = nullptr;
    if (MatMPIAIJGetSeqAIJ(m, &d, &o, &garray) == 0 && o) {
      PetscInt orows = 0, ocolumns = 0;
      MatGetLocalSize(o, &orows, &ocolumns);
      b += static_cast<std::size_t>(ocolumns) * (sizeof(PetscInt) + 2 * sizeof(PetscScalar));  // garray, lvec, colmap
      b += static_cast<std::size_t>(orows) * 20;  // the off-diagonal part's row arrays
    }
  }
  return b;
}

MultigridBytes multigrid_bytes(PC pc) {
  MultigridBytes b;
  PC mg_pc = multigrid_of(pc);
  if (!mg_pc || !mg_pc->data) return b;
  PetscInt levels = 0;
  if (PCMGGetLevels(mg_pc, &levels) != 0 || levels < 1) return b;
  const auto* mg = static_cast<PC_MG*>(mg_pc->data);
  if (!mg->levels) return b;
  if (is_edgefem_gamg(pc)) {
    const MultigridProducts::Bytes own = edgefem_gamg_own_bytes_by_part(pc);
    b.own_copies += own.copies;
    b.interpolations += own.interpolations;
    b.galerkin += own.galerkin;
    b.rest_values += own.rest;
  }
  for (PetscInt l = 0; l < levels; ++l) {
    const PC_MG_Levels* level = mg->levels[l];
    if (!level) continue;
    b.vectors += vec_bytes(level->b) + vec_bytes(level->x) + vec_bytes(level->r) + vec_bytes(level->rscale);
    b.vectors += ksp_work_bytes(level->smoothd);
    if (level->smoothu && level->smoothu != level->smoothd) b.vectors += ksp_work_bytes(level->smoothu);
    if (l + 1 < levels && level->smoothd) {  // a coarse level's operator (the finest one is the caller's matrix)
      Mat a = nullptr, p = nullptr;
      KSPGetOperators(level->smoothd, &a, &p);
      b.operators += aij_bytes(p);
      if (a != p) b.operators += aij_bytes(a);
      if (const GalerkinProduct* g = galerkin_product_of(p)) b.galerkin += g->bytes();
    }
    if (l == 0 && level->smoothd) {  // the coarsest solve's factor
      PC coarse = nullptr;
      KSPGetPC(level->smoothd, &coarse);
      b.coarse_solve += factor_bytes(coarse);
    }
    if (l > 0) b.interpolations += aij_bytes(level->interpolate ? level->interpolate : nullptr);
  }
  return b;
}

std::size_t krylov_vector_bytes(KSP ksp, SNES snes) {
  std::size_t b = ksp_work_bytes(ksp);
  if (snes) {
    b += vecs_bytes(snes->work, snes->nwork) + vec_bytes(snes->vec_func) + vec_bytes(snes->vec_sol_update);
    SNESLineSearch ls = nullptr;
    if (SNESGetLineSearch(snes, &ls) == 0 && ls) b += 2 * vec_bytes(snes->vec_func);  // its new x and F
  }
  return b;
}

}  // namespace edgefem
