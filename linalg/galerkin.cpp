// SPDX-License-Identifier: BSD-3-Clause
#include "linalg/galerkin.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "linalg/csr_blocks.hpp"

namespace edgefem {
namespace {

/// Block rows of a SeqAIJ part of P (whole b x c blocks) into P's block rows from `first_row` on: with `values`
/// null, adds each row's number of blocks to `ends[first_row + g + 1]`; else writes its blocks at `cursor[...]` (and
/// moves it on): block columns as global coarse blocks (`global(local column) / c`), b x c values row after row.
template <class Global>
void block_rows_of(Mat part, int b, int c, Global global, PetscInt first_row, std::vector<PetscInt>& ends,
                   std::vector<PetscInt>& cursor, std::vector<PetscInt>& columns, float* values) {
  const RowStructure s(part);
  const PetscScalar* a = nullptr;
  if (values) EDGEFEM_PETSC(MatSeqAIJGetArrayRead(part, &a));
  for (PetscInt g = 0; g < s.n / b; ++g) {
    const PetscInt begin = s.ia[b * g], length = s.ia[b * g + 1] - begin;
    const auto row = static_cast<std::size_t>(first_row + g);
    if (!values) {
      ends[row + 1] += length / c;
      continue;
    }
    for (PetscInt q = 0; q < length; q += c) {
      const auto k = static_cast<std::size_t>(cursor[row]++);
      columns[k] = global(s.ja[begin + q]) / c;
      for (int i = 0; i < b; ++i)
        for (int j = 0; j < c; ++j)
          values[k * static_cast<std::size_t>(b * c) + static_cast<std::size_t>(c * i + j)] =
              static_cast<float>(a[s.ia[b * g + i] + q + j]);
    }
  }
  if (values) EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(part, &a));
}

/// The rows `rows` of `interp` (all its columns) from their owners, as a SeqAIJ matrix (MatCreateSubMatrices' array
/// of one; the caller destroys it with MatDestroySubMatrices). Collective.
Mat* interpolation_rows(Mat interp, PetscInt n, const PetscInt* rows) {
  PetscInt n_coarse = 0;
  EDGEFEM_PETSC(MatGetSize(interp, nullptr, &n_coarse));
  PetscOwner<IS, ISDestroy> row_set, column_set;
  EDGEFEM_PETSC(ISCreateGeneral(PETSC_COMM_SELF, n, rows, PETSC_COPY_VALUES, row_set.address()));
  EDGEFEM_PETSC(ISCreateStride(PETSC_COMM_SELF, n_coarse, 0, 1, column_set.address()));
  IS r = row_set.get(), c = column_set.get();
  Mat* out = nullptr;
  EDGEFEM_PETSC(MatCreateSubMatrices(interp, 1, &r, &c, MAT_INITIAL_MATRIX, &out));
  return out;
}

/// block_rows_of over all of P's block rows a rank keeps: its own (the parts `p`, whose columns start at
/// `columns_begin`), then those of `ghost_rows` (if any) from block row n_rows on.
void p_block_rows(const LocalParts& p, PetscInt columns_begin, Mat ghost_rows, int b, int c, PetscInt n_rows,
                  std::vector<PetscInt>& ends, std::vector<PetscInt>& cursor, std::vector<PetscInt>& columns,
                  float* values) {
  block_rows_of(
      p.mats[0], b, c, [&](PetscInt j) { return columns_begin + j; }, 0, ends, cursor, columns, values);
  if (p.mats[1])
    block_rows_of(
        p.mats[1], b, c, [&](PetscInt j) { return p.garray[j]; }, 0, ends, cursor, columns, values);
  if (ghost_rows)
    block_rows_of(
        ghost_rows, b, c, [](PetscInt j) { return j; }, n_rows, ends, cursor, columns, values);
}

/// Sends outgoing[d] to rank d (nothing when empty); returns what every rank s sent here, in incoming[s].
/// Collective.
std::vector<std::vector<PetscInt>> exchange(MPI_Comm comm, const std::vector<std::vector<PetscInt>>& outgoing,
                                            int tag) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<int> send_counts(static_cast<std::size_t>(size)), receive_counts(static_cast<std::size_t>(size));
  for (std::size_t d = 0; d < static_cast<std::size_t>(size); ++d)
    send_counts[d] = static_cast<int>(outgoing[d].size());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm);
  std::vector<MPI_Request> requests;
  std::vector<std::vector<PetscInt>> incoming(static_cast<std::size_t>(size));
  for (int s = 0; s < size; ++s) {
    const auto n = receive_counts[static_cast<std::size_t>(s)];
    if (n == 0) continue;
    incoming[static_cast<std::size_t>(s)].resize(static_cast<std::size_t>(n));
    requests.emplace_back();
    MPI_Irecv(incoming[static_cast<std::size_t>(s)].data(), n, MPIU_INT, s, tag, comm, &requests.back());
  }
  for (int d = 0; d < size; ++d) {
    if (outgoing[static_cast<std::size_t>(d)].empty()) continue;
    requests.emplace_back();
    MPI_Isend(outgoing[static_cast<std::size_t>(d)].data(), send_counts[static_cast<std::size_t>(d)], MPIU_INT, d, tag,
              comm, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return incoming;
}

}  // namespace

