// SPDX-License-Identifier: BSD-3-Clause
#include "partition/collective.hpp"

#include <vector>

namespace edgefem {

bool agree_on_failure(MPI_Comm comm, bool failed, std::string& message) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int mine = failed ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return false;
  int length = rank == first ? static_cast<int>(message.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::vector<char> text(message.begin(), message.end());
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
  message.assign(text.begin(), text.end());
  return true;
}

}  // namespace edgefem
