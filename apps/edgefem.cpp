// SPDX-License-Identifier: BSD-3-Clause
// edgefem: the command-line program. It parses the arguments into RunOptions (run/run_options.hpp) and hands over
// to run/: the run of a job (run/run_job.hpp), `info` (run/info.hpp) or `bench` (run/bench.hpp), under the error
// policy and summary.json of run/summary_record.hpp.
//   edgefem run JOB.yaml [--quiet|--verbose] [PETSc options]   solve a job (under mpirun for several ranks)
//   edgefem info MESH|JOB.yaml [--ranks N]             mesh statistics and a partition preview
#include <petscsys.h>

#include <cctype>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "linalg/edgefem_gamg.hpp"
#include "run/bench.hpp"
#include "run/info.hpp"
#include "run/run_job.hpp"
#include "run/run_options.hpp"
#include "run/summary_record.hpp"
#include "runtime/huge_pages.hpp"
#include "runtime/mpi_startup.hpp"

namespace {

using namespace edgefem;

constexpr const char* version = "0.1.0";

constexpr const char* usage =
    "usage:\n"
    "  edgefem run JOB.yaml [--quiet | --verbose] [--output DIR] [--restart CHECKPOINT|DIR]\n"
    "              [--ignore-memory-estimate] [PETSc options, e.g. -ksp_type gmres -pc_type hypre -log_view]\n"
    "              (--verbose: a line per Newton iteration too; --ignore-memory-estimate: run even when the\n"
    "              estimate says the mesh is too large for the nodes' memory)\n"
    "  edgefem info MESH.msh|JOB.yaml [--ranks N]\n"
    "  edgefem bench JOB.yaml [--repeat N] [--json FILE] [PETSc options]\n"
    "  edgefem --help | --version\n"
    "exit status of run: 0 done, 1 error, 2 a rank's fatal error; SIGTERM or SIGUSR1 stop it after the current step:\n"
    "  85 with a checkpoint of that step (dynamic; --restart DIR continues), 86 without (static: run it again)\n";

struct Arguments {
  std::string command;  ///< run, info or bench
  RunOptions options;
};

Arguments parse_arguments(int argc, char** argv) {
  Arguments a;
  RunOptions& o = a.options;
  if (argc < 2) throw InputError(std::string("missing command\n") + usage);
  a.command = argv[1];
  if (a.command != "run" && a.command != "info" && a.command != "bench")
    throw InputError("unknown command '" + a.command + "' (expected run, info or bench)\n" + usage);
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else if (arg == "--ignore-memory-estimate") {
      o.ignore_memory_estimate = true;
    } else if (arg == "--output") {
      if (i + 1 >= argc) throw InputError("--output: missing directory");
      o.output = argv[++i];
    } else if (arg == "--ranks" || arg == "--repeat") {
      if (i + 1 >= argc) throw InputError(arg + ": missing value (expected a positive integer)");
      const std::string value = argv[++i];
      std::size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(value, &used);
      } catch (...) {
        used = 0;
      }
      if (used != value.size() || n < 1) throw InputError(arg + ": expected a positive integer, got '" + value + "'");
      (arg == "--ranks" ? o.ranks : o.repeat) = n;
    } else if (arg == "--restart") {
      if (i + 1 >= argc) throw InputError("--restart: missing checkpoint file or output directory");
      o.restart = argv[++i];
    } else if (arg == "--json") {
      if (i + 1 >= argc) throw InputError("--json: missing file name");
      o.json = argv[++i];
    } else if (arg.rfind("--", 0) == 0) {
      throw InputError("unknown option '" + arg + "'\n" + usage);
    } else if (arg.size() > 1 && arg[0] == '-') {
      // A PETSc option and, unless the next token is another option, its value.
      o.petsc_options += " " + arg;
      if (i + 1 < argc && (argv[i + 1][0] != '-' || std::isdigit(static_cast<unsigned char>(argv[i + 1][1]))))
        o.petsc_options += std::string(" ") + argv[++i];
    } else if (o.path.empty()) {
      o.path = arg;
    } else {
      throw InputError("unexpected argument '" + arg + "' (only one " +
                       (a.command == "info" ? "mesh or job file" : "job file") + " is taken)\n" + usage);
    }
  }
  if (o.path.empty())
    throw InputError("edgefem " + a.command + ": missing " + (a.command == "info" ? "MESH or JOB.yaml" : "JOB.yaml") +
                     "\n" + usage);
  return a;
}

/// The command's call into run/. Returns the exit code.
int run_command(const Arguments& args, SummaryRecord& record) {
  if (args.command == "run") return run_job(args.options, record);
  if (args.command == "bench") return bench_job(args.options);
  return print_info(args.options);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("edgefem %s: distributed edge/TSEP StVK solver\n%s", version, usage);
      return 0;
    }
    if (arg == "--version") {
      std::printf("edgefem %s\n", version);
      return 0;
    }
  }
  SummaryRecord record(version, argc, argv);
  use_huge_pages();
  prefer_ob1_on_one_node();
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 2;
  register_edgefem_gamg();  // -pc_type edgefem_gamg anywhere (any options prefix), and listed by -help
  record.started_on(PETSC_COMM_WORLD);
  const int code = run_reporting_errors(PETSC_COMM_WORLD, record,
                                        [&] { return run_command(parse_arguments(argc, argv), record); });
  PetscFinalize();
  return code;
}
