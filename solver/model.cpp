// SPDX-License-Identifier: BSD-3-Clause
#include "solver/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/setup_laps.hpp"
#include "materials/bending.hpp"
#include "materials/curve.hpp"
#include "materials/membrane.hpp"
#include "materials/volino.hpp"
#include "partition/collective.hpp"

namespace edgefem {
namespace {

/// "job.yaml:LINE: key: " (the line when the entry came from a file).
std::string where(const Job& job, int line, const std::string& key) {
  std::string text = job.job_file;
  if (line > 0) text.append(":").append(std::to_string(line));
  return text.append(": ").append(key).append(": ");
}

/// The region tags present anywhere in the distributed mesh, as "1, 11, 12" (collective).
std::string mesh_regions(MPI_Comm comm, const LocalMesh& lm) {
  std::vector<int> mine(lm.vertex_regions.begin(), lm.vertex_regions.end());
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  int size = 1, count = static_cast<int>(mine.size());
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size) + 1, 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<int> all(static_cast<std::size_t>(offsets[size]));
  MPI_Allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), offsets.data(), MPI_INT, comm);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::string text;
  for (int tag : all) {
    if (!text.empty()) text += ", ";
    text += std::to_string(tag);
  }
  return text.empty() ? "none" : text;
}

/// " (region R; regions in the mesh: ...)" for a region selection, "" otherwise (collective for regions).
std::string region_hint(MPI_Comm comm, const LocalMesh& lm, const Selection& s) {
  if (s.kind != Selection::Kind::region) return {};
  return " (region " + std::to_string(s.region) + "; regions in the mesh: " + mesh_regions(comm, lm) + ")";
}

long long global_count(MPI_Comm comm, long long local) {
  long long total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  return total;
}

bool vertex_selected(const Selection& s, const LocalMesh& lm, LocalIndex v) {
  switch (s.kind) {
    case Selection::Kind::all: return true;
    case Selection::Kind::region: return lm.vertex_in_region(v, s.region);
    case Selection::Kind::box: return in_box(s, lm.mesh.coords.data() + 3 * static_cast<std::size_t>(v));
    case Selection::Kind::points: break;  // selected_vertices
  }
  return false;
}

/// The owned vertex nearest to `p` over all ranks (equal distances: the smaller index in the mesh file, so the
/// pick does not depend on the rank count): its local index on its owner (-1 elsewhere), and on every rank its
/// file index, coordinates and distance. Collective.
struct NearestVertex {
  LocalIndex local = -1;
  long long original = 0;
  double x[3] = {0, 0, 0};
  double distance = 0;
};
NearestVertex nearest_vertex(MPI_Comm comm, const LocalMesh& lm, const std::array<double, 3>& p) {
  double best = std::numeric_limits<double>::infinity();
  long long best_id = std::numeric_limits<long long>::max();
  LocalIndex best_v = -1;
  for (LocalIndex v = 0; v < lm.n_owned; ++v) {
    const double* x = lm.mesh.coords.data() + 3 * static_cast<std::size_t>(v);
    const double d2 = (x[0] - p[0]) * (x[0] - p[0]) + (x[1] - p[1]) * (x[1] - p[1]) + (x[2] - p[2]) * (x[2] - p[2]);
    const auto id = static_cast<long long>(lm.original_vertex[static_cast<std::size_t>(v)]);
    if (d2 < best || (d2 == best && id < best_id)) best = d2, best_id = id, best_v = v;
  }
  double global_best = 0;
  MPI_Allreduce(&best, &global_best, 1, MPI_DOUBLE, MPI_MIN, comm);
  long long mine = best == global_best ? best_id : std::numeric_limits<long long>::max();
  NearestVertex n;
  MPI_Allreduce(&mine, &n.original, 1, MPI_LONG_LONG, MPI_MIN, comm);
  if (best_v >= 0 && best == global_best && best_id == n.original) {
    n.local = best_v;
    for (int d = 0; d < 3; ++d) n.x[d] = lm.mesh.coords[3 * static_cast<std::size_t>(best_v) + d];
  }
  MPI_Allreduce(MPI_IN_PLACE, n.x, 3, MPI_DOUBLE, MPI_SUM, comm);  // only the owner's are non-zero
  n.distance = std::sqrt(global_best);
  return n;
}

