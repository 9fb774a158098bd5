// SPDX-License-Identifier: BSD-3-Clause
/// \file xdmf_output.cpp
/// XDMF3 + parallel HDF5 output (xdmf_output.hpp). Every HDF5 call that changes the file's structure is made by
/// every rank with the same arguments (parallel HDF5's rule); the data go through collective MPI-IO writes.
#include "io/xdmf_output.hpp"

#include <hdf5.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "io/xml_escape.hpp"
#include "partition/collective.hpp"

namespace edgefem {

namespace {

namespace fs = std::filesystem;

GlobalIndex block_size(GlobalIndex n, int size) { return (n + size - 1) / std::max(1, size); }
GlobalIndex block_begin(GlobalIndex n, int size, int r) { return std::min(n, block_size(n, size) * r); }

/// The innermost message of the current HDF5 error stack ("" if none).
std::string hdf5_error_text() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
        auto& out = *static_cast<std::string*>(data);
        if (n == 0 && e->desc != nullptr) out = e->desc;
        return 0;
      },
      &text);
  // The MPI-IO layer's text (e.g. "No space left on device") is in the major/minor messages of deeper entries;
  // errno of the failed write is the most useful when set.
  return text;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  const std::string detail = hdf5_error_text();
  throw std::runtime_error("XDMF output '" + path + "': " + what + (detail.empty() ? "" : ": " + detail));
}

/// An hid_t closed by `close` at scope exit.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  operator hid_t() const { return id_; }  // NOLINT: used as the id it is
  [[nodiscard]] bool valid() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

template <class T>
hid_t memory_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
}
template <class T>
hid_t file_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_IEEE_F64LE;
  if constexpr (std::is_same_v<T, float>) return H5T_IEEE_F32LE;
  if constexpr (std::is_same_v<T, std::int32_t>) return H5T_STD_I32LE;
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_STD_I64LE;
}
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
}

/// Rows of `rows` x `cols` chunks for a gzip dataset: a rank's block (each chunk then comes from one rank), at most
/// 2^20 values.
hsize_t chunk_rows(GlobalIndex n, int size, int cols) {
  const auto cap = static_cast<GlobalIndex>(std::max(1, (1 << 20) / cols));
  return static_cast<hsize_t>(std::max<GlobalIndex>(1, std::min({block_size(n, size), cap, n})));
}

void set_string_attribute(const std::string& path, hid_t object, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, value.size());
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid() || H5Awrite(attribute, type, value.data()) < 0)
    fail(path, std::string("cannot write attribute '") + name + "'");
}

/// A rank's block of one array as stored: `bytes` hold count() x cols values of `file_type` (native layout).
struct BlockBytes {
  hid_t file_type = -1, memory_type = -1;
  std::vector<char> bytes;
};

template <class T>
BlockBytes block_bytes(const std::vector<T>& values) {
  const auto data = reinterpret_cast<const char*>(values.data());
  return {file_type<T>(), memory_type<T>(), std::vector<char>(data, data + values.size() * sizeof(T))};
}

/// Collective: creates `name` in `where` (N x cols, or N when cols == 1; attribute `center` unless null) and writes
/// this rank's block; with `deferred` (not gzip), this rank's block is not written but moved to it with its offset
/// in the file (the dataset's contiguous space is allocated at its creation in parallel HDF5), for a pwrite on
/// another thread.
void write_block(const std::string& path, hid_t where, const std::string& name, const BlockExchange& block,
                 int cols, BlockBytes values, bool gzip, int size, const char* center,
                 std::vector<XdmfSeries::Deferred>* deferred = nullptr) {
  const hsize_t n = static_cast<hsize_t>(block.n_global());
  const int rank_of_dims = cols == 1 ? 1 : 2;
  const hsize_t dims[2] = {n, static_cast<hsize_t>(cols)};
  Handle file_space(H5Screate_simple(rank_of_dims, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  // Parallel HDF5 allocates a dataset's space at its creation and by default fills it (a collective write of the
  // whole dataset): never needed, every value is written next.
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  if (gzip && n > 0) {
    const hsize_t chunk[2] = {chunk_rows(block.n_global(), size, cols), static_cast<hsize_t>(cols)};
    if (H5Pset_chunk(dcpl, rank_of_dims, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 1) < 0)
      fail(path, "cannot set the gzip filter of '" + name + "'");
  }
  if (!gzip) H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  Handle set(H5Dcreate2(where, name.c_str(), values.file_type, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(path, "cannot create dataset '" + name + "'");
  if (center) set_string_attribute(path, set, "center", center);
  if (deferred && !gzip) {
    const haddr_t at = H5Dget_offset(set);
    if (n > 0 && at == HADDR_UNDEF) fail(path, "no file offset for dataset '" + name + "'");
    const std::uint64_t row = static_cast<std::uint64_t>(cols) * H5Tget_size(values.file_type);
    deferred->push_back({static_cast<std::uint64_t>(at) + static_cast<std::uint64_t>(block.begin()) * row,
                         std::move(values.bytes)});
    return;
  }
  const hsize_t start[2] = {static_cast<hsize_t>(block.begin()), 0};
  const hsize_t count[2] = {static_cast<hsize_t>(block.count()), static_cast<hsize_t>(cols)};
  Handle memory_space(H5Screate_simple(rank_of_dims, count, nullptr), H5Sclose);
  if (block.count() == 0) {
    H5Sselect_none(file_space);
    H5Sselect_none(memory_space);
  } else if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0) {
    fail(path, "cannot select this rank's block of '" + name + "'");
  }
  // Each rank's block is one contiguous range of the file: independent writes (a pwrite each, no synchronisation
  // between the ranks; collective buffering would only reshuffle the same contiguous blocks). Filtered (gzip)
  // datasets can only be written collectively.
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl, gzip ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
  if (H5Dwrite(set, values.memory_type, memory_space, file_space, dxpl, values.bytes.data()) < 0)
    fail(path, "cannot write dataset '" + name + "'");
}

template <class T>
void set_attribute(const std::string& path, hid_t object, const char* name, T value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate2(object, name, file_type<T>(), space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid() || H5Awrite(attribute, memory_type<T>(), &value) < 0)
    fail(path, std::string("cannot write attribute '") + name + "'");
}

template <class T>
std::optional<T> get_attribute(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) return std::nullopt;
  Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  T value{};
  if (!attribute.valid() || H5Aread(attribute, memory_type<T>(), &value) < 0) return std::nullopt;
  return value;
}

std::string get_string_attribute(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) return "";
  Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(attribute), H5Tclose);
  const std::size_t size = H5Tget_size(type);
  std::string value(size, '\0');
  Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(memory, size);
  if (H5Aread(attribute, memory, value.data()) < 0) return "";
  return value;
}