std::unique_ptr<GalerkinProduct> GalerkinProduct::create(Mat fine, Mat interp, Mat coarse) {
  PetscInt c = -1;
  if (coarse && interp && is_aij(coarse) && is_aij(interp)) {
    PetscInt coarse_rows = 0, interp_columns = 0;
    EDGEFEM_PETSC(MatGetBlockSize(coarse, &c));
    EDGEFEM_PETSC(MatGetLocalSize(coarse, &coarse_rows, nullptr));
    EDGEFEM_PETSC(MatGetLocalSize(interp, nullptr, &interp_columns));
    if ((c != 3 && c != 6) || coarse_rows != interp_columns) c = -1;
  }
  auto g = structure(fine, interp, c);
  if (!g) return nullptr;
  EDGEFEM_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(coarse)));
  *g->coarse_reference_.address() = coarse;
  g->coarse_ = coarse;
  MPI_Comm comm = MPI_COMM_NULL;
  const PetscInt* ranges = nullptr;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(fine), &comm));
  EDGEFEM_PETSC(MatGetOwnershipRanges(coarse, &ranges));
  if (!g->place_blocks(coarse, g->route(comm, ranges))) return nullptr;
  return g;
}

namespace {

/// The shape of P^T A P on this rank: A's block size b, P's column block size c, A's rows, P's first column, and
/// both matrices' local parts.
struct ProductShape {
  PetscInt b = 0, c = 0, fine_rows = 0, columns_begin = 0;
  LocalParts a, p;
};

/// The shape of P^T fine P on this rank when `fine` and `interp` are AIJ matrices (both sequential or both MPI) of
/// whole b x b and b x c blocks, b and c 3 or 6 (c = 0: the interpolation's column block size), laid out alike;
/// else nothing. Not collective.
std::optional<ProductShape> product_shape(Mat fine, Mat interp, PetscInt c) {
  if (!fine || !interp || !is_aij(fine) || !is_aij(interp) ||
      has_type(fine, {MATSEQAIJ}) != has_type(interp, {MATSEQAIJ}))
    return std::nullopt;
  ProductShape s;
  PetscInt interp_rows = 0, interp_columns = 0, rows_begin = 0, unused = 0;
  EDGEFEM_PETSC(MatGetBlockSize(fine, &s.b));
  if (c == 0) EDGEFEM_PETSC(MatGetBlockSizes(interp, nullptr, &c));
  s.c = c;
  EDGEFEM_PETSC(MatGetLocalSize(fine, &s.fine_rows, &unused));
  EDGEFEM_PETSC(MatGetLocalSize(interp, &interp_rows, &interp_columns));
  EDGEFEM_PETSC(MatGetOwnershipRange(fine, &rows_begin, nullptr));
  EDGEFEM_PETSC(MatGetOwnershipRangeColumn(interp, &s.columns_begin, nullptr));
  const PetscInt b = s.b, columns_begin = s.columns_begin;
  if (!((b == 3 || b == 6) && (c == 3 || c == 6) && s.fine_rows == interp_rows && interp_columns % c == 0 &&
        rows_begin % b == 0 && columns_begin % c == 0))
    return std::nullopt;
  s.a = local_parts(fine);
  s.p = local_parts(interp);
  const LocalParts &a = s.a, &p = s.p;
  bool ok = whole_blocks(RowStructure(a.mats[0]), b, b, [&](PetscInt j) { return rows_begin + j; }) &&
            whole_blocks(RowStructure(p.mats[0]), b, c, [&](PetscInt j) { return columns_begin + j; });
  if (ok && a.mats[1])
    ok = whole_blocks(RowStructure(a.mats[1]), b, b, [&](PetscInt j) { return a.garray[j]; }) &&
         whole_blocks(RowStructure(p.mats[1]), b, c, [&](PetscInt j) { return p.garray[j]; });
  if (!ok) return std::nullopt;
  return s;
}

/// Whether `ok` holds on every rank of comm. Collective.
bool on_every_rank(MPI_Comm comm, bool ok) {
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  return all_ok == 1;
}

/// interpolation_rows()' array of one matrix, destroyed with this (or by reset()).
struct GhostRows {
  Mat* rows = nullptr;
  GhostRows() = default;
  GhostRows(const GhostRows&) = delete;
  GhostRows& operator=(const GhostRows&) = delete;
  ~GhostRows() { reset(); }
  void reset() {
    if (rows) MatDestroySubMatrices(1, &rows);
    rows = nullptr;
  }
  [[nodiscard]] Mat matrix() const { return rows ? rows[0] : nullptr; }
};

/// P^T's rows by a counting sort of this rank's P blocks (P's rows 0 .. n_rows, columns compact coarse blocks
/// 0 .. n_compact): row a lists entries pt_rows[a] .. pt_rows[a + 1], entry q the block pt_block[q] of P, in fine row
/// pt_fine[q].
struct TransposedBlocks {
  std::vector<PetscInt> pt_rows, pt_fine, pt_block;
};
TransposedBlocks transposed_blocks(const std::vector<PetscInt>& p_rows, const std::vector<PetscInt>& p_columns,
                                   PetscInt n_rows, PetscInt n_compact) {
  TransposedBlocks t;
  t.pt_rows.assign(static_cast<std::size_t>(n_compact) + 1, 0);
  const auto local_blocks = static_cast<std::size_t>(p_rows[static_cast<std::size_t>(n_rows)]);
  for (std::size_t k = 0; k < local_blocks; ++k) ++t.pt_rows[static_cast<std::size_t>(p_columns[k]) + 1];
  for (std::size_t a = 0; a < static_cast<std::size_t>(n_compact); ++a) t.pt_rows[a + 1] += t.pt_rows[a];
  t.pt_fine.resize(local_blocks);
  t.pt_block.resize(local_blocks);
  std::vector<PetscInt> at(t.pt_rows.begin(), t.pt_rows.end() - 1);
  for (PetscInt r = 0; r < n_rows; ++r)
    for (PetscInt k = p_rows[static_cast<std::size_t>(r)]; k < p_rows[static_cast<std::size_t>(r) + 1]; ++k) {
      const auto q = static_cast<std::size_t>(at[static_cast<std::size_t>(p_columns[static_cast<std::size_t>(k)])]++);
      t.pt_fine[q] = r;
      t.pt_block[q] = k;
    }
  return t;
}

}  // namespace

