// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file memory_account.hpp
/// The run's memory account (summary.json `memory.account`, `edgefem bench`): where every resident byte of a rank
/// is at the end of its solve, set against the measured peak. The heap never shrinks (runtime/huge_pages.hpp: no
/// trimming, no mmap), so the resident set at the end of the solve is the run's peak, and it is
///   start-up (resident after MPI and PETSc started, before the job is read)
///   + every live structure (the mesh, the kernel data, the matrix, the COO values and insertion maps, the block and
///     symmetric copies, the multigrid levels, the Krylov vectors, the solver's vectors, the output's state)
///   + the transients: freed heap chunks a later allocation has not reused (construction, output), still resident:
///     the anonymous resident bytes grown since start-up less the heap allocated since
///   + the libraries' code and data pages first touched after start-up (PETSc's multigrid, VTK's writers) and MPI's
///     shared-memory segments: RssFile + RssShmem grown since start-up.
/// Structures are counted from their sizes (vector capacities, MatGetInfo's allocated entries), not from the
/// allocator, so a structure left out shows as a total short of the peak; the heap in use that no structure names
/// is reported beside it (`unaccounted_heap_mb`), not added.
#include <mpi.h>
#include <petscsnes.h>

#include <string>
#include <utility>
#include <vector>

#include "io/summary.hpp"

namespace edgefem {

/// This process's resident bytes now, its peak (VmHWM), its anonymous resident bytes (RssAnon: the heaps, touched
/// pages only) and the main heap's bytes allocated (mallinfo2's uordblks).
struct HeapState {
  double resident = 0, peak = 0, anonymous = 0, in_use = 0;
  double mapped = 0;  ///< RssFile + RssShmem: libraries' pages touched, MPI's shared-memory segments
};
HeapState heap_state();

/// The process's account (one per process; not thread-safe: called between phases).
class MemoryAccount {
 public:
  /// The resident set now is the start-up's.
  void start_up();
  /// The end of a phase ("mesh", "model", "set-up", "solve", ...): the resident set now.
  void phase(const std::string& name);
  /// A live structure's bytes (replaces an earlier value of the same name).
  void set(const std::string& name, double bytes);
  /// Forgets the structures (a new snapshot follows).
  void clear_structures() { structures_.clear(); }
  /// The heap state at the snapshot the structures describe (taken now).
  void snapshot() { at_snapshot_ = heap_state(); }

  /// Collective: the account summed over the ranks (rank 0's result is the one that counts), for `tets` cells.
  [[nodiscard]] RunSummary::MemoryAccount gather(MPI_Comm comm, long long tets) const;
  /// This rank's structures (name, bytes).
  [[nodiscard]] const std::vector<std::pair<std::string, double>>& structures() const { return structures_; }
  [[nodiscard]] double start_up_bytes() const { return start_up_; }
  [[nodiscard]] bool has_snapshot() const { return at_snapshot_.resident > 0; }

 private:
  double start_up_ = 0;
  HeapState at_start_up_;
  std::vector<std::pair<std::string, double>> structures_;
  std::vector<std::pair<std::string, HeapState>> phases_;  ///< the heap state at each phase's end
  HeapState at_snapshot_;
};

MemoryAccount& memory_account();

class Assembler;
class NewtonDriver;
struct LocalMesh;
/// The structures of an assembled linear system and its solver into the process's account, with a snapshot of the
/// heap (account_newton_run's list; `snes` may be null, `operator_bytes`: the Krylov operator's block and symmetric
/// copies).
void account_linear_solver(const LocalMesh& mesh, const Assembler& assembler, KSP ksp, SNES snes, double operator_bytes,
                           double solver_vector_bytes, double output_bytes);
/// The structures of a Newton run (static or implicit dynamic) into the process's account, with a snapshot of the
/// heap: the mesh, the kernel data, the COO values and insertion maps, the matrix, the Krylov operator's block and
/// symmetric copies, the multigrid levels, the Krylov and Newton vectors, the assembler's and the solver's vectors,
/// the output piece a thread is still writing.
void account_newton_run(const LocalMesh& mesh, const Assembler& assembler, const NewtonDriver& newton,
                        double solver_vector_bytes, double output_bytes);

/// Bytes of a rank's mesh (coordinates, cells, tags, maps).
[[nodiscard]] double local_mesh_bytes(const LocalMesh& mesh);

}  // namespace edgefem
