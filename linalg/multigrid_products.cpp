// SPDX-License-Identifier: BSD-3-Clause
#include "linalg/multigrid_products.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "core/cpu_features.hpp"
#include "linalg/csr_blocks.hpp"
#include "linalg/memory_bytes.hpp"
#include "linalg/simd_pairs.hpp"

#if defined(EDGEFEM_X86_AVX2)
#include <immintrin.h>
#endif

namespace edgefem {
namespace {

#if defined(EDGEFEM_X86_AVX2)
// The block kernels below are for blocks of six columns (GAMG's interpolations from the finest level, 3 x 6, and
// its coarse operators, 6 x 6) in AVX2 registers: a block row's six single-precision values are widened four and
// two at a time (one vcvtps2pd each) and multiplied-added with fused multiply-adds, where the portable kernels
// take three pairs. In stand-alone loops over parts of about one rank's size (the same matrix again and again):
// 1.7-2.3 times as fast for the products by rows, 2.5-2.9 times for the transposed ones; less inside a run
// (docs/theory/solver.md). The same terms, summed in another order.

/// Two floats at p, widened.
__attribute__((target("avx2,fma"))) inline __m128d widen2(const float* p) {
  return _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

/// w[R g + i] := (add ? y[R g + i] : 0) + (block row g times x), R x 6 blocks.
template <int R>
__attribute__((target("avx2,fma"))) void row6_avx2(const PetscInt* bi, const PetscInt* bj, const float* v,
                                                   const PetscScalar* x, const PetscScalar* y, PetscScalar* w,
                                                   bool add, PetscInt g) {
  __m256d sum4[R];
  __m128d sum2[R];
  for (int i = 0; i < R; ++i) {
    sum4[i] = _mm256_setzero_pd();
    sum2[i] = _mm_setzero_pd();
  }
  for (PetscInt k = bi[g]; k < bi[g + 1]; ++k) {
    const float* b = v + R * 6 * k;
    const PetscScalar* xc = x + 6 * bj[k];
    const __m256d x4 = _mm256_loadu_pd(xc);
    const __m128d x2 = _mm_loadu_pd(xc + 4);
    for (int i = 0; i < R; ++i) {
      sum4[i] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(b + 6 * i)), x4, sum4[i]);
      sum2[i] = _mm_fmadd_pd(widen2(b + 6 * i + 4), x2, sum2[i]);
    }
  }
  for (int i = 0; i < R; ++i) {
    const __m128d s =
        _mm_add_pd(_mm_add_pd(_mm256_castpd256_pd128(sum4[i]), _mm256_extractf128_pd(sum4[i], 1)), sum2[i]);
    const double row = _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
    w[R * g + i] = (add ? y[R * g + i] : PetscScalar{0}) + row;
  }
}

/// out[6 c + j] += (block (g, c)^T x[R g ...])_j for the blocks of block row g, R x 6 blocks.
template <int R>
__attribute__((target("avx2,fma"))) void column6_avx2(const PetscInt* bi, const PetscInt* bj, const float* v,
                                                      const PetscScalar* x, PetscScalar* out, PetscInt g) {
  __m256d xi[R];
  for (int i = 0; i < R; ++i) xi[i] = _mm256_broadcast_sd(x + R * g + i);
  for (PetscInt k = bi[g]; k < bi[g + 1]; ++k) {
    const float* b = v + R * 6 * k;
    PetscScalar* o = out + 6 * bj[k];
    __m256d t4 = _mm256_setzero_pd();
    __m128d t2 = _mm_setzero_pd();
    for (int i = 0; i < R; ++i) {
      t4 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(b + 6 * i)), xi[i], t4);
      t2 = _mm_fmadd_pd(widen2(b + 6 * i + 4), _mm256_castpd256_pd128(xi[i]), t2);
    }
    _mm256_storeu_pd(o, _mm256_add_pd(_mm256_loadu_pd(o), t4));
    _mm_storeu_pd(o + 4, _mm_add_pd(_mm_loadu_pd(o + 4), t2));
  }
}
#endif

}  // namespace

/// The shell's operations (friends of OwnAijProduct: they read its parts).
struct OwnAijKernels {
  using Part = OwnAijProduct::Part;

