// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file model.hpp
/// What a job means on one rank: the formulations of its own cells, the Dirichlet conditions on its
/// owned vertices and the external forces (gravity, nominal tractions) of its own cells and facets.
/// Vertex and dof indices here are local (owned first, then ghosts); no PETSc.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "materials/formulation.hpp"
#include "materials/registry.hpp"
#include "partition/partition.hpp"

namespace edgefem {

/// A prescribed component: local dof 3*v+c of an owned vertex. At time t (the load factor in a static
/// analysis) its factor is s = Model::schedules[schedule](t) and its position X + s * displacement, or
/// (rotation >= 0) the component of the rotated reference position center + R(s * angle) (X - center).
struct DirichletDof {
  LocalIndex dof = 0;
  double displacement = 0.0;
  int rotation = -1;  ///< index into Model::rotations, or -1
  int schedule = 0;   ///< index into Model::schedules
};

/// A rigid rotation about the axis through `center` (unit `axis`), by `angle` radians at load factor 1.
struct Rotation {
  std::array<double, 3> axis{}, center{};
  double angle = 0.0;
};

/// External forces that follow one schedule: force(t) = schedules[schedule](t) * force.
struct LoadGroup {
  int schedule = 0;
  std::vector<double> force;  ///< 3 per local vertex, this rank's cells only (unsummed partial)
};

/// The owned vertices of one job.attachments entry (penalty springs and dampers to moving anchors).
struct Attachment {
  AttachmentSpec spec;
  std::vector<LocalIndex> vertices;  ///< owned local vertices
};

struct Model {
  std::vector<std::unique_ptr<TetFormulation>> formulations;  ///< one per model present on this rank
  CellKind cell_kind = CellKind::tetrahedron;                 ///< tetrahedra, or triangles (membranes)
  int nodes_per_cell = 4;                                     ///< nodes_per_cell(cell_kind)
  MaterialTables materials;                                   ///< one entry per job.materials entry
  std::vector<const ModelInfo*> material_model;               ///< per job.materials entry: its model
  std::vector<std::int32_t> cell_material;                    ///< per local cell: index into the material table
  std::vector<double> cell_mass;                              ///< per local cell: density * volume (* thickness)
  std::vector<DirichletDof> dirichlet;                        ///< sorted by dof, each dof once
  std::vector<Rotation> rotations;                            ///< referred to by DirichletDof::rotation
  std::vector<std::vector<LocalIndex>> boundary_vertices;     ///< per job.boundary entry: its owned vertices
  std::vector<Schedule> schedules;                            ///< [0] = default for Dirichlet, [1] = default for loads
  std::vector<LoadGroup> loads;                               ///< gravity + tractions, grouped by schedule
  std::vector<Attachment> attachments;
  std::vector<std::vector<LocalIndex>> formulation_cells;  ///< per formulation: its local cells
  std::vector<double> lumped_mass;                         ///< per local vertex: share of own cells' mass (unsummed)
  bool consistent_mass = false;                            ///< job: analysis.mass = consistent
  /// Lines for the run's header, the same on every rank: the vertex each point selection picked and its distance.
  std::vector<std::string> notes;
};

/// The prescribed position of dof d at time t (static: the load factor); reference = 3 reference coordinates
/// per local vertex.
double prescribed_position(const Model& model, const DirichletDof& d, std::span<const double> reference, double t);

/// Build the model for this rank. Collective (selections that match nothing anywhere are errors).
/// Throws InputError naming the job key (e.g. "boundary[1].select") on inconsistent input.
Model build_model(MPI_Comm comm, const Job& job, const LocalMesh& mesh);

/// The supports alone: `dirichlet`, `rotations`, `boundary_vertices` and `attachments` as build_model makes them,
/// without the formulations, masses or loads (cheap: the checks made before the model is built, such as
/// solver/free_body.hpp's). Collective; throws build_model's InputErrors for selections that match nothing.
Model build_supports(MPI_Comm comm, const Job& job, const LocalMesh& mesh);

/// Penalty attachments at time t (static: the load factor) on this rank's owned vertices. x and v: 3 per owned
/// vertex (v empty = no damper, as in a static analysis). Adds k (x - a(t)) + c (v - a'(t)) (the negative of
/// their force) to r when r is not empty, and k + c * dv_dx (the derivative of that term with respect to x,
/// when dv/dx = dv_dx I) to diag when diag is not empty. reference: 3 per local vertex.
void add_attachment_terms(const Model& model, std::span<const double> reference, double t, std::span<const double> x,
                          std::span<const double> v, double dv_dx, std::span<double> r, std::span<double> diag);

/// Spring energy sum k |x - a(t)|^2 / 2 of the attachments on this rank's owned vertices (not summed).
double attachment_energy(const Model& model, std::span<const double> reference, double t, std::span<const double> x);

/// True when the point lies in the closed box [lo, hi] of the selection (Kind::box only).
bool in_box(const Selection& s, const double* x);

}  // namespace edgefem
