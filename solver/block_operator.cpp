#include "solver/block_operator.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <vector>

namespace edgefem {
namespace {

constexpr PetscInt kBs = 3;

/// The local parts of a matrix: {diagonal block} for a sequential matrix, {diagonal, off-diagonal} for an MPI one,
/// and the off-diagonal part's global columns (AIJ) or block columns (BAIJ).
struct Parts {
  std::array<Mat, 2> mats{nullptr, nullptr};
  int count = 1;
  const PetscInt* garray = nullptr;
};

/// The parts of an AIJ (`blocks` false) or BAIJ matrix.
Parts local_parts(Mat m, bool blocks) {
  Parts p;
  if (has_type(m, {blocks ? MATSEQBAIJ : MATSEQAIJ})) {
    p.mats[0] = m;
    return p;
  }
  if (blocks) EDGEFEM_PETSC(MatMPIBAIJGetSeqBAIJ(m, &p.mats[0], &p.mats[1], &p.garray));
  else EDGEFEM_PETSC(MatMPIAIJGetSeqAIJ(m, &p.mats[0], &p.mats[1], &p.garray));
  p.count = 2;
  return p;
}

/// CSR structure of a sequential (B)AIJ matrix, PETSc's own arrays (no copy for these matrix types).
struct Structure {
  Mat mat = nullptr;
  PetscBool blocks = PETSC_FALSE;
  PetscInt n = 0;
  const PetscInt* ia = nullptr;
  const PetscInt* ja = nullptr;
  Structure(Mat m, bool block_compressed) : mat(m), blocks(block_compressed ? PETSC_TRUE : PETSC_FALSE) {
    PetscBool done = PETSC_FALSE;
    EDGEFEM_PETSC(MatGetRowIJ(mat, 0, PETSC_FALSE, blocks, &n, &ia, &ja, &done));
    if (done != PETSC_TRUE) throw PetscFailure("BlockOperator: MatGetRowIJ gave no CSR structure");
  }
  ~Structure() {
    PetscBool done = PETSC_FALSE;
    MatRestoreRowIJ(mat, 0, PETSC_FALSE, blocks, &n, &ia, &ja, &done);
  }
  Structure(const Structure&) = delete;
  Structure& operator=(const Structure&) = delete;
};

/// True when every row triple 3R, 3R+1, 3R+2 of the AIJ part stores whole 3x3 blocks, in the same column order:
/// entry 3k+j of each of the three rows is column 3c_k + j.
bool whole_blocks(const Structure& s) {
  if (s.n % kBs != 0) return false;
  for (PetscInt r = 0; r < s.n; r += kBs) {
    const PetscInt len = s.ia[r + 1] - s.ia[r];
    if (len % kBs != 0) return false;
    for (PetscInt i = 0; i < kBs; ++i) {
      if (s.ia[r + i + 1] - s.ia[r + i] != len) return false;
      const PetscInt* row = s.ja + s.ia[r + i];
      const PetscInt* first = s.ja + s.ia[r];
      for (PetscInt k = 0; k < len; k += kBs)
        for (PetscInt j = 0; j < kBs; ++j)
          if (first[k] % kBs != 0 || row[k + j] != first[k] + j) return false;
    }
  }
  return true;
}

/// The off-diagonal part's global columns come in whole blocks: garray[3m + j] = garray[3m] + j.
bool whole_column_blocks(const PetscInt* garray, PetscInt n_columns) {
  if (n_columns % kBs != 0) return false;
  for (PetscInt m = 0; m < n_columns; m += kBs)
    for (PetscInt j = 0; j < kBs; ++j)
      if (garray[m] % kBs != 0 || garray[m + j] != garray[m] + j) return false;
  return true;
}

bool all_ranks(MPI_Comm comm, bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm);
  return out == 1;
}

}  // namespace

