// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_contact.hpp
/// Contact of the position-based integrator with the job's obstacles (issue 48; Bender et al.'s Algorithm 1 line 11):
/// after every constraint sweep each candidate (an owned boundary vertex, none of its components prescribed) found
/// inside an obstacle is projected onto its surface along the obstacle's normal (an inequality constraint of zero
/// compliance against a rigid, infinitely heavy body: the whole correction is the vertex's), and friction is
/// Macklin et al.'s position-level Coulomb friction (2014, §6.1): the tangential part of the vertex's move over the
/// step, relative to the obstacle's, is removed when it is below mu times the penetration depth (static friction)
/// and cut by that much otherwise (kinetic). The last operation of every sweep, so a step's final positions have no
/// vertex inside an obstacle. The geometry is contact/'s; the obstacles are replicated (solver/obstacles.hpp).
#include <mpi.h>
#include <petscvec.h>

#include <memory>
#include <vector>

#include "contact/obstacle.hpp"
#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/contact.hpp"
#include "solver/model.hpp"

namespace edgefem {

class PbdContact {
 public:
  /// Collective: the obstacles and the candidates (`work`: a ghosted vector of the sweep's layout).
  PbdContact(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model, Vec work);
  /// A step from time t0 to t1: the obstacles placed at t1, their moves over the step kept for friction.
  void begin_step(double t0, double t1);
  /// Projects the candidates of x (owned entries) out of the obstacles, with friction against the step's start x_n.
  /// Returns how many were projected. Local (the caller updates the ghosts).
  long long project(Vec x, Vec x_n);
  /// The step's report at x (smallest gap, contacts within `touch` of an obstacle, penetration). Collective.
  ContactStepReport report(Vec x, double touch);
  /// Each local vertex's smallest signed distance to an obstacle (`x_local`: 3 per local vertex). Local.
  [[nodiscard]] std::vector<double> gaps(std::span<const double> x_local) const;

 private:
  MPI_Comm comm_;
  const Job& job_;
  std::vector<std::unique_ptr<contact::Obstacle>> obstacles_;
  std::vector<std::int32_t> candidates_;
  std::vector<double> moves_;  ///< 3 per obstacle: its translation over the current step
};

}  // namespace edgefem
