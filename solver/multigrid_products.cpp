#include "solver/multigrid_products.hpp"

#include <mpi.h>

#include <string>

namespace edgefem {

/// The shell's operations (friends of OwnAijProduct: they read its CSR arrays).
struct OwnAijKernels {
  /// w := (add ? y : 0) + A x, rows split among the threads (w may be y).
  static PetscErrorCode product(Mat shell, Vec x, Vec y, Vec w, bool add) {
    PetscFunctionBeginUser;
    OwnAijProduct* self = nullptr;
    PetscCall(MatShellGetContext(shell, &self));
    const OwnAijProduct& p = *self;
    const PetscScalar* a = nullptr;
    const PetscScalar* xv = nullptr;
    const PetscScalar* yv = nullptr;
    PetscScalar* wv = nullptr;
    PetscCall(MatSeqAIJGetArrayRead(p.aij_, &a));
    PetscCall(VecGetArrayRead(x, &xv));
    if (add && y != w) PetscCall(VecGetArrayRead(y, &yv));
    PetscCall(VecGetArray(w, &wv));
    if (add && y == w) yv = wv;
    const PetscInt* ia = p.ia_;
    const PetscInt* ja = p.ja_;
    const PetscInt n = p.rows_;
#pragma omp parallel for schedule(static)
    for (PetscInt r = 0; r < n; ++r) {
      PetscScalar sum = add ? yv[r] : PetscScalar{0};
      for (PetscInt k = ia[r]; k < ia[r + 1]; ++k) sum += a[k] * xv[ja[k]];
      wv[r] = sum;
    }
    PetscCall(VecRestoreArray(w, &wv));
    if (add && y != w) PetscCall(VecRestoreArrayRead(y, &yv));
    PetscCall(VecRestoreArrayRead(x, &xv));
    PetscCall(MatSeqAIJRestoreArrayRead(p.aij_, &a));
    PetscCall(PetscLogFlops(2.0 * static_cast<double>(ia[n])));
    PetscFunctionReturn(0);
  }
  static PetscErrorCode mult(Mat shell, Vec x, Vec y) { return product(shell, x, y, y, false); }
  static PetscErrorCode mult_add(Mat shell, Vec x, Vec y, Vec w) { return product(shell, x, y, w, true); }

  /// y := (add ? z : 0) + A^T x: each thread sums its rows' shares into a private copy of y (OpenMP's array
  /// reduction), then the copies are added.
  static PetscErrorCode transpose_product(Mat shell, Vec x, Vec z, Vec y, bool add) {
    PetscFunctionBeginUser;
    OwnAijProduct* self = nullptr;
    PetscCall(MatShellGetContext(shell, &self));
    const OwnAijProduct& p = *self;
    const PetscScalar* a = nullptr;
    const PetscScalar* xv = nullptr;
    PetscScalar* yv = nullptr;
    if (add && z != y) PetscCall(VecCopy(z, y));
    if (!add) PetscCall(VecSet(y, 0.0));
    PetscCall(MatSeqAIJGetArrayRead(p.aij_, &a));
    PetscCall(VecGetArrayRead(x, &xv));
    PetscCall(VecGetArray(y, &yv));
    const PetscInt* ia = p.ia_;
    const PetscInt* ja = p.ja_;
    const PetscInt n = p.rows_;
    const PetscInt m = p.columns_;
#pragma omp parallel for schedule(static) reduction(+ : yv[:m])
    for (PetscInt r = 0; r < n; ++r) {
      const PetscScalar xr = xv[r];
      for (PetscInt k = ia[r]; k < ia[r + 1]; ++k) yv[ja[k]] += a[k] * xr;
    }
    PetscCall(VecRestoreArray(y, &yv));
    PetscCall(VecRestoreArrayRead(x, &xv));
    PetscCall(MatSeqAIJRestoreArrayRead(p.aij_, &a));
    PetscCall(PetscLogFlops(2.0 * static_cast<double>(ia[n])));
    PetscFunctionReturn(0);
  }
  static PetscErrorCode mult_transpose(Mat shell, Vec x, Vec y) {
    return transpose_product(shell, x, y, y, false);
  }
  static PetscErrorCode mult_transpose_add(Mat shell, Vec x, Vec z, Vec y) {
    return transpose_product(shell, x, z, y, true);
  }
};

OwnAijProduct::OwnAijProduct(Mat aij) {
  EDGEFEM_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(aij)));
  *aij_.address() = aij;
  EDGEFEM_PETSC(MatGetSize(aij, &rows_, &columns_));
  PetscInt n = 0;
  PetscBool done = PETSC_FALSE;
  EDGEFEM_PETSC(MatGetRowIJ(aij, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia_, &ja_, &done));
  if (done != PETSC_TRUE || n != rows_) throw PetscFailure("OwnAijProduct: MatGetRowIJ gave no CSR structure");
  PetscInt bs = 1;
  EDGEFEM_PETSC(MatGetBlockSize(aij, &bs));
  EDGEFEM_PETSC(MatCreateShell(PETSC_COMM_SELF, rows_, columns_, rows_, columns_, this, shell_.address()));
  if (rows_ == columns_) EDGEFEM_PETSC(MatSetBlockSize(shell_, bs));
  using K = OwnAijKernels;
  const auto op = [&](MatOperation which, auto* f) {
    EDGEFEM_PETSC(MatShellSetOperation(shell_, which, reinterpret_cast<void (*)(void)>(f)));
  };
  op(MATOP_MULT, &K::mult);
  op(MATOP_MULT_ADD, &K::mult_add);
  op(MATOP_MULT_TRANSPOSE, &K::mult_transpose);
  op(MATOP_MULT_TRANSPOSE_ADD, &K::mult_transpose_add);
}

