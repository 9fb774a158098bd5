// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file free_body.hpp
/// A static problem must hold every connected part of its mesh against every rigid motion: a part that no fixed or
/// displaced component and no attachment holds, or that they hold in some directions only (a face held in x still
/// slides in y and z and turns about x; one pinned vertex still lets the part turn about it), has a singular
/// stiffness and no equilibrium: Newton then reports garbage as converged. check_static_support refuses such a job
/// before it is solved, naming each free part (its regions, vertex count and bounding box), the motions left and what
/// would hold it. Dynamic analyses may move freely (only analysis.initial_state static solves a static problem).
///
/// The test is exact for the linearized rigid motions u(x) = t + w x (x - c): a held component d of vertex x is the
/// row [e_d, (x - c) x e_d] of a 6-column constraint matrix. The rows of one direction span what the affine hull of
/// its held vertices spans, so each direction is reduced to its held vertices' count, centroid and covariance (summed
/// over the ranks), and to at most 4 points spanning that hull; the motions left are the null space of those (at most
/// 12) rows.
#include <mpi.h>

#include <array>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// The held components of one part, per direction d (x, y, z): 10 numbers each, the count of held vertices, the sum
/// of their r = (x - c) / L and the sum of r r^T (xx, xy, xz, yy, yz, zz); c and L are the part's box centre and
/// diagonal (so |r| <= 1/2). Summed over the ranks as plain doubles.
struct HeldMoments {
  std::array<double, 30> m{};
  void add(int direction, const std::array<double, 3>& r);
};

/// A rigid motion the held components leave free: a translation along `direction`, or a rotation about the axis
/// along `direction` through `point` (in the scaled coordinates r).
struct FreeMotion {
  bool rotation = false;
  std::array<double, 3> direction{}, point{};
};

/// Pure: the rigid motions `held` does not remove (an empty list: held against every rigid motion). A part held
/// nowhere has the 3 translations and 3 rotations about its centre.
std::vector<FreeMotion> free_rigid_motions(const HeldMoments& held);

/// Whether the job solves a static problem: analysis.type static, or a dynamic one's initial_state static.
bool solves_static_problem(const Job& job);

/// Pure: whether rows with the Gram matrix `contact` (6 x 6, row-major: the sum of the contact rows' outer products,
/// in HeldMoments' scaled coordinates) remove every rigid motion `held` leaves free.
bool contact_removes_free_motions(const HeldMoments& held, const std::array<double, 36>& contact);

/// Collective: throws InputError on every rank when solves_static_problem(job) and a connected part of the mesh is
/// free to move and not held by the job's obstacles (see above): the message names each such part and what would
/// hold it.
void check_static_support(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model);

}  // namespace edgefem
