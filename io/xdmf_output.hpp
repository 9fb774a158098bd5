// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file xdmf_output.hpp
/// Results as one XDMF3 + HDF5 series (`output: {format: xdmf}`): DIR/solution.h5 holds the mesh once and every
/// written step's fields; DIR/solution.xdmf (rewritten atomically after every step) lists the complete steps.
/// Written through parallel HDF5 (MPI-IO) in the partition's order: rank r's owned vertices are the rows
/// [first_owned, first_owned + n_owned) of every point array (the PETSc numbering, LocalMesh::global_vertex) and its
/// cells the rows [sum of the cells of the ranks before, + its cells) of every cell array, so each rank writes its
/// own contiguous slab of every array with no exchange between the ranks. /Mesh/original_vertex and
/// /Mesh/original_cell give each row's number in the mesh file (the .msh or the generated box).
///
/// The file (h5dump -n solution.h5):
///   /Mesh/geometry   N_vertices x 3 float64, the reference coordinates
///   /Mesh/topology   N_cells x nodes_per_cell int32 (int64 from 2^31 vertices on), 0-based rows of geometry
///   /Mesh/original_vertex, /Mesh/original_cell   N_vertices, N_cells (int32, or int64 as the topology): each row's
///                    number in the mesh file
///   /Mesh_1, ...     a restart on another partition (another rank count) adds its mesh in its own order; each step
///                    names its mesh (attribute `mesh`, "/Mesh" when absent)
///   /Steps/NNNNNN    one group per written step (attributes: time, step, mesh, complete = 1 once its datasets are
///                    all written); datasets N x components (scalars: N), attribute `center` = Node | Cell;
///                    float32 (output.precision: single, the default) or float64; symmetric 3x3 tensors as N x 6
///                    (XX, YY, ZZ, XY, YZ, XZ).
///                    Fields constant through a run (rank, region) are written at its first step and hard-linked
///                    from the later ones.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "io/output_timing.hpp"
#include "io/vtk_output.hpp"
#include "partition/partition.hpp"

namespace edgefem {

/// This rank's rows of an array in the file: [begin, begin + count) of n_global.
struct Slab {
  GlobalIndex begin = 0, count = 0, n_global = 0;
};

/// How the series is written.
struct XdmfOptions {
  bool gzip = false;  ///< HDF5 shuffle + deflate filters on chunked datasets (collective filtered writes)
  bool single = true;  ///< floating-point fields stored as float32 (the geometry stays float64)
  /// 3x3 (9-component, row-major) cell or point fields that are symmetric: stored as 6 components in VTK's order
  /// XX, YY, ZZ, XY, YZ, XZ (AttributeType "Tensor6"; see write_xdmf for the readers).
  std::vector<std::string> symmetric_tensors = {"green_strain", "stress"};
  /// Fields that do not change through a run (written once per run, hard-linked from its later steps).
  std::vector<std::string> constant_fields = {"rank", "region"};
};

/// The parallel HDF5 library's version ("1.10.8").
std::string hdf5_version();

class XdmfSeries {
 public:
  /// Collective. Creates (or with `resume_after`, a restart, opens) DIR/solution.h5 and writes the mesh (reference
  /// coordinates and cells in the partition's order, with their mesh-file numbers). A restart keeps the complete
  /// steps at times <= resume_after (the PvdCollection rule) and deletes the others, and reuses the file's newest
  /// mesh when its rows are this partition's (the same rank count), else adds this partition's mesh (/Mesh_K); a
  /// file whose mesh differs in size is refused. Throws CollectiveError naming the file on every rank on failure.
  XdmfSeries(MPI_Comm comm, const std::string& directory, const LocalMesh& mesh, int nodes_per_cell,
             XdmfOptions options, std::optional<double> resume_after = std::nullopt);
  ~XdmfSeries();
  XdmfSeries(const XdmfSeries&) = delete;
  XdmfSeries& operator=(const XdmfSeries&) = delete;

  /// Collective. Converts `piece`'s point data (owned vertices: the first n_owned of every array) and cell data to
  /// this rank's slabs as stored, creates /Steps/NNNNNN and its datasets, and hands the slabs to a thread of its
  /// own, which writes them (pwrite at each dataset's offset, fdatasync) while the run goes on. The step before is
  /// listed here, with two agreements between the ranks in all: (1) the step before's slabs on disk on every rank
  /// (the writer's error, or the .xdmf's last rewrite's, thrown on every rank as CollectiveError naming the file)
  /// and room for this step (check_room); (2) the step before marked complete, this step's group and datasets
  /// created (HDF5 metadata only) and the file flushed; then the .xdmf is rewritten listing the step before. With
  /// gzip (collective filtered writes) the step is written and listed here.
  void write_step(long long step, double time, const VtuPiece& piece);
  /// Collective. Waits for the last step's slabs on every rank (a failed write on any rank throws CollectiveError
  /// naming the file on every rank), marks its group complete, flushes the file and only then rewrites the .xdmf
  /// with the step listed. A no-op when no step is pending. Call it before a checkpoint and at the end of the run.
  ///
  /// The .xdmf is rewritten (temporary file, fsync, rename, fsync of the folder: a few ms of disk latency) on a
  /// thread of rank 0's own after the flush, so it lists a step only once the step is durable; the next listing
  /// or wait_listed() waits for it (its error thrown there, on every rank).
  void finish();
  /// Collective. Waits for the .xdmf's last rewrite (finish()); throws CollectiveError naming the file on every rank
  /// if it failed. Call it at the end of the run.
  void wait_listed();