  /// Whether blocks of six columns go through the AVX2 kernels: the CPU has AVX2 and FMA, and no test asked for the
  /// portable ones.
  static bool vector_kernels() {
#if defined(EDGEFEM_X86_AVX2)
    return OwnAijProduct::vector_kernels_ && cpu_has_avx2_fma();
#else
    return false;
#endif
  }

  /// w := (add ? y : 0) + P x for one part, rows split among the threads (w may be y).
  static PetscErrorCode rows(const Part& p, const PetscScalar* x, const PetscScalar* y, PetscScalar* w, bool add) {
    PetscFunctionBeginUser;
    if (p.r == 3 && p.c == 6) block_rows<3, 6>(p, x, y, w, add);
    else if (p.r == 6 && p.c == 6) block_rows<6, 6>(p, x, y, w, add);
    else if (p.r == 3 && p.c == 3) block_rows<3, 3>(p, x, y, w, add);
    else if (p.r == 6 && p.c == 3) block_rows<6, 3>(p, x, y, w, add);
    else PetscCall(scalar_rows(p, x, y, w, add));
    PetscCall(PetscLogFlops(2.0 * static_cast<double>(p.ia[p.rows])));
    PetscFunctionReturn(0);
  }

  static PetscErrorCode scalar_rows(const Part& p, const PetscScalar* x, const PetscScalar* y, PetscScalar* w,
                                    bool add) {
    PetscFunctionBeginUser;
    const PetscScalar* a = nullptr;
    PetscCall(MatSeqAIJGetArrayRead(p.mat, &a));
    const PetscInt* ia = p.ia;
    const PetscInt* ja = p.ja;
    const PetscInt n = p.rows;
#pragma omp parallel for schedule(static)
    for (PetscInt r = 0; r < n; ++r) {
      PetscScalar sum = add ? y[r] : PetscScalar{0};
      for (PetscInt k = ia[r]; k < ia[r + 1]; ++k) sum += a[k] * x[ja[k]];
      w[r] = sum;
    }
    PetscCall(MatSeqAIJRestoreArrayRead(p.mat, &a));
    PetscFunctionReturn(0);
  }

  /// rows() over the block copy: R x C partial sums per block row, added up at the row's end; in pairs of columns
  /// (simd_pairs.hpp) when C is even.
  template <int R, int C>
  static void block_rows(const Part& p, const PetscScalar* x, const PetscScalar* y, PetscScalar* w, bool add) {
    const auto n = static_cast<PetscInt>(p.bi.size()) - 1;
    const PetscInt* bi = p.bi.data();
    const PetscInt* bj = p.bj.data();
    const float* v = p.values.data();
#if defined(EDGEFEM_X86_AVX2)
    if constexpr (C == 6) {
      if (vector_kernels()) {
#pragma omp parallel for schedule(static)
        for (PetscInt g = 0; g < n; ++g) row6_avx2<R>(bi, bj, v, x, y, w, add, g);
        return;
      }
    }
#endif
    if constexpr (C % 2 == 0) {
      constexpr int H = C / 2;
#pragma omp parallel for schedule(static)
      for (PetscInt g = 0; g < n; ++g) {
        simd::Pair acc[R][H] = {};
        for (PetscInt k = bi[g]; k < bi[g + 1]; ++k) {
          const float* b = v + R * C * k;
          simd::Pair xx[H];
          for (int h = 0; h < H; ++h) xx[h] = simd::load(x + C * bj[k] + 2 * h);
          for (int i = 0; i < R; ++i)
            for (int h = 0; h < H; ++h) acc[i][h] += simd::widen(b + C * i + 2 * h) * xx[h];
        }
        for (int i = 0; i < R; ++i) {
          PetscScalar sum = add ? y[R * g + i] : PetscScalar{0};
          for (int h = 0; h < H; ++h) sum += acc[i][h][0] + acc[i][h][1];
          w[R * g + i] = sum;
        }
      }
      return;
    }
#pragma omp parallel for schedule(static)
    for (PetscInt g = 0; g < n; ++g) {
      PetscScalar acc[R * C] = {};
      for (PetscInt k = bi[g]; k < bi[g + 1]; ++k) {
        const float* b = v + R * C * k;
        const PetscScalar* xx = x + C * bj[k];
        for (int i = 0; i < R; ++i)
          for (int j = 0; j < C; ++j) acc[C * i + j] += b[C * i + j] * xx[j];
      }
      for (int i = 0; i < R; ++i) {
        PetscScalar sum = add ? y[R * g + i] : PetscScalar{0};
        for (int j = 0; j < C; ++j) sum += acc[C * i + j];
        w[R * g + i] = sum;
      }
    }
  }