/// The owned vertices `s` selects, ascending. A point selection picks the nearest vertex of each point and adds a
/// line per point to `notes` ("KEY: point (x, y, z): nearest vertex N (file index) at (x, y, z), distance d").
/// Collective for point selections.
std::vector<LocalIndex> selected_vertices(MPI_Comm comm, const LocalMesh& lm, const Selection& s,
                                          const std::string& key, std::vector<std::string>& notes) {
  std::vector<LocalIndex> out;
  if (s.kind != Selection::Kind::points) {
    for (LocalIndex v = 0; v < lm.n_owned; ++v)
      if (vertex_selected(s, lm, v)) out.push_back(v);
    return out;
  }
  for (const auto& p : s.points) {
    const NearestVertex n = nearest_vertex(comm, lm, p);
    if (n.local >= 0) out.push_back(n.local);
    char text[256];
    std::snprintf(text, sizeof text, "%s: point (%g, %g, %g): nearest vertex %lld at (%.9g, %.9g, %.9g), distance %.3g",
                  key.c_str(), p[0], p[1], p[2], n.original, n.x[0], n.x[1], n.x[2], n.distance);
    notes.emplace_back(text);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// A flat membrane has no out-of-plane stiffness at rest: a static solve needs the normal component prescribed on
/// every vertex (the plane must then be normal to x, y or z). Throws InputError on every rank otherwise.
void check_flat_membrane_is_held(MPI_Comm comm, const Job& job, const LocalMesh& lm,
                                 const std::map<LocalIndex, DirichletDof>& prescribed) {
  const Mesh& m = lm.mesh;
  // The plane of rank 0's first triangle (every rank has cells).
  double plane[6] = {0, 0, 0, 0, 0, 0};  // point, unit normal
  if (m.n_triangles() > 0) {
    const auto p0 = m.vertex(m.triangles[0]), p1 = m.vertex(m.triangles[1]), p2 = m.vertex(m.triangles[2]);
    double a[3], b[3];
    for (int d = 0; d < 3; ++d) a[d] = p1[d] - p0[d], b[d] = p2[d] - p0[d], plane[d] = p0[d];
    const double n[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    const double ln = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int d = 0; d < 3; ++d) plane[3 + d] = n[d] / ln;
  }
  MPI_Bcast(plane, 6, MPI_DOUBLE, 0, comm);
  double extent = 0.0, off_plane = 0.0;
  for (LocalIndex v = 0; v < lm.n_local(); ++v) {
    const auto p = m.vertex(v);
    double dist = 0.0;
    for (int d = 0; d < 3; ++d) {
      dist += (p[d] - plane[d]) * plane[3 + d];
      extent = std::max(extent, std::abs(p[d] - plane[d]));
    }
    off_plane = std::max(off_plane, std::abs(dist));
  }
  double local[2] = {extent, off_plane}, global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, comm);
  if (global[1] > 1e-10 * global[0]) return;  // curved: in-plane stiffness carries normal loads
  int axis = -1;
  for (int d = 0; d < 3; ++d)
    if (std::abs(plane[3 + d]) > 1.0 - 1e-12) axis = d;
  long long free_vertices = 0;
  for (LocalIndex v = 0; v < lm.n_owned; ++v)
    if (axis < 0 || !prescribed.contains(3 * v + axis)) ++free_vertices;
  if (global_count(comm, free_vertices) == 0) return;
  const char* name = axis == 0 ? "x" : axis == 1 ? "y" : "z";
  throw InputError(where(job, 0, "analysis") +
                   "a flat membrane has no out-of-plane stiffness at rest, so this static solve would be singular: " +
                   (axis < 0
                        ? std::string("use analysis type dynamic (the membrane's plane is not normal to x, y or z)")
                        : std::string("fix the normal component on every vertex (boundary: - select: {all: true}, "
                                      "fix: [") +
                              name + "]) or use analysis type dynamic"));
}

/// The VolinoMaterial of a `model: volino` entry; curve files are read here. Throws InputError naming the key.
VolinoMaterial volino_material(const Job& job, const MaterialSpec& spec, const std::string& key) {
  const VolinoSpec& v = *spec.volino;
  VolinoMaterial m;
  m.thickness = spec.thickness;
  m.warp.direction = v.warp_direction;
  m.warp.angle = v.warp_angle_degrees * std::numbers::pi / 180.0;
  m.viscosity = {v.viscosity[0], 0, 0, 0, v.viscosity[1], 0, 0, 0, v.viscosity[2]};
  try {
    if (v.orthotropic) {
      const auto& o = *v.orthotropic;
      m.law = VolinoLaw::orthotropic(o[0], o[1], o[2], o[3]);
    } else if (v.curves) {
      std::array<StressCurve, 3> curves;
      const char* const modes[] = {"weft", "warp", "shear"};
      for (int k = 0; k < 3; ++k) {
        const CurveSpec& c = (*v.curves)[k];
        std::vector<CurvePoint> points;
        try {
          if (!c.file.empty())
            points = read_curve_csv(c.file);
          else
            for (const auto& p : c.points) points.push_back({p[0], p[1]});
          curves[k] = StressCurve(std::move(points), std::string(modes[k]) + " curve");
        } catch (const std::invalid_argument& e) {
          throw InputError(where(job, c.line, key + ".curves." + modes[k]) + e.what());
        }
      }
      m.law = VolinoLaw::curves(curves[0], curves[1], curves[2]);
    } else {
      m.law = VolinoLaw::isotropic(spec.young, spec.poisson);
    }
    check_volino_material(m);
  } catch (const std::invalid_argument& e) {
    throw InputError(where(job, spec.line, key) + e.what());
  }
  return m;
}

/// The geometric-term stabilisation of the volino materials (one for all of them).
VolinoStabilization volino_stabilization(const Job& job) {
  const MaterialSpec* first = nullptr;
  for (std::size_t m = 0; m < job.materials.size(); ++m) {
    const auto& spec = job.materials[m];
    if (!spec.volino) continue;
    if (first && first->volino->stabilization != spec.volino->stabilization)
      throw InputError(where(job, spec.line, "materials[" + std::to_string(m) + "].stabilization") +
                       "all volino materials need the same stabilization ('" +
                       std::string(to_string(first->volino->stabilization)) + "' before, '" +
                       std::string(to_string(spec.volino->stabilization)) + "' here)");
    if (!first) first = &spec;
  }
  return first ? first->volino->stabilization : VolinoStabilization::none;
}

/// The cells the model is made of on this rank: tetrahedra, or triangles (membranes) when the whole mesh has no
/// tetrahedra; and the facets tractions act on (a solid's triangles, a membrane's edges).
struct Cells {
  CellKind kind;
  int nodes;
  LocalIndex count;
  const std::vector<LocalIndex>& vertices;  ///< `nodes` per cell
  const std::vector<int>& region;
  int facet_nodes;
  const std::vector<LocalIndex>& facets;
  const std::vector<int>& facet_region;

  Cells(MPI_Comm comm, const Mesh& mesh)
      : kind(global_count(comm, mesh.n_tets()) > 0 ? CellKind::tetrahedron : CellKind::triangle),
        nodes(nodes_per_cell(kind)),
        count(kind == CellKind::tetrahedron ? mesh.n_tets() : mesh.n_triangles()),
        vertices(kind == CellKind::tetrahedron ? mesh.tets : mesh.triangles),
        region(kind == CellKind::tetrahedron ? mesh.tet_region : mesh.triangle_region),
        facet_nodes(nodes - 1),
        facets(kind == CellKind::tetrahedron ? mesh.triangles : mesh.lines),
        facet_region(kind == CellKind::tetrahedron ? mesh.triangle_region : mesh.line_region) {}
  [[nodiscard]] bool solid() const { return kind == CellKind::tetrahedron; }
};

/// The registry's models of one cell kind, as "a, b or c".
std::string models_of(CellKind kind) {
  return model_names_where([kind](const ModelInfo& m) { return m.cell == kind; }, " or ");
}

/// A solid model on a mesh without tetrahedra: most often a Gmsh file meshed in 2-D only (no -3). Said before the
/// regions disagree (the triangles carry the surface groups' tags).
void check_membrane_mesh_models(MPI_Comm comm, const Job& job, const Mesh& mesh) {
  for (std::size_t m = 0; m < job.materials.size(); ++m)
    if (job.materials[m].model->cell != CellKind::triangle)
      throw InputError(where(job, job.materials[m].line, "materials[" + std::to_string(m) + "].model") + "'" +
                       std::string(job.materials[m].model->name) + "' needs tetrahedra, but the mesh" +
                       (job.mesh_file ? " " + *job.mesh_file : std::string()) + " has only triangles (" +
                       std::to_string(global_count(comm, mesh.n_triangles())) +
                       ") and was read as a membrane; a solid needs a 3-D mesh (Gmsh: gmsh -3, or Mesh 3; in the "
                       ".geo file), a membrane a membrane model (" +
                       models_of(CellKind::triangle) + ")");
}

/// Per local cell, the index of its job.materials entry: every cell gets exactly one, every entry some cell
/// (collective; the same InputError on every rank).
std::vector<int> material_of_cells(MPI_Comm comm, const Job& job, const LocalMesh& lm, const Cells& cells) {
  std::vector<int> spec_of(static_cast<std::size_t>(cells.count), -1);
  std::vector<long long> spec_hits(job.materials.size(), 0);
  bool local_error = false;
  std::string error;
  for (LocalIndex t = 0; t < cells.count; ++t) {
    for (std::size_t m = 0; m < job.materials.size(); ++m) {
      const auto& spec = job.materials[m];
      if (spec.region && *spec.region != cells.region[t]) continue;
      if (spec_of[t] >= 0 && !local_error) {
        local_error = true;
        error = where(job, spec.line, "materials[" + std::to_string(m) + "]") + "region " +
                std::to_string(cells.region[t]) + " already has a material (materials[" + std::to_string(spec_of[t]) +
                "]); each cell needs exactly one";
      }
      spec_of[t] = static_cast<int>(m);
      ++spec_hits[m];
    }
    if (spec_of[t] < 0 && !local_error) {
      local_error = true;
      error = where(job, 0, "materials") + "no material for cells of region " + std::to_string(cells.region[t]) +
              " (add an entry with 'region: " + std::to_string(cells.region[t]) + "' or omit 'region')";
    }
  }
  if (agree_on_failure(comm, local_error, error)) throw InputError(error);
  for (std::size_t m = 0; m < job.materials.size(); ++m)
    if (global_count(comm, spec_hits[m]) == 0)
      throw InputError(where(job, job.materials[m].line, "materials[" + std::to_string(m) + "].region") + "region " +
                       std::to_string(job.materials[m].region.value_or(0)) +
                       " matches no cell of the mesh (regions in the mesh: " + mesh_regions(comm, lm) + ")");
  return spec_of;
}

/// The TetMaterial of a solid entry; warns (rank 0) about a nearly incompressible one.
TetMaterial tet_material(MPI_Comm comm, const Job& job, const MaterialSpec& spec, const std::string& key) {
  const VolumetricPenalty penalty = spec.volumetric_penalty ? spec.volumetric : VolumetricPenalty::none;
  try {
    if (spec.anisotropy) {
      const auto& a = *spec.anisotropy;
      return TetMaterial::transversely_isotropic(a.fibre, a.young_fibre, a.young_transverse, a.shear_fibre,
                                                 a.poisson_fibre, a.poisson_transverse, penalty);
    }
    TetMaterial material = TetMaterial::isotropic_material(spec.young, spec.poisson, penalty);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (spec.poisson > 0.49 && spec.poisson < 0.5 && rank == 0)  // valid, but the linear solver will crawl: say why
      std::fprintf(stderr,
                   "edgefem: warning: %s%g is nearly incompressible (lambda/mu = %.0f): the tangent's "
                   "condition number grows with lambda/mu, the Krylov solver needs many times the iterations "
                   "(and displacement-based tetrahedra lock). Prefer poisson <= 0.49 with the volumetric "
                   "penalty (volumetric: cubic | quadratic) to hold the volume, or on small meshes "
                   "solver: {linear: {preconditioner: direct}}\n",
                   where(job, spec.line, key + ".poisson").c_str(), spec.poisson,
                   2.0 * spec.poisson / (1.0 - 2.0 * spec.poisson));
    return material;
  } catch (const std::invalid_argument& e) {
    throw InputError(where(job, spec.line, key + (spec.anisotropy ? ".anisotropy" : "")) + e.what());
  }
}

/// One table entry per job.materials entry (the same on every rank, so that a bad entry fails everywhere alike):
/// TetMaterials for solids; MembraneMaterials and VolinoMaterials for membranes (both, so that cell_material
/// indexes either).
MaterialTables material_tables(MPI_Comm comm, const Job& job, CellKind kind) {
  MaterialTables tables;
  for (std::size_t m = 0; m < job.materials.size(); ++m) {
    const auto& spec = job.materials[m];
    const std::string key = "materials[" + std::to_string(m) + "]";
    if (spec.model->cell != kind)
      throw InputError(where(job, spec.line, key + ".model") + "'" + std::string(spec.model->name) + "' " +
                       (kind == CellKind::tetrahedron ? "is a membrane model, but the mesh has tetrahedra (use "
                                                      : "needs tetrahedra, but the mesh has only triangles (use ") +
                       models_of(kind) + ")");
    if (kind == CellKind::tetrahedron) {
      tables.tet.push_back(tet_material(comm, job, spec, key));
      continue;
    }
    MembraneMaterial material{spec.young, spec.poisson, spec.thickness};
    material.damping = spec.spring_damping;
    tables.membrane.push_back(material);
    tables.volino.push_back(spec.volino ? volino_material(job, spec, key) : VolinoMaterial{});
    if (spec.volino) continue;
    try {
      check_membrane_material(material);
    } catch (const std::invalid_argument& e) {
      throw InputError(where(job, spec.line, key) + e.what());
    }
  }
  if (kind == CellKind::triangle) tables.volino_stabilization = volino_stabilization(job);
  return tables;
}

/// One formulation per model present on this rank, over its cells (models in the order of their names).
void add_formulations(Model& model, const Job& job, const Mesh& mesh, const Cells& cells) {
  std::map<std::string_view, std::pair<const ModelInfo*, std::vector<LocalIndex>>> cells_of_model;
  for (LocalIndex t = 0; t < cells.count; ++t) {
    const ModelInfo* info = job.materials[static_cast<std::size_t>(model.cell_material[t])].model;
    auto& entry = cells_of_model[info->name];
    entry.first = info;
    entry.second.push_back(t);
  }
  const auto nodes = static_cast<std::ptrdiff_t>(cells.nodes);
  for (const auto& [name, entry] : cells_of_model) {
    const auto& [info, ids] = entry;
    model.formulation_cells.push_back(ids);
    std::vector<LocalIndex> own;
    std::vector<std::int32_t> material_of_cell;
    own.reserve(ids.size() * static_cast<std::size_t>(nodes));
    material_of_cell.reserve(ids.size());
    for (LocalIndex t : ids) {
      own.insert(own.end(), cells.vertices.begin() + nodes * t, cells.vertices.begin() + nodes * t + nodes);
      material_of_cell.push_back(model.cell_material[t]);
    }
    model.formulations.push_back(info->make({mesh.coords, own, material_of_cell, model.materials}));
  }
}

/// Bergou's isometric bending (materials/bending.hpp) on the hinge stencils of this rank (LocalMesh::hinges) whose
/// triangle's material has `bending`: one more formulation, "bending", with no cells of its own (its stiffness is
/// constant; the assembler adds it to the membrane's K).
void add_bending(Model& model, const Job& job, const LocalMesh& lm) {
  if (!any_bending(job)) return;
  if (!lm.has_hinges)
    throw std::logic_error(
        "build_model: the job has membrane bending but the mesh was distributed without its "
        "hinge stencils (distribute_mesh(..., hinges = any_bending(job)))");
  std::vector<LocalIndex> stencils;
  std::vector<double> stiffness;
  for (std::size_t h = 0; h < lm.hinge_cell.size(); ++h) {
    const double kb = job.materials[static_cast<std::size_t>(model.cell_material[lm.hinge_cell[h]])].bending_stiffness;
    if (kb <= 0.0) continue;
    stencils.insert(stencils.end(), lm.hinges.begin() + static_cast<std::ptrdiff_t>(4 * h),
                    lm.hinges.begin() + static_cast<std::ptrdiff_t>(4 * h + 4));
    stiffness.push_back(kb);
  }
  model.formulation_cells.emplace_back();
  model.formulations.push_back(make_bending(lm.mesh.coords, stencils, stiffness));
}

/// Dirichlet conditions on owned vertices (later entries override earlier ones per component), their schedules
/// and rotations, and each boundary entry's owned vertices. Returns the prescribed dofs.
std::map<LocalIndex, DirichletDof> add_boundary(MPI_Comm comm, const Job& job, const LocalMesh& lm, Model& model) {
  std::map<LocalIndex, DirichletDof> prescribed;
  for (std::size_t b = 0; b < job.boundary.size(); ++b) {
    const auto& bc = job.boundary[b];
    int schedule = 0;
    if (bc.schedule) {
      schedule = static_cast<int>(model.schedules.size());
      model.schedules.push_back(*bc.schedule);
    }
    int rotation = -1;
    if (bc.rotate) {
      rotation = static_cast<int>(model.rotations.size());
      model.rotations.push_back({bc.rotate->axis, bc.rotate->center,
                                 bc.rotate->angle_degrees * std::numbers::pi / 180.0});
    }
    long long hits = 0;
    auto& selected = model.boundary_vertices.emplace_back();
    const std::string key = "boundary[" + std::to_string(b) + "].select";
    for (const LocalIndex v : selected_vertices(comm, lm, bc.select, key, model.notes)) {
      ++hits;
      selected.push_back(v);
      for (int c = 0; c < 3; ++c) {
        const LocalIndex dof = 3 * v + c;
        if (bc.fix[c]) prescribed[dof] = {dof, 0.0, -1, 0};
        if (bc.displace[c]) prescribed[dof] = {dof, *bc.displace[c], -1, schedule};
        if (bc.rotate && bc.rotate->components[c]) prescribed[dof] = {dof, 0.0, rotation, schedule};
      }
    }
    if (global_count(comm, hits) == 0)
      throw InputError(where(job, bc.select.line, "boundary[" + std::to_string(b) + "].select") +
                       "selects no vertex of the mesh" + region_hint(comm, lm, bc.select));
  }
  for (const auto& [dof, d] : prescribed) model.dirichlet.push_back(d);
  return prescribed;
}

/// Lumped mass and gravity: an equal share of each cell's mass (weight) per vertex, into load group 0.
void add_mass_and_gravity(Model& model, const Job& job, const Cells& cells) {
  std::vector<double>& external_force = model.loads[0].force;
  const auto& g = job.loads.gravity;
  for (LocalIndex t = 0; t < cells.count; ++t) {
    const LocalIndex* v = cells.vertices.data() + cells.nodes * static_cast<std::size_t>(t);
    const double w = model.cell_mass[t] / cells.nodes;
    for (int k = 0; k < cells.nodes; ++k) {
      model.lumped_mass[static_cast<std::size_t>(v[k])] += w;
      for (int d = 0; d < 3; ++d) external_force[3 * static_cast<std::size_t>(v[k]) + d] += w * g[d];
    }
  }
}

/// Tractions: an equal share of each selected boundary facet's nominal force (triangles of a solid, per unit area;
/// edges of a membrane, per unit length) per vertex; a traction with its own schedule gets its own load group.
void add_tractions(MPI_Comm comm, Model& model, const Job& job, const LocalMesh& lm, const Cells& cells) {
  const Mesh& mesh = lm.mesh;
  const int facet_nodes = cells.facet_nodes;
  const LocalIndex n_facets = static_cast<LocalIndex>(cells.facets.size() / facet_nodes);
  for (std::size_t i = 0; i < job.loads.tractions.size(); ++i) {
    const auto& tr = job.loads.tractions[i];
    std::vector<double>* target = &model.loads[0].force;
    if (tr.schedule) {
      model.schedules.push_back(*tr.schedule);
      model.loads.push_back({static_cast<int>(model.schedules.size()) - 1,
                             std::vector<double>(3 * static_cast<std::size_t>(mesh.n_vertices()), 0.0)});
      target = &model.loads.back().force;
    }
    long long hits = 0;
    for (LocalIndex f = 0; f < n_facets; ++f) {
      const LocalIndex* v = cells.facets.data() + facet_nodes * static_cast<std::size_t>(f);
      bool take = false;
      switch (tr.select.kind) {
        case Selection::Kind::all: take = true; break;
        case Selection::Kind::region: take = cells.facet_region[f] == tr.select.region; break;
        case Selection::Kind::points:
          throw InputError(where(job, tr.select.line, "loads.tractions[" + std::to_string(i) + "].select") +
                           "a point selection picks vertices; a traction needs faces (region, box or all)");
        case Selection::Kind::box:
          take = true;
          for (int k = 0; k < facet_nodes; ++k)
            take = take && in_box(tr.select, mesh.coords.data() + 3 * static_cast<std::size_t>(v[k]));
          break;
      }
      if (!take) continue;
      ++hits;
      const auto p0 = mesh.vertex(v[0]), p1 = mesh.vertex(v[1]);
      double a[3], measure = 0.0;
      for (int d = 0; d < 3; ++d) a[d] = p1[d] - p0[d];
      if (cells.solid()) {
        const auto p2 = mesh.vertex(v[2]);
        double b[3];
        for (int d = 0; d < 3; ++d) b[d] = p2[d] - p0[d];
        const double cx = a[1] * b[2] - a[2] * b[1], cy = a[2] * b[0] - a[0] * b[2], cz = a[0] * b[1] - a[1] * b[0];
        measure = 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
      } else {
        measure = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
      }
      for (int k = 0; k < facet_nodes; ++k)
        for (int d = 0; d < 3; ++d)
          (*target)[3 * static_cast<std::size_t>(v[k]) + d] += measure / facet_nodes * tr.traction[d];
    }
    if (global_count(comm, hits) == 0)
      throw InputError(where(job, tr.select.line, "loads.tractions[" + std::to_string(i) + "].select") +
                       (cells.solid() ? "selects no boundary face of the mesh"
                                      : "selects no boundary edge of the mesh") +
                       region_hint(comm, lm, tr.select));
  }
}

void add_attachments(MPI_Comm comm, Model& model, const Job& job, const LocalMesh& lm) {
  for (std::size_t i = 0; i < job.attachments.size(); ++i) {
    Attachment a{job.attachments[i], {}};
    a.vertices = selected_vertices(comm, lm, a.spec.select, "attachments[" + std::to_string(i) + "].select",
                                   model.notes);
    if (global_count(comm, static_cast<long long>(a.vertices.size())) == 0)
      throw InputError(where(job, a.spec.select.line, "attachments[" + std::to_string(i) + "].select") +
                       "selects no vertex of the mesh" + region_hint(comm, lm, a.spec.select));
    model.attachments.push_back(std::move(a));
  }
}

}  // namespace