std::unique_ptr<GalerkinProduct> GalerkinProduct::structure(Mat fine, Mat interp, PetscInt c) {
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(fine), &comm));
  const std::optional<ProductShape> shape = c >= 0 ? product_shape(fine, interp, c) : std::nullopt;
  // P's rows at the fine operator's ghost columns, from their owners (a collective call: every rank, or none).
  if (!on_every_rank(comm, shape.has_value())) return nullptr;
  PetscInt n_ghost_rows = 0;
  GhostRows ghost_rows;
  if (shape->a.mats[1]) {
    EDGEFEM_PETSC(MatGetLocalSize(shape->a.mats[1], nullptr, &n_ghost_rows));
    ghost_rows.rows = interpolation_rows(interp, n_ghost_rows, shape->a.garray);
    if (!on_every_rank(comm, whole_blocks(RowStructure(ghost_rows.matrix()), shape->b, shape->c))) return nullptr;
  }

  std::unique_ptr<GalerkinProduct> g(new GalerkinProduct);
  for (auto [owner, m] : {std::pair{&g->fine_, fine}, std::pair{&g->interp_, interp}}) {
    EDGEFEM_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(m)));
    *owner->address() = m;
  }
  g->fine_diagonal_ = shape->a.mats[0];
  g->fine_off_diagonal_ = shape->a.mats[1];
  g->b_ = static_cast<int>(shape->b);
  g->c_ = static_cast<int>(shape->c);
  g->n_rows_ = shape->fine_rows / shape->b;
  g->copy_interpolation_blocks(shape->p, shape->columns_begin, ghost_rows.matrix(), n_ghost_rows / shape->b);
  ghost_rows.reset();
  g->number_coarse_blocks();
  g->make_ap_pattern();
  const TransposedBlocks pt = transposed_blocks(g->p_rows_, g->p_columns_, g->n_rows_,
                                                static_cast<PetscInt>(g->coarse_block_.size()));
  g->make_c_pattern(pt.pt_rows, pt.pt_fine);
  g->place_products(pt.pt_rows, pt.pt_fine, pt.pt_block);
  return g;
}

void GalerkinProduct::copy_interpolation_blocks(const LocalParts& p, PetscInt columns_begin, Mat ghost_rows,
                                                PetscInt n_ghost_block_rows) {
  // P's block rows: this rank's, then the ghosts' (block row n_rows_ + k: the off-diagonal part's block column k).
  const PetscInt n_rows = n_rows_, n_all = n_rows + n_ghost_block_rows;
  const int bi = b_, ci = c_;
  std::vector<PetscInt> cursor;
  const auto all_parts = [&](float* values) {
    p_block_rows(p, columns_begin, ghost_rows, bi, ci, n_rows, p_rows_, cursor, p_columns_, values);
  };
  p_rows_.assign(static_cast<std::size_t>(n_all) + 1, 0);
  all_parts(nullptr);  // counts
  for (std::size_t r = 0; r < static_cast<std::size_t>(n_all); ++r) p_rows_[r + 1] += p_rows_[r];
  cursor.assign(p_rows_.begin(), p_rows_.end() - 1);
  p_columns_.resize(static_cast<std::size_t>(p_rows_.back()));
  p_values_.resize(p_columns_.size() * static_cast<std::size_t>(bi * ci));
  all_parts(p_values_.data());
}

void GalerkinProduct::number_coarse_blocks() {
  // The compact coarse numbering: every coarse block these rows reach, sorted.
  coarse_block_ = p_columns_;
  std::sort(coarse_block_.begin(), coarse_block_.end());
  coarse_block_.erase(std::unique(coarse_block_.begin(), coarse_block_.end()), coarse_block_.end());
  coarse_block_.shrink_to_fit();
  for (PetscInt& col : p_columns_)
    col = static_cast<PetscInt>(std::lower_bound(coarse_block_.begin(), coarse_block_.end(), col) -
                                coarse_block_.begin());
}

