// SPDX-License-Identifier: BSD-3-Clause
/// \file fuzz_gmsh.cpp
/// libFuzzer target: the Gmsh reader (MSH 2.2 and 4.1, ASCII and binary) and the user-mesh check.
/// Bad input must end in an InputError; any other exception, a crash, a sanitizer report, a hang or a huge
/// allocation is a finding. Seeds: fuzz/corpus/gmsh/ (see fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz/scratch_file.hpp"
#include "io/gmsh.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const edgefem::fuzz::ScratchDirectory scratch;
  const std::string path = scratch.write("input.msh", data, size);
  try {
    const edgefem::Mesh mesh = edgefem::read_gmsh(path);
    edgefem::check_mesh(mesh, path);
  } catch (const edgefem::InputError& e) {
    // the expected outcome for a bad file
    if (edgefem::fuzz::verbose()) std::fprintf(stderr, "InputError: %s\n", e.what());
  }
  return 0;
}
