// SPDX-License-Identifier: BSD-3-Clause
#include "linalg/block_operator.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <vector>

#include "linalg/csr_blocks.hpp"

namespace edgefem {
namespace {

constexpr PetscInt kBlockSize = 3;


/// The off-diagonal part's global columns come in whole blocks: garray[3m + j] = garray[3m] + j.
bool whole_column_blocks(const PetscInt* garray, PetscInt n_columns) {
  if (n_columns % kBlockSize != 0) return false;
  for (PetscInt m = 0; m < n_columns; m += kBlockSize)
    for (PetscInt j = 0; j < kBlockSize; ++j)
      if (garray[m] % kBlockSize != 0 || garray[m + j] != garray[m] + j) return false;
  return true;
}

/// y (+)= A x for the block rows bi/bj of a SeqBAIJ part's values `a` (each 3x3 block column by column), the block
/// rows split among the OpenMP threads.
void block_product(const std::vector<PetscInt>& bi, const std::vector<PetscInt>& bj, const PetscScalar* a,
                   const PetscScalar* x, PetscScalar* y, bool add) {
  const auto n = static_cast<PetscInt>(bi.size()) - 1;
  const PetscInt* rows = bi.data();
  const PetscInt* columns = bj.data();
#pragma omp parallel for schedule(static)
  for (PetscInt r = 0; r < n; ++r) {
    PetscScalar y0 = 0, y1 = 0, y2 = 0;
    for (PetscInt k = rows[r]; k < rows[r + 1]; ++k) {
      const PetscScalar* b = a + kBlockSize * kBlockSize * k;
      const PetscScalar* xx = x + kBlockSize * columns[k];
      y0 += b[0] * xx[0] + b[3] * xx[1] + b[6] * xx[2];
      y1 += b[1] * xx[0] + b[4] * xx[1] + b[7] * xx[2];
      y2 += b[2] * xx[0] + b[5] * xx[1] + b[8] * xx[2];
    }
    PetscScalar* out = y + kBlockSize * r;
    if (add) {
      out[0] += y0, out[1] += y1, out[2] += y2;
    } else {
      out[0] = y0, out[1] = y1, out[2] = y2;
    }
  }
}

/// The shell's y := A x: on several ranks the ghosts' scatter runs while the diagonal part multiplies.
template <typename T>
PetscErrorCode own_mult(Mat shell, Vec x, Vec y) {
  PetscFunctionBeginUser;
  T* t = nullptr;
  PetscCall(MatShellGetContext(shell, &t));
  if (t->scatter) PetscCall(VecScatterBegin(t->scatter, x, t->ghosts, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar* xv = nullptr;
  PetscScalar* yv = nullptr;
  PetscCall(VecGetArrayRead(x, &xv));
  PetscCall(VecGetArrayWrite(y, &yv));
  t->diagonal->multiply(xv, yv, false);
  PetscCall(PetscLogFlops(2.0 * kBlockSize * kBlockSize * static_cast<double>(2 * t->diagonal->n_blocks() - t->diagonal->n_rows())));
  PetscCall(VecRestoreArrayRead(x, &xv));
  if (t->scatter) {
    PetscCall(VecScatterEnd(t->scatter, x, t->ghosts, INSERT_VALUES, SCATTER_FORWARD));
    const PetscScalar* gv = nullptr;
    PetscCall(VecGetArrayRead(t->ghosts, &gv));
    const auto& o = t->off_diagonal;
    block_product(o.bi, o.bj, o.values.data(), gv, yv, true);
    PetscCall(PetscLogFlops(2.0 * kBlockSize * kBlockSize * static_cast<double>(o.bj.size())));
    PetscCall(VecRestoreArrayRead(t->ghosts, &gv));
  }
  PetscCall(VecRestoreArrayWrite(y, &yv));
  PetscFunctionReturn(0);
}

/// The shell's diagonal: the diagonal part's diagonal blocks'.
template <typename T>
PetscErrorCode own_diagonal(Mat shell, Vec d) {
  PetscFunctionBeginUser;
  T* t = nullptr;
  PetscCall(MatShellGetContext(shell, &t));
  PetscScalar* dv = nullptr;
  PetscCall(VecGetArrayWrite(d, &dv));
  t->diagonal->diagonal(dv);
  PetscCall(VecRestoreArrayWrite(d, &dv));
  PetscFunctionReturn(0);
}

/// The shell's MatGetInfo: the assembled matrix's (the shell holds its values; PCMG's complexity figures and
/// -ksp_view ask it of the finest smoother's preconditioning matrix, multigrid_products.hpp).
template <typename T>
PetscErrorCode own_info(Mat shell, MatInfoType flag, MatInfo* info) {
  PetscFunctionBeginUser;
  T* t = nullptr;
  PetscCall(MatShellGetContext(shell, &t));
  PetscCall(MatGetInfo(t->assembled, flag, info));
  PetscFunctionReturn(0);
}

/// Block row r's blocks (bi[r] .. bi[r + 1] - 1, in the AIJ rows' order) := the AIJ part's values `av` (rows `ia`),
/// each 3x3 block column by column (value (i, j) of block k at 9 k + i + 3 j), on the OpenMP threads.
void copy_blocks(const PetscInt* ia, const PetscScalar* av, PetscInt n_block_rows, const PetscInt* bi,
                 PetscScalar* out) {
#pragma omp parallel for schedule(static)
  for (PetscInt r = 0; r < n_block_rows; ++r) {
    const PetscInt blocks = bi[r + 1] - bi[r];
    PetscScalar* row = out + kBlockSize * kBlockSize * bi[r];
    for (PetscInt i = 0; i < kBlockSize; ++i) {
      const PetscScalar* in = av + ia[kBlockSize * r + i];
      for (PetscInt k = 0; k < blocks; ++k)
        for (PetscInt j = 0; j < kBlockSize; ++j) row[kBlockSize * kBlockSize * k + i + kBlockSize * j] = in[kBlockSize * k + j];
    }
  }
}

/// update()'s bound on |A_ij - A_ji| relative to the largest |A_ij| (the assembly writes transposed blocks from
/// the same numbers: round-off at most).
constexpr double kSymmetryTolerance = 1e-10;

bool all_ranks(MPI_Comm comm, bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm);
  return out == 1;
}

}  // namespace

std::optional<BlockOperator> BlockOperator::create(Mat aij, bool own_product) {
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(aij), &comm));
  PetscInt bs = 1, n_local = 0, column_begin = 0;
  EDGEFEM_PETSC(MatGetBlockSize(aij, &bs));
  EDGEFEM_PETSC(MatGetLocalSize(aij, &n_local, nullptr));
  EDGEFEM_PETSC(MatGetOwnershipRangeColumn(aij, &column_begin, nullptr));
  const LocalParts a = local_parts(aij, false);
  bool ok = bs == kBlockSize && column_begin % kBlockSize == 0;
  if (ok && a.count == 2) {
    PetscInt n_off_columns = 0;
    EDGEFEM_PETSC(MatGetSize(a.mats[1], nullptr, &n_off_columns));
    ok = whole_column_blocks(a.garray, n_off_columns);
  }
  if (ok) {
    const RowStructure d(a.mats[0], false);
    std::optional<RowStructure> o;
    if (a.count == 2) o.emplace(a.mats[1], false);
    ok = whole_blocks(d, kBlockSize, kBlockSize) && (!o || whole_blocks(*o, kBlockSize, kBlockSize));
  }
  if (!all_ranks(comm, ok)) return std::nullopt;
  BlockOperator op;
  if (own_product) {
    if (!op.make_own_product(aij)) return std::nullopt;
    op.update(aij);
    return op;
  }