void GalerkinProduct::make_ap_pattern() {
  const RowStructure fine_diagonal(fine_diagonal_);
  std::optional<RowStructure> fine_off_diagonal;
  if (fine_off_diagonal_) fine_off_diagonal.emplace(fine_off_diagonal_);
  fine_nonzeros_ = {fine_diagonal.ia[fine_diagonal.n],
                    fine_off_diagonal ? fine_off_diagonal->ia[fine_off_diagonal->n] : 0};
  // A P's pattern by block rows: the union of P's rows at the columns of A's block row.
  const PetscInt b = b_, n_rows = n_rows_;
  std::vector<char> seen(coarse_block_.size(), 0);
  ap_rows_.assign(1, 0);
  for (PetscInt r = 0; r < n_rows; ++r) {
    const auto begin = ap_columns_.size();
    const auto add_row_of_p = [&](PetscInt j) {
      for (PetscInt k = p_rows_[static_cast<std::size_t>(j)]; k < p_rows_[static_cast<std::size_t>(j) + 1]; ++k) {
        const PetscInt col = p_columns_[static_cast<std::size_t>(k)];
        if (!seen[static_cast<std::size_t>(col)]) seen[static_cast<std::size_t>(col)] = 1, ap_columns_.push_back(col);
      }
    };
    for (PetscInt k = fine_diagonal.ia[b * r]; k < fine_diagonal.ia[b * r + 1]; k += b)
      add_row_of_p(fine_diagonal.ja[k] / b);
    if (fine_off_diagonal)
      for (PetscInt k = fine_off_diagonal->ia[b * r]; k < fine_off_diagonal->ia[b * r + 1]; k += b)
        add_row_of_p(n_rows + fine_off_diagonal->ja[k] / b);
    std::sort(ap_columns_.begin() + static_cast<std::ptrdiff_t>(begin), ap_columns_.end());
    for (auto k = begin; k < ap_columns_.size(); ++k) seen[static_cast<std::size_t>(ap_columns_[k])] = 0;
    ap_rows_.push_back(static_cast<PetscInt>(ap_columns_.size()));
  }
}

void GalerkinProduct::make_c_pattern(const std::vector<PetscInt>& pt_rows, const std::vector<PetscInt>& pt_fine) {
  // C's rows (compact coarse blocks): the union of A P's rows r over the blocks (r, a) of this rank's P rows (P^T's
  // rows: the fine rows r of each a).
  const std::size_t n_compact = coarse_block_.size();
  std::vector<char> seen(n_compact, 0);
  c_rows_.assign(1, 0);
  for (std::size_t a = 0; a < n_compact; ++a) {
    const auto begin = c_columns_.size();
    for (PetscInt q = pt_rows[a]; q < pt_rows[a + 1]; ++q) {
      const auto r = static_cast<std::size_t>(pt_fine[static_cast<std::size_t>(q)]);
      for (PetscInt k = ap_rows_[r]; k < ap_rows_[r + 1]; ++k) {
        const PetscInt col = ap_columns_[static_cast<std::size_t>(k)];
        if (!seen[static_cast<std::size_t>(col)]) seen[static_cast<std::size_t>(col)] = 1, c_columns_.push_back(col);
      }
    }
    std::sort(c_columns_.begin() + static_cast<std::ptrdiff_t>(begin), c_columns_.end());
    for (auto k = begin; k < c_columns_.size(); ++k) seen[static_cast<std::size_t>(c_columns_[k])] = 0;
    c_rows_.push_back(static_cast<PetscInt>(c_columns_.size()));
  }
}

void GalerkinProduct::place_products(const std::vector<PetscInt>& pt_rows, const std::vector<PetscInt>& pt_fine,
                                     const std::vector<PetscInt>& pt_block) {
  // Where each P(r, a)^T (A P)(r, j) product goes in C: positions_[position_start_[r] + (k - first block of P's row
  // r) * (A P's row length) + j] for P's block k = (r, a). Filled by C's rows: row a's columns mapped once (`where`),
  // then every A P row r that P^T's row a reaches (all its columns are in C's row a, by construction).
  const auto n_rows = static_cast<std::size_t>(n_rows_);
  const std::size_t n_compact = coarse_block_.size();
  position_start_.assign(n_rows + 1, 0);
  for (std::size_t r = 0; r < n_rows; ++r)
    position_start_[r + 1] = position_start_[r] + (p_rows_[r + 1] - p_rows_[r]) * (ap_rows_[r + 1] - ap_rows_[r]);
  positions_.resize(static_cast<std::size_t>(position_start_.back()));
  std::vector<PetscInt> where(n_compact, -1);
  for (std::size_t a = 0; a < n_compact; ++a) {
    for (PetscInt q = c_rows_[a]; q < c_rows_[a + 1]; ++q)
      where[static_cast<std::size_t>(c_columns_[static_cast<std::size_t>(q)])] = q;
    for (PetscInt q = pt_rows[a]; q < pt_rows[a + 1]; ++q) {
      const auto r = static_cast<std::size_t>(pt_fine[static_cast<std::size_t>(q)]);
      const PetscInt k = pt_block[static_cast<std::size_t>(q)];
      const PetscInt ap_begin = ap_rows_[r], ap_length = ap_rows_[r + 1] - ap_begin;
      PetscInt* out = positions_.data() + position_start_[r] + (k - p_rows_[r]) * ap_length;
      for (PetscInt j = 0; j < ap_length; ++j)
        out[j] = where[static_cast<std::size_t>(ap_columns_[static_cast<std::size_t>(ap_begin + j)])];
    }
  }
}