std::string step_group_name(long long step) {
  char name[48];
  std::snprintf(name, sizeof name, "/Steps/%06lld", step);
  return name;
}

/// The XDMF type of a field of `n` components: ParaView's Xdmf3 reader takes 9-component Tensor arrays as the
/// VTK tensors of the .vtu output (row-major 3 x 3). A Tensor6 array it passes on as a 6-component array, which
/// ParaView names XX, YY, ZZ, XY, YZ, XZ (VTK's symmetric-tensor order, that of its tensor filters): the order
/// stored here (symmetric_components). ParaView's older "XDMF Reader" (Xdmf2) expands Tensor6 to 3 x 3 assuming
/// XX, XY, XZ, YY, YZ, ZZ instead (vtkXdmfHeavyData's vtkConvertTensor6): docs/guide/paraview.md.
const char* attribute_type(int n) {
  switch (n) {
    case 1: return "Scalar";
    case 3: return "Vector";
    case 6: return "Tensor6";
    case 9: return "Tensor";
    default: return "Matrix";
  }
}

std::string data_item(const std::string& dims, bool is_int, int precision, const std::string& h5, const std::string& at) {
  return "<DataItem Dimensions=\"" + dims + "\" NumberType=\"" + (is_int ? "Int" : "Float") + "\" Precision=\"" +
         std::to_string(precision) + "\" Format=\"HDF\">" + xml_escape(h5) + ":" + at + "</DataItem>";
}

/// Keeps every complete step group at a time <= limit, deletes the others; returns the kept steps (by name order).
std::vector<XdmfSeries::Step> keep_steps_until(const std::string& path, hid_t file, double limit) {
  std::vector<XdmfSeries::Step> kept;
  if (H5Lexists(file, "/Steps", H5P_DEFAULT) <= 0) return kept;
  Handle steps(H5Gopen2(file, "/Steps", H5P_DEFAULT), H5Gclose);
  if (!steps.valid()) fail(path, "cannot open /Steps");
  H5G_info_t info{};
  H5Gget_info(steps, &info);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[256] = {};
    H5Lget_name_by_idx(steps, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
    names.emplace_back(name);
  }
  std::vector<std::string> dropped;
  for (const std::string& name : names) {
    Handle group(H5Gopen2(steps, name.c_str(), H5P_DEFAULT), H5Gclose);
    const auto time = get_attribute<double>(group, "time");
    const auto step = get_attribute<std::int64_t>(group, "step");
    const auto complete = get_attribute<std::int32_t>(group, "complete");
    if (!time || !step || complete.value_or(0) != 1 || !(*time <= limit)) {
      dropped.push_back(name);
      continue;
    }
    XdmfSeries::Step s{*step, *time, {}};
    H5G_info_t group_info{};
    H5Gget_info(group, &group_info);
    for (hsize_t i = 0; i < group_info.nlinks; ++i) {
      char field[256] = {};
      H5Lget_name_by_idx(group, ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, field, sizeof field, H5P_DEFAULT);
      Handle set(H5Dopen2(group, field, H5P_DEFAULT), H5Dclose);
      Handle space(H5Dget_space(set), H5Sclose);
      hsize_t dims[2] = {0, 1};
      const int nd = H5Sget_simple_extent_dims(space, dims, nullptr);
      Handle type(H5Dget_type(set), H5Tclose);
      s.fields.push_back({field, get_string_attribute(set, "center") == "Cell", nd == 2 ? static_cast<int>(dims[1]) : 1,
                          H5Tget_class(type) == H5T_INTEGER, static_cast<int>(H5Tget_size(type))});
    }
    kept.push_back(std::move(s));
  }
  for (const std::string& name : dropped)
    if (H5Ldelete(steps, name.c_str(), H5P_DEFAULT) < 0) fail(path, "cannot delete step group /Steps/" + name);
  return kept;
}

