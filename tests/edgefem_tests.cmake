# SPDX-License-Identifier: BSD-3-Clause
# CMake helpers for the tests: one call a unit test file (tests/CMakeLists.txt) or a row of tests/mpi/CMakeLists.txt
# (name, rank counts, program, arguments, expectations), not a copied add_test + set_tests_properties block.

# Environment of every test (EDGEFEM_TEST_ENV; tests that start MPI: EDGEFEM_MPI_ENV): root allowed (containers),
# one OpenMP thread per rank unless the test says otherwise, oversubscription allowed (3 ranks on a 2-core machine).
# OMP_WAIT_POLICY=passive: an OpenMP thread waiting at a barrier sleeps instead of spinning. Tests run two at a time
# on 2 cores, so a spinning thread takes the core its partner needs to reach the barrier: the 442 cases of
# unit.stvk_tsep (small meshes, thousands of parallel regions) took 10-30 s with the default policy on a loaded
# machine and 2-4 s with passive. The results do not depend on it.
set(EDGEFEM_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_WAIT_POLICY=passive")
# OMPI_MCA_mpi_yield_when_idle=1: a rank waiting for a message yields its core between polls (Open MPI does so by
# itself only when it sees more ranks than cores; 2 ranks next to another test or another user's build are
# oversubscribed too): the Slurm round trip (4 ranks on 2 cores) took 73 s spinning and 42 s yielding here.
# OMPI_MCA_hwloc_base_binding_policy=none: for up to 2 ranks mpiexec binds rank r to core r, so every 1-rank test and
# every 2-rank test's rank 0 of the tests running side by side shared core 0 while core 1 idled: mpi.contact.np1 (6 s
# of work) took 57 s under ctest beside two busy processes, 20 s unbound (the scheduler then moves it to the free core).
set(EDGEFEM_MPI_ENV "${EDGEFEM_TEST_ENV};OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1;OMPI_MCA_hwloc_base_binding_policy=none")

# tests/mpi_main.cpp, compiled once for every executable that uses it.
add_library(edgefem_test_main OBJECT ${PROJECT_SOURCE_DIR}/tests/mpi_main.cpp)
target_link_libraries(edgefem_test_main PRIVATE edgefem_lib edgefem_warnings GTest::gtest Eigen3::Eigen)

# Precompiled headers for every test executable (made once, with edgefem_test_main): GoogleTest, Eigen, petscsys.h
# and the standard headers most test files include. Parsing them again in each of the ~60 test files was a fifth of
# the tests' compile time: 260 -> 207 s of CPU, about 25 s of a 2-core build. Off by default when a compiler
# launcher is set: ccache does not cache a compilation that uses a precompiled header unless its sloppiness allows
# it (pch_defines,time_macros), so a ccache build is faster without. Builds with it on do not notice a test file
# that forgets one of these includes; builds without do.
option(EDGEFEM_TEST_PCH "Precompiled headers for the test executables (default: on unless a compiler launcher is set)"
       ${edgefem_without_launcher})
if(EDGEFEM_TEST_PCH)
  target_precompile_headers(edgefem_test_main PRIVATE <gtest/gtest.h> <Eigen/Dense> <petscsys.h> <algorithm> <array>
                            <cmath> <cstdio> <filesystem> <fstream> <limits> <numeric> <random> <stdexcept> <string>
                            <tuple> <vector>)
endif()

# edgefem_test_executable(<target> <sources>... [MPI_MAIN] [RUNS_EDGEFEM] [LINK <libraries>...])
#   A GoogleTest executable linked with edgefem_lib; EDGEFEM_SOURCE_DIR and EDGEFEM_BINARY_DIR are defined.
#   MPI_MAIN: tests/mpi_main.cpp is the main (MPI and PETSc initialised once; output from rank 0 only), linked from
#   one object library (edgefem_test_main) rather than compiled again for every executable.
#   RUNS_EDGEFEM: the tests start `mpiexec ... edgefem` themselves: EDGEFEM_MPIEXEC and EDGEFEM_BINARY are
#   defined and the program is built first.
function(edgefem_test_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "MPI_MAIN;RUNS_EDGEFEM" "" "LINK")
  add_executable(${target} ${arg_UNPARSED_ARGUMENTS})
  if(arg_MPI_MAIN)
    target_link_libraries(${target} PRIVATE edgefem_test_main)
  endif()
  target_link_libraries(${target} PRIVATE edgefem_lib edgefem_warnings GTest::gtest Eigen3::Eigen ${arg_LINK})
  if(EDGEFEM_TEST_PCH)
    target_precompile_headers(${target} REUSE_FROM edgefem_test_main)
  endif()
  target_compile_definitions(${target} PRIVATE EDGEFEM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                               EDGEFEM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(arg_RUNS_EDGEFEM)
    target_compile_definitions(${target} PRIVATE EDGEFEM_MPIEXEC="${MPIEXEC_EXECUTABLE}"
                                                 EDGEFEM_BINARY="$<TARGET_FILE:edgefem>")
    add_dependencies(${target} edgefem)
  endif()
endfunction()

# edgefem_unit_tests(<sources>...)
#   The serial unit test files tests/unit/test_<topic>.cpp: ONE executable, build/tests/unit/unit_tests (target
#   edgefem_unit_tests, with tests/mpi_main.cpp: MPI as a singleton and PETSc initialised once per process), and one
#   CTest test unit.<topic> per file that runs that file's cases, and only those, in one process
#   (`unit_tests --file test_<topic>.cpp`, tests/mpi_main.cpp), labels unit and quick, two OpenMP threads (the
#   kernels' threaded paths). The files are compiled as unity batches (EDGEFEM_UNIT_UNITY, default on): the test
#   files of a topic instantiate the same templates (GoogleTest, Eigen, the support fixtures), and one batch of 8
#   compiles in about half the CPU time of its files one by one (the 5 Volino/membrane files: 52 -> 23 s); with one
#   link instead of 54 (0.7 s each) the unit tests took 197 + 38 s of CPU to build before, about 100 s now.
option(EDGEFEM_UNIT_UNITY "Compile the unit and distributed test files in unity batches (faster full builds; off: one file a unit)" ON)
function(edgefem_unit_tests)
  set(target edgefem_unit_tests)
  edgefem_test_executable(${target} ${ARGN} MPI_MAIN LINK yaml-cpp ${VTK_LIBRARIES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME unit_tests RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/unit
                                             UNITY_BUILD ${EDGEFEM_UNIT_UNITY} UNITY_BUILD_BATCH_SIZE 8)
  foreach(source IN LISTS ARGN)
    get_filename_component(stem ${source} NAME_WE)
    get_filename_component(name ${source} NAME)
    string(REGEX REPLACE "^test_" "" topic ${stem})
    add_test(NAME unit.${topic} COMMAND ${target} --file ${name})
    set_tests_properties(unit.${topic} PROPERTIES LABELS "unit;quick"
                         ENVIRONMENT "${EDGEFEM_TEST_ENV};OMP_NUM_THREADS=2")
  endforeach()
endfunction()

# edgefem_mpi_test(<name> <ranks> COMMAND <program> [<arguments>...]
#                  [LABELS <labels>...] [TIMEOUT <seconds>] [PASS_REGULAR_EXPRESSION <re>]
#                  [FAIL_REGULAR_EXPRESSION <re>] [WILL_FAIL] [DIRECT] [PREFIX <command>...] [NO_OVERSUBSCRIBE]
#                  [SLOW <seconds>])
#   One test per rank count in <ranks> (a number, or a list such as "1;2;3"), named <name>.np<ranks>, run as
#   `<PREFIX> mpiexec -n <ranks> --oversubscribe <program> <arguments>` with PROCESSORS <ranks>, the labels
#   (default: mpi) and EDGEFEM_MPI_ENV. <program> may be a target (its file is used). `@np@` in an argument is
#   replaced by the rank count. Every test is also labelled quick (`ctest -L quick`, the inner loop) unless:
#   SLOW <seconds>: it takes about that long on a 2-core machine (more than ~7 s): not quick, and COST <seconds>
#   so that `ctest -j` starts it among the first instead of last (CTest orders by COST when it has no timings of
#   an earlier run, as in CI's fresh clone).
#   <ranks> = SERIAL: one test named <name>, the program run directly (no mpiexec, no PROCESSORS).
#   DIRECT: the program is run directly and starts mpiexec itself (PROCESSORS still <ranks>).
#   NO_OVERSUBSCRIBE: no --oversubscribe flag, no PROCESSORS and no .np suffix (a test of what mpiexec sees).
#   PREFIX: a command that starts the test (`${CMAKE_COMMAND} -E env VARIABLE=value`).
function(edgefem_mpi_test name ranks)
  cmake_parse_arguments(PARSE_ARGV 2 arg "WILL_FAIL;DIRECT;NO_OVERSUBSCRIBE"
                        "TIMEOUT;PASS_REGULAR_EXPRESSION;FAIL_REGULAR_EXPRESSION;SLOW" "COMMAND;LABELS;PREFIX")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_COMMAND)
    message(FATAL_ERROR "edgefem_mpi_test(${name}): expected COMMAND <program> [arguments], got '${arg_UNPARSED_ARGUMENTS}'")
  endif()
  list(POP_FRONT arg_COMMAND program)
  if(TARGET ${program})
    set(program $<TARGET_FILE:${program}>)
  endif()
  if(NOT arg_LABELS)
    set(arg_LABELS mpi)
  endif()
  if(NOT DEFINED arg_SLOW)
    list(APPEND arg_LABELS quick)
  endif()
  set(serial FALSE)
  if(ranks STREQUAL "SERIAL")
    set(serial TRUE)
    set(ranks 1)
  endif()
  foreach(np IN LISTS ranks)
    list(TRANSFORM arg_COMMAND REPLACE "@np@" "${np}" OUTPUT_VARIABLE arguments)
    set(test ${name}.np${np})
    if(serial)
      set(test ${name})
      set(command ${program} ${arguments})
    elseif(arg_DIRECT)
      set(command ${program} ${arguments})
    elseif(arg_NO_OVERSUBSCRIBE)
      set(test ${name})
      set(command ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${program} ${arguments})
    else()
      set(command ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe ${program} ${arguments})
    endif()
    add_test(NAME ${test} COMMAND ${arg_PREFIX} ${command})
    # One property a call: the values are lists (labels, environment) that must not be flattened together.
    set_tests_properties(${test} PROPERTIES LABELS "${arg_LABELS}")
    # One rank: mpiexec need not give a failed process's siblings 1 s between SIGTERM and SIGKILL (it has none), but
    # waits 2 s with the default before it exits after a non-zero exit status; 0 s (tests that expect a failure
    # on 1 rank: cli.bad_job.np1 2.3 s -> 0.2 s, mpi.checkpoint_runs.np1 11 s -> 4 s). More ranks keep the grace
    # period: a rank may still be finishing its output when another one's exit makes mpiexec stop the job.
    set(environment "${EDGEFEM_MPI_ENV}")
    if(np EQUAL 1)
      list(APPEND environment OMPI_MCA_odls_base_sigkill_timeout=0)
      # One rank waits for no one: no yield (runtime/mpi_startup.hpp, as the program itself decides).
      list(REMOVE_ITEM environment OMPI_MCA_mpi_yield_when_idle=1)
    endif()
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "${environment}")
    if(NOT serial AND NOT arg_NO_OVERSUBSCRIBE)
      set_tests_properties(${test} PROPERTIES PROCESSORS ${np})
    endif()
    foreach(property TIMEOUT PASS_REGULAR_EXPRESSION FAIL_REGULAR_EXPRESSION)
      if(DEFINED arg_${property})
        set_tests_properties(${test} PROPERTIES ${property} "${arg_${property}}")
      endif()
    endforeach()
    if(arg_WILL_FAIL)
      set_tests_properties(${test} PROPERTIES WILL_FAIL TRUE)
    endif()
    if(DEFINED arg_SLOW)
      set_tests_properties(${test} PROPERTIES COST ${arg_SLOW})
    endif()
  endforeach()
endfunction()

# edgefem_mpi_tests(<sources>... [LINK <libraries>...])
#   The distributed test files tests/mpi/test_<topic>.cpp: ONE executable, build/tests/mpi/mpi_tests (target
#   edgefem_mpi_tests, with tests/mpi_main.cpp), compiled in unity batches of 8 like the unit tests
#   (EDGEFEM_UNIT_UNITY). The rows of tests/mpi/CMakeLists.txt run it under mpiexec with `--file test_<topic>.cpp`
#   (a comma-separated list for a family of several files). One executable instead of 27, each linked on its own
#   and each file compiled alone: their build (test PCH on, libraries built) 141 -> 64 s of CPU, 137 -> 47 s at -j2
#   (load ~15). Each file keeps its helpers in a namespace of its own (test_<topic>), as a batch joins them.
function(edgefem_mpi_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "LINK")
  set(target edgefem_mpi_tests)
  edgefem_test_executable(${target} ${arg_UNPARSED_ARGUMENTS} MPI_MAIN LINK ${arg_LINK})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME mpi_tests UNITY_BUILD ${EDGEFEM_UNIT_UNITY}
                                             UNITY_BUILD_BATCH_SIZE 8)
endfunction()
