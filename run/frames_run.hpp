// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file frames_run.hpp
/// A run of the frame-based model (`discretization: {type: frames}`, frames/frames_solver.hpp), static or dynamic:
/// the skinned mesh as the usual PVTU series (force 0: the frame model has no vertex forces) and the frames as
/// DIR/frames.pvd -> DIR/frames_NNNN.vtp, then the summary lines.
#include "io/job.hpp"
#include "io/summary.hpp"
#include "partition/partition.hpp"
#include "run/report.hpp"
#include "run/run_options.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// Collective (PETSC_COMM_WORLD). `clock`: the phases so far (its set-up becomes the model's and the frames');
/// `summary`: filled as the run goes. Returns the exit code (0).
int run_frames(const RunOptions& options, const Job& job, const LocalMesh& mesh, const Model& model, PhaseClock& clock,
               RunSummary& summary);

}  // namespace edgefem