/// Set once an HDF5 call failed on some rank (every rank agrees): see end_before_hdf5_closes.
std::atomic<bool> any_broken{false};

/// MPI_COMM_SELF's attributes are deleted first to last set in reverse (MPI 3.1, 8.7.1) at MPI_Finalize, so this
/// callback, set after HDF5 set its own (HDF5 closes every open file there, collectively), runs before it. After a
/// failed write the ranks' HDF5 states may differ (one rank's write failed, another's did not) and that collective
/// close would wait forever: the process ends here instead (status 1, as an error ends edgefem), its messages and
/// summary.json already written, the file as its last flush left it.
int end_before_hdf5_closes(MPI_Comm, int, void*, void*) {
  if (any_broken.load()) {
    std::fflush(nullptr);
    ::_exit(1);
  }
  return MPI_SUCCESS;
}

void set_finalize_guard() {
  static bool set = false;
  if (set) return;
  set = true;
  int key = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, end_before_hdf5_closes, &key, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr);
}

/// Refuses (before any HDF5 call of the step) a step of `bytes` that this process's file-size limit (ulimit -f,
/// checked on every rank: each writes its own block) or the file system cannot take. Rank 0 reserves the step's
/// blocks past the end of the file (fallocate, FALLOC_FL_KEEP_SIZE: the file's size is unchanged, HDF5 then writes
/// into reserved blocks), so a full disk or a quota is seen here, on the file's own file system (wherever a link
/// points), not as a write error inside HDF5 on one rank while the others wait in a collective call. Where the file
/// system cannot reserve (EOPNOTSUPP), the free space statvfs reports is compared instead. The file then stays as
/// the last step left it, and is closed normally.
void check_room(const std::string& path, std::uintmax_t bytes, bool reserve) {
  const std::uintmax_t need = bytes + bytes / 16 + (1u << 16);  // + metadata (a few kB a step) and slack
  std::error_code ec;
  const std::uintmax_t size = fs::exists(path, ec) ? fs::file_size(path, ec) : 0;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      size + need > static_cast<std::uintmax_t>(limit.rlim_cur))
    throw std::runtime_error("XDMF output '" + path + "': the next step (" + std::to_string(bytes) +
                             " bytes) would pass the file-size limit (ulimit -f: " +
                             std::to_string(limit.rlim_cur) + " bytes; the file has " + std::to_string(size) + ")");
  if (!reserve) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(size), static_cast<off_t>(need)) != 0) err = errno;
    ::close(fd);
  }
  if (err == ENOSPC || err == EDQUOT)
    throw std::runtime_error("XDMF output '" + path + "': no space left for the next step (" + std::to_string(bytes) +
                             " bytes): " + std::strerror(err));
  if (err == 0) return;
  struct statvfs vfs {};
  const std::string dir = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
  if (::statvfs(dir.c_str(), &vfs) == 0) {
    const auto free = static_cast<std::uintmax_t>(vfs.f_bavail) * vfs.f_frsize;
    if (free < need)
      throw std::runtime_error("XDMF output '" + path + "': no space left for the next step (" + std::to_string(bytes) +
                               " bytes; " + std::to_string(free) + " bytes free on its file system)");
  }
}

/// The components of a 9-component (row-major 3 x 3) symmetric tensor kept: XX, YY, ZZ, XY, YZ, XZ.
constexpr int symmetric_components[6] = {0, 4, 8, 1, 5, 2};

/// How an array is stored: its components (6 for a symmetric tensor) and bytes per value.
std::pair<int, int> stored_layout(const DataArray& a, const XdmfOptions& options) {
  const bool symmetric = a.n_components == 9 && !a.is_int &&
                         std::find(options.symmetric_tensors.begin(), options.symmetric_tensors.end(), a.name) !=
                             options.symmetric_tensors.end();
  return {symmetric ? 6 : a.n_components, a.is_int || options.single ? 4 : 8};
}

std::uintmax_t step_bytes(const VtuPiece& piece, GlobalIndex n_vertices, GlobalIndex n_cells,
                          const XdmfOptions& options) {
  std::uintmax_t bytes = 0;
  for (int cell = 0; cell < 2; ++cell)
    for (const DataArray& a : cell ? piece.cell_data : piece.point_data) {
      const auto [components, size] = stored_layout(a, options);
      bytes += static_cast<std::uintmax_t>(cell ? n_cells : n_vertices) * static_cast<std::uintmax_t>(components) *
               static_cast<std::uintmax_t>(size);
    }
  return bytes;
}


