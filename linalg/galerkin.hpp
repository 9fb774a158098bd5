// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file galerkin.hpp
/// The Galerkin product C = P^T A P of one multigrid level, computed by us when GAMG's hierarchy is rebuilt with the
/// interpolations it already has (PETSc's own rebuild redoes only these products, on one thread, entry by entry:
/// on the 136,565-tet cantilever they were most of a rebuild). P is fixed, so its blocks (in single precision, as
/// the V-cycle applies it: multigrid_products.hpp), the rows of P this rank needs from others (those of the fine
/// operator's ghost columns), the pattern of the product and where its blocks go are worked out once; a rebuild
/// then only multiplies: by b x b blocks of A and b x c blocks of P (b = 3 on the finest level, 6 below it; c = 6,
/// the rigid-body modes), on the OpenMP threads, each thread summing into a copy of this rank's share of C, the
/// copies added in thread order. The share's rows owned by other ranks go to their owners, which add them in the
/// senders' rank order; the values are written into PETSc's coarse matrix in place (its pattern, the one PETSc's
/// product made, holds the product's). The same sums at every rebuild, so a run repeats exactly.
///
/// GAMG's first set-up can use the same products (use_own_galerkin_products): PETSc's MatPtAP on a matrix marked
/// so comes to us through PETSc's public product dispatch (MatProductSetFromOptions asks a matrix whose
/// `productsetfromoptions` differs from its partner's for a function composed as
/// "MatProductSetFromOptions_<type>_<type>_C"), and our symbolic phase makes the coarse matrix with exactly the
/// product's pattern, marks it in turn (the next level's product is ours too) and keeps the GalerkinProduct on it
/// (galerkin_product_of), where a later rebuild finds it. Products we cannot do (not whole blocks on some rank)
/// and every other product (A P for the smoothed interpolation, ...) stay PETSc's. That hook relies on conventions
/// of PETSc's product dispatch that are internal to PETSc (the composed function's name, which matrix is asked for
/// it, the product matrix's MATOP_PRODUCTSYMBOLIC / MATOP_PRODUCTNUMERIC slots), read in PETSc 3.18's sources: it is
/// compiled for 3.18.x only (EDGEFEM_OWN_GALERKIN_HOOK); elsewhere GAMG's first set-up keeps PETSc's MatPtAP and the
/// rebuilds make their products with create().
#include <petscmat.h>
#include <petscversion.h>

#include <array>
#include <memory>
#include <vector>

#include "linalg/petsc_util.hpp"

/// 1 when use_own_galerkin_products() can hook PETSc's MatPtAP: the PETSc versions whose product dispatch it was
/// written against (3.18.x).
#define EDGEFEM_OWN_GALERKIN_HOOK (PETSC_VERSION_GE(3, 18, 0) && PETSC_VERSION_LT(3, 19, 0))

namespace edgefem {

struct LocalParts;  // linalg/csr_blocks.hpp

/// Whether use_own_galerkin_products() hooks anything with this PETSc (EDGEFEM_OWN_GALERKIN_HOOK).
inline constexpr bool kOwnGalerkinHook = EDGEFEM_OWN_GALERKIN_HOOK;

class GalerkinProduct {
 public:
  /// The product of `fine` (AIJ, b x b blocks; its pattern must not change from now on) and `interp` (AIJ, its rows
  /// laid out as `fine`'s, b x c blocks) into `coarse` (AIJ, P^T A P as PETSc computed it: its pattern holds the
  /// product's; c x c blocks). Null, on every rank, when one of them is not of that kind on some rank (then PETSc's
  /// rebuild does the work). Keeps references to the three matrices. Collective.
  static std::unique_ptr<GalerkinProduct> create(Mat fine, Mat interp, Mat coarse);

  /// The matrices the product multiplies (for a rebuild to recognise the product GAMG's set-up made with ours).
  [[nodiscard]] Mat fine() const { return fine_; }
  [[nodiscard]] Mat interp() const { return interp_; }