  /// y += P^T x for one part: each thread sums its rows' shares into its own slice of `scratch` (a copy of y's
  /// length per thread), then the slices are added in thread order: the same sums in the same order at every call.
  static PetscErrorCode columns(const Part& p, const PetscScalar* x, PetscScalar* y,
                                std::vector<PetscScalar>& scratch) {
    PetscFunctionBeginUser;
    const PetscInt m = p.columns;
    if (p.rows == 0 || m == 0) PetscFunctionReturn(0);
    const PetscScalar* a = nullptr;
    if (p.r == 0) PetscCall(MatSeqAIJGetArrayRead(p.mat, &a));
    // out += the part's shares: of all its rows, or (`split`, inside the parallel region) of this thread's rows.
    const auto shares = [&](PetscScalar* out, bool split) {
      if (p.r == 3 && p.c == 6) block_columns<3, 6>(p, x, out, split);
      else if (p.r == 6 && p.c == 6) block_columns<6, 6>(p, x, out, split);
      else if (p.r == 3 && p.c == 3) block_columns<3, 3>(p, x, out, split);
      else if (p.r == 6 && p.c == 3) block_columns<6, 3>(p, x, out, split);
      else scalar_columns(p, a, x, out, split);
    };
    const int threads = omp_get_max_threads();
    if (threads == 1) {
      shares(y, false);
    } else {
      scratch.resize(static_cast<std::size_t>(threads) * static_cast<std::size_t>(m));
      PetscScalar* slices = scratch.data();
#pragma omp parallel num_threads(threads)
      {
        const int used = omp_get_num_threads();
        PetscScalar* mine = slices + static_cast<std::size_t>(omp_get_thread_num()) * static_cast<std::size_t>(m);
        std::fill(mine, mine + m, PetscScalar{0});
        shares(mine, true);
#pragma omp for schedule(static)
        for (PetscInt c = 0; c < m; ++c) {
          PetscScalar sum = 0;
          for (int t = 0; t < used; ++t) sum += slices[static_cast<std::size_t>(t) * static_cast<std::size_t>(m) + c];
          y[c] += sum;
        }
      }
    }
    if (p.r == 0) PetscCall(MatSeqAIJRestoreArrayRead(p.mat, &a));
    PetscCall(PetscLogFlops(2.0 * static_cast<double>(p.ia[p.rows])));
    PetscFunctionReturn(0);
  }

  /// out += the scalar part's shares, its rows split among the threads of the enclosing parallel region (`split`)
  /// or all of them.
  static void scalar_columns(const Part& p, const PetscScalar* a, const PetscScalar* x, PetscScalar* out,
                             bool split) {
    const PetscInt* ia = p.ia;
    const PetscInt* ja = p.ja;
    const auto row = [&](PetscInt r) {
      const PetscScalar xr = x[r];
      for (PetscInt k = ia[r]; k < ia[r + 1]; ++k) out[ja[k]] += a[k] * xr;
    };
    if (split) {
#pragma omp for schedule(static)
      for (PetscInt r = 0; r < p.rows; ++r) row(r);
    } else {
      for (PetscInt r = 0; r < p.rows; ++r) row(r);
    }
  }

