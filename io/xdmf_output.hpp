// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file xdmf_output.hpp
/// Results as one XDMF3 + HDF5 series (`output: {format: xdmf}`): DIR/solution.h5 holds the mesh once and every
/// written step's fields; DIR/solution.xdmf (rewritten atomically after every step) lists the complete steps.
/// Written collectively through parallel HDF5 (MPI-IO): every array is stored in the mesh file's order (vertex and
/// cell numbers of the .msh, or of the generated box), whatever the number of ranks, and rank r writes the
/// contiguous block [r * ceil(N / P), (r + 1) * ceil(N / P)) of it after an all-to-all exchange of its own
/// (owned) vertices' and cells' values.
///
/// The file (h5dump -n solution.h5):
///   /Mesh/geometry   N_vertices x 3 float64, the reference coordinates
///   /Mesh/topology   N_cells x nodes_per_cell int32 (int64 from 2^31 vertices on), 0-based vertex numbers
///   /Steps/NNNNNN    one group per written step (attributes: time, step, complete = 1 once its datasets are all
///                    written); datasets N x components (scalars: N), attribute `center` = Node | Cell;
///                    float32 (output.precision: single, the default) or float64; symmetric 3x3 tensors as N x 6
///                    (XX, YY, ZZ, XY, YZ, XZ).
///                    Fields constant through a run (rank, region) are written at its first step and hard-linked
///                    from the later ones.
#include <mpi.h>

#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "io/output_timing.hpp"
#include "io/vtk_output.hpp"
#include "partition/partition.hpp"

namespace edgefem {

/// The values of this rank's items (owned vertices or cells), each with its global (file) number, gathered into
/// blocks of the global order: rank r receives [begin(r), begin(r) + count(r)), begin(r) = min(N, r * ceil(N / P)).
/// The plan is made once (collective); every gather() is one MPI_Alltoallv.
class BlockExchange {
 public:
  /// Collective. `ids`: the global number of each local item, each number in [0, n_global) on exactly one rank.
  /// Throws (on every rank) if the numbers do not cover the blocks exactly once.
  BlockExchange(MPI_Comm comm, const std::vector<GlobalIndex>& ids, GlobalIndex n_global);

  /// Collective. `values`: n_components per local item (in `ids` order); returns n_components per item of this
  /// rank's block, in the global order.
  template <class T>
  [[nodiscard]] std::vector<T> gather(const std::vector<T>& values, int n_components) const;

  /// Collective. The same exchange without the copies: `fill(item, out)` (called on OpenMP's threads) writes the n_components values of local
  /// item `item` straight into the send buffer; returns the received values, n_components per receive slot k,
  /// whose row in this rank's block is row_of_slot(k).
  template <class T, class Fill>
  [[nodiscard]] std::vector<T> exchange_filled(int n_components, Fill&& fill) const {
    const auto nc = static_cast<std::size_t>(n_components);
    std::vector<T> send(send_order_.size() * nc);
    const auto n_send = static_cast<std::ptrdiff_t>(send_order_.size());
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t s = 0; s < n_send; ++s)
      fill(send_order_[static_cast<std::size_t>(s)], send.data() + static_cast<std::size_t>(s) * nc);
    std::vector<T> received(recv_slot_.size() * nc);
    exchange_bytes(send.data(), received.data(), nc * sizeof(T));
    return received;
  }
  [[nodiscard]] std::size_t n_received() const { return recv_slot_.size(); }
  [[nodiscard]] std::size_t row_of_slot(std::size_t k) const { return recv_slot_[k]; }

  [[nodiscard]] GlobalIndex begin() const { return begin_; }
  [[nodiscard]] GlobalIndex count() const { return count_; }
  [[nodiscard]] GlobalIndex n_global() const { return n_global_; }
  /// This rank's items (the `ids` given).
  [[nodiscard]] std::size_t n_local() const { return send_order_.size(); }

 private:
  void exchange(const void* send, void* recv, MPI_Datatype item) const;
  /// exchange() of items of `item_bytes` bytes.
  void exchange_bytes(const void* send, void* recv, std::size_t item_bytes) const;

