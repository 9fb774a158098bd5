// SPDX-License-Identifier: BSD-3-Clause
/// \file memory_account.cpp
/// The run's memory account (memory_account.hpp).
#include "run/memory_account.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "linalg/memory_bytes.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/newton.hpp"

namespace edgefem {
namespace {

constexpr double kMiB = 1048576.0;

/// A field of /proc/self/status ("VmHWM:", "RssAnon:") in bytes (0 when unreadable).
double status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string key;
  double kb = 0;
  while (in >> key) {
    if (key == field) {
      in >> kb;
      return kb * 1024.0;
    }
    std::getline(in, key);
  }
  return 0;
}

/// Sum over the ranks of `x` onto rank 0, and every rank's value.
std::vector<double> per_rank(MPI_Comm comm, double x) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<double> all(static_cast<std::size_t>(size));
  MPI_Allgather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm);
  return all;
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return s;
}

}  // namespace

HeapState heap_state() {
  HeapState h;
  std::ifstream in("/proc/self/statm");
  double size = 0, resident = 0;
  if (in >> size >> resident) h.resident = resident * static_cast<double>(sysconf(_SC_PAGESIZE));
  h.peak = status_bytes("VmHWM:");
  h.anonymous = status_bytes("RssAnon:");
  h.mapped = status_bytes("RssFile:") + status_bytes("RssShmem:");
  const struct mallinfo2 m = mallinfo2();
  h.in_use = static_cast<double>(m.uordblks);
  return h;
}

void MemoryAccount::start_up() {
  at_start_up_ = heap_state();
  start_up_ = at_start_up_.resident;
}

void MemoryAccount::phase(const std::string& name) { phases_.emplace_back(name, heap_state()); }

void MemoryAccount::set(const std::string& name, double bytes) {
  for (auto& [n, b] : structures_)
    if (n == name) {
      b = bytes;
      return;
    }
  structures_.emplace_back(name, bytes);
}

RunSummary::MemoryAccount MemoryAccount::gather(MPI_Comm comm, long long tets) const {
  RunSummary::MemoryAccount a;
  a.tets = tets;
  a.start_up_mb = sum_of(per_rank(comm, start_up_)) / kMiB;
  // Every rank names the same structures in the same order (the same code ran); a rank without one reports 0.
  double mine = 0;
  for (const auto& [name, bytes] : structures_) {
    a.structures.emplace_back(name, sum_of(per_rank(comm, bytes)) / kMiB);
    mine += bytes;
  }
  // Since start-up: anonymous resident bytes (the heaps) grew by `grown`, of which `in_use` are allocated now.
  const HeapState at = has_snapshot() ? at_snapshot_ : heap_state();
  const double grown = at.anonymous - at_start_up_.anonymous, in_use = at.in_use - at_start_up_.in_use;
  const double transients = std::max(0.0, grown - in_use);
  a.transients_mb = sum_of(per_rank(comm, transients)) / kMiB;
  a.unaccounted_heap_mb = sum_of(per_rank(comm, in_use - mine)) / kMiB;  // (all structures live in the heap)
  const double mapped = std::max(0.0, at.mapped - at_start_up_.mapped);
  a.libraries_mb = sum_of(per_rank(comm, mapped)) / kMiB;
  for (const double total : per_rank(comm, start_up_ + mine + transients + mapped))
    a.total_mb_per_rank.push_back(total / kMiB);
  for (const auto& [name, state] : phases_) {
    std::vector<double> resident = per_rank(comm, state.resident), allocated = per_rank(comm, state.in_use);
    for (double& x : resident) x /= kMiB;
    for (double& x : allocated) x /= kMiB;
    a.phases.push_back({name, std::move(resident), std::move(allocated)});
  }
  return a;
}

double local_mesh_bytes(const LocalMesh& mesh) {
  const auto cap = [](const auto& v) { return static_cast<double>(v.capacity() * sizeof(v[0])); };
  const Mesh& m = mesh.mesh;
  return cap(m.coords) + cap(m.tets) + cap(m.tet_region) + cap(m.triangles) + cap(m.triangle_region) + cap(m.lines) +
         cap(m.line_region) + cap(mesh.global_vertex) + cap(mesh.original_vertex) + cap(mesh.cell_global) +
         cap(mesh.vertex_region_offsets) + cap(mesh.vertex_regions) + cap(mesh.hinges) + cap(mesh.hinge_cell);
}

void account_newton_run(const LocalMesh& mesh, const Assembler& assembler, const NewtonDriver& newton,
                        double solver_vector_bytes, double output_bytes) {
  account_linear_solver(mesh, assembler, newton.ksp(), newton.snes(), static_cast<double>(newton.operator_bytes()),
                        solver_vector_bytes, output_bytes);
}

void account_linear_solver(const LocalMesh& mesh, const Assembler& assembler, KSP ksp, SNES snes, double operator_bytes,
                           double solver_vector_bytes, double output_bytes) {
  MemoryAccount& a = memory_account();
  a.clear_structures();
  a.set("mesh", local_mesh_bytes(mesh));
  a.set("kernel data", static_cast<double>(assembler.kernel_bytes()));
  a.set("COO values", static_cast<double>(assembler.coo_bytes()));
  a.set("insertion maps", static_cast<double>(assembler.insertion_bytes()));
  a.set("matrix", static_cast<double>(aij_bytes(assembler.matrix())));
  a.set("block and symmetric copies", operator_bytes);
  PC pc = nullptr;
  KSPGetPC(ksp, &pc);
  const MultigridBytes mg = multigrid_bytes(pc);
  a.set("multigrid operators", static_cast<double>(mg.operators));
  a.set("multigrid interpolations", static_cast<double>(mg.interpolations));
  a.set("multigrid single-precision copies", static_cast<double>(mg.own_copies));
  a.set("multigrid Galerkin products", static_cast<double>(mg.galerkin));
  a.set("multigrid rest interpolation", static_cast<double>(mg.rest_values));
  a.set("multigrid vectors", static_cast<double>(mg.vectors + mg.coarse_solve));
  a.set("Krylov and Newton vectors", static_cast<double>(krylov_vector_bytes(ksp, snes)));
  a.set("solver vectors", static_cast<double>(assembler.state_bytes()) + solver_vector_bytes);
  a.set("output buffers", output_bytes);
  a.snapshot();
}

MemoryAccount& memory_account() {
  static MemoryAccount account;
  return account;
}

}  // namespace edgefem
