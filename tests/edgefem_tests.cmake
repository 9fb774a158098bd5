# CMake helpers for the test rows of tests/mpi/CMakeLists.txt: a test is one call (name, rank counts, program,
# arguments, expectations), not a copied add_test + set_tests_properties block.

# Environment of every test that starts MPI: root allowed (containers), one OpenMP thread per rank unless the
# test says otherwise, oversubscription allowed (3 ranks on a 2-core machine). OMP_WAIT_POLICY=passive: an OpenMP
# thread waiting at a barrier sleeps instead of spinning. Tests run two at a time on 2 cores, so a spinning thread
# takes the core its partner needs to reach the barrier: the 442 cases of unit.stvk_tsep (small meshes, thousands
# of parallel regions) took 10-30 s with the default policy on a loaded machine and 2-4 s with passive. The
# results do not depend on it.
set(EDGEFEM_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_WAIT_POLICY=passive")
set(EDGEFEM_MPI_ENV "${EDGEFEM_TEST_ENV};OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1")

# edgefem_test_executable(<target> <sources>... [MPI_MAIN] [RUNS_EDGEFEM] [LINK <libraries>...])
#   A GoogleTest executable linked with edgefem_lib; EDGEFEM_SOURCE_DIR and EDGEFEM_BINARY_DIR are defined.
#   MPI_MAIN: tests/mpi_main.cpp is the main (MPI and PETSc initialised once; output from rank 0 only), linked from
#   one object library (edgefem_test_main) rather than compiled again for every executable.
#   RUNS_EDGEFEM: the tests start `mpiexec ... edgefem` themselves: EDGEFEM_MPIEXEC and EDGEFEM_BINARY are
#   defined and the program is built first.
# tests/mpi_main.cpp, compiled once for every executable that uses it.
add_library(edgefem_test_main OBJECT ${PROJECT_SOURCE_DIR}/tests/mpi_main.cpp)
target_link_libraries(edgefem_test_main PRIVATE edgefem_lib edgefem_warnings GTest::gtest)

function(edgefem_test_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "MPI_MAIN;RUNS_EDGEFEM" "" "LINK")
  add_executable(${target} ${arg_UNPARSED_ARGUMENTS})
  if(arg_MPI_MAIN)
    target_link_libraries(${target} PRIVATE edgefem_test_main)
  endif()
  target_link_libraries(${target} PRIVATE edgefem_lib edgefem_warnings GTest::gtest Eigen3::Eigen ${arg_LINK})
  target_compile_definitions(${target} PRIVATE EDGEFEM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                               EDGEFEM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(arg_RUNS_EDGEFEM)
    target_compile_definitions(${target} PRIVATE EDGEFEM_MPIEXEC="${MPIEXEC_EXECUTABLE}"
                                                 EDGEFEM_BINARY="$<TARGET_FILE:edgefem>")
    add_dependencies(${target} edgefem)
  endif()
endfunction()

# edgefem_unit_test(<source>)
#   One file of serial unit tests, tests/unit/test_<topic>.cpp: the executable build/tests/unit/test_<topic>
#   (target edgefem_unit_<topic>, with tests/mpi_main.cpp: MPI as a singleton and PETSc initialised once for all
#   of the file's cases) and the CTest test unit.<topic> that runs all of them in that one process, labels unit and
#   quick, two OpenMP threads (the kernels' threaded paths).
function(edgefem_unit_test source)
  get_filename_component(stem ${source} NAME_WE)
  string(REGEX REPLACE "^test_" "" topic ${stem})
  set(target edgefem_unit_${topic})
  edgefem_test_executable(${target} ${source} MPI_MAIN LINK yaml-cpp ${VTK_LIBRARIES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${stem} RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/unit)
  add_test(NAME unit.${topic} COMMAND ${target})
  set_tests_properties(unit.${topic} PROPERTIES LABELS "unit;quick"
                       ENVIRONMENT "${EDGEFEM_TEST_ENV};OMP_NUM_THREADS=2")
endfunction()

# edgefem_mpi_test(<name> <ranks> COMMAND <program> [<arguments>...]
#                  [LABELS <labels>...] [TIMEOUT <seconds>] [PASS_REGULAR_EXPRESSION <re>]
#                  [FAIL_REGULAR_EXPRESSION <re>] [WILL_FAIL] [DIRECT] [PREFIX <command>...] [NO_OVERSUBSCRIBE])
#   One test per rank count in <ranks> (a number, or a list such as "1;2;3"), named <name>.np<ranks>, run as
#   `<PREFIX> mpiexec -n <ranks> --oversubscribe <program> <arguments>` with PROCESSORS <ranks>, the labels
#   (default: mpi) and EDGEFEM_MPI_ENV. <program> may be a target (its file is used). `@np@` in an argument is
#   replaced by the rank count.
#   <ranks> = SERIAL: one test named <name>, the program run directly (no mpiexec, no PROCESSORS).
#   DIRECT: the program is run directly and starts mpiexec itself (PROCESSORS still <ranks>).
#   NO_OVERSUBSCRIBE: no --oversubscribe flag, no PROCESSORS and no .np suffix (a test of what mpiexec sees).
#   PREFIX: a command that starts the test (`${CMAKE_COMMAND} -E env VARIABLE=value`).
function(edgefem_mpi_test name ranks)
  cmake_parse_arguments(PARSE_ARGV 2 arg "WILL_FAIL;DIRECT;NO_OVERSUBSCRIBE"
                        "TIMEOUT;PASS_REGULAR_EXPRESSION;FAIL_REGULAR_EXPRESSION" "COMMAND;LABELS;PREFIX")
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
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "${EDGEFEM_MPI_ENV}")
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
  endforeach()
endfunction()
