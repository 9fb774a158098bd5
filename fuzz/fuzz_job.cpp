// SPDX-License-Identifier: BSD-3-Clause
/// \file fuzz_job.cpp
/// libFuzzer target: the job-file reader (YAML -> Job). Bad input must end in an InputError; any other
/// exception, a crash, a sanitizer report, a hang or a huge allocation is a finding.
/// Seeds: fuzz/corpus/job/, dictionary fuzz/job.dict (see fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "core/error.hpp"
#include "fuzz/scratch_file.hpp"
#include "io/job.hpp"

namespace {

/// The job file's directory, with the files the seeds name (read_job checks that a mesh or curve file exists;
/// empty files are enough), so that inputs get past `mesh:` into the rest of the job.
const edgefem::fuzz::ScratchDirectory& job_directory() {
  static const edgefem::fuzz::ScratchDirectory scratch;
  static const bool populated = [] {
    std::filesystem::create_directories(scratch.path() / "meshes");
    for (const char* name : {"mesh.msh", "curve.csv", "meshes/column.msh", "meshes/bimaterial.msh", "meshes/cuboid.msh",
                             "surface_only.msh", "meshes/indenter.stl"}) {
      std::ofstream(scratch.path() / name);
    }
    return true;
  }();
  (void)populated;
  return scratch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& scratch = job_directory();
  const std::string path = scratch.write("job.yaml", data, size);
  try {
    (void)edgefem::read_job(path);
  } catch (const edgefem::InputError& e) {
    // the expected outcome for a bad job file
    if (edgefem::fuzz::verbose()) std::fprintf(stderr, "InputError: %s\n", e.what());
  }
  return 0;
}
