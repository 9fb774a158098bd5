#pragma once
/// \file model.hpp
/// What a job means on one rank: the formulations of its own cells, the Dirichlet conditions on its
/// owned vertices and the external forces (gravity, nominal tractions) of its own cells and facets.
/// Vertex and dof indices here are local (owned first, then ghosts); no PETSc.
#include <mpi.h>

#include <cstdint>
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "io/job.hpp"
#include "materials/formulation.hpp"
#include "partition/partition.hpp"

namespace edgefem {

/// A prescribed component: local dof 3*v+c of an owned vertex, x = X + load_factor * displacement.
/// A prescribed component: local dof 3*v+c of an owned vertex. Its position at load factor s is
/// X + s * displacement, or (rotation >= 0) the component of the rotated reference position
/// center + R(s * angle) (X - center).
struct DirichletDof {
  LocalIndex dof = 0;
  double displacement = 0.0;
  int rotation = -1;  ///< index into Model::rotations, or -1
};

/// A rigid rotation about the axis through `center` (unit `axis`), by `angle` radians at load factor 1.
struct Rotation {
  std::array<double, 3> axis{}, center{};
  double angle = 0.0;
};

struct Model {
  std::vector<std::unique_ptr<TetFormulation>> formulations;  ///< one per model present on this rank
  std::vector<TetMaterial> material_table;                    ///< one per job.materials entry
  std::vector<std::int32_t> cell_material;                    ///< per local tet: index into material_table
  std::vector<double> cell_density;                           ///< per local tet
  std::vector<DirichletDof> dirichlet;                        ///< sorted by dof, each dof once
  std::vector<Rotation> rotations;                            ///< referred to by DirichletDof::rotation
  std::vector<double> external_force;                         ///< 3 per local vertex, at load factor 1 (unsummed partial)
};

/// The prescribed position of dof d at load factor s; reference = 3 reference coordinates per local vertex.
double prescribed_position(const Model& model, const DirichletDof& d, std::span<const double> reference, double s);

/// Build the model for this rank. Collective (selections that match nothing anywhere are errors).
/// Throws InputError naming the job key (e.g. "boundary[1].select") on inconsistent input.
Model build_model(MPI_Comm comm, const Job& job, const LocalMesh& mesh);

/// True when the point lies in the closed box [lo, hi] of the selection (Kind::box only).
bool in_box(const Selection& s, const double* x);

}  // namespace edgefem