double prescribed_position(const Model& model, const DirichletDof& d, std::span<const double> reference, double t) {
  const double s = model.schedules[static_cast<std::size_t>(d.schedule)](t);
  if (d.rotation < 0) return reference[d.dof] + s * d.displacement;
  // Rodrigues: R v = v cos(a) + (k x v) sin(a) + k (k . v) (1 - cos(a)).
  const Rotation& r = model.rotations[d.rotation];
  const std::size_t v0 = 3 * static_cast<std::size_t>(d.dof / 3);
  const int c = d.dof % 3;
  double p[3];
  for (int i = 0; i < 3; ++i) p[i] = reference[v0 + i] - r.center[i];
  const double a = s * r.angle, cs = std::cos(a), sn = std::sin(a);
  const double kp = r.axis[0] * p[0] + r.axis[1] * p[1] + r.axis[2] * p[2];
  const double kxp[3] = {r.axis[1] * p[2] - r.axis[2] * p[1], r.axis[2] * p[0] - r.axis[0] * p[2],
                         r.axis[0] * p[1] - r.axis[1] * p[0]};
  return r.center[c] + p[c] * cs + kxp[c] * sn + r.axis[c] * kp * (1.0 - cs);
}

void add_attachment_terms(const Model& model, std::span<const double> reference, double t, std::span<const double> x,
                          std::span<const double> v, double dv_dx, std::span<double> r, std::span<double> diag) {
  for (const auto& a : model.attachments) {
    const auto d = a.spec.displacement(t);
    const auto rate = a.spec.rate(t);
    const double k = a.spec.stiffness, c = v.empty() ? 0.0 : a.spec.damping;
    for (const LocalIndex vertex : a.vertices)
      for (int i = 0; i < 3; ++i) {
        const std::size_t dof = 3 * static_cast<std::size_t>(vertex) + i;
        if (!r.empty()) {
          r[dof] += k * (x[dof] - reference[dof] - d[i]);
          if (c != 0.0) r[dof] += c * (v[dof] - rate[i]);
        }
        if (!diag.empty()) diag[dof] += k + c * dv_dx;
      }
  }
}

