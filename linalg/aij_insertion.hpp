// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file aij_insertion.hpp
/// Creates an AIJ matrix with the pattern of a list of COO entries and hands it the entries' values by writing
/// them straight into the matrix's own CSR value arrays (the local diagonal and off-diagonal blocks), instead of
/// MatSetPreallocationCOO and MatSetValuesCOO.
///
/// Why: MatSetValuesCOO reads two 8-byte indices per entry, runs on one thread, and on several ranks ends in
/// a collective; on a 10^6-tet box it took a quarter of an assembly and did not get faster with more ranks
/// (docs/guide/scaling-studies.md, "Scaling studies"). Here every stored entry of the matrix knows its first COO source (4 bytes;
/// 4 per stored 3x3 block when the entries are whole blocks, as the assembler's are),
/// the few further sources (the owned diagonals, several formulations on one block) are a short list, the
/// entries of rows owned by other ranks travel to their owner with point-to-point messages, and the local
/// part runs on the OpenMP threads; PETSc's COO maps (16 bytes per entry and 8 per stored entry, and a sort of
/// all entries at set-up) are not made. The result is what MatSetValuesCOO(..., INSERT_VALUES) gives (up to
/// the order of the sums): every stored entry is the sum of its sources, local ones in entry order, then the
/// other ranks' in rank order (tests/mpi/test_aij_insertion.cpp).
#include <mpi.h>
#include <petscmat.h>

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "linalg/petsc_util.hpp"

namespace edgefem {

class AijInsertion {
 public:
  /// Collective. Creates `matrix`: a block-size-3 AIJ matrix on comm with n_rows rows (and columns) on this rank
  /// whose pattern is exactly the entries (coo_i[e], coo_j[e]) of all ranks (global indices; rows owned by other
  /// ranks allowed, as for MatSetPreallocationCOO), zero-valued and assembled, and the maps of the hand-over. The
  /// matrix stands on CSR arrays of ours (MatCreateMPIAIJWithSplitArrays / MatCreateSeqAIJWithArrays), which a
  /// container composed on it owns: they live as long as the matrix, whoever holds it last.
  /// Throws PetscFailure when the counts do not fit 32-bit offsets.
  AijInsertion(MPI_Comm comm, PetscInt n_rows, std::span<const PetscInt> coo_i, std::span<const PetscInt> coo_j,
               PetscOwner<Mat, MatDestroy>& matrix);

  /// P's stored values := the sums of values[e] per (coo_i[e], coo_j[e]); `values` has one value per entry.
  /// Collective. P must be the matrix the constructor made.
  void insert(Mat P, const double* values);

  /// Bytes of the maps (per rank).
  [[nodiscard]] std::size_t bytes() const;
  /// Whether every local block of the matrix is mapped by 3 x 3 blocks (compress_to_blocks), for the tests.
  [[nodiscard]] bool by_blocks() const;

 private:
  /// One of the two local blocks of the matrix (0: diagonal, 1: off-diagonal; a sequential matrix has only 0).
  struct Block {
    std::vector<std::int32_t> first;                            ///< per stored entry: its first COO entry, or -1
    /// The same by 3 x 3 blocks, when the block's pattern is whole 3 x 3 blocks and every stored block's first
    /// sources are one COO block (9 consecutive entries, row by row; the kernels' blocks are): per stored block
    /// (block rows in order, blocks of a block row in column order) the COO entry of its (0, 0), or -1; `first` is
    /// then empty. 4 bytes per 9 stored entries instead of 4 per entry (issue 56: the insertion maps 104 -> 17 bytes
    /// per tet on the 136,565-tet cantilever, the owned diagonals' further sources included).
    std::vector<std::int32_t> block_first;
    std::vector<std::int32_t> block_row;  ///< with block_first: per block row, its first stored block (n + 1)
    std::vector<std::pair<std::int32_t, std::int32_t>> more;    ///< (stored entry, COO entry), further sources
    std::vector<std::pair<std::int32_t, std::int32_t>> remote;  ///< (stored entry, receive slot)
  };
  struct Stored;  ///< the matrix's local CSR blocks and where an entry is stored in them (aij_insertion.cpp)
  /// The entries of rows owned elsewhere (send_*), and the receive maps and buffers: returns the (row, column) of
  /// every value this rank will receive, in the order they arrive. Collective.
  std::vector<std::int64_t> route_remote_entries(std::span<const PetscInt> coo_i, std::span<const PetscInt> coo_j,
                                                 const std::vector<PetscInt>& ranges);
  /// Each entry of this rank's rows as a source of its stored entry (blocks_' first and more).
  void map_local_entries(const Stored& stored, std::span<const PetscInt> coo_i, std::span<const PetscInt> coo_j);
  /// COO entry e is a source of stored entry `stored` of block b: its first, or one more.
  void add_source(int b, std::int64_t stored, std::size_t e);
  /// Every block's `more` ordered by stored entry, each entry's sources in COO order.
  void sort_further_sources();
  /// Where each received value goes (blocks_' remote); recv_ij as route_remote_entries() returned it.
  void map_received_entries(const Stored& stored, const std::vector<std::int64_t>& recv_ij);
  /// Block b's `first` by 3 x 3 blocks (block_first, block_row) when it can be; otherwise it stays per entry.
  void compress_to_blocks(const Stored& stored, int b);
  /// Stored entries of block `blk` := their first sources (0 without one), by 3 x 3 blocks.
  static void write_first_by_blocks(const Block& blk, const double* values, PetscScalar* out);

  std::array<Block, 2> blocks_;
  int n_blocks_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<int> send_rank_, send_offset_;  ///< per receiving rank: its rank, its slice of send_entries_
  std::vector<std::int32_t> send_entries_;    ///< COO entries of rows owned elsewhere, grouped by owner
  std::vector<int> recv_rank_, recv_offset_;  ///< per sending rank: its rank, its slice of the receive buffer
  std::vector<double> send_buffer_, recv_buffer_;
  std::vector<MPI_Request> requests_;  ///< insert(): the receives, then the sends
};

}  // namespace edgefem