std::vector<std::vector<PetscInt>> GalerkinProduct::route(MPI_Comm comm, const PetscInt* ranges) {
  comm_ = comm;
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const PetscInt c = c_;
  // This rank's rows stay (own_rows_); other ranks' rows go to their owners: each row's coarse block, its number of
  // blocks and their block columns (global), and which blocks of the share they are, in that order.
  std::vector<std::vector<PetscInt>> structure(static_cast<std::size_t>(size)), blocks(static_cast<std::size_t>(size));
  for (std::size_t a = 0; a < coarse_block_.size(); ++a) {
    const PetscInt begin = c_rows_[a], end = c_rows_[a + 1], row = c * coarse_block_[a];
    if (begin == end) continue;
    const auto owner = static_cast<std::size_t>(std::upper_bound(ranges, ranges + size + 1, row) - ranges - 1);
    if (owner == static_cast<std::size_t>(rank)) {
      own_rows_.push_back(static_cast<PetscInt>(a));
      continue;
    }
    structure[owner].insert(structure[owner].end(), {coarse_block_[a], end - begin});
    for (PetscInt k = begin; k < end; ++k) {
      structure[owner].push_back(coarse_block_[static_cast<std::size_t>(c_columns_[static_cast<std::size_t>(k)])]);
      blocks[owner].push_back(k);
    }
  }
  for (int d = 0; d < size; ++d) {
    if (structure[static_cast<std::size_t>(d)].empty()) continue;
    send_ranks_.push_back(d);
    send_sizes_.push_back(static_cast<int>(blocks[static_cast<std::size_t>(d)].size()));
    send_blocks_.insert(send_blocks_.end(), blocks[static_cast<std::size_t>(d)].begin(),
                        blocks[static_cast<std::size_t>(d)].end());
  }
  // The owners learn once which blocks will come.
  return exchange(comm, structure, kTag);
}

bool GalerkinProduct::place_blocks(Mat coarse, const std::vector<std::vector<PetscInt>>& incoming) {
  PetscInt row_begin = 0, row_end = 0, column_begin = 0, column_end = 0;
  EDGEFEM_PETSC(MatGetOwnershipRange(coarse, &row_begin, &row_end));
  EDGEFEM_PETSC(MatGetOwnershipRangeColumn(coarse, &column_begin, &column_end));
  const LocalParts parts = local_parts(coarse);
  coarse_diagonal_ = parts.mats[0];
  coarse_off_diagonal_ = parts.mats[1];
  const RowStructure diagonal(parts.mats[0]);
  std::optional<RowStructure> off_diagonal;
  PetscInt n_ghosts = 0;
  if (parts.mats[1]) {
    off_diagonal.emplace(parts.mats[1]);
    EDGEFEM_PETSC(MatGetLocalSize(parts.mats[1], nullptr, &n_ghosts));
  }
  coarse_nonzeros_ = {diagonal.ia[diagonal.n], off_diagonal ? off_diagonal->ia[off_diagonal->n] : 0};
  const int c = c_;
  // Where C(row, column .. column + c - 1) is in the coarse matrix's arrays (`row` a global point row of this rank):
  // an offset in the diagonal part's values, or -1 - the offset in the off-diagonal part's; none when those c
  // entries are not stored there side by side.
  const auto locate = [&](PetscInt row, PetscInt column) -> std::optional<PetscInt> {
    const PetscInt r = row - row_begin;
    const bool own_column = column >= column_begin && column < column_end;
    if (!own_column && !off_diagonal) return std::nullopt;
    const RowStructure& part = own_column ? diagonal : *off_diagonal;
    PetscInt local = column - column_begin;
    if (!own_column) {
      const PetscInt* at = std::lower_bound(parts.garray, parts.garray + n_ghosts, column);
      if (parts.garray + n_ghosts - at < c || at[0] != column || at[c - 1] != column + c - 1) return std::nullopt;
      local = static_cast<PetscInt>(at - parts.garray);
    }
    const PetscInt* first = part.ja + part.ia[r];
    const PetscInt* last = part.ja + part.ia[r + 1];
    const PetscInt* at = std::lower_bound(first, last, local);
    if (last - at < c || at[0] != local || at[c - 1] != local + c - 1) return std::nullopt;
    const auto offset = static_cast<PetscInt>(at - part.ja);
    return own_column ? offset : -1 - offset;
  };
  // This rank's rows of its share, then the rows other ranks send (in the senders' rank order).
  bool ok = true;
  places_.assign(c_columns_.size() * static_cast<std::size_t>(c), 0);
  for (const PetscInt a : own_rows_) {
    const PetscInt row = c * coarse_block_[static_cast<std::size_t>(a)];
    for (PetscInt k = c_rows_[static_cast<std::size_t>(a)]; k < c_rows_[static_cast<std::size_t>(a) + 1] && ok; ++k)
      for (int i = 0; i < c && ok; ++i) {
        const auto place = locate(row + i,
                                  c * coarse_block_[static_cast<std::size_t>(c_columns_[static_cast<std::size_t>(k)])]);
        ok = place.has_value();
        if (ok) places_[static_cast<std::size_t>(k * c + i)] = *place;
      }
  }
  for (std::size_t s = 0; s < incoming.size(); ++s) {
    const auto& in = incoming[s];
    if (in.empty()) continue;
    const auto first = incoming_places_.size();
    for (std::size_t q = 0; q < in.size() && ok;) {
      const PetscInt row = c * in[q], n = in[q + 1];
      ok = row >= row_begin && row < row_end;
      for (PetscInt k = 0; k < n && ok; ++k)
        for (int i = 0; i < c && ok; ++i) {
          const auto place = locate(row + i, c * in[q + 2 + static_cast<std::size_t>(k)]);
          ok = place.has_value();
          if (ok) incoming_places_.push_back(*place);
        }
      q += 2 + static_cast<std::size_t>(n);
    }
    receive_ranks_.push_back(static_cast<int>(s));
    receive_sizes_.push_back(static_cast<int>((incoming_places_.size() - first) / static_cast<std::size_t>(c)));
  }
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
  return all_ok == 1;
}