double attachment_energy(const Model& model, std::span<const double> reference, double t, std::span<const double> x) {
  double e = 0.0;
  for (const auto& a : model.attachments) {
    const auto d = a.spec.displacement(t);
    for (const LocalIndex vertex : a.vertices)
      for (int i = 0; i < 3; ++i) {
        const std::size_t dof = 3 * static_cast<std::size_t>(vertex) + i;
        const double s = x[dof] - reference[dof] - d[i];
        e += 0.5 * a.spec.stiffness * s * s;
      }
  }
  return e;
}

bool in_box(const Selection& s, const double* x) {
  for (int d = 0; d < 3; ++d)
    if (x[d] < s.lo[d] || x[d] > s.hi[d]) return false;
  return true;
}

Model build_supports(MPI_Comm comm, const Job& job, const LocalMesh& lm) {
  Model model;
  model.schedules.resize(2);  // (the defaults' places: add_boundary numbers its own schedules after them)
  add_boundary(comm, job, lm, model);
  add_attachments(comm, model, job, lm);
  setup_laps::mark(setup_laps::Phase::model_loads);
  return model;
}

Model build_model(MPI_Comm comm, const Job& job, const LocalMesh& lm) {
  Model model;
  const Mesh& mesh = lm.mesh;
  const Cells cells(comm, mesh);
  model.cell_kind = cells.kind;
  model.nodes_per_cell = cells.nodes;
  if (!cells.solid()) check_membrane_mesh_models(comm, job, mesh);

  // Materials: every cell gets exactly one job.materials entry; a table entry per job.materials entry.
  const std::vector<int> spec_of = material_of_cells(comm, job, lm, cells);
  model.materials = material_tables(comm, job, cells.kind);
  for (const auto& spec : job.materials) model.material_model.push_back(spec.model);
  model.cell_material.resize(static_cast<std::size_t>(cells.count));
  model.cell_mass.resize(static_cast<std::size_t>(cells.count));
  for (LocalIndex t = 0; t < cells.count; ++t) {
    const auto& spec = job.materials[spec_of[t]];
    model.cell_material[t] = static_cast<std::int32_t>(spec_of[t]);
    model.cell_mass[t] = spec.density * (cells.solid() ? mesh.tet_volume(t) : spec.thickness * mesh.triangle_area(t));
  }
  setup_laps::mark(setup_laps::Phase::model_cells);
  // The frame model integrates its own samples (frames/frame_space.hpp): no tet formulation is needed.
  if (job.discretization.type != DiscretizationType::frames) add_formulations(model, job, mesh, cells);
  if (!cells.solid()) add_bending(model, job, lm);
  setup_laps::mark(setup_laps::Phase::kernel_data);  // (the topology's own lap is marked where it is built)

  // Schedules: [0] prescribed displacements without their own (static: the load factor; dynamic: a ramp over
  // the run), [1] loads without their own (static: the load factor; dynamic: constant 1).
  const bool dynamic = job.analysis_type == AnalysisType::dynamics && job.dynamic;
  model.consistent_mass = dynamic && job.dynamic->mass == MassMatrix::consistent;
  model.schedules.push_back(Schedule{{{0.0, 0.0}, {dynamic ? job.dynamic->end_time : 1.0, 1.0}}, 0});
  model.schedules.push_back(dynamic ? Schedule{{{0.0, 1.0}}, 0} : Schedule{{{0.0, 0.0}, {1.0, 1.0}}, 0});

  const std::map<LocalIndex, DirichletDof> prescribed = add_boundary(comm, job, lm, model);
  if (!cells.solid() && !dynamic) check_flat_membrane_is_held(comm, job, lm, prescribed);

  // Load group 0 (gravity and the tractions without their own schedule) follows the default load schedule.
  const auto n_local = static_cast<std::size_t>(mesh.n_vertices());
  model.loads.push_back({1, std::vector<double>(3 * n_local, 0.0)});
  model.lumped_mass.assign(n_local, 0.0);
  add_mass_and_gravity(model, job, cells);
  add_tractions(comm, model, job, lm, cells);
  add_attachments(comm, model, job, lm);
  return model;
}

}  // namespace edgefem