std::vector<GlobalIndex> owned_vertex_ids(const LocalMesh& mesh) {
  return {mesh.original_vertex.begin(), mesh.original_vertex.begin() + mesh.n_owned};
}

}  // namespace

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

// ---- BlockExchange ----------------------------------------------------------------------------------------------

BlockExchange::BlockExchange(MPI_Comm comm, const std::vector<GlobalIndex>& ids, GlobalIndex n_global)
    : comm_(comm), n_global_(n_global) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  begin_ = block_begin(n_global, size, rank);
  count_ = block_begin(n_global, size, rank + 1) - begin_;
  const GlobalIndex b = std::max<GlobalIndex>(1, block_size(n_global, size));
  send_counts_.assign(static_cast<std::size_t>(size), 0);
  std::vector<int> target(ids.size());
  bool bad = false;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    bad = bad || ids[i] < 0 || ids[i] >= n_global;
    target[i] = bad ? 0 : static_cast<int>(ids[i] / b);
    ++send_counts_[static_cast<std::size_t>(target[i])];
  }
  send_displs_.assign(static_cast<std::size_t>(size), 0);
  std::exclusive_scan(send_counts_.begin(), send_counts_.end(), send_displs_.begin(), 0);
  send_order_.resize(ids.size());
  std::vector<GlobalIndex> send_ids(ids.size());
  std::vector<int> next = send_displs_;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(target[i])]++);
    send_order_[slot] = i;
    send_ids[slot] = ids[i];
  }
  recv_counts_.assign(static_cast<std::size_t>(size), 0);
  MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, comm_);
  recv_displs_.assign(static_cast<std::size_t>(size), 0);
  std::exclusive_scan(recv_counts_.begin(), recv_counts_.end(), recv_displs_.begin(), 0);
  const auto n_recv = static_cast<std::size_t>(recv_displs_.back() + recv_counts_.back());
  std::vector<GlobalIndex> recv_ids(n_recv);
  MPI_Alltoallv(send_ids.data(), send_counts_.data(), send_displs_.data(), MPI_INT64_T, recv_ids.data(),
                recv_counts_.data(), recv_displs_.data(), MPI_INT64_T, comm_);
  recv_slot_.resize(n_recv);
  std::vector<char> seen(static_cast<std::size_t>(count_), 0);
  bad = bad || n_recv != static_cast<std::size_t>(count_);
  for (std::size_t k = 0; k < n_recv && !bad; ++k) {
    const GlobalIndex at = recv_ids[k] - begin_;
    bad = at < 0 || at >= count_ || seen[static_cast<std::size_t>(at)] != 0;
    if (!bad) seen[static_cast<std::size_t>(at)] = 1, recv_slot_[k] = static_cast<std::size_t>(at);
  }
  run_collectively(comm_, [&] {
    if (bad)
      throw std::logic_error("BlockExchange: the global numbers do not cover [0, " + std::to_string(n_global) +
                             ") exactly once");
  });
}

void BlockExchange::exchange(const void* send, void* recv, MPI_Datatype item) const {
  MPI_Alltoallv(send, send_counts_.data(), send_displs_.data(), item, recv, recv_counts_.data(), recv_displs_.data(),
                item, comm_);
}

void BlockExchange::exchange_bytes(const void* send, void* recv, std::size_t item_bytes) const {
  MPI_Datatype item = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(item_bytes), MPI_BYTE, &item);
  MPI_Type_commit(&item);
  exchange(send, recv, item);
  MPI_Type_free(&item);
}

template <class T>
std::vector<T> BlockExchange::gather(const std::vector<T>& values, int n_components) const {
  const auto nc = static_cast<std::size_t>(n_components);
  std::vector<T> send(send_order_.size() * nc);
  for (std::size_t s = 0; s < send_order_.size(); ++s)
    std::copy_n(values.data() + send_order_[s] * nc, nc, send.data() + s * nc);
  std::vector<T> received(recv_slot_.size() * nc);
  MPI_Datatype item = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(n_components, mpi_type<T>(), &item);
  MPI_Type_commit(&item);
  exchange(send.data(), received.data(), item);
  MPI_Type_free(&item);
  std::vector<T> out(static_cast<std::size_t>(count_) * nc);
  for (std::size_t k = 0; k < recv_slot_.size(); ++k)
    std::copy_n(received.data() + k * nc, nc, out.data() + recv_slot_[k] * nc);
  return out;
}

template std::vector<double> BlockExchange::gather(const std::vector<double>&, int) const;
template std::vector<float> BlockExchange::gather(const std::vector<float>&, int) const;
template std::vector<std::int32_t> BlockExchange::gather(const std::vector<std::int32_t>&, int) const;
template std::vector<std::int64_t> BlockExchange::gather(const std::vector<std::int64_t>&, int) const;