  /// scalar_columns over the block copy.
  template <int R, int C>
  static void block_columns(const Part& p, const PetscScalar* x, PetscScalar* out, bool split) {
    const auto n = static_cast<PetscInt>(p.bi.size()) - 1;
    const PetscInt* bi = p.bi.data();
    const PetscInt* bj = p.bj.data();
    const float* v = p.values.data();
#if defined(EDGEFEM_X86_AVX2)
    const bool vector = C == 6 && vector_kernels();
#endif
    const auto block_row = [&](PetscInt g) {
#if defined(EDGEFEM_X86_AVX2)
      if constexpr (C == 6) {
        if (vector) return column6_avx2<R>(bi, bj, v, x, out, g);
      }
#endif
      const PetscScalar* xx = x + R * g;
      if constexpr (C % 2 == 0) {  // in pairs of columns (simd_pairs.hpp)
        constexpr int H = C / 2;
        simd::Pair xi[R];
        for (int i = 0; i < R; ++i) xi[i] = simd::both(xx[i]);
        for (PetscInt k = bi[g]; k < bi[g + 1]; ++k) {
          const float* b = v + R * C * k;
          PetscScalar* o = out + C * bj[k];
          simd::Pair t[H] = {};
          for (int i = 0; i < R; ++i)
            for (int h = 0; h < H; ++h) t[h] += simd::widen(b + C * i + 2 * h) * xi[i];
          for (int h = 0; h < H; ++h) simd::store(o + 2 * h, simd::load(o + 2 * h) + t[h]);
        }
        return;
      }
      for (PetscInt k = bi[g]; k < bi[g + 1]; ++k) {
        const float* b = v + R * C * k;
        PetscScalar* o = out + C * bj[k];
        PetscScalar t[C] = {};
        for (int i = 0; i < R; ++i)
          for (int j = 0; j < C; ++j) t[j] += b[C * i + j] * xx[i];
        for (int j = 0; j < C; ++j) o[j] += t[j];
      }
    };
    if (split) {
#pragma omp for schedule(static)
      for (PetscInt g = 0; g < n; ++g) block_row(g);
    } else {
      for (PetscInt g = 0; g < n; ++g) block_row(g);
    }
  }

  /// w := (add ? y : 0) + A x; on several ranks the ghosts' scatter runs while the diagonal part multiplies.
  static PetscErrorCode product(Mat shell, Vec x, Vec y, Vec w, bool add) {
    PetscFunctionBeginUser;
    OwnAijProduct* self = nullptr;
    PetscCall(MatShellGetContext(shell, &self));
    const OwnAijProduct& p = *self;
    if (p.scatter_) PetscCall(VecScatterBegin(p.scatter_, x, p.ghosts_, INSERT_VALUES, SCATTER_FORWARD));
    const PetscScalar* xv = nullptr;
    const PetscScalar* yv = nullptr;
    PetscScalar* wv = nullptr;
    PetscCall(VecGetArrayRead(x, &xv));
    if (add && y != w) PetscCall(VecGetArrayRead(y, &yv));
    PetscCall(VecGetArray(w, &wv));
    if (add && y == w) yv = wv;
    PetscCall(rows(p.diagonal_, xv, yv, wv, add));
    PetscCall(VecRestoreArrayRead(x, &xv));
    if (add && y != w) PetscCall(VecRestoreArrayRead(y, &yv));
    if (p.scatter_) {
      PetscCall(VecScatterEnd(p.scatter_, x, p.ghosts_, INSERT_VALUES, SCATTER_FORWARD));
      const PetscScalar* gv = nullptr;
      PetscCall(VecGetArrayRead(p.ghosts_, &gv));
      PetscCall(rows(p.off_diagonal_, gv, wv, wv, true));
      PetscCall(VecRestoreArrayRead(p.ghosts_, &gv));
    }
    PetscCall(VecRestoreArray(w, &wv));
    PetscFunctionReturn(0);
  }
  static PetscErrorCode mult(Mat shell, Vec x, Vec y) { return product(shell, x, y, y, false); }
  static PetscErrorCode mult_add(Mat shell, Vec x, Vec y, Vec w) { return product(shell, x, y, w, true); }

