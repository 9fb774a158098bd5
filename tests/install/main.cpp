// SPDX-License-Identifier: BSD-3-Clause
// An outside program built against the installed edgefem (tests/install/CMakeLists.txt): reads a job file with
// edgefem's parser, validates a broken copy of it, and prints what it found. Exit status 0 when all is as expected.
#include <cstdio>
#include <exception>
#include <string>

#include <edgefem/core/error.hpp>
#include <edgefem/edgefem/version.hpp>
#include <edgefem/io/job.hpp>
#include <edgefem/io/job_keys.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s JOB.yaml\n", argv[0]);
    return 2;
  }
  try {
    const edgefem::Job job = edgefem::read_job(argv[1]);
    std::printf("edgefem %s: %s: %zu material(s), %s analysis, %zu keys under 'analysis', %zu sections\n",
                EDGEFEM_VERSION, argv[1], job.materials.size(),
                std::string(edgefem::to_string(job.analysis_type)).c_str(),
                edgefem::job_section("analysis").keys.size(), edgefem::job_sections().size());
    return job.materials.empty() ? 1 : 0;
  } catch (const edgefem::InputError& e) {
    std::fprintf(stderr, "consumer: input error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