void GalerkinProduct::reload_interpolation() {
  PetscInt columns_begin = 0;
  EDGEFEM_PETSC(MatGetOwnershipRangeColumn(interp_, &columns_begin, nullptr));
  Mat* ghost_rows = nullptr;
  if (fine_off_diagonal_) {  // the rows structure() fetched (collective: every rank has an off-diagonal part)
    PetscInt n_ghost_rows = 0;
    EDGEFEM_PETSC(MatGetLocalSize(fine_off_diagonal_, nullptr, &n_ghost_rows));
    ghost_rows = interpolation_rows(interp_, n_ghost_rows, local_parts(fine_).garray);
  }
  // The columns are written again as global blocks; p_columns_ keeps the compact numbering.
  std::vector<PetscInt> cursor(p_rows_.begin(), p_rows_.end() - 1), columns(p_columns_.size());
  p_block_rows(local_parts(interp_), columns_begin, ghost_rows ? ghost_rows[0] : nullptr, b_, c_, n_rows_, p_rows_,
               cursor, columns, p_values_.data());
  if (ghost_rows) EDGEFEM_PETSC(MatDestroySubMatrices(1, &ghost_rows));
}

void GalerkinProduct::make_coarse(Mat coarse) {
  MPI_Comm comm = MPI_COMM_NULL;
  EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(fine_.get()), &comm));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // The coarse rows are laid out as P's columns.
  PetscInt n_local = 0, n_global = 0;
  const PetscInt* ranges = nullptr;
  EDGEFEM_PETSC(MatGetLocalSize(interp_, nullptr, &n_local));
  EDGEFEM_PETSC(MatGetSize(interp_, nullptr, &n_global));
  EDGEFEM_PETSC(MatGetOwnershipRangesColumn(interp_, &ranges));
  EDGEFEM_PETSC(MatSetSizes(coarse, n_local, n_local, n_global, n_global));
  EDGEFEM_PETSC(MatSetBlockSizes(coarse, c_, c_));
  EDGEFEM_PETSC(MatSetType(coarse, has_type(fine_.get(), {MATSEQAIJ}) ? MATSEQAIJ : MATMPIAIJ));
  const std::vector<std::vector<PetscInt>> incoming = route(comm, ranges);
  // The block columns of this rank's block rows: its own share's, and those of the other ranks' shares.
  const PetscInt c = c_, first_block = ranges[rank] / c;
  std::vector<std::vector<PetscInt>> columns_of(static_cast<std::size_t>(n_local / c));
  for (const PetscInt a : own_rows_) {
    auto& to = columns_of[static_cast<std::size_t>(coarse_block_[static_cast<std::size_t>(a)] - first_block)];
    for (PetscInt k = c_rows_[static_cast<std::size_t>(a)]; k < c_rows_[static_cast<std::size_t>(a) + 1]; ++k)
      to.push_back(coarse_block_[static_cast<std::size_t>(c_columns_[static_cast<std::size_t>(k)])]);
  }
  for (const auto& in : incoming)
    for (std::size_t q = 0; q < in.size(); q += 2 + static_cast<std::size_t>(in[q + 1])) {
      auto& to = columns_of[static_cast<std::size_t>(in[q] - first_block)];
      to.insert(to.end(), in.begin() + static_cast<std::ptrdiff_t>(q + 2),
                in.begin() + static_cast<std::ptrdiff_t>(q + 2 + static_cast<std::size_t>(in[q + 1])));
    }
  // The pattern, c point rows per block row, zeros; PETSc assembles it.
  std::vector<PetscInt> ia(1, 0), ja;
  for (auto& columns : columns_of) {
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    for (PetscInt i = 0; i < c; ++i) {
      for (const PetscInt block : columns)
        for (PetscInt j = 0; j < c; ++j) ja.push_back(c * block + j);
      ia.push_back(static_cast<PetscInt>(ja.size()));
    }
  }
  if (ja.empty()) ja.push_back(0);  // a rank without coarse rows: a valid pointer, no entry (ia is {0})
  if (has_type(coarse, {MATSEQAIJ}))
    EDGEFEM_PETSC(MatSeqAIJSetPreallocationCSR(coarse, ia.data(), ja.data(), nullptr));
  else
    EDGEFEM_PETSC(MatMPIAIJSetPreallocationCSR(coarse, ia.data(), ja.data(), nullptr));
  coarse_ = coarse;
  if (!place_blocks(coarse, incoming))  // on every rank alike
    throw PetscFailure("GalerkinProduct: the coarse matrix made for the product does not hold it");
}

