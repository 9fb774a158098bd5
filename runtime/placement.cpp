// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/placement.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace edgefem {
namespace {

std::vector<int> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) {  // unknown: every online CPU
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < std::max(1L, n); ++c) cpus.push_back(c);
  }
  return cpus;
}

int omp_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace

std::string oversubscription_warning(const std::vector<RankPlacement>& ranks, const std::string& node, int node_cpus) {
  if (ranks.empty()) return {};
  std::set<int> cores;
  int threads = 0;
  for (const RankPlacement& r : ranks) {
    cores.insert(r.cpus.begin(), r.cpus.end());
    threads += r.threads;
  }
  const auto n_ranks = ranks.size();
  const int per_rank = ranks.front().threads;
  char text[512];
  const bool bound = node_cpus > static_cast<int>(cores.size());
  if (threads > static_cast<int>(cores.size()) && bound && threads <= node_cpus) {
    std::snprintf(text, sizeof text,
                  "%zu rank%s x %d thread%s = %d threads share the %zu core%s the ranks are bound to, of %d on %s: "
                  "run mpirun with --bind-to none (Open MPI binds each rank to one core when there are at most 2)",
                  n_ranks, n_ranks == 1 ? "" : "s", per_rank, per_rank == 1 ? "" : "s", threads, cores.size(),
                  cores.size() == 1 ? "" : "s", node_cpus, node.c_str());
    return text;
  }
  if (threads > static_cast<int>(cores.size())) {
    std::snprintf(text, sizeof text,
                  "%zu rank%s x %d thread%s = %d threads share the %zu core%s they may use on %s: every thread waits "
                  "for a core and the run is slower than with fewer (make ranks x OMP_NUM_THREADS <= %zu)",
                  n_ranks, n_ranks == 1 ? "" : "s", per_rank, per_rank == 1 ? "" : "s", threads, cores.size(),
                  cores.size() == 1 ? "" : "s", node.c_str(), cores.size());
    return text;
  }
  for (const RankPlacement& r : ranks)
    if (r.threads > static_cast<int>(r.cpus.size())) {
      std::snprintf(text, sizeof text,
                    "rank %d runs %d threads but is bound to %zu core%s on %s (Open MPI binds each rank to one "
                    "core when there are at most 2): run mpirun with --bind-to none, or set OMP_NUM_THREADS=%zu",
                    r.rank, r.threads, r.cpus.size(), r.cpus.size() == 1 ? "" : "s", node.c_str(), r.cpus.size());
      return text;
    }
  return {};
}

bool warn_if_oversubscribed(MPI_Comm comm) {
  int rank = 0, size_of_world = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size_of_world);
  MPI_Comm node_comm = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm);
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node_comm, &node_rank);
  MPI_Comm_size(node_comm, &node_size);
  // Each rank's (rank, threads, number of CPUs, CPUs...) gathered on the node's first rank.
  const std::vector<int> cpus = affinity();
  std::vector<int> mine = {rank, omp_threads(), static_cast<int>(cpus.size())};
  mine.insert(mine.end(), cpus.begin(), cpus.end());
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(node_size)), offsets(static_cast<std::size_t>(node_size));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, node_comm);
  std::vector<int> all;
  if (node_rank == 0) {
    int total = 0;
    for (int p = 0; p < node_size; ++p)
      offsets[static_cast<std::size_t>(p)] = total, total += counts[static_cast<std::size_t>(p)];
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), offsets.data(), MPI_INT, 0, node_comm);
  MPI_Comm_free(&node_comm);
  std::string warning;
  if (node_rank == 0) {
    std::vector<RankPlacement> ranks;
    for (std::size_t i = 0; i < all.size();) {
      RankPlacement r;
      r.rank = all[i];
      r.threads = all[i + 1];
      const auto n = static_cast<std::size_t>(all[i + 2]);
      r.cpus.assign(all.begin() + static_cast<std::ptrdiff_t>(i + 3),
                    all.begin() + static_cast<std::ptrdiff_t>(i + 3 + n));
      ranks.push_back(std::move(r));
      i += 3 + n;
    }
    char host[256] = "this node";
    gethostname(host, sizeof host - 1);
    warning = oversubscription_warning(ranks, host, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  }
  // The lowest rank with a warning sends it to rank 0, which prints it.
  int candidate = warning.empty() ? size_of_world : rank, first = size_of_world;
  MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size_of_world) return false;
  if (rank == first && first != 0) {
    const int n = static_cast<int>(warning.size());
    MPI_Send(&n, 1, MPI_INT, 0, 0, comm);
    MPI_Send(warning.data(), n, MPI_CHAR, 0, 1, comm);
  }
  if (rank == 0) {
    if (first != 0) {
      int n = 0;
      MPI_Recv(&n, 1, MPI_INT, first, 0, comm, MPI_STATUS_IGNORE);
      warning.assign(static_cast<std::size_t>(n), ' ');
      MPI_Recv(warning.data(), n, MPI_CHAR, first, 1, comm, MPI_STATUS_IGNORE);
    }
    std::fprintf(stderr, "edgefem: warning: %s\n", warning.c_str());
    std::fflush(stderr);
  }
  return true;
}

}  // namespace edgefem
