#pragma once
/// \file load_mesh.hpp
/// The mesh a job names: read from its file (Gmsh .msh) or generated, then checked.
#include "io/job.hpp"
#include "mesh/mesh.hpp"

namespace edgefem {

/// Read or generate the job's mesh and check it (check_mesh). Throws InputError.
Mesh load_job_mesh(const Job& job);

/// Read a mesh file by extension (.msh) and check it. Throws InputError.
Mesh load_mesh_file(const std::string& path);

}  // namespace edgefem