  MPI_Comm comm_;
  GlobalIndex n_global_ = 0, begin_ = 0, count_ = 0;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  std::vector<std::size_t> send_order_;  ///< per send slot: the local item
  std::vector<std::size_t> recv_slot_;   ///< per receive slot: the index in this rank's block
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
  /// coordinates and cells in the file's order). A restart keeps the complete steps at times <= resume_after (the
  /// PvdCollection rule) and deletes the others; a file whose mesh differs in size is refused. Throws
  /// CollectiveError naming the file on every rank on failure.
  XdmfSeries(MPI_Comm comm, const std::string& directory, const LocalMesh& mesh, int nodes_per_cell,
             XdmfOptions options, std::optional<double> resume_after = std::nullopt);
  ~XdmfSeries();
  XdmfSeries(const XdmfSeries&) = delete;
  XdmfSeries& operator=(const XdmfSeries&) = delete;

  /// Collective. Lists the step before (finish()), then creates `piece`'s point data (owned vertices: the first
  /// n_owned of every array) and cell data as /Steps/NNNNNN and hands this rank's blocks to a thread of its own,
  /// which writes them (pwrite at each dataset's offset, fdatasync) while the run goes on: the step is listed by
  /// the next write_step() or finish(). With gzip (collective filtered writes) the step is written and listed here.
  void write_step(long long step, double time, const VtuPiece& piece);
  /// Collective. Waits for the last step's blocks on every rank (a failed write on any rank throws CollectiveError
  /// naming the file on every rank), marks its group complete, flushes the file and only then rewrites the .xdmf
  /// with the step listed. A no-op when no step is pending. Call it before a checkpoint and at the end of the run.
  ///
  /// The .xdmf is rewritten (temporary file, fsync, rename, fsync of the folder: a few ms of disk latency) on a
  /// thread of rank 0's own after the flush, so it lists a step only once the step is durable; the next finish()
  /// or wait_listed() waits for it (its error thrown there, on every rank).
  void finish();
  /// Collective. Waits for the .xdmf's last rewrite (finish()); throws CollectiveError naming the file on every rank
  /// if it failed. Call it at the end of the run.
  void wait_listed();

  /// A block of a step written by the writer thread: its offset in the file and its bytes.
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
  };

 private:
  void open(std::optional<double> resume_after);
  /// part 0: /Mesh and its geometry (a restart: checks the file's mesh); part 1: the topology.
  void write_mesh(const LocalMesh& mesh, int part);
  /// One array of a step: this rank's block, or a hard link to this run's first step's (a constant field).
  /// A step's floating-point arrays of one centre (point or cell data), as stored (float32 or float64, symmetric
  /// tensors in 6), packed side by side per item and exchanged to this rank's block at once (one MPI_Alltoallv per
  /// centre and step instead of one per array).
  struct Packed {
    std::vector<std::string> names;
    std::vector<int> components;  ///< per name: its number of columns (as stored)
    /// per name: this rank's block, count() x components values (float32 with options_.single, else float64)
    std::vector<std::vector<char>> blocks;
  };
  [[nodiscard]] Packed pack(const std::vector<DataArray>& arrays, bool cell) const;
  void write_field(std::int64_t group, const std::string& group_name, const DataArray& a, bool cell,
                   Packed& packed);
  /// /Steps/NNNNNN (replacing one of that name) with its time and step attributes; returns the open group.
  std::int64_t create_step_group(const std::string& name, long long step, double time);
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
  int topology_precision_ = 4;  ///< bytes per vertex number in /Mesh/topology
  LocalIndex n_owned_ = 0;
  BlockExchange vertices_, cells_;
  bool broken_ = false;
  std::int64_t handle_ = -1;  ///< the hid_t (int64_t) of the open file
  std::vector<Step> steps_;
  std::string first_step_group_;  ///< this run's first written step (its constant fields are linked from later ones)
  std::vector<Deferred> deferred_;  ///< the current step's blocks, for the writer thread
  std::future<OutputTimes> pending_;  ///< the writer thread of the step not yet listed (its times)
  std::optional<Step> pending_step_;  ///< that step (listed by finish())
  OutputTimes times_;
  std::future<void> listing_;  ///< rank 0: the .xdmf's rewrite of the last finish()
};

}  // namespace edgefem
