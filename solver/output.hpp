#pragma once
/// \file output.hpp
/// Results of a distributed run as a ParaView time series:
///   DIR/solution.pvd -> DIR/step_NNNN.pvtu -> DIR/step_NNNN/piece_RRRRR.vtu (one piece per rank).
/// Points are reference coordinates; point data: displacement, velocity (dynamic), force (internal force summed over ranks,
/// which is the reaction force at prescribed dofs); cell data: green_strain and stress (2nd Piola-
/// Kirchhoff, 3x3), von_mises (of the Cauchy stress), rank, region.
#include <mpi.h>

#include <optional>
#include <span>
#include <string>

#include "io/vtk_output.hpp"
#include "partition/partition.hpp"
#include "solver/model.hpp"

namespace edgefem {

class ResultWriter {
 public:
  /// Collective. Creates DIR (rank 0) if needed. With `resume_after` (a restart), the existing
  /// DIR/solution.pvd is read and its steps after that time are dropped.
  ResultWriter(MPI_Comm comm, std::string directory, const LocalMesh& mesh, const Model& model,
               std::optional<double> resume_after = std::nullopt);

  /// Collective. positions, force and (dynamic runs) velocity: 3 per local vertex (ghosts up to date).
  void write(long long step, double time, std::span<const double> positions, std::span<const double> force,
             std::span<const double> velocity = {});

  [[nodiscard]] const std::string& pvd_path() const { return pvd_.path(); }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::string directory_;
  const LocalMesh& mesh_;
  const Model& model_;
  PvdCollection pvd_;
};

}  // namespace edgefem