  /// coarse := P^T fine P, with `fine`'s values as they are now. Collective.
  void update();
  /// Copies P's values again (its pattern unchanged), the rows other ranks own too. Collective.
  void reload_interpolation();

  /// The rank's share of the product, in bytes (structure; the per-thread sums of an update are as many bytes as
  /// `values` times the threads and live only during update()).
  [[nodiscard]] std::size_t bytes() const;

  GalerkinProduct(const GalerkinProduct&) = delete;
  GalerkinProduct& operator=(const GalerkinProduct&) = delete;
  ~GalerkinProduct() = default;

 private:
  GalerkinProduct() = default;
  /// Everything but where the blocks go: P's blocks, A P's and this rank's share of C's patterns. `c` is the coarse
  /// block size (0: the interpolation's column block size; < 0: this rank refuses). Null on every rank when some
  /// rank refuses. Collective.
  static std::unique_ptr<GalerkinProduct> structure(Mat fine, Mat interp, PetscInt c);
  /// structure()'s steps. P's block rows (this rank's, from the parts `p` whose columns start at `columns_begin`,
  /// then `n_ghost_block_rows` of `ghost_rows`: P's rows at the fine operator's ghost columns) into p_rows_,
  /// p_columns_ (global coarse blocks) and p_values_.
  void copy_interpolation_blocks(const LocalParts& p, PetscInt columns_begin, Mat ghost_rows,
                                 PetscInt n_ghost_block_rows);
  /// coarse_block_ (every coarse block P's rows reach, sorted) and p_columns_ renumbered into it.
  void number_coarse_blocks();
  /// fine_nonzeros_ and A P's pattern by block rows (ap_rows_, ap_columns_).
  void make_ap_pattern();
  /// This rank's share of C's pattern (c_rows_, c_columns_) from P^T's rows (pt_rows: entries, pt_fine: their fine
  /// rows).
  void make_c_pattern(const std::vector<PetscInt>& pt_rows, const std::vector<PetscInt>& pt_fine);
  /// Where each P(r, a)^T (A P)(r, j) product goes in the share (position_start_, positions_); pt_block: each P^T
  /// entry's block of P.
  void place_products(const std::vector<PetscInt>& pt_rows, const std::vector<PetscInt>& pt_fine,
                      const std::vector<PetscInt>& pt_block);
  /// Makes `coarse` (a matrix without a type, the result of PETSc's product) an AIJ matrix of the product's size,
  /// block size and pattern (zeros), and places the blocks in it. Collective.
  void make_coarse(Mat coarse);
  /// PETSc's product callbacks (use_own_galerkin_products).
  static PetscErrorCode set_from_options(Mat product);
  static PetscErrorCode symbolic(Mat product);
  static PetscErrorCode numeric(Mat product);
  friend bool use_own_galerkin_products(Mat fine);
  friend void use_petsc_galerkin_products(Mat fine);

  /// Undoes use_own_galerkin_products() on `fine` (nothing for a matrix it did not mark): PETSc's MatPtAP again, for
  /// products made from now on.
  void use_petsc_galerkin_products(Mat fine);
  /// Which rows of this rank's share stay (own_rows_) and which go to which rank (send_*; coarse rows laid out by
  /// `ranges`); sends those rows' structure to their owners and returns what every rank sent here. Collective.
  std::vector<std::vector<PetscInt>> route(MPI_Comm comm, const PetscInt* ranges);
  /// Where the product's blocks go in `coarse` (places_; incoming_places_ for the rows `incoming`, route()'s result,
  /// brings); false on every rank when some block is not stored in `coarse` as c entries side by side. Collective.
  bool place_blocks(Mat coarse, const std::vector<std::vector<PetscInt>>& incoming);
  /// A SeqAIJ part of the fine operator: PETSc's CSR arrays and values (all null: no such part).
  struct Part {
    const PetscInt* ia = nullptr;
    const PetscInt* ja = nullptr;
    const PetscScalar* values = nullptr;
  };
  /// sums (one share of C per thread) := this rank's P^T (A P), by B x B blocks of A and B x C blocks of P.
  template <int B, int C>
  void multiply(const Part& a_diagonal, const Part& a_off_diagonal, PetscScalar* sums) const;

