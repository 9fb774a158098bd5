// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file output.hpp
/// Results of a distributed run as a ParaView time series, `output: {format}`:
///   vtu:  DIR/solution.pvd -> DIR/step_NNNN.pvtu -> DIR/step_NNNN/piece_RRRRR.vtu (one piece per rank);
///   xdmf: DIR/solution.xdmf -> DIR/solution.h5 (io/xdmf_output.hpp: parallel HDF5, the mesh once).
/// `output: {fields}` chooses the arrays written (all by default).
/// Points are reference coordinates; point data: displacement, velocity (dynamic), force (internal force summed over ranks,
/// which is the reaction force at prescribed dofs); cell data: green_strain and stress (2nd Piola-
/// Kirchhoff, 3x3), von_mises (of the Cauchy stress), rank, region.
#include <mpi.h>

#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "io/summary.hpp"
#include "io/vtk_output.hpp"
#include "io/xdmf_output.hpp"
#include "partition/partition.hpp"
#include "solver/contact.hpp"
#include "solver/model.hpp"

namespace edgefem {

class ResultWriter {
 public:
  /// Collective. Creates DIR (rank 0) if needed. With `resume_after` (a restart), the existing series
  /// (DIR/solution.pvd, or DIR/solution.h5 for xdmf) is read and its steps after that time are dropped.
  ResultWriter(MPI_Comm comm, std::string directory, const LocalMesh& mesh, const Model& model,
               const OutputSpec& spec = {}, std::optional<double> resume_after = std::nullopt);

  /// Waits for a step's piece still being written (no collective call: also on a failure path).
  ~ResultWriter();
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  /// A cell scalar (one value per local cell, LocalMesh order) for the next write() only, e.g. plastic_strain.
  void add_cell_scalar(std::string name, std::vector<double> values) {
    extra_cells_.push_back(DataArray{std::move(name), 1, std::move(values), {}, false});
  }
  /// A point field (`components` values per local vertex, ghosts up to date) for the next write() only, e.g.
  /// contact_gap and contact_force.
  void add_point_field(std::string name, int components, std::vector<double> values) {
    extra_points_.push_back(DataArray{std::move(name), components, std::move(values), {}, false});
  }
  /// Collective. positions, force and (dynamic runs) velocity: 3 per local vertex (ghosts up to date). xdmf:
  /// XdmfSeries::write_step (this rank's slabs written on a thread, the step before listed). vtu: computes
  /// the step's piece and writes it on a thread of its own (temporary file, fsync, rename: most of a step's output
  /// time is the disk's) while the run goes on; the next write() or finish() waits for it and only then lists the
  /// step in the .pvtu and the .pvd, so a listed step is always whole on disk.
  void write(long long step, double time, std::span<const double> positions, std::span<const double> force,
             std::span<const double> velocity = {});
  /// Collective. Waits for the last write()'s piece on every rank and lists its step (a no-op when none is pending);
  /// xdmf: and for the .xdmf's rewrite (XdmfSeries::wait_listed).
  /// Throws CollectiveError on every rank when some rank's piece could not be written. Call it before a
  /// checkpoint (a checkpointed step's output is listed) and at the end of the run.
  void finish();

  /// Bytes of the piece a thread is still writing (its arrays are freed as soon as it is written), 0 when none.
  [[nodiscard]] std::size_t pending_bytes() const;
  /// The series file ParaView opens: DIR/solution.pvd (vtu) or DIR/solution.xdmf (xdmf).
  [[nodiscard]] const std::string& series_path() const { return xdmf_ ? xdmf_->xdmf_path() : pvd_.path(); }
  /// This rank's output time per phase so far (io/output_timing.hpp): `arrays` (the step's fields), then the
  /// format's own phases; those of the writer thread are named writer_*. For summary.json's output_split.
  [[nodiscard]] OutputTimes times() const;
  /// The steps written so far.
  [[nodiscard]] long long written_steps() const { return written_steps_; }
  [[nodiscard]] const char* format_name() const { return xdmf_ ? "xdmf" : "vtu"; }