  // Block rows: global block columns of the diagonal part, then of the off-diagonal one, sorted.
  std::vector<PetscInt> bi(1, 0), bj;
  {
    const RowStructure d(a.mats[0], false);
    std::optional<RowStructure> o;
    if (a.count == 2) o.emplace(a.mats[1], false);
    bi.reserve(static_cast<std::size_t>(d.n / kBlockSize) + 1);
    bj.reserve(static_cast<std::size_t>((d.ia[d.n] + (o ? o->ia[o->n] : 0)) / (kBlockSize * kBlockSize)));
    for (PetscInt r = 0; r < d.n; r += kBlockSize) {
      const auto row_begin = bj.size();
      for (PetscInt k = d.ia[r]; k < d.ia[r + 1]; k += kBlockSize) bj.push_back((column_begin + d.ja[k]) / kBlockSize);
      if (o)
        for (PetscInt k = o->ia[r]; k < o->ia[r + 1]; k += kBlockSize) bj.push_back(a.garray[o->ja[k]] / kBlockSize);
      std::sort(bj.begin() + static_cast<std::ptrdiff_t>(row_begin), bj.end());
      bi.push_back(static_cast<PetscInt>(bj.size()));
    }
  }
  if (bj.empty()) bj.reserve(1);  // a rank without rows: PETSc wants a non-null array all the same