  PetscOwner<Mat, MatDestroy> fine_, interp_;
  // The coarse matrix; a reference to it only when create() was given it (one made by make_coarse() keeps the
  // product, which must then not keep it).
  Mat coarse_ = nullptr;
  PetscOwner<Mat, MatDestroy> coarse_reference_;
  Mat fine_diagonal_ = nullptr, fine_off_diagonal_ = nullptr;  // SeqAIJ parts of fine_ (off-diagonal: null on 1 rank)
  std::array<PetscInt, 2> fine_nonzeros_{};                    // of both parts, to refuse a changed pattern
  int b_ = 0, c_ = 0;                                          // block sizes: fine rows, coarse rows
  PetscInt n_rows_ = 0;                                        // this rank's fine block rows
  // P's block rows: this rank's (0 .. n_rows_) and then the fine operator's ghost block rows (fetched once), each
  // block's column in the compact coarse numbering (the coarse block columns this rank sees, sorted), b x c values.
  std::vector<PetscInt> p_rows_, p_columns_;
  std::vector<float> p_values_;         // in single precision, as the V-cycle's interpolations (multigrid_products.hpp)
  std::vector<PetscInt> coarse_block_;  // compact coarse index -> global coarse block
  // A P by block rows (this rank's rows), in compact coarse columns.
  std::vector<PetscInt> ap_rows_, ap_columns_;
  // The rank's share of C (rows: compact coarse blocks that this rank's P rows reach) and, for fine block row r, the
  // position in it of each (P block i of row r, A P block j of row r) product: sum_positions_[position_start_[r] + i
  // * (A P row length) + j].
  std::vector<PetscInt> c_rows_, c_columns_, position_start_, positions_;
  // Where the share goes. This rank's rows (compact rows own_rows_): each block row i of block k of C's share at
  // places_[c k + i] in the coarse matrix's arrays (>= 0: its diagonal part's values; -1 - offset: its off-diagonal
  // part's). Other ranks' rows: blocks send_blocks_ (in C's share), send_sizes_ of them to each of send_ranks_;
  // receive_sizes_ blocks come from each of receive_ranks_ (ascending), their block rows to incoming_places_.
  static constexpr int kTag = 7211;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Mat coarse_diagonal_ = nullptr, coarse_off_diagonal_ = nullptr;
  std::array<PetscInt, 2> coarse_nonzeros_{};
  std::vector<PetscInt> own_rows_, places_, send_blocks_, incoming_places_;
  std::vector<int> send_ranks_, send_sizes_, receive_ranks_, receive_sizes_;
};

/// Marks `fine` (SeqAIJ or MPIAIJ; anything else is left alone) so that PETSc's P^T fine P (MatPtAP, as GAMG's
/// set-up calls it) is computed by a GalerkinProduct, and so are the products with the coarse matrices that come
/// out of it. Idempotent. Collective on nothing (it only changes `fine`'s function table). Returns whether `fine` is
/// marked: false, with nothing done, for other matrix types and without the hook (kOwnGalerkinHook false).
bool use_own_galerkin_products(Mat fine);

/// Undoes use_own_galerkin_products() on `fine` (nothing for a matrix it did not mark): PETSc's MatPtAP again, for
/// products made from now on.
void use_petsc_galerkin_products(Mat fine);

/// The product that computed `coarse` in PETSc's MatPtAP (use_own_galerkin_products), or null; `coarse` owns it.
[[nodiscard]] GalerkinProduct* galerkin_product_of(Mat coarse);

}  // namespace edgefem