template <int B, int C>
void GalerkinProduct::multiply(const Part& a_diagonal, const Part& a_off_diagonal, PetscScalar* sums) const {
  const std::size_t share = c_columns_.size() * C * C;
  const auto n_compact = coarse_block_.size();
  const int threads = omp_get_max_threads();
#pragma omp parallel num_threads(threads)
  {
    PetscScalar* mine = sums + static_cast<std::size_t>(omp_get_thread_num()) * share;
    std::fill(mine, mine + share, PetscScalar{0});
    std::vector<PetscInt> slot(n_compact, 0);  // compact coarse block -> its block in the A P row
    std::vector<PetscScalar> ap;               // (A P)(r, :), B x C per block
    // ap += (block row r of a SeqAIJ part of A) P; `ghost` = the first P row of the part's block columns.
    const auto add_part = [&](const Part& part, PetscInt r, PetscInt ghost) {
      const PetscInt* ia = part.ia;
      const PetscInt begin = ia[B * r];
      const PetscInt length = ia[B * r + 1] - begin;
      for (PetscInt q = 0; q < length; q += B) {
        PetscScalar a[B][B];
        for (int i = 0; i < B; ++i)
          for (int m = 0; m < B; ++m) a[i][m] = part.values[ia[B * r + i] + q + m];
        const PetscInt j = ghost + part.ja[begin + q] / B;
        for (PetscInt k = p_rows_[static_cast<std::size_t>(j)]; k < p_rows_[static_cast<std::size_t>(j) + 1]; ++k) {
          const float* pf = p_values_.data() + static_cast<std::size_t>(k) * B * C;
          PetscScalar p[B * C];  // widened once, not once per row of the A block
          for (int e = 0; e < B * C; ++e) p[e] = pf[e];
          PetscScalar* out =
              ap.data() +
              static_cast<std::size_t>(slot[static_cast<std::size_t>(p_columns_[static_cast<std::size_t>(k)])]) * B * C;
          for (int i = 0; i < B; ++i)
            for (int m = 0; m < B; ++m) {
              const PetscScalar aim = a[i][m];
              for (int col = 0; col < C; ++col) out[i * C + col] += aim * p[m * C + col];
            }
        }
      }
    };
#pragma omp for schedule(static)
    for (PetscInt r = 0; r < n_rows_; ++r) {
      const PetscInt ap_begin = ap_rows_[static_cast<std::size_t>(r)];
      const PetscInt ap_length = ap_rows_[static_cast<std::size_t>(r) + 1] - ap_begin;
      if (ap_length == 0) continue;
      ap.assign(static_cast<std::size_t>(ap_length) * B * C, PetscScalar{0});
      for (PetscInt k = 0; k < ap_length; ++k)
        slot[static_cast<std::size_t>(ap_columns_[static_cast<std::size_t>(ap_begin + k)])] = k;
      add_part(a_diagonal, r, 0);
      if (a_off_diagonal.values) add_part(a_off_diagonal, r, n_rows_);
      // C(a, j) += P(r, a)^T (A P)(r, j)
      const PetscInt* position = positions_.data() + position_start_[static_cast<std::size_t>(r)];
      for (PetscInt k = p_rows_[static_cast<std::size_t>(r)]; k < p_rows_[static_cast<std::size_t>(r) + 1]; ++k) {
        const float* pf = p_values_.data() + static_cast<std::size_t>(k) * B * C;
        PetscScalar p[B * C];
        for (int e = 0; e < B * C; ++e) p[e] = pf[e];
        for (PetscInt j = 0; j < ap_length; ++j, ++position) {
          PetscScalar* out = mine + static_cast<std::size_t>(*position) * C * C;
          const PetscScalar* x = ap.data() + static_cast<std::size_t>(j) * B * C;
          for (int i = 0; i < C; ++i)
            for (int m = 0; m < B; ++m) {
              const PetscScalar pmi = p[m * C + i];
              for (int col = 0; col < C; ++col) out[i * C + col] += pmi * x[m * C + col];
            }
        }
      }
    }
  }
}