  EDGEFEM_PETSC(MatCreate(comm, op.baij_.address()));
  EDGEFEM_PETSC(MatSetSizes(op.baij_, n_local, n_local, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(op.baij_, MATBAIJ));
  EDGEFEM_PETSC(MatSetBlockSize(op.baij_, kBlockSize));
  // (Each call is a no-op on the other type; both copy the structure, set zeros and assemble.)
  EDGEFEM_PETSC(MatSeqBAIJSetPreallocationCSR(op.baij_, kBlockSize, bi.data(), bj.data(), nullptr));
  EDGEFEM_PETSC(MatMPIBAIJSetPreallocationCSR(op.baij_, kBlockSize, bi.data(), bj.data(), nullptr));
  op.bytes_ = bj.size() * (kBlockSize * kBlockSize * sizeof(PetscScalar) + sizeof(PetscInt)) + bi.size() * sizeof(PetscInt);

  // The BAIJ parts must list the blocks in the AIJ parts' order (update() copies by position).
  const LocalParts b = local_parts(op.baij_, true);
  ok = b.count == a.count;
  for (int p = 0; ok && p < a.count; ++p) {
    const RowStructure sa(a.mats[p], false), sb(b.mats[p], true);
    ok = sb.n * kBlockSize == sa.n;
    for (PetscInt r = 0; ok && r < sb.n; ++r) {
      ok = (sb.ia[r + 1] - sb.ia[r]) * kBlockSize == sa.ia[kBlockSize * r + 1] - sa.ia[kBlockSize * r];
      for (PetscInt k = 0; ok && k < sb.ia[r + 1] - sb.ia[r]; ++k) {
        const PetscInt ca = sa.ja[sa.ia[kBlockSize * r] + kBlockSize * k];
        const PetscInt cb = sb.ja[sb.ia[r] + k];
        ok = p == 0 ? ca == kBlockSize * cb : a.garray[ca] == kBlockSize * b.garray[cb];
      }
    }
  }
  if (!all_ranks(comm, ok)) throw PetscFailure("BlockOperator: PETSc stored the BAIJ blocks in another order");
  op.update(aij);
  return op;
}

bool BlockOperator::make_own_product(Mat aij) {
  own_ = std::make_unique<OwnProduct>();
  OwnProduct& o = *own_;
  const LocalParts a = local_parts(aij, false);
  {
    const RowStructure d(a.mats[0], false);
    o.diagonal.emplace(d.n, d.ia, d.ja);
  }
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(aij), &comm));
  if (!all_ranks(comm, o.diagonal->pattern_symmetric())) return false;
  bytes_ = o.diagonal->bytes();
  PetscInt n_local = 0;
  EDGEFEM_PETSC(MatGetLocalSize(aij, &n_local, nullptr));
  if (a.count == 2) {
    // The ghost columns' part: block column m of the ghost vector is the global block garray[3 m] / 3.
    const RowStructure s(a.mats[1], false);
    GhostBlocks& g = o.off_diagonal;
    g.bi.assign(1, 0);
    for (PetscInt r = 0; r < s.n; r += kBlockSize) {
      for (PetscInt k = s.ia[r]; k < s.ia[r + 1]; k += kBlockSize) g.bj.push_back(s.ja[k] / kBlockSize);
      g.bi.push_back(static_cast<PetscInt>(g.bj.size()));
    }
    g.values.assign(g.bj.size() * kBlockSize * kBlockSize, 0.0);
    PetscInt n_ghost_columns = 0;
    EDGEFEM_PETSC(MatGetSize(a.mats[1], nullptr, &n_ghost_columns));
    std::vector<PetscInt> ghost_blocks(static_cast<std::size_t>(n_ghost_columns / kBlockSize));
    for (std::size_t m = 0; m < ghost_blocks.size(); ++m) ghost_blocks[m] = a.garray[kBlockSize * m] / kBlockSize;
    PetscOwner<IS, ISDestroy> ghost_is;
    EDGEFEM_PETSC(ISCreateBlock(PETSC_COMM_SELF, kBlockSize, static_cast<PetscInt>(ghost_blocks.size()),
                                ghost_blocks.data(), PETSC_COPY_VALUES, ghost_is.address()));
    PetscOwner<Vec, VecDestroy> layout;
    EDGEFEM_PETSC(MatCreateVecs(aij, layout.address(), nullptr));
    EDGEFEM_PETSC(VecCreateSeq(PETSC_COMM_SELF, n_ghost_columns, o.ghosts.address()));
    EDGEFEM_PETSC(VecScatterCreate(layout, ghost_is, o.ghosts, nullptr, o.scatter.address()));
    bytes_ += g.values.size() * sizeof(PetscScalar) + (g.bi.size() + g.bj.size()) * sizeof(PetscInt) +
              static_cast<std::size_t>(n_ghost_columns) * sizeof(PetscScalar);
  }
  EDGEFEM_PETSC(MatCreateShell(comm, n_local, n_local, PETSC_DETERMINE, PETSC_DETERMINE, &o, o.shell.address()));
  EDGEFEM_PETSC(MatSetBlockSize(o.shell, kBlockSize));
  EDGEFEM_PETSC(MatShellSetOperation(o.shell, MATOP_MULT, reinterpret_cast<void (*)(void)>(&own_mult<OwnProduct>)));
  // A symmetric matrix (update() checks): A^T x = A x.
  EDGEFEM_PETSC(MatShellSetOperation(o.shell, MATOP_MULT_TRANSPOSE,
                                     reinterpret_cast<void (*)(void)>(&own_mult<OwnProduct>)));
  EDGEFEM_PETSC(MatShellSetOperation(o.shell, MATOP_GET_DIAGONAL,
                                     reinterpret_cast<void (*)(void)>(&own_diagonal<OwnProduct>)));
  EDGEFEM_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(aij)));
  *o.assembled.address() = aij;
  EDGEFEM_PETSC(MatShellSetOperation(o.shell, MATOP_GETINFO, reinterpret_cast<void (*)(void)>(&own_info<OwnProduct>)));
  return true;
}