// ---- XdmfSeries -------------------------------------------------------------------------------------------------

XdmfSeries::XdmfSeries(MPI_Comm comm, const std::string& directory, const LocalMesh& mesh, int nodes_per_cell,
                       XdmfOptions options, std::optional<double> resume_after)
    : comm_(comm),
      h5_path_((fs::path(directory) / "solution.h5").string()),
      xdmf_path_((fs::path(directory) / "solution.xdmf").string()),
      options_(std::move(options)),
      nodes_per_cell_(nodes_per_cell),
      n_owned_(mesh.n_owned),
      vertices_(comm, owned_vertex_ids(mesh), mesh.n_global_vertices),
      cells_(comm, mesh.cell_global, mesh.n_global_cells) {
  MPI_Comm_rank(comm_, &rank_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported by fail(), not printed by HDF5 (initialises it)
  set_finalize_guard();                          // (after HDF5 set its MPI_COMM_SELF attribute)
  collectively([&] {
    if (!options_.gzip) return;
    // Parallel HDF5 writes filtered (chunked) datasets only collectively, and only from 1.10.2 on.
    unsigned major = 0, minor = 0, release = 0;
    H5get_libversion(&major, &minor, &release);
    if (std::make_tuple(major, minor, release) < std::make_tuple(1u, 10u, 2u))
      throw InputError("output.compression: gzip needs parallel HDF5 1.10.2 or later to write compressed datasets "
                       "from several ranks; this one is " + hdf5_version() + ": use compression: none");
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
      throw InputError("output.compression: gzip: this HDF5 (" + hdf5_version() + ") has no deflate filter");
  });
  collectively([&] { open(resume_after); });
  collectively([&] { write_mesh(mesh, 0); });
  collectively([&] { write_mesh(mesh, 1); });
  collectively([&] {
    if (H5Fflush(static_cast<hid_t>(handle_), H5F_SCOPE_GLOBAL) < 0) fail(h5_path_, "cannot flush the file");
  });
  collectively([&] {
    if (rank_ == 0) write_xdmf();
  });
}

XdmfSeries::~XdmfSeries() {
  if (pending_.valid()) pending_.wait();  // the writer thread (no collective call: also on a failure path)
  if (listing_.valid()) listing_.wait();  // the .xdmf's last rewrite
  // Collective: every rank destroys its writer. Not after a failed HDF5 call: the ranks' HDF5 states may differ
  // then (one rank's write failed, another's did not) and H5Fclose's collective flush would wait forever; the file
  // is left as the last flush (the last listed step) made it, and the process's exit closes it.
  if (handle_ >= 0 && !broken_) H5Fclose(static_cast<hid_t>(handle_));
}

template <class F>
void XdmfSeries::collectively(F&& f) {
  try {
    run_collectively(comm_, std::forward<F>(f));
  } catch (...) {
    broken_ = true;
    any_broken = true;
    throw;
  }
}

void XdmfSeries::open(std::optional<double> resume_after) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(fapl, comm_, MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl, true);
  H5Pset_coll_metadata_write(fapl, true);
  std::error_code ec;
  if (resume_after && fs::exists(h5_path_, ec)) {
    const hid_t file = H5Fopen(h5_path_.c_str(), H5F_ACC_RDWR, fapl);
    if (file < 0) fail(h5_path_, "cannot open the series to continue it (restart)");
    handle_ = file;
    steps_ = keep_steps_until(h5_path_, file, *resume_after + 1e-12 * std::fabs(*resume_after));
    return;
  }
  // Freed space is never reused (a restart's deleted steps): new data always go to the end of the file, never over
  // the blocks of the steps already listed.
  Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, false, 1);
  const hid_t file = H5Fcreate(h5_path_.c_str(), H5F_ACC_TRUNC, fcpl, fapl);
  if (file < 0) fail(h5_path_, "cannot create the file");
  handle_ = file;
}

