// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file run_options.hpp
/// What a caller (the `edgefem` program, a test, another program) tells a run, an `info` or a `bench`: the typed
/// form of the command line (apps/edgefem.cpp parses it; run/run_job.hpp, run/info.hpp and run/bench.hpp take it).
#include <string>

namespace edgefem {

struct RunOptions {
  std::string path;                     ///< run, bench: the job file; info: a mesh or job file
  bool quiet = false;                   ///< run: only warnings and the summary on the console
  bool verbose = false;                 ///< run: one line per Newton iteration too
  bool ignore_memory_estimate = false;  ///< run: go on when the memory estimate says the run does not fit
  std::string output;                   ///< run: overrides the job's output.directory (empty: the job's)
  std::string restart;                  ///< run: checkpoint file (or output directory: its newest checkpoint)
  int ranks = 0;                        ///< info: parts of the partition preview (0: the number of ranks it runs on)
  int repeat = 5;                       ///< bench: repetitions (the best is reported)
  std::string json;                     ///< bench: write the result here
  std::string petsc_options;            ///< PETSc options of the command line, re-applied after the job's
};

}  // namespace edgefem
