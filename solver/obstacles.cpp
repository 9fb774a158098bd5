// SPDX-License-Identifier: BSD-3-Clause
#include "solver/obstacles.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "contact/obstacle_mesh.hpp"
#include "contact/shapes.hpp"
#include "core/error.hpp"
#include "io/gmsh.hpp"
#include "io/stl.hpp"

namespace edgefem {
namespace {

/// "job.yaml:LINE: obstacles[i] (name): ".
std::string where(const Job& job, const ObstacleSpec& spec) {
  return job.job_file + ":" + std::to_string(spec.line) + ": " + spec.key + " (" + spec.name + "): ";
}

std::unique_ptr<contact::Obstacle> mesh_obstacle(const Job& job, const ObstacleSpec& spec) {
  TriangleSurface surface;
  const std::string extension = std::filesystem::path(spec.file).extension().string();
  try {
    if (extension == ".msh" || extension == ".MSH") {
      const Mesh mesh = read_gmsh(spec.file);
      if (mesh.triangles.empty()) throw InputError(spec.file + ": the mesh has no triangles (an obstacle is a surface)");
      for (LocalIndex v = 0; v < mesh.n_vertices(); ++v) surface.points.push_back(mesh.vertex(v));
      for (LocalIndex t = 0; t < mesh.n_triangles(); ++t)
        surface.triangles.push_back({mesh.triangles[3 * t], mesh.triangles[3 * t + 1], mesh.triangles[3 * t + 2]});
    } else {
      surface = read_stl(spec.file);
    }
  } catch (const InputError& e) {
    throw InputError(where(job, spec) + e.what());
  }
  try {
    return std::make_unique<contact::MeshObstacle>(spec.name, spec.friction, std::move(surface.points),
                                                   std::move(surface.triangles));
  } catch (const std::invalid_argument& e) {
    throw InputError(where(job, spec) + spec.file + ": " + e.what());
  }
}

}  // namespace

std::vector<std::unique_ptr<contact::Obstacle>> make_obstacles(const Job& job) {
  std::vector<std::unique_ptr<contact::Obstacle>> out;
  for (const ObstacleSpec& s : job.obstacles) {
    switch (s.shape) {
      case ObstacleShape::plane:
        out.push_back(std::make_unique<contact::PlaneObstacle>(s.name, s.friction, s.point, s.normal));
        break;
      case ObstacleShape::box: out.push_back(std::make_unique<contact::BoxObstacle>(s.name, s.friction, s.lo, s.hi)); break;
      case ObstacleShape::sphere:
        out.push_back(std::make_unique<contact::SphereObstacle>(s.name, s.friction, s.center, s.radius));
        break;
      case ObstacleShape::cylinder:
        out.push_back(
            std::make_unique<contact::CylinderObstacle>(s.name, s.friction, s.center, s.axis, s.radius, s.length));
        break;
      case ObstacleShape::mesh: out.push_back(mesh_obstacle(job, s)); break;
    }
  }
  place_obstacles(job, out, 0.0);
  return out;
}

std::array<double, 3> obstacle_offset(const Job& job, const ObstacleSpec& spec, double t) {
  if (!spec.motion) return {0.0, 0.0, 0.0};
  double s = 0.0;
  if (spec.motion->schedule) {
    s = (*spec.motion->schedule)(t);
  } else {
    const double end = job.analysis_type == AnalysisType::dynamics && job.dynamic ? job.dynamic->end_time : 1.0;
    s = std::clamp(t / end, 0.0, 1.0);
  }
  const auto& d = spec.motion->translate;
  return {s * d[0], s * d[1], s * d[2]};
}

void place_obstacles(const Job& job, const std::vector<std::unique_ptr<contact::Obstacle>>& obstacles, double t) {
  for (std::size_t i = 0; i < obstacles.size(); ++i) obstacles[i]->place(obstacle_offset(job, job.obstacles[i], t));
}

}  // namespace edgefem