void GalerkinProduct::update() {
  // The fine operator's values with PETSc's own CSR arrays; its pattern must be the one create() saw.
  const RowStructure diagonal_structure(fine_diagonal_);
  std::optional<RowStructure> off_structure;
  if (fine_off_diagonal_) off_structure.emplace(fine_off_diagonal_);
  if (diagonal_structure.ia[diagonal_structure.n] != fine_nonzeros_[0] ||
      (off_structure && off_structure->ia[off_structure->n] != fine_nonzeros_[1]))
    throw PetscFailure("GalerkinProduct: the fine operator's pattern changed");
  const int threads = omp_get_max_threads();
  const std::size_t share = c_columns_.size() * static_cast<std::size_t>(c_ * c_);
  std::vector<PetscScalar> sums(share * static_cast<std::size_t>(threads));
  Part a_diagonal{diagonal_structure.ia, diagonal_structure.ja, nullptr}, a_off_diagonal{};
  EDGEFEM_PETSC(MatSeqAIJGetArrayRead(fine_diagonal_, &a_diagonal.values));
  if (off_structure) {
    a_off_diagonal = {off_structure->ia, off_structure->ja, nullptr};
    EDGEFEM_PETSC(MatSeqAIJGetArrayRead(fine_off_diagonal_, &a_off_diagonal.values));
  }
  if (b_ == 3 && c_ == 6)
    multiply<3, 6>(a_diagonal, a_off_diagonal, sums.data());
  else if (b_ == 6 && c_ == 6)
    multiply<6, 6>(a_diagonal, a_off_diagonal, sums.data());
  else if (b_ == 3 && c_ == 3)
    multiply<3, 3>(a_diagonal, a_off_diagonal, sums.data());
  else
    multiply<6, 3>(a_diagonal, a_off_diagonal, sums.data());
  EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(fine_diagonal_, &a_diagonal.values));
  if (off_structure) EDGEFEM_PETSC(MatSeqAIJRestoreArrayRead(fine_off_diagonal_, &a_off_diagonal.values));
  // The threads' shares, added in thread order.
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < share; ++e) {
    PetscScalar sum = sums[e];
    for (int t = 1; t < threads; ++t) sum += sums[static_cast<std::size_t>(t) * share + e];
    sums[e] = sum;
  }
  // Other ranks' rows to their owners; this rank's straight into the coarse matrix's arrays, then the blocks that
  // came, in the senders' rank order (the same sums at every update).
  const std::size_t block_size = static_cast<std::size_t>(c_ * c_);
  std::vector<PetscScalar> outgoing(send_blocks_.size() * block_size);
  for (std::size_t q = 0; q < send_blocks_.size(); ++q)
    std::copy_n(sums.data() + static_cast<std::size_t>(send_blocks_[q]) * block_size, block_size,
                outgoing.data() + q * block_size);
  std::vector<PetscScalar> incoming(incoming_places_.size() * static_cast<std::size_t>(c_));
  std::vector<MPI_Request> requests(receive_ranks_.size() + send_ranks_.size());
  std::size_t at = 0;
  for (std::size_t s = 0; s < receive_ranks_.size(); ++s) {
    const auto n = static_cast<std::size_t>(receive_sizes_[s]) * block_size;
    MPI_Irecv(incoming.data() + at, static_cast<int>(n), MPIU_SCALAR, receive_ranks_[s], kTag, comm_, &requests[s]);
    at += n;
  }
  at = 0;
  for (std::size_t d = 0; d < send_ranks_.size(); ++d) {
    const auto n = static_cast<std::size_t>(send_sizes_[d]) * block_size;
    MPI_Isend(outgoing.data() + at, static_cast<int>(n), MPIU_SCALAR, send_ranks_[d], kTag, comm_,
              &requests[receive_ranks_.size() + d]);
    at += n;
  }
  PetscScalar* diagonal = nullptr;
  PetscScalar* off_diagonal = nullptr;
  EDGEFEM_PETSC(MatSeqAIJGetArray(coarse_diagonal_, &diagonal));
  if (coarse_off_diagonal_) EDGEFEM_PETSC(MatSeqAIJGetArray(coarse_off_diagonal_, &off_diagonal));
  std::fill_n(diagonal, coarse_nonzeros_[0], PetscScalar{0});
  if (off_diagonal) std::fill_n(off_diagonal, coarse_nonzeros_[1], PetscScalar{0});
  const auto add = [&](PetscInt place, const PetscScalar* row) {
    PetscScalar* to = place >= 0 ? diagonal + place : off_diagonal + (-1 - place);
    for (int j = 0; j < c_; ++j) to[j] += row[j];
  };
  for (const PetscInt a : own_rows_)
    for (PetscInt k = c_rows_[static_cast<std::size_t>(a)]; k < c_rows_[static_cast<std::size_t>(a) + 1]; ++k)
      for (int i = 0; i < c_; ++i)
        add(places_[static_cast<std::size_t>(k * c_ + i)],
            sums.data() + static_cast<std::size_t>(k) * block_size + static_cast<std::size_t>(i * c_));
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (std::size_t q = 0; q < incoming_places_.size(); ++q)
    add(incoming_places_[q], incoming.data() + q * static_cast<std::size_t>(c_));
  EDGEFEM_PETSC(MatSeqAIJRestoreArray(coarse_diagonal_, &diagonal));
  if (coarse_off_diagonal_) EDGEFEM_PETSC(MatSeqAIJRestoreArray(coarse_off_diagonal_, &off_diagonal));
  EDGEFEM_PETSC(MatAssemblyBegin(coarse_, MAT_FINAL_ASSEMBLY));  // the matrix's state moves on (nothing stashed)
  EDGEFEM_PETSC(MatAssemblyEnd(coarse_, MAT_FINAL_ASSEMBLY));
}

std::size_t GalerkinProduct::bytes() const {
  const std::size_t ints = p_rows_.size() + p_columns_.size() + coarse_block_.size() + ap_rows_.size() +
                           ap_columns_.size() + c_rows_.size() + c_columns_.size() + position_start_.size() +
                           positions_.size();
  return ints * sizeof(PetscInt) + p_values_.size() * sizeof(float);
}

}  // namespace edgefem