  /// w := (add ? z : 0) + A^T x; on several ranks the off-diagonal part's shares go to their owners by a reverse
  /// scatter that adds, after the diagonal part's (the order of PETSc's MatMultTransposeAdd_MPIAIJ: w is not
  /// touched while the scatter runs).
  static PetscErrorCode transpose_product(Mat shell, Vec x, Vec z, Vec w, bool add) {
    PetscFunctionBeginUser;
    OwnAijProduct* self = nullptr;
    PetscCall(MatShellGetContext(shell, &self));
    const OwnAijProduct& p = *self;
    if (add && z != w) PetscCall(VecCopy(z, w));
    if (!add) PetscCall(VecSet(w, 0.0));
    const PetscScalar* xv = nullptr;
    PetscCall(VecGetArrayRead(x, &xv));
    if (p.scatter_) {
      PetscCall(VecSet(p.ghosts_, 0.0));
      PetscScalar* gv = nullptr;
      PetscCall(VecGetArray(p.ghosts_, &gv));
      PetscCall(columns(p.off_diagonal_, xv, gv, p.scratch_));
      PetscCall(VecRestoreArray(p.ghosts_, &gv));
    }
    PetscScalar* wv = nullptr;
    PetscCall(VecGetArray(w, &wv));
    PetscCall(columns(p.diagonal_, xv, wv, p.scratch_));
    PetscCall(VecRestoreArray(w, &wv));
    PetscCall(VecRestoreArrayRead(x, &xv));
    if (p.scatter_) {
      PetscCall(VecScatterBegin(p.scatter_, p.ghosts_, w, ADD_VALUES, SCATTER_REVERSE));
      PetscCall(VecScatterEnd(p.scatter_, p.ghosts_, w, ADD_VALUES, SCATTER_REVERSE));
    }
    PetscFunctionReturn(0);
  }
  static PetscErrorCode mult_transpose(Mat shell, Vec x, Vec y) { return transpose_product(shell, x, y, y, false); }
  static PetscErrorCode mult_transpose_add(Mat shell, Vec x, Vec z, Vec y) {
    return transpose_product(shell, x, z, y, true);
  }
};

OwnAijProduct::Part OwnAijProduct::part(Mat seqaij, PetscInt row_block, PetscInt column_block) {
  Part p;
  p.mat = seqaij;
  EDGEFEM_PETSC(MatGetSize(seqaij, &p.rows, &p.columns));
  PetscInt n = 0;
  PetscBool done = PETSC_FALSE;
  EDGEFEM_PETSC(MatGetRowIJ(seqaij, 0, PETSC_FALSE, PETSC_FALSE, &n, &p.ia, &p.ja, &done));
  if (done != PETSC_TRUE || n != p.rows) throw PetscFailure("OwnAijProduct: MatGetRowIJ gave no CSR structure");
  const PetscInt r = row_block, c = column_block;
  if (!((r == 3 || r == 6) && (c == 3 || c == 6)) || p.rows % r != 0 || p.columns % c != 0) return p;
  const PetscInt* ia = p.ia;
  const PetscInt* ja = p.ja;
  if (!whole_blocks(ia, ja, p.rows, r, c)) return p;
  p.bi.reserve(static_cast<std::size_t>(p.rows / r) + 1);
  p.bi.push_back(0);
  p.bj.reserve(static_cast<std::size_t>(ia[p.rows] / (r * c)));
  for (PetscInt g = 0; g < p.rows; g += r) {
    for (PetscInt k = ia[g]; k < ia[g + 1]; k += c) p.bj.push_back(ja[k] / c);
    p.bi.push_back(static_cast<PetscInt>(p.bj.size()));
  }
  p.values.resize(static_cast<std::size_t>(ia[p.rows]));
  p.r = static_cast<int>(r);
  p.c = static_cast<int>(c);
  copy_values(p);
  return p;
}

void OwnAijProduct::copy_values(Part& p) {
  if (p.r == 0) return;  // no block copy: the products read PETSc's arrays
  const PetscScalar* a = nullptr;
  EDGEFEM_PETSC(MatSeqAIJGetArrayRead(p.mat, &a));
  const PetscInt* ia = p.ia;
  const PetscInt r = p.r, c = p.c;
  const auto n = static_cast<PetscInt>(p.bi.size()) - 1;
#pragma omp parallel for schedule(static)
  for (PetscInt g = 0; g < n; ++g) {
    for (PetscInt k = p.bi[static_cast<std::size_t>(g)]; k < p.bi[static_cast<std::size_t>(g) + 1]; ++k) {
      const PetscInt offset = c * (k - p.bi[static_cast<std::size_t>(g)]);  // the block's place in each of its rows
      for (PetscInt i = 0; i < r; ++i)
        for (PetscInt j = 0; j < c; ++j)
          p.values[static_cast<std::size_t>(k * r * c + c * i + j)] = static_cast<float>(a[ia[r * g + i] + offset + j]);
    }
  }
  EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(p.mat, &a));
}

