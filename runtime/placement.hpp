// SPDX-License-Identifier: BSD-3-Clause
// Where the ranks and their threads run: a warning when a node's ranks x threads exceed the cores they may use
// (Open MPI's --oversubscribe, or OMP_NUM_THREADS above the cores a bound rank was given), the commonest way to
// make a run several times slower without a word.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace edgefem {

/// One rank as its node sees it.
struct RankPlacement {
  int rank = 0;           ///< in the job's communicator
  int threads = 1;        ///< OpenMP threads it runs
  std::vector<int> cpus;  ///< the CPUs it may run on (its affinity mask)
};

/// The warning for the ranks of one node ("" when every thread has a core): the node's threads exceed the union of
/// the ranks' CPUs, or one rank runs more threads than the CPUs it is bound to. Pure; `node` names the host,
/// `node_cpus` is the number of CPUs it has online (0: unknown), to tell binding from a lack of cores.
std::string oversubscription_warning(const std::vector<RankPlacement>& ranks, const std::string& node,
                                     int node_cpus = 0);

/// Gathers each node's placement and prints the first node's warning on rank 0 (stderr). Collective; returns, on
/// every rank, whether some node is oversubscribed (the warning was printed).
bool warn_if_oversubscribed(MPI_Comm comm);

}  // namespace edgefem