  /// A slab of a step written by the writer thread: its offset in the file and its bytes.
  struct Deferred {
    std::uint64_t offset = 0;
    std::vector<char> bytes;
  };

  [[nodiscard]] const std::string& xdmf_path() const { return xdmf_path_; }
  [[nodiscard]] const std::string& h5_path() const { return h5_path_; }
  /// This rank's output time per phase so far (the writer thread's as writer_*), summary.json's output_split.
  [[nodiscard]] const OutputTimes& times() const { return times_; }

  /// A listed field of a step (for the .xdmf).
  struct Field {
    std::string name;
    bool cell = false;
    int n_components = 1;  ///< as stored (6 for a symmetric tensor)
    bool is_int = false;
    int precision = 8;  ///< bytes per stored value
  };
  struct Step {
    long long step = 0;
    double time = 0;
    std::vector<Field> fields;
    std::string mesh = "/Mesh";  ///< its mesh group
  };

 private:
  void open(std::optional<double> resume_after);
  /// A restart: whether the file's mesh `name` has this partition's rows (collective; false if it lacks a part).
  /// Throws InputError if its size is not this job's mesh's.
  [[nodiscard]] bool same_layout(const std::string& name, const LocalMesh& mesh);
  /// part 0: the mesh group and its geometry and original_vertex; part 1: the topology and original_cell.
  void write_mesh(const LocalMesh& mesh, int part);
  /// An array as stored: this rank's slab (n_owned points or every local cell), float32 or float64 (integers:
  /// int32), symmetric tensors in 6 components.
  [[nodiscard]] std::vector<char> stored_slab(const DataArray& a, bool cell) const;
  /// One array of a step: its dataset, with this rank's slab deferred to the writer thread (written here with
  /// gzip), or a hard link to this run's first step's (a constant field).
  void write_field(std::int64_t group, const std::string& group_name, const DataArray& a, bool cell,
                   std::vector<char> slab);
  /// /Steps/NNNNNN (replacing one of that name) with its time, step and mesh attributes; returns the open group.
  std::int64_t create_step_group(const std::string& name, long long step, double time);
  /// This rank's slabs of a step's arrays as stored, per centre (point, cell) and array (empty: linked).
  using Slabs = std::array<std::vector<std::vector<char>>, 2>;
  /// Collective: the first part of write_step (wait_writers, check_room, stored_slab), one agreement.
  /// A step refused for room (the file whole) lists the step before first.
  [[nodiscard]] Slabs begin_step(const VtuPiece& piece, OutputLap& lap);
  void prepare_step(const VtuPiece& piece, OutputLap& lap, Slabs& slabs);
  /// The writer thread for deferred_ (pending_).
  void start_writer();
  /// Not collective: this rank's writer thread done (its times merged; its error thrown), rank 0's last .xdmf
  /// rewrite done (its error thrown).
  void wait_writers();
  /// Not collective (every rank calls it with the same state): the pending step's group marked complete.
  void mark_complete();
  void flush();
  /// After a flush: the pending step moved to steps_ and (rank 0) the .xdmf's rewrite started on a thread.
  void list_pending();
  /// The .xdmf's text listing steps_.
  [[nodiscard]] std::string xdmf_text() const;
  void write_xdmf() const;
  /// run_collectively(f); a failure marks the file broken_ (not closed by the destructor).
  template <class F>
  void collectively(F&& f);

  MPI_Comm comm_;
  int rank_ = 0;
  std::string h5_path_, xdmf_path_;
  XdmfOptions options_;
  int nodes_per_cell_ = 4;
  std::string mesh_ = "/Mesh";  ///< this run's mesh group
  std::vector<std::pair<std::string, int>> topology_precision_;  ///< per mesh group: bytes per vertex number
  LocalIndex n_owned_ = 0;
  Slab vertices_, cells_;
  bool broken_ = false;
  std::int64_t handle_ = -1;  ///< the hid_t (int64_t) of the open file
  std::vector<Step> steps_;
  std::string first_step_group_;  ///< this run's first written step (its constant fields are linked from later ones)
  std::vector<Deferred> deferred_;  ///< the current step's slabs, for the writer thread
  std::future<OutputTimes> pending_;  ///< the writer thread of the step not yet listed (its times)
  std::optional<Step> pending_step_;  ///< that step (listed by the next write_step() or finish())
  OutputTimes times_;
  std::future<void> listing_;  ///< rank 0: the .xdmf's rewrite of the last listing
};

}  // namespace edgefem
