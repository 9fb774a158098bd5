// SPDX-License-Identifier: BSD-3-Clause
/// \file scotch.cpp
/// PT-Scotch on a distributed graph (scotch_cell_parts, partition.hpp).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

// ptscotch.h needs FILE and MPI_Comm declared first.
#include <ptscotch.h>

#include "core/error.hpp"
#include "partition/partition.hpp"

namespace edgefem {

std::vector<int> scotch_cell_parts(MPI_Comm comm, const std::vector<std::int64_t>& offsets,
                                   const std::vector<GlobalIndex>& neighbours, int n_parts) {
  constexpr auto limit = static_cast<std::int64_t>(std::numeric_limits<SCOTCH_Num>::max());
  std::int64_t n_local = static_cast<std::int64_t>(offsets.size()) - 1, n_global = 0, n_arcs = 0;
  const auto n_local_arcs = static_cast<std::int64_t>(neighbours.size());
  MPI_Allreduce(&n_local, &n_global, 1, MPI_INT64_T, MPI_SUM, comm);
  MPI_Allreduce(&n_local_arcs, &n_arcs, 1, MPI_INT64_T, MPI_SUM, comm);
  if (n_global >= limit || n_arcs >= limit)
    throw InputError("mesh too large for PT-Scotch's " + std::to_string(8 * sizeof(SCOTCH_Num)) + "-bit integers (" +
                     std::to_string(n_global) + " cells, " + std::to_string(n_arcs) + " dual-graph arcs)");
  std::vector<SCOTCH_Num> vertloctab(offsets.begin(), offsets.end());
  std::vector<SCOTCH_Num> edgeloctab(neighbours.begin(), neighbours.end());
  if (edgeloctab.empty()) edgeloctab.push_back(0);  // a valid pointer; no arc uses it
  std::vector<SCOTCH_Num> part(static_cast<std::size_t>(n_local) + 1, 0);
  // Reproducible partitions: PT-Scotch 7 may use threads and a random state shared by the process; a context in
  // deterministic mode with a fixed seed gives the same partition on every run (same mesh, same rank count).
  SCOTCH_Context context;
  SCOTCH_Dgraph graph, bound;
  SCOTCH_Strat strategy;
  if (SCOTCH_contextInit(&context) != 0) throw InputError("PT-Scotch: SCOTCH_contextInit failed");
  SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
  SCOTCH_contextRandomClone(&context);
  SCOTCH_contextRandomSeed(&context, 1);
  if (SCOTCH_dgraphInit(&graph, comm) != 0) throw InputError("PT-Scotch: SCOTCH_dgraphInit failed");
  SCOTCH_stratInit(&strategy);
  int status = SCOTCH_dgraphBuild(&graph, 0, static_cast<SCOTCH_Num>(n_local), static_cast<SCOTCH_Num>(n_local),
                                  vertloctab.data(), nullptr, nullptr, nullptr, static_cast<SCOTCH_Num>(n_local_arcs),
                                  static_cast<SCOTCH_Num>(n_local_arcs), edgeloctab.data(), nullptr, nullptr);
  const char* step = "SCOTCH_dgraphBuild";
  bool bound_made = false;
  if (status == 0) {
    status = SCOTCH_contextBindDgraph(&context, &graph, &bound);
    step = "SCOTCH_contextBindDgraph";
    bound_made = status == 0;
  }
  if (status == 0) {
    status = SCOTCH_dgraphPart(&bound, n_parts, &strategy, part.data());
    step = "SCOTCH_dgraphPart";
  }
  SCOTCH_stratExit(&strategy);
  if (bound_made) SCOTCH_dgraphExit(&bound);
  SCOTCH_dgraphExit(&graph);
  SCOTCH_contextExit(&context);
  if (status != 0)
    throw InputError(std::string("PT-Scotch: ") + step + " failed with status " + std::to_string(status));
  return {part.begin(), part.end() - 1};
}

}  // namespace edgefem
