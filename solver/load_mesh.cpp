#include "solver/load_mesh.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "io/gmsh.hpp"
#include "mesh/box.hpp"

namespace edgefem {

Mesh load_mesh_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".msh")
    throw InputError(path + ": unsupported mesh format '" + ext + "' (expected a Gmsh .msh file, format 2.2 or 4.1)");
  Mesh mesh = read_gmsh(path);
  check_mesh(mesh, path);
  return mesh;
}

Mesh load_job_mesh(const Job& job) {
  if (job.mesh_file) return load_mesh_file(*job.mesh_file);
  const GenerateSpec& g = *job.generate;
  Mesh mesh;
  switch (g.shape) {
    case GeneratedShape::box: mesh = generate_box(g.size, g.cells); break;
    case GeneratedShape::sheet: mesh = generate_sheet({g.size[0], g.size[1]}, {g.cells[0], g.cells[1]}); break;
  }
  check_mesh(mesh, job.job_file + " (generated " + std::string(to_string(g.shape)) + ")");
  return mesh;
}

}  // namespace edgefem