void OwnAijProduct::refresh() {
  copy_values(diagonal_);
  if (off_diagonal_.mat) copy_values(off_diagonal_);
}

OwnAijProduct::OwnAijProduct(Mat aij) {
  EDGEFEM_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(aij)));
  *aij_.address() = aij;
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(aij), &comm));
  PetscInt row_block = 1, column_block = 1;
  EDGEFEM_PETSC(MatGetBlockSizes(aij, &row_block, &column_block));
  if (has_type(aij, {MATSEQAIJ})) {
    diagonal_ = part(aij, row_block, column_block);
  } else {
    Mat d = nullptr, o = nullptr;
    const PetscInt* garray = nullptr;
    EDGEFEM_PETSC(MatMPIAIJGetSeqAIJ(aij, &d, &o, &garray));
    diagonal_ = part(d, row_block, column_block);
    off_diagonal_ = part(o, row_block, column_block);
    PetscOwner<IS, ISDestroy> ghost_columns;
    EDGEFEM_PETSC(ISCreateGeneral(PETSC_COMM_SELF, off_diagonal_.columns, garray, PETSC_COPY_VALUES,
                                  ghost_columns.address()));
    EDGEFEM_PETSC(VecCreateSeq(PETSC_COMM_SELF, off_diagonal_.columns, ghosts_.address()));
    PetscOwner<Vec, VecDestroy> x;
    EDGEFEM_PETSC(MatCreateVecs(aij, x.address(), nullptr));
    EDGEFEM_PETSC(VecScatterCreate(x, ghost_columns, ghosts_, nullptr, scatter_.address()));
  }
  PetscInt local_rows = 0, local_columns = 0, rows = 0, columns = 0, bs = 1;
  EDGEFEM_PETSC(MatGetLocalSize(aij, &local_rows, &local_columns));
  EDGEFEM_PETSC(MatGetSize(aij, &rows, &columns));
  EDGEFEM_PETSC(MatGetBlockSize(aij, &bs));
  EDGEFEM_PETSC(MatCreateShell(comm, local_rows, local_columns, rows, columns, this, shell_.address()));
  if (rows == columns) EDGEFEM_PETSC(MatSetBlockSize(shell_, bs));
  using K = OwnAijKernels;
  const auto op = [&](MatOperation which, auto* f) {
    EDGEFEM_PETSC(MatShellSetOperation(shell_, which, reinterpret_cast<void (*)(void)>(f)));
  };
  op(MATOP_MULT, &K::mult);
  op(MATOP_MULT_ADD, &K::mult_add);
  op(MATOP_MULT_TRANSPOSE, &K::mult_transpose);
  op(MATOP_MULT_TRANSPOSE_ADD, &K::mult_transpose_add);
}

std::size_t OwnAijProduct::bytes() const {
  std::size_t b = scratch_.capacity() * sizeof(PetscScalar);
  for (const Part* p : {&diagonal_, &off_diagonal_})
    b += (p->bi.capacity() + p->bj.capacity()) * sizeof(PetscInt) + p->values.capacity() * sizeof(float);
  if (ghosts_) {
    PetscInt n = 0;
    VecGetLocalSize(ghosts_, &n);
    b += static_cast<std::size_t>(n) * sizeof(PetscScalar);
  }
  return b;
}

OwnAijProduct::~OwnAijProduct() {
  for (Part* p : {&diagonal_, &off_diagonal_}) {
    PetscInt n = 0;
    PetscBool done = PETSC_FALSE;
    if (p->mat) MatRestoreRowIJ(p->mat, 0, PETSC_FALSE, PETSC_FALSE, &n, &p->ia, &p->ja, &done);
  }
}