void XdmfSeries::write_mesh(const LocalMesh& mesh, int part) {
  const auto file = static_cast<hid_t>(handle_);
  const bool solid = nodes_per_cell_ == 4;
  if (part == 0 && H5Lexists(file, "/Mesh", H5P_DEFAULT) > 0) {
    // A restart: the same mesh, checked by its sizes (the checkpoint already matched the job and the vertices).
    Handle topology(H5Dopen2(file, "/Mesh/topology", H5P_DEFAULT), H5Dclose);
    Handle space(H5Dget_space(topology), H5Sclose);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, dims, nullptr);
    Handle type(H5Dget_type(topology), H5Tclose);
    topology_precision_ = type.valid() ? static_cast<int>(H5Tget_size(type)) : 8;
    if (static_cast<GlobalIndex>(dims[0]) != mesh.n_global_cells || static_cast<int>(dims[1]) != nodes_per_cell_)
      throw InputError(h5_path_ + ": its mesh has " + std::to_string(dims[0]) + " cells of " +
                       std::to_string(dims[1]) + " vertices, this run's " + std::to_string(mesh.n_global_cells) +
                       " of " + std::to_string(nodes_per_cell_) + ": not this job's series");
    return;
  }
  int size = 1;
  MPI_Comm_size(comm_, &size);
  if (part == 0) {  // the coordinates (in /Mesh, created here); part 1: the cells
    Handle group(H5Gcreate2(file, "/Mesh", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!group.valid()) fail(h5_path_, "cannot create /Mesh");
    const std::vector<double> owned_coords(mesh.mesh.coords.begin(),
                                           mesh.mesh.coords.begin() + 3 * static_cast<std::ptrdiff_t>(n_owned_));
    write_block(h5_path_, group, "geometry", vertices_, 3, block_bytes(vertices_.gather(owned_coords, 3)), options_.gzip,
                size, nullptr);
    return;
  }
  if (H5Lexists(file, "/Mesh/topology", H5P_DEFAULT) > 0) return;
  Handle group(H5Gopen2(file, "/Mesh", H5P_DEFAULT), H5Gclose);
  const std::vector<LocalIndex>& local = solid ? mesh.mesh.tets : mesh.mesh.triangles;
  // int32 vertex numbers while they fit (half the bytes: the topology is the largest array written once).
  auto write_as = [&]<class I>(I) {
    std::vector<I> cells(local.size());
    for (std::size_t i = 0; i < local.size(); ++i)
      cells[i] = static_cast<I>(mesh.original_vertex[static_cast<std::size_t>(local[i])]);
    write_block(h5_path_, group, "topology", cells_, nodes_per_cell_, block_bytes(cells_.gather(cells, nodes_per_cell_)),
                options_.gzip, size, nullptr);
  };
  topology_precision_ = mesh.n_global_vertices <= std::numeric_limits<std::int32_t>::max() ? 4 : 8;
  if (topology_precision_ == 4)
    write_as(std::int32_t{});
  else
    write_as(std::int64_t{});
}

XdmfSeries::Packed XdmfSeries::pack(const std::vector<DataArray>& arrays, bool cell) const {
  Packed packed;
  std::vector<const DataArray*> used;
  std::vector<std::size_t> offset;  // per used array: its first column in an item's packed values
  std::size_t width = 0;
  for (const DataArray& a : arrays) {
    if (a.is_int) continue;
    used.push_back(&a);
    packed.names.push_back(a.name);
    packed.components.push_back(stored_layout(a, options_).first);
    offset.push_back(width);
    width += static_cast<std::size_t>(packed.components.back());
  }
  if (width == 0) return packed;
  const BlockExchange& block = cell ? cells_ : vertices_;
  // Every array's values of an item side by side, converted as stored, written straight into the exchange's send
  // buffer (one MPI_Alltoallv per centre and step), then each received item's columns copied to its row of each
  // array's block: two passes over the values.
  auto run = [&]<class T>(T) {
    const std::vector<T> received = block.exchange_filled<T>(static_cast<int>(width), [&](std::size_t i, T* out) {
      for (std::size_t k = 0; k < used.size(); ++k) {
        const DataArray& a = *used[k];
        const auto nc = static_cast<std::size_t>(a.n_components), stored = static_cast<std::size_t>(packed.components[k]);
        const double* v = a.values.data() + i * nc;
        for (std::size_t c = 0; c < stored; ++c)
          out[offset[k] + c] = static_cast<T>(v[stored != nc ? static_cast<std::size_t>(symmetric_components[c]) : c]);
      }
    });
    packed.blocks.resize(used.size());
    for (std::size_t k = 0; k < used.size(); ++k)
      packed.blocks[k].resize(static_cast<std::size_t>(block.count()) * static_cast<std::size_t>(packed.components[k]) *
                              sizeof(T));
    const auto n_received = static_cast<std::ptrdiff_t>(block.n_received());
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t slot = 0; slot < n_received; ++slot) {
      const std::size_t row = block.row_of_slot(static_cast<std::size_t>(slot));
      for (std::size_t k = 0; k < used.size(); ++k) {
        const std::size_t bytes = static_cast<std::size_t>(packed.components[k]) * sizeof(T);
        std::memcpy(packed.blocks[k].data() + row * bytes,
                    received.data() + static_cast<std::size_t>(slot) * width + offset[k], bytes);
      }
    }
  };
  if (options_.single)
    run(float{});
  else
    run(double{});
  return packed;
}