OwnAijProduct::~OwnAijProduct() {
  PetscInt n = 0;
  PetscBool done = PETSC_FALSE;
  if (aij_) MatRestoreRowIJ(aij_, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia_, &ja_, &done);
}

namespace {

bool is_seqaij(Mat m) { return m && has_type(m, {MATSEQAIJ}); }

}  // namespace

void MultigridProducts::install(PC pc) {
  if (installed()) return;
  int ranks = 1;
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(pc), &comm));
  MPI_Comm_size(comm, &ranks);
  if (ranks != 1 || !has_type(pc, {PCGAMG})) return;
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(pc, &n_levels));
  // Every matrix must be SeqAIJ, else nothing is wrapped.
  std::vector<Level> levels;
  for (PetscInt l = 1; l < n_levels; ++l) {
    Mat interp = nullptr;
    EDGEFEM_PETSC(PCMGGetInterpolation(pc, l, &interp));
    Mat restriction = nullptr;
    EDGEFEM_PETSC(PCMGGetRestriction(pc, l, &restriction));
    if (!is_seqaij(interp) || restriction != interp) return;
    Level level;
    level.index = l;
    level.interp = std::make_unique<OwnAijProduct>(interp);
    if (l < n_levels - 1) {
      KSP smoother = nullptr;
      EDGEFEM_PETSC(PCMGGetSmoother(pc, l, &smoother));
      Mat a = nullptr, p = nullptr;
      EDGEFEM_PETSC(KSPGetOperators(smoother, &a, &p));
      if (!is_seqaij(a) || a != p) return;
      level.op = std::make_unique<OwnAijProduct>(a);
    }
    levels.push_back(std::move(level));
  }
  for (Level& level : levels) {
    EDGEFEM_PETSC(PCMGSetInterpolation(pc, level.index, level.interp->shell()));
    EDGEFEM_PETSC(PCMGSetRestriction(pc, level.index, level.interp->shell()));
    if (level.op) {
      KSP smoother = nullptr;
      EDGEFEM_PETSC(PCMGGetSmoother(pc, level.index, &smoother));
      EDGEFEM_PETSC(KSPSetOperators(smoother, level.op->shell(), level.op->matrix()));
      EDGEFEM_PETSC(PCMGSetResidual(pc, level.index, PCMGResidualDefault, level.op->shell()));
    }
  }
  levels_ = std::move(levels);
}

void MultigridProducts::remove(PC pc) {
  for (Level& level : levels_) {
    EDGEFEM_PETSC(PCMGSetInterpolation(pc, level.index, level.interp->matrix()));
    EDGEFEM_PETSC(PCMGSetRestriction(pc, level.index, level.interp->matrix()));
    if (level.op) {
      KSP smoother = nullptr;
      EDGEFEM_PETSC(PCMGGetSmoother(pc, level.index, &smoother));
      EDGEFEM_PETSC(KSPSetOperators(smoother, level.op->matrix(), level.op->matrix()));
      EDGEFEM_PETSC(PCMGSetResidual(pc, level.index, PCMGResidualDefault, level.op->matrix()));
    }
  }
  levels_.clear();
}

}  // namespace edgefem
