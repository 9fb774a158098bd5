# SPDX-License-Identifier: BSD-3-Clause
# The test docs.job_reference: the committed docs/reference/job-file.md must be exactly what
# `edgefem job --reference` prints (the parser's key table, io/job_keys.cpp).
#   cmake -DEDGEFEM=path/to/edgefem -DPAGE=docs/reference/job-file.md -P check_job_reference.cmake
execute_process(COMMAND ${EDGEFEM} job --reference OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "`${EDGEFEM} job --reference` failed (${rc})")
endif()
file(READ ${PAGE} committed)
if(NOT generated STREQUAL committed)
  string(LENGTH "${generated}" n_generated)
  string(LENGTH "${committed}" n_committed)
  message(FATAL_ERROR "${PAGE} (${n_committed} characters) differs from `edgefem job --reference` (${n_generated}): "
                      "the parser's key table changed. Regenerate it: edgefem job --reference > ${PAGE}")
endif()
message(STATUS "${PAGE} is the parser's reference")