void XdmfSeries::write_field(hid_t group, const std::string& group_name, const DataArray& a, bool cell,
                             Packed& packed) {
  const BlockExchange& block = cell ? cells_ : vertices_;
  const auto file = static_cast<hid_t>(handle_);
  const bool constant = std::find(options_.constant_fields.begin(), options_.constant_fields.end(), a.name) !=
                        options_.constant_fields.end();
  if (constant && !first_step_group_.empty()) {
    if (H5Lcreate_hard(file, (first_step_group_ + "/" + a.name).c_str(), group, a.name.c_str(), H5P_DEFAULT,
                       H5P_DEFAULT) < 0)
      fail(h5_path_, "cannot link " + group_name + "/" + a.name);
    return;
  }
  int size = 1;
  MPI_Comm_size(comm_, &size);
  const char* center = cell ? "Cell" : "Node";
  const int components = stored_layout(a, options_).first;
  if (a.is_int) {
    // Point data: the owned vertices (the first n_owned); cell data: every local cell.
    const std::size_t n_items =
        cell ? a.int_values.size() / static_cast<std::size_t>(a.n_components) : static_cast<std::size_t>(n_owned_);
    const std::vector<std::int32_t> own(a.int_values.begin(),
                                        a.int_values.begin() + static_cast<std::ptrdiff_t>(n_items * components));
    write_block(h5_path_, group, a.name, block, components, block_bytes(block.gather(own, components)), options_.gzip,
                size, center);
    return;
  }
  const auto k = static_cast<std::size_t>(std::find(packed.names.begin(), packed.names.end(), a.name) -
                                          packed.names.begin());
  if (k == packed.names.size()) throw std::logic_error("XdmfSeries: " + a.name + " was not packed");
  BlockBytes values{options_.single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                    options_.single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, std::move(packed.blocks[k])};
  write_block(h5_path_, group, a.name, block, components, std::move(values), options_.gzip, size, center, &deferred_);
}

namespace {

/// The writer thread's work: every block at its offset (pwrite), then fdatasync; throws naming the file. Returns
/// its times (writer_pwrite, writer_fdatasync).
OutputTimes write_deferred(const std::string& path, const std::vector<XdmfSeries::Deferred>& blocks) {
  OutputTimes times;
  if (blocks.empty()) return times;
  OutputLap lap(true);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("XDMF output '" + path + "': cannot open it to write a step: " + std::strerror(errno));
  for (const XdmfSeries::Deferred& b : blocks) {
    std::size_t done = 0;
    while (done < b.bytes.size()) {
      const ssize_t n = ::pwrite(fd, b.bytes.data() + done, b.bytes.size() - done, static_cast<off_t>(b.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        throw std::runtime_error("XDMF output '" + path + "': write failed: " + std::strerror(err));
      }
      done += static_cast<std::size_t>(n);
    }
  }
  lap.lap(times, "writer_pwrite");
  const int synced = ::fdatasync(fd) == 0 || errno == EINVAL ? 0 : errno;
  ::close(fd);
  if (synced != 0) throw std::runtime_error("XDMF output '" + path + "': fdatasync failed: " + std::strerror(synced));
  lap.lap(times, "writer_fdatasync");
  return times;
}

}  // namespace

void XdmfSeries::finish() {
  if (!pending_step_) return;
  Step listed = std::move(*pending_step_);
  pending_step_.reset();
  std::future<OutputTimes> pending = std::move(pending_);
  OutputLap lap;
  collectively([&] {
    if (pending.valid()) times_.merge(pending.get());  // this rank's blocks on disk (or their error, on every rank)
  });
  lap.lap(times_, "wait_writer");
  const auto file = static_cast<hid_t>(handle_);
  const std::string name = step_group_name(listed.step);
  collectively([&] {
    Handle group(H5Gopen2(file, name.c_str(), H5P_DEFAULT), H5Gclose);
    if (!group.valid()) fail(h5_path_, "cannot open " + name);
    set_attribute<std::int32_t>(h5_path_, group, "complete", 1);
  });
  lap.lap(times_, "complete_mark");
  collectively([&] {
    if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) fail(h5_path_, "cannot flush step " + std::to_string(listed.step));
  });
  lap.lap(times_, "h5_flush");
  std::erase_if(steps_, [&](const Step& s) { return s.step == listed.step; });
  steps_.push_back(std::move(listed));
  collectively([&] {
    if (rank_ != 0) return;
    if (listing_.valid()) listing_.get();  // the rewrite of the step before (its error, on every rank)
    listing_ = std::async(std::launch::async, [path = xdmf_path_, text = xdmf_text()] { write_file_atomically(path, text); });
  });
  lap.lap(times_, "xdmf_rewrite");
}

void XdmfSeries::wait_listed() {
  OutputLap lap;
  collectively([&] {
    if (listing_.valid()) listing_.get();
  });
  lap.lap(times_, "wait_listed");
}