void MultigridProducts::install(PC pc) {
  if (installed()) return;
  if (!has_type(pc, {PCGAMG})) return;
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(pc, &n_levels));
  // Every matrix must be AIJ (SeqAIJ or MPIAIJ), else nothing is wrapped.
  std::vector<Level> levels;
  for (PetscInt l = 1; l < n_levels; ++l) {
    Mat interp = nullptr;
    EDGEFEM_PETSC(PCMGGetInterpolation(pc, l, &interp));
    Mat restriction = nullptr;
    EDGEFEM_PETSC(PCMGGetRestriction(pc, l, &restriction));
    if (!is_aij(interp) || restriction != interp) return;
    Level level;
    level.index = l;
    level.interp = std::make_unique<OwnAijProduct>(interp);
    if (l < n_levels - 1) {
      KSP smoother = nullptr;
      EDGEFEM_PETSC(PCMGGetSmoother(pc, l, &smoother));
      Mat a = nullptr, p = nullptr;
      EDGEFEM_PETSC(KSPGetOperators(smoother, &a, &p));
      if (!is_aij(a) || a != p) return;
      level.op = std::make_unique<OwnAijProduct>(a);
    }
    levels.push_back(std::move(level));
  }
  for (const Level& level : levels) give_level(pc, level, true);
  levels_ = std::move(levels);
  finest_diagonal_from_operator(pc, true);
}

void MultigridProducts::finest_diagonal_from_operator(PC pc, bool own) {
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(pc, &n_levels));
  if (n_levels < 2) return;
  Mat krylov = nullptr, preconditioning = nullptr;
  EDGEFEM_PETSC(PCGetOperators(pc, &krylov, &preconditioning));
  KSP smoother = nullptr;
  EDGEFEM_PETSC(PCMGGetSmoother(pc, n_levels - 1, &smoother));
  Mat a = nullptr, p = nullptr;
  EDGEFEM_PETSC(KSPGetOperators(smoother, &a, &p));
  PetscBool has_diagonal = PETSC_FALSE;
  EDGEFEM_PETSC(MatHasOperation(krylov, MATOP_GET_DIAGONAL, &has_diagonal));
  if (a != krylov || krylov == preconditioning || !has_type(krylov, {MATSHELL}) || has_diagonal != PETSC_TRUE) return;
  PC jacobi = nullptr;  // only the diagonal: other smoothers' preconditioners need more of the matrix than a shell has
  EDGEFEM_PETSC(KSPGetPC(smoother, &jacobi));
  PCJacobiType type = PC_JACOBI_ROWMAX;
  if (has_type(jacobi, {PCJACOBI})) EDGEFEM_PETSC(PCJacobiGetType(jacobi, &type));
  if (type != PC_JACOBI_DIAGONAL) return;
  if (own && p == preconditioning) EDGEFEM_PETSC(KSPSetOperators(smoother, krylov, krylov));
  if (!own && p == krylov) EDGEFEM_PETSC(KSPSetOperators(smoother, krylov, preconditioning));
}

MultigridProducts::Bytes MultigridProducts::bytes_by_part() const {
  Bytes b;
  for (const Level& level : levels_) {
    if (level.op) b.copies += level.op->bytes();
    if (level.interp) b.copies += level.interp->bytes(), b.interpolations += aij_bytes(level.interp->matrix());
  }
  for (const auto& product : owned_galerkin_) b.galerkin += product->bytes();
  for (const auto& rest : finest_rest_) b.rest += rest.capacity() * sizeof(float);
  return b;
}

std::size_t MultigridProducts::bytes() const {
  const Bytes b = bytes_by_part();
  return b.copies + b.interpolations + b.galerkin + b.rest;
}

void MultigridProducts::remove(PC pc) {
  galerkin_.clear();  // they hold the matrices GAMG's set-up may replace
  owned_galerkin_.clear();
  galerkin_refused_ = false;
  for (auto& v : finest_rest_) v.clear();
  if (installed()) finest_diagonal_from_operator(pc, false);
  for (const Level& level : levels_) give_level(pc, level, false);
  levels_.clear();
}