void BlockOperator::update(Mat aij) {
  const LocalParts a = local_parts(aij, false);
  if (own_) {
    SymmetricBlocks::Asymmetry asymmetry;
    {
      const RowStructure s(a.mats[0], false);
      const PetscScalar* av = nullptr;
      EDGEFEM_PETSC(MatSeqAIJGetArrayRead(a.mats[0], &av));
      asymmetry = own_->diagonal->copy(s.ia, av);
      EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(a.mats[0], &av));
    }
    if (a.count == 2) {
      const RowStructure s(a.mats[1], false);
      const PetscScalar* av = nullptr;
      EDGEFEM_PETSC(MatSeqAIJGetArrayRead(a.mats[1], &av));
      GhostBlocks& g = own_->off_diagonal;
      copy_blocks(s.ia, av, static_cast<PetscInt>(g.bi.size()) - 1, g.bi.data(), g.values.data());
      EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(a.mats[1], &av));
    }
    MPI_Comm comm = MPI_COMM_NULL;
    EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(aij), &comm));
    double local[2] = {asymmetry.difference, asymmetry.scale}, global[2] = {0.0, 0.0};
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm);
    if (!(global[0] <= kSymmetryTolerance * global[1])) {
      throw SolverError("the Jacobian is not symmetric (largest |A_ij - A_ji| " + std::to_string(global[0]) +
                        ", largest |A_ij| " + std::to_string(global[1]) +
                        "): multigrid's own products need a symmetric matrix; set solver: {linear: {block_operator: "
                        "false}} in the job to multiply with the assembled matrix instead");
    }
    // The shell's state follows (PETSc's objects compare states to see a changed operator).
    EDGEFEM_PETSC(MatAssemblyBegin(own_->shell, MAT_FINAL_ASSEMBLY));
    EDGEFEM_PETSC(MatAssemblyEnd(own_->shell, MAT_FINAL_ASSEMBLY));
    return;
  }
  const LocalParts b = local_parts(baij_, true);
  for (int p = 0; p < a.count; ++p) {
    const RowStructure sa(a.mats[p], false), sb(b.mats[p], true);
    const PetscScalar* av = nullptr;
    PetscScalar* bv = nullptr;
    EDGEFEM_PETSC(MatSeqAIJGetArrayRead(a.mats[p], &av));
    EDGEFEM_PETSC(MatSeqBAIJGetArray(b.mats[p], &bv));
    copy_blocks(sa.ia, av, sb.n, sb.ia, bv);
    EDGEFEM_PETSC(MatSeqBAIJRestoreArray(b.mats[p], &bv));
    EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(a.mats[p], &av));
  }
  // Tells PETSc the values changed (no stash: the values were written in place).
  EDGEFEM_PETSC(MatAssemblyBegin(baij_, MAT_FINAL_ASSEMBLY));
  EDGEFEM_PETSC(MatAssemblyEnd(baij_, MAT_FINAL_ASSEMBLY));
}

}  // namespace edgefem