std::int64_t XdmfSeries::create_step_group(const std::string& name, long long step, double time) {
  const auto file = static_cast<hid_t>(handle_);
  if (H5Lexists(file, "/Steps", H5P_DEFAULT) <= 0) {
    Handle steps(H5Gcreate2(file, "/Steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!steps.valid()) fail(h5_path_, "cannot create /Steps");
  }
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0 && H5Ldelete(file, name.c_str(), H5P_DEFAULT) < 0)
    fail(h5_path_, "cannot replace " + name);
  Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  const hid_t group = H5Gcreate2(file, name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
  if (group < 0) fail(h5_path_, "cannot create " + name);
  try {
    set_attribute<double>(h5_path_, group, "time", time);
    set_attribute<std::int64_t>(h5_path_, group, "step", step);
  } catch (...) {
    H5Gclose(group);
    throw;
  }
  return group;
}

void XdmfSeries::write_step(long long step, double time, const VtuPiece& piece) {
  finish();  // the step before: whole on disk, then listed
  // Room for the step first (every rank's file-size limit; rank 0 reserves the blocks on the shared file system):
  // refused here, the file stays whole and closes.
  OutputLap lap;
  run_collectively(comm_, [&] {
    check_room(h5_path_, step_bytes(piece, vertices_.n_global(), cells_.n_global(), options_), rank_ == 0);
  });
  lap.lap(times_, "room");
  const std::string name = step_group_name(step);
  // The step's floating-point arrays exchanged to this rank's blocks (MPI only; one MPI_Alltoallv per centre).
  std::array<Packed, 2> packed;
  collectively([&] {
    for (int cell = 0; cell < 2; ++cell) packed[cell] = pack(cell ? piece.cell_data : piece.point_data, cell == 1);
  });
  lap.lap(times_, "exchange");
  // The step's group and datasets. Their creation changes only HDF5's metadata cache, the same on every rank (the
  // space of a dataset is allocated, not written, and its values go to the writer thread): one agreement for all of
  // them. A call that writes (the first step's integer fields; every field with gzip) can fail on one rank alone
  // (a full disk) and is agreed on by itself, so that no rank waits in a collective call after another's failure.
  std::optional<Handle> group;
  std::vector<std::function<void()>> batch;
  auto agree = [&] {
    collectively([&] {
      for (const auto& f : batch) f();
    });
    batch.clear();
  };
  batch.emplace_back([&] { group.emplace(create_step_group(name, step, time), H5Gclose); });
  Step listed{step, time, {}};
  for (int cell = 0; cell < 2; ++cell)
    for (const DataArray& a : cell ? piece.cell_data : piece.point_data) {
      const bool writes = options_.gzip || (a.is_int && first_step_group_.empty());
      if (writes) agree();
      batch.emplace_back([&, cell, field = &a] { write_field(*group, name, *field, cell == 1, packed[cell]); });
      if (writes) agree();
      const auto [components, precision] = stored_layout(a, options_);
      listed.fields.push_back({a.name, cell == 1, components, a.is_int, precision});
    }
  agree();
  lap.lap(times_, "datasets");
  group.reset();
  if (first_step_group_.empty()) first_step_group_ = name;
  pending_step_ = std::move(listed);
  if (!deferred_.empty())
    pending_ = std::async(std::launch::async, [path = h5_path_, blocks = std::move(deferred_)] {
      return write_deferred(path, blocks);
    });
  deferred_.clear();
  lap.lap(times_, "writer_start");
  if (options_.gzip) finish();  // written collectively in the step: listed now
}

void XdmfSeries::write_xdmf() const { write_file_atomically(xdmf_path_, xdmf_text()); }

std::string XdmfSeries::xdmf_text() const {
  const std::string h5 = fs::path(h5_path_).filename().string();
  const GlobalIndex nv = vertices_.n_global(), nc = cells_.n_global();
  const std::string topology = std::string("        <Topology TopologyType=\"") +
                               (nodes_per_cell_ == 4 ? "Tetrahedron" : "Triangle") + "\" NumberOfElements=\"" +
                               std::to_string(nc) + "\" NodesPerElement=\"" + std::to_string(nodes_per_cell_) +
                               "\">\n          " +
                               data_item(std::to_string(nc) + " " + std::to_string(nodes_per_cell_), true,
                                         topology_precision_, h5, "/Mesh/topology") +
                               "\n        </Topology>\n        <Geometry GeometryType=\"XYZ\">\n          " +
                               data_item(std::to_string(nv) + " 3", false, 8, h5, "/Mesh/geometry") +
                               "\n        </Geometry>\n";
  std::string xml =
      "<?xml version=\"1.0\"?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n"
      "    <Grid Name=\"solution\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const Step& s : steps_) {
    const std::string group = step_group_name(s.step);
    xml += "      <Grid Name=\"" + group.substr(7) + "\" GridType=\"Uniform\">\n        <Time Value=\"" +
           exact_text(s.time) + "\"/>\n" + topology;
    for (const Field& f : s.fields) {
      const GlobalIndex n = f.cell ? nc : nv;
      const std::string dims = std::to_string(n) + (f.n_components == 1 ? "" : " " + std::to_string(f.n_components));
      xml += "        <Attribute Name=\"" + xml_escape(f.name) + "\" AttributeType=\"" + attribute_type(f.n_components) +
             "\" Center=\"" + (f.cell ? "Cell" : "Node") + "\">\n          " +
             data_item(dims, f.is_int, f.precision, h5, group + "/" + f.name) + "\n        </Attribute>\n";
    }
    xml += "      </Grid>\n";
  }
  xml += "    </Grid>\n  </Domain>\n</Xdmf>\n";
  return xml;
}

}  // namespace edgefem