 private:
  /// finish() without the wait for the .xdmf's rewrite (write(): the next step's listing waits for it).
  void list_pending();
  /// `output: {fields}` lists the array (or lists nothing: all are written).
  [[nodiscard]] bool wanted(const std::string& field) const;
  /// The step's arrays (only the wanted ones).
  VtuPiece make_piece(std::span<const double> positions, std::span<const double> force, std::span<const double> velocity);
  /// green_strain, stress, von_mises and (tets) volume_ratio of every local cell.
  void add_cell_tensors(std::span<const double> positions, VtuPiece& piece) const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::string directory_;
  const LocalMesh& mesh_;
  const Model& model_;
  OutputSpec spec_;
  PvdCollection pvd_;
  std::unique_ptr<XdmfSeries> xdmf_;    ///< format: xdmf
  std::vector<DataArray> extra_cells_;   ///< add_cell_scalar's, for the next write()
  std::vector<DataArray> extra_points_;  ///< add_point_field's, for the next write()
  /// The point data of a write(): displacement, force, velocity (dynamic) and add_point_field's (taken).
  std::vector<DataArray> point_arrays(std::span<const double> positions, std::span<const double> force,
                                      std::span<const double> velocity);
  /// The step whose piece a thread is writing: its piece's write, and what finish() lists.
  std::future<OutputTimes> pending_;
  OutputTimes times_;
  long long written_steps_ = 0;
  std::string pending_name_;  ///< step_NNNNNN
  double pending_time_ = 0;
  VtuPiece pending_layout_;  ///< the piece's array names and sizes (no values), for the .pvtu
  std::size_t pending_bytes_ = 0;  ///< the pending piece's arrays
};

/// summary.output_split from the writer's times (rank 0's).
void record_output_split(RunSummary& summary, const ResultWriter& writer);

/// A CSV file that rank 0 appends one row at a time to (flushed after each row). It starts with `header`; with
/// `keep_until_step` (a restart) the rows of an existing file whose first column (the step) is at most that step
/// and that have the header's number of columns are kept, the rest dropped; otherwise the file is replaced.
/// Collective construction.
class CsvLog {
 public:
  CsvLog(MPI_Comm comm, std::string path, const std::string& header, std::optional<long long> keep_until_step);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;
  /// Rank 0 appends `line` (no newline needed); other ranks ignore it.
  void row(const std::string& line);
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

/// Per boundary entry (job.boundary[b]), the total internal force on its selected vertices, summed over ranks:
/// the reaction force in a static equilibrium (e.g. the force of a tensile test). Appended to DIR/reactions.csv
/// (`step,time,boundary,fx,fy,fz`) at every recorded step. With obstacles, each step's rows go on with one row per
/// obstacle whose `boundary` column is `obstacle:NAME`: the force the obstacle exerts on the body (normal and
/// friction; like a boundary row, the support's force on the body; the body's force on the obstacle is its negative).
/// Without `boundary_rows` (the frame model, which has no vertex forces), the obstacles' rows alone.
class ReactionLog {
 public:
  ReactionLog(MPI_Comm comm, const std::string& directory, const Model& model,
              std::optional<long long> keep_until_step = std::nullopt,
              std::vector<std::string> obstacle_names = {}, bool boundary_rows = true);
  /// Collective. force: the internal force of every local vertex (ghosts up to date or not; owned are used; ignored
  /// without boundary rows). obstacle_force: 3 per obstacle, already summed over the ranks (empty without obstacles).
  void record(long long step, double time, std::span<const double> force,
              std::span<const double> obstacle_force = {});
  /// The sums of the last record(), 3 per boundary entry.
  [[nodiscard]] const std::vector<double>& last() const { return last_; }
  /// The obstacles' forces of the last record(), 3 per obstacle, and their names.
  [[nodiscard]] const std::vector<double>& last_obstacles() const { return last_obstacles_; }
  [[nodiscard]] const std::vector<std::string>& obstacle_names() const { return obstacle_names_; }

 private:
  /// The rows obstacle:NAME.
  void record_obstacles(long long step, double time, std::span<const double> obstacle_force);

  MPI_Comm comm_;
  const Model& model_;
  CsvLog csv_;
  std::vector<double> last_;
  std::vector<std::string> obstacle_names_;
  std::vector<double> last_obstacles_;
  bool boundary_rows_ = true;  ///< false: the obstacles' rows alone (frames: no vertex forces)
};

/// The job's obstacles' names (ReactionLog's rows).
std::vector<std::string> obstacle_names(const Job& job);

/// contact_gap (each local vertex's smallest signed distance to an obstacle) and contact_force (3) at the global
/// state x for the next write(); `x_local`: 3 per local vertex, ghosts up to date. Collective.
void add_contact_fields(ResultWriter& writer, ContactTerms& contact, Vec x, std::span<const double> x_local);
/// The same fields given (1 and 3 values per local vertex): every solver's (tets, frames) names and layout.
void add_contact_fields(ResultWriter& writer, std::vector<double> gap, std::vector<double> force);

}  // namespace edgefem