std::optional<BlockOperator> BlockOperator::create(Mat aij) {
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(aij), &comm));
  PetscInt bs = 1, n_local = 0, column_begin = 0;
  EDGEFEM_PETSC(MatGetBlockSize(aij, &bs));
  EDGEFEM_PETSC(MatGetLocalSize(aij, &n_local, nullptr));
  EDGEFEM_PETSC(MatGetOwnershipRangeColumn(aij, &column_begin, nullptr));
  const Parts a = local_parts(aij, false);
  bool ok = bs == kBs && column_begin % kBs == 0;
  if (ok && a.count == 2) {
    PetscInt n_off_columns = 0;
    EDGEFEM_PETSC(MatGetSize(a.mats[1], nullptr, &n_off_columns));
    ok = whole_column_blocks(a.garray, n_off_columns);
  }
  // Block rows: global block columns of the diagonal part, then of the off-diagonal one, sorted.
  std::vector<PetscInt> bi(1, 0), bj;
  if (ok) {
    const Structure d(a.mats[0], false);
    std::optional<Structure> o;
    if (a.count == 2) o.emplace(a.mats[1], false);
    ok = whole_blocks(d) && (!o || whole_blocks(*o));
    if (ok) {
      bi.reserve(static_cast<std::size_t>(d.n / kBs) + 1);
      bj.reserve(static_cast<std::size_t>((d.ia[d.n] + (o ? o->ia[o->n] : 0)) / (kBs * kBs)));
      for (PetscInt r = 0; r < d.n; r += kBs) {
        const auto row_begin = bj.size();
        for (PetscInt k = d.ia[r]; k < d.ia[r + 1]; k += kBs) bj.push_back((column_begin + d.ja[k]) / kBs);
        if (o)
          for (PetscInt k = o->ia[r]; k < o->ia[r + 1]; k += kBs) bj.push_back(a.garray[o->ja[k]] / kBs);
        std::sort(bj.begin() + static_cast<std::ptrdiff_t>(row_begin), bj.end());
        bi.push_back(static_cast<PetscInt>(bj.size()));
      }
    }
  }
  if (!all_ranks(comm, ok)) return std::nullopt;
  if (bj.empty()) bj.reserve(1);  // a rank without rows: PETSc wants a non-null array all the same

  BlockOperator op;
  EDGEFEM_PETSC(MatCreate(comm, op.baij_.address()));
  EDGEFEM_PETSC(MatSetSizes(op.baij_, n_local, n_local, PETSC_DETERMINE, PETSC_DETERMINE));
  EDGEFEM_PETSC(MatSetType(op.baij_, MATBAIJ));
  EDGEFEM_PETSC(MatSetBlockSize(op.baij_, kBs));
  // (Each call is a no-op on the other type; both copy the structure, set zeros and assemble.)
  EDGEFEM_PETSC(MatSeqBAIJSetPreallocationCSR(op.baij_, kBs, bi.data(), bj.data(), nullptr));
  EDGEFEM_PETSC(MatMPIBAIJSetPreallocationCSR(op.baij_, kBs, bi.data(), bj.data(), nullptr));
  op.bytes_ = bj.size() * (kBs * kBs * sizeof(PetscScalar) + sizeof(PetscInt)) + bi.size() * sizeof(PetscInt);

  // The BAIJ parts must list the blocks in the AIJ parts' order (update() copies by position).
  const Parts b = local_parts(op.baij_, true);
  ok = b.count == a.count;
  for (int p = 0; ok && p < a.count; ++p) {
    const Structure sa(a.mats[p], false), sb(b.mats[p], true);
    ok = sb.n * kBs == sa.n;
    for (PetscInt r = 0; ok && r < sb.n; ++r) {
      ok = (sb.ia[r + 1] - sb.ia[r]) * kBs == sa.ia[kBs * r + 1] - sa.ia[kBs * r];
      for (PetscInt k = 0; ok && k < sb.ia[r + 1] - sb.ia[r]; ++k) {
        const PetscInt ca = sa.ja[sa.ia[kBs * r] + kBs * k];
        const PetscInt cb = sb.ja[sb.ia[r] + k];
        ok = p == 0 ? ca == kBs * cb : a.garray[ca] == kBs * b.garray[cb];
      }
    }
  }
  if (!all_ranks(comm, ok)) throw PetscFailure("BlockOperator: PETSc stored the BAIJ blocks in another order");
  op.update(aij);
  return op;
}

void BlockOperator::update(Mat aij) {
  const Parts a = local_parts(aij, false);
  const Parts b = local_parts(baij_, true);
  for (int p = 0; p < a.count; ++p) {
    const Structure sa(a.mats[p], false), sb(b.mats[p], true);
    const PetscScalar* av = nullptr;
    PetscScalar* bv = nullptr;
    EDGEFEM_PETSC(MatSeqAIJGetArrayRead(a.mats[p], &av));
    EDGEFEM_PETSC(MatSeqBAIJGetArray(b.mats[p], &bv));
    const PetscInt* ia = sa.ia;
    const PetscInt* bi = sb.ia;
    const PetscInt n_block_rows = sb.n;
    // BAIJ stores each 3x3 block column by column: value (i, j) of block k at 9 k + i + 3 j.
#pragma omp parallel for schedule(static)
    for (PetscInt r = 0; r < n_block_rows; ++r) {
      const PetscInt blocks = bi[r + 1] - bi[r];
      PetscScalar* out = bv + kBs * kBs * bi[r];
      for (PetscInt i = 0; i < kBs; ++i) {
        const PetscScalar* in = av + ia[kBs * r + i];
        for (PetscInt k = 0; k < blocks; ++k)
          for (PetscInt j = 0; j < kBs; ++j) out[kBs * kBs * k + i + kBs * j] = in[kBs * k + j];
      }
    }
    EDGEFEM_PETSC(MatSeqBAIJRestoreArray(b.mats[p], &bv));
    EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(a.mats[p], &av));
  }
  // Tells PETSc the values changed (no stash: the values were written in place).
  EDGEFEM_PETSC(MatAssemblyBegin(baij_, MAT_FINAL_ASSEMBLY));
  EDGEFEM_PETSC(MatAssemblyEnd(baij_, MAT_FINAL_ASSEMBLY));
}

}  // namespace edgefem
