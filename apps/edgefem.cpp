// SPDX-License-Identifier: BSD-3-Clause
// edgefem: the command-line program. It parses the arguments into RunOptions (run/run_options.hpp) and hands over
// to run/: the run of a job (run/run_job.hpp), `info` (run/info.hpp) or `bench` (run/bench.hpp), under the error
// policy and summary.json of run/summary_record.hpp.
//   edgefem run JOB.yaml [--quiet|--verbose] [PETSc options]   solve a job (under mpirun for several ranks)
//   edgefem info MESH|JOB.yaml [--ranks N]             mesh statistics and a partition preview
//   edgefem check JOB.yaml, edgefem job --reference  (no MPI: run/check.hpp, io/job_keys.hpp)
//   edgefem --help, edgefem COMMAND --help, edgefem --version (with the libraries' versions, run/provenance.hpp)
#include <petscsys.h>

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "edgefem/version.hpp"
#include "linalg/edgefem_gamg.hpp"
#include "io/job_keys.hpp"
#include "run/bench.hpp"
#include "run/check.hpp"
#include "run/info.hpp"
#include "run/provenance.hpp"
#include "run/run_job.hpp"
#include "run/run_options.hpp"
#include "run/summary_record.hpp"
#include "runtime/huge_pages.hpp"
#include "runtime/mpi_startup.hpp"

namespace {

using namespace edgefem;

constexpr const char* about =
    "edgefem: a distributed (MPI + OpenMP, PETSc) solver for deformable meshes. It solves tetrahedral solids\n"
    "(StVK on edges and TSEPs, Neo-Hookean, spring networks), membranes and cloth (triangular springs, Volino's\n"
    "anisotropic membrane, bending), static loads with Newton's method and dynamics with implicit integrators, the\n"
    "position-based (XPBD) solver and reduced frame-based models, from a YAML job file, and writes ParaView output,\n"
    "checkpoints and summary.json.\n";

constexpr const char* usage =
    "usage:\n"
    "  edgefem run JOB.yaml [options] [PETSc options]   solve a job (under mpirun for several ranks)\n"
    "  edgefem info MESH.msh|JOB.yaml [--ranks N]        mesh statistics and a partition preview\n"
    "  edgefem bench JOB.yaml [--repeat N] [--json FILE] time the kernels and the linear solve of a job\n"
    "  edgefem check JOB.yaml                            validate a job and its mesh header; print it resolved\n"
    "  edgefem job --reference                           every job-file key: type, default, unit, meaning\n"
    "  edgefem --help | --version | COMMAND --help\n"
    "documentation: README.md and docs/ (docs/reference/job-file.md: every job key)\n";

constexpr const char* run_help =
    "usage: edgefem run JOB.yaml [--quiet | --verbose] [--output DIR] [--restart CHECKPOINT|DIR]\n"
    "                   [--ignore-memory-estimate] [PETSc options, e.g. -ksp_type gmres -pc_type hypre -log_view]\n"
    "Solves the job: static load steps, dynamics or position-based time steps, or a frame-based model. Writes\n"
    "DIR/solution.pvd (ParaView), DIR/summary.json and, for dynamic runs, checkpoints and energy.csv.\n"
    "  --quiet                   nothing but warnings, errors and the stop/restart lines; --verbose: a line per\n"
    "                            Newton iteration too\n"
    "  --output DIR              the output directory instead of the job's output.directory\n"
    "  --restart CHECKPOINT|DIR  continue a dynamic run from a checkpoint (DIR: its newest intact one)\n"
    "  --ignore-memory-estimate  run even when the estimate says the mesh is too large for the nodes' memory\n"
    "exit status: 0 done, 1 error, 2 a rank's fatal error; SIGTERM or SIGUSR1 stop it after the current step\n"
    "  (to Open MPI's mpirun send SIGUSR1, or start it with scripts/stoppable.sh):\n"
    "  85 with a checkpoint of that step (dynamic; --restart DIR continues), 86 without (static: run it again)\n";

constexpr const char* info_help =
    "usage: edgefem info MESH.msh|JOB.yaml [--ranks N]\n"
    "Reads a Gmsh mesh (or a job's mesh) and prints its statistics, the memory estimate and a preview of the\n"
    "partition on N ranks, without solving.\n";

constexpr const char* bench_help =
    "usage: edgefem bench JOB.yaml [--repeat N] [--json FILE] [PETSc options]\n"
    "Times the force and stiffness kernels, the assembly and one linear solve of the job's model (the median of\n"
    "N repeats); --json writes the numbers to FILE.\n";

constexpr const char* check_help =
    "usage: edgefem check JOB.yaml\n"
    "Reads the job as `run` would (every key, value and rule) and the header of its mesh file, without running\n"
    "anything, and prints the job with every default filled in. Exit status 0: valid; 1: the first problem is\n"
    "printed with the file, line and key.\n";

constexpr const char* job_help =
    "usage: edgefem job --reference\n"
    "Prints the job-file reference (Markdown): every section and key with its type, default, unit and meaning,\n"
    "generated from the parser's key table (docs/reference/job-file.md is this output).\n";

/// The --help text of a command (nullptr: not a command).
const char* command_help(const std::string& command) {
  if (command == "run") return run_help;
  if (command == "info") return info_help;
  if (command == "bench") return bench_help;
  if (command == "check") return check_help;
  if (command == "job") return job_help;
  return nullptr;
}

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
    throw InputError("unknown command '" + a.command + "' (expected run, info, bench, check or job)\n" + usage);
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

/// `check` and `job`, which need neither MPI nor PETSc; nothing for the other commands.
std::optional<int> run_without_mpi(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "job") {
    if (argc == 3 && std::string(argv[2]) == "--reference") {
      std::fputs(job_reference_markdown().c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "edgefem: error: expected `edgefem job --reference`\n%s", job_help);
    return 1;
  }
  if (command != "check") return std::nullopt;
  if (argc != 3) {
    std::fprintf(stderr, "edgefem: error: expected one job file\n%s", check_help);
    return 1;
  }
  try {
    return check_job(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgefem: error: %s\n", e.what());
    return 1;
  }
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
      const char* help = argc > 1 ? command_help(argv[1]) : nullptr;
      if (help != nullptr) {
        std::fputs(help, stdout);
      } else {
        std::printf("edgefem %s\n%s%s", EDGEFEM_VERSION, about, usage);
      }
      return 0;
    }
    if (arg == "--version") {
      std::fputs(provenance_text(build_provenance()).c_str(), stdout);
      return 0;
    }
  }
  if (const std::optional<int> code = run_without_mpi(argc, argv)) return *code;
  SummaryRecord record(EDGEFEM_VERSION, argc, argv);
  use_huge_pages();
  prefer_ob1_on_one_node();
  yield_when_idle();
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 2;
  register_edgefem_gamg();  // -pc_type edgefem_gamg anywhere (any options prefix), and listed by -help
  record.started_on(PETSC_COMM_WORLD);
  const int code = run_reporting_errors(PETSC_COMM_WORLD, record,
                                        [&] { return run_command(parse_arguments(argc, argv), record); });
  PetscFinalize();
  return code;
}