void MultigridProducts::rotate_finest_interpolation(const std::vector<double>& rotations) {
  Mat p = levels_.back().interp->matrix();
  const LocalParts parts = local_parts(p);
  for (int k = 0; k < parts.count; ++k) {
    Mat part = parts.mats[static_cast<std::size_t>(k)];
    const RowStructure s(part);
    if (rotations.size() != 3 * static_cast<std::size_t>(s.n))  // 9 per block row of 3 rows
      throw std::logic_error("rotate_finest_interpolation: rotations for another number of rows");
    PetscScalar* a = nullptr;
    EDGEFEM_PETSC(MatSeqAIJGetArray(part, &a));
    auto& rest = finest_rest_[static_cast<std::size_t>(k)];
    if (rest.empty()) {
      rest.resize(static_cast<std::size_t>(s.ia[s.n]));
      for (PetscInt q = 0; q < s.ia[s.n]; ++q) rest[static_cast<std::size_t>(q)] = static_cast<float>(a[q]);
    }
    for (PetscInt v = 0; v < s.n / 3; ++v) {
      const PetscInt* ia = s.ia + 3 * v;
      const PetscInt length = ia[1] - ia[0];
      const double* R = rotations.data() + 9 * v;
      for (PetscInt q = 0; q < length; ++q) {
        const double r0 = rest[static_cast<std::size_t>(ia[0] + q)], r1 = rest[static_cast<std::size_t>(ia[1] + q)],
                     r2 = rest[static_cast<std::size_t>(ia[2] + q)];  // (float to double: exact)
        for (int i = 0; i < 3; ++i) a[ia[i] + q] = R[3 * i] * r0 + R[3 * i + 1] * r1 + R[3 * i + 2] * r2;
      }
    }
    EDGEFEM_PETSC(MatSeqAIJRestoreArray(part, &a));
  }
  levels_.back().interp->refresh();
  galerkin_.front()->reload_interpolation();
}

bool MultigridProducts::update_coarse_operators(PC pc, const std::vector<double>& rotations) {
  if (!installed() || galerkin_refused_) return false;
  if (galerkin_.empty()) {
    // Level l's operator (l = 0 the coarsest, levels_.size() the finest) and its interpolation from level l - 1.
    const auto n_levels = static_cast<PetscInt>(levels_.size()) + 1;
    Mat finest = nullptr, coarsest = nullptr;
    EDGEFEM_PETSC(PCGetOperators(pc, nullptr, &finest));
    KSP coarse_solve = nullptr;
    EDGEFEM_PETSC(PCMGGetCoarseSolve(pc, &coarse_solve));
    EDGEFEM_PETSC(KSPGetOperators(coarse_solve, nullptr, &coarsest));
    const auto op = [&](PetscInt l) -> Mat {
      if (l == n_levels - 1) return finest;
      if (l == 0) return coarsest;
      const Level& level = levels_[static_cast<std::size_t>(l) - 1];
      return level.op ? level.op->matrix() : nullptr;
    };
    for (PetscInt l = n_levels - 1; l >= 1; --l) {
      Mat interp = levels_[static_cast<std::size_t>(l) - 1].interp->matrix();
      GalerkinProduct* made = op(l - 1) ? galerkin_product_of(op(l - 1)) : nullptr;
      int borrow = made && made->fine() == op(l) && made->interp() == interp ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &borrow, 1, MPI_INT, MPI_MIN, PetscObjectComm(reinterpret_cast<PetscObject>(pc)));
      if (borrow == 1) {
        galerkin_.push_back(made);
        continue;
      }
      auto product = GalerkinProduct::create(op(l), interp, op(l - 1));
      if (!product) {
        galerkin_.clear();
        owned_galerkin_.clear();
        galerkin_refused_ = true;
        return false;
      }
      galerkin_.push_back(product.get());
      owned_galerkin_.push_back(std::move(product));
    }
  }
  if (!rotations.empty()) rotate_finest_interpolation(rotations);
  for (const auto& product : galerkin_) product->update();
  for (const Level& level : levels_)
    if (level.op) level.op->refresh();
  return true;
}

void MultigridProducts::give_level(PC pc, const Level& level, bool own) {
  const auto pick = [own](const OwnAijProduct& p) { return own ? p.shell() : p.matrix(); };
  EDGEFEM_PETSC(PCMGSetInterpolation(pc, level.index, pick(*level.interp)));
  EDGEFEM_PETSC(PCMGSetRestriction(pc, level.index, pick(*level.interp)));
  if (level.op) {
    KSP smoother = nullptr;
    EDGEFEM_PETSC(PCMGGetSmoother(pc, level.index, &smoother));
    EDGEFEM_PETSC(KSPSetOperators(smoother, pick(*level.op), level.op->matrix()));
    EDGEFEM_PETSC(PCMGSetResidual(pc, level.index, PCMGResidualDefault, pick(*level.op)));
  }
}

}  // namespace edgefem
