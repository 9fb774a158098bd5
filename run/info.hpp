// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file info.hpp
/// `edgefem info MESH|JOB.yaml [--ranks N]`: what one needs to write a job for a mesh and to choose the ranks. Mesh
/// statistics (counts and ratios, TSEPs, regions with their counts, bounding box), for a job the reader and
/// partitioner `run` would use, and a preview of both partitioners' quality with METIS's table per rank.
#include "run/run_options.hpp"

namespace edgefem {

/// Rank 0 reads the mesh and prints (the other ranks return at once). options.ranks: the parts of the preview (0:
/// the ranks it runs on, so `mpirun -n N edgefem info` previews the partition it would run with). Returns 0.
int print_info(const RunOptions& options);

}  // namespace edgefem
