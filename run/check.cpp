// SPDX-License-Identifier: BSD-3-Clause
/// \file check.cpp
/// `edgefem check` (check.hpp).
#include "run/check.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "io/job.hpp"
#include "io/job_keys.hpp"

namespace edgefem {

std::string gmsh_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the mesh file");
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if (first != "$MeshFormat") throw InputError(path + ":1: not a Gmsh .msh file: expected '$MeshFormat'");
  std::istringstream fields(second);
  std::string version;
  int file_type = -1, data_size = 0;
  fields >> version >> file_type >> data_size;
  if (version != "2.2" && version != "4.1")
    throw InputError(path + ":2: Gmsh format version '" + version + "' (edgefem reads 2.2 and 4.1)");
  if (file_type != 0 && file_type != 1) throw InputError(path + ":2: expected file type 0 (ASCII) or 1 (binary)");
  return "MSH " + version + (file_type == 1 ? " binary" : " ASCII");
}

int check_job(const std::string& path) {
  const Job job = read_job(path);  // every key and rule; throws InputError naming file, line and key
  std::string mesh;
  if (job.mesh_file) {
    mesh = *job.mesh_file + " (" + gmsh_header(*job.mesh_file) + ", " +
           std::to_string(std::filesystem::file_size(*job.mesh_file)) + " bytes)";
  } else if (job.generate) {
    const GenerateSpec& g = *job.generate;
    mesh = "generated " + std::string(to_string(g.shape)) + ", " + std::to_string(g.cells[0]) + " x " +
           std::to_string(g.cells[1]) + (g.shape == GeneratedShape::box ? " x " + std::to_string(g.cells[2]) : "") +
           " cells";
  }
  std::printf("# %s: valid (edgefem check)\n# mesh: %s\n# output: %s\n# the job with every default (\"# default\"):\n%s",
              path.c_str(), mesh.c_str(), job.output_directory.c_str(), resolved_job_yaml(YAML::LoadFile(path)).c_str());
  return 0;
}

}  // namespace edgefem
