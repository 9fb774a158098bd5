// SPDX-License-Identifier: BSD-3-Clause
/// \file xdmf_output.cpp
/// XDMF3 + parallel HDF5 output (xdmf_output.hpp). Every HDF5 call that changes the file's structure is made by
/// every rank with the same arguments (parallel HDF5's rule); each rank writes its own slab of the data.
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

/// Rows of `rows` x `cols` chunks for a gzip dataset: an average rank's slab, at most 2^20 values.
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

/// A rank's slab of one array as stored: `bytes` hold count x cols values of `file_type` (native layout).
struct SlabBytes {
  hid_t file_type = -1, memory_type = -1;
  std::vector<char> bytes;
};

template <class T>
SlabBytes slab_bytes(const std::vector<T>& values) {
  const auto data = reinterpret_cast<const char*>(values.data());
  return {file_type<T>(), memory_type<T>(), std::vector<char>(data, data + values.size() * sizeof(T))};
}

/// Collective: creates `name` in `where` (N x cols, or N when cols == 1; attribute `center` unless null) and writes
/// this rank's slab; with `deferred` (not gzip), this rank's slab is not written but moved to it with its offset
/// in the file (the dataset's contiguous space is allocated at its creation in parallel HDF5), for a pwrite on
/// another thread.
void write_slab(const std::string& path, hid_t where, const std::string& name, const Slab& block, int cols,
                SlabBytes values, bool gzip, int size, const char* center,
                std::vector<XdmfSeries::Deferred>* deferred = nullptr) {
  const hsize_t n = static_cast<hsize_t>(block.n_global);
  const int rank_of_dims = cols == 1 ? 1 : 2;
  const hsize_t dims[2] = {n, static_cast<hsize_t>(cols)};
  Handle file_space(H5Screate_simple(rank_of_dims, dims, nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  // Parallel HDF5 allocates a dataset's space at its creation and by default fills it (a collective write of the
  // whole dataset): never needed, every value is written next.
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  if (gzip && n > 0) {
    const hsize_t chunk[2] = {chunk_rows(block.n_global, size, cols), static_cast<hsize_t>(cols)};
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
    deferred->push_back({static_cast<std::uint64_t>(at) + static_cast<std::uint64_t>(block.begin) * row,
                         std::move(values.bytes)});
    return;
  }
  const hsize_t start[2] = {static_cast<hsize_t>(block.begin), 0};
  const hsize_t count[2] = {static_cast<hsize_t>(block.count), static_cast<hsize_t>(cols)};
  Handle memory_space(H5Screate_simple(rank_of_dims, count, nullptr), H5Sclose);
  if (block.count == 0) {
    H5Sselect_none(file_space);
    H5Sselect_none(memory_space);
  } else if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0) {
    fail(path, "cannot select this rank's slab of '" + name + "'");
  }
  // Each rank's slab is one contiguous range of the file: independent writes (a pwrite each, no synchronisation
  // between the ranks; collective buffering would only reshuffle the same contiguous slabs). Filtered (gzip)
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
    XdmfSeries::Step s{*step, *time, {}, get_string_attribute(group, "mesh")};
    if (s.mesh.empty()) s.mesh = "/Mesh";  // (written before the mesh attribute)
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
/// A failure that leaves the file whole (XdmfSeries::collectively: the file is closed normally).
struct FileStaysWhole : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_room(const std::string& path, std::uintmax_t bytes, bool reserve) {
  const std::uintmax_t need = bytes + bytes / 16 + (1u << 16);  // + metadata (a few kB a step) and slack
  std::error_code ec;
  const std::uintmax_t size = fs::exists(path, ec) ? fs::file_size(path, ec) : 0;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      size + need > static_cast<std::uintmax_t>(limit.rlim_cur))
    throw FileStaysWhole("XDMF output '" + path + "': the next step (" + std::to_string(bytes) +
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
    throw FileStaysWhole("XDMF output '" + path + "': no space left for the next step (" + std::to_string(bytes) +
                             " bytes): " + std::strerror(err));
  if (err == 0) return;
  struct statvfs vfs {};
  const std::string dir = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
  if (::statvfs(dir.c_str(), &vfs) == 0) {
    const auto free = static_cast<std::uintmax_t>(vfs.f_bavail) * vfs.f_frsize;
    if (free < need)
      throw FileStaysWhole("XDMF output '" + path + "': no space left for the next step (" + std::to_string(bytes) +
                               " bytes; " + std::to_string(free) + " bytes free on its file system)");
  }
}

/// The components of a 9-component (row-major 3 x 3) symmetric tensor kept: XX, YY, ZZ, XY, YZ, XZ.
constexpr int symmetric_components[6] = {0, 4, 8, 1, 5, 2};

/// How an array is stored: its components (6 for a symmetric tensor) and bytes per value.
std::pair<int, int> stored_layout(const DataArray& a, const XdmfOptions& options) {
  const bool symmetric = a.symmetric || (a.n_components == 9 && !a.is_int &&
                                         std::find(options.symmetric_tensors.begin(), options.symmetric_tensors.end(),
                                                   a.name) != options.symmetric_tensors.end());
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

}  // namespace

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

// ---- XdmfSeries -------------------------------------------------------------------------------------------------

namespace {

/// The mesh groups of the file (/Mesh, /Mesh_1, ...), oldest first.
std::vector<std::string> mesh_groups(hid_t file) {
  std::vector<std::string> names;
  if (H5Lexists(file, "/Mesh", H5P_DEFAULT) <= 0) return names;
  names.emplace_back("/Mesh");
  for (int k = 1;; ++k) {
    const std::string name = "/Mesh_" + std::to_string(k);
    if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) return names;
    names.push_back(name);
  }
}

/// This rank's slab [begin, begin + count) of the 1-d integer dataset `at` (read as int64).
std::vector<std::int64_t> read_slab(const std::string& path, hid_t file, const std::string& at, const Slab& slab) {
  Handle set(H5Dopen2(file, at.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(path, "cannot open " + at);
  Handle file_space(H5Dget_space(set), H5Sclose);
  const hsize_t start[1] = {static_cast<hsize_t>(slab.begin)}, count[1] = {static_cast<hsize_t>(slab.count)};
  Handle memory_space(H5Screate_simple(1, count, nullptr), H5Sclose);
  if (slab.count == 0) {
    H5Sselect_none(file_space);
    H5Sselect_none(memory_space);
  } else if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0) {
    fail(path, "cannot select this rank's slab of " + at);
  }
  std::vector<std::int64_t> values(static_cast<std::size_t>(slab.count));
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_INDEPENDENT);
  if (H5Dread(set, H5T_NATIVE_INT64, memory_space, file_space, dxpl, values.data()) < 0) fail(path, "cannot read " + at);
  return values;
}

/// Rows of the dataset `at` (0 if absent) and its columns (1 for a 1-d dataset).
std::pair<hsize_t, hsize_t> dataset_dims(hid_t file, const std::string& at) {
  if (H5Lexists(file, at.c_str(), H5P_DEFAULT) <= 0) return {0, 0};
  Handle set(H5Dopen2(file, at.c_str(), H5P_DEFAULT), H5Dclose);
  Handle space(H5Dget_space(set), H5Sclose);
  hsize_t dims[2] = {0, 1};
  if (H5Sget_simple_extent_dims(space, dims, nullptr) < 0) return {0, 0};
  return {dims[0], dims[1]};
}

/// The writer thread's work: every slab at its offset (pwrite), then fdatasync; throws naming the file. Returns
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

XdmfSeries::XdmfSeries(MPI_Comm comm, const std::string& directory, const LocalMesh& mesh, int nodes_per_cell,
                       XdmfOptions options, std::optional<double> resume_after)
    : comm_(comm),
      h5_path_((fs::path(directory) / "solution.h5").string()),
      xdmf_path_((fs::path(directory) / "solution.xdmf").string()),
      options_(std::move(options)),
      nodes_per_cell_(nodes_per_cell),
      n_owned_(mesh.n_owned) {
  MPI_Comm_rank(comm_, &rank_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported by fail(), not printed by HDF5 (initialises it)
  set_finalize_guard();                          // (after HDF5 set its MPI_COMM_SELF attribute)
  // The rows of this rank: its owned vertices where the PETSc numbering has them (checked: contiguous per rank),
  // its cells after those of the ranks before it.
  const auto local_cells = static_cast<GlobalIndex>(mesh.cell_global.size());
  GlobalIndex counts[2] = {mesh.n_owned, local_cells}, before[2] = {0, 0}, total[2] = {0, 0};
  MPI_Exscan(counts, before, 2, MPI_INT64_T, MPI_SUM, comm_);
  if (rank_ == 0) before[0] = before[1] = 0;  // (MPI_Exscan leaves rank 0's undefined)
  MPI_Allreduce(counts, total, 2, MPI_INT64_T, MPI_SUM, comm_);
  vertices_ = {before[0], counts[0], mesh.n_global_vertices};
  cells_ = {before[1], counts[1], mesh.n_global_cells};
  collectively([&] {
    bool contiguous = total[0] == mesh.n_global_vertices && total[1] == mesh.n_global_cells &&
                      before[0] == mesh.first_owned;
    for (LocalIndex v = 0; v < mesh.n_owned && contiguous; ++v)
      contiguous = mesh.global_vertex[static_cast<std::size_t>(v)] == mesh.first_owned + v;
    const std::size_t cells = nodes_per_cell_ == 4 ? mesh.mesh.tets.size() / 4 : mesh.mesh.triangles.size() / 3;
    if (!contiguous || cells != mesh.cell_global.size())
      throw std::logic_error("XDMF output: the partition's vertex numbers are not contiguous per rank");
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
  // A restart reuses the newest of the file's meshes that has this partition's rows, else adds this partition's.
  std::vector<std::string> meshes;
  collectively([&] { meshes = mesh_groups(static_cast<hid_t>(handle_)); });
  bool reused = false;
  for (auto m = meshes.rbegin(); m != meshes.rend() && !reused; ++m)
    if (same_layout(*m, mesh)) mesh_ = *m, reused = true;
  if (!reused) {
    mesh_ = meshes.empty() ? "/Mesh" : "/Mesh_" + std::to_string(meshes.size());
    collectively([&] { write_mesh(mesh, 0); });
    collectively([&] { write_mesh(mesh, 1); });
  }
  collectively([&] {
    // Bytes per vertex number of every listed step's mesh and this run's.
    std::vector<std::string> used{mesh_};
    for (const Step& s : steps_) used.push_back(s.mesh);
    for (const std::string& m : used) {
      if (std::any_of(topology_precision_.begin(), topology_precision_.end(), [&](const auto& p) { return p.first == m; }))
        continue;
      Handle set(H5Dopen2(static_cast<hid_t>(handle_), (m + "/topology").c_str(), H5P_DEFAULT), H5Dclose);
      if (!set.valid()) fail(h5_path_, "cannot open " + m + "/topology");
      Handle type(H5Dget_type(set), H5Tclose);
      topology_precision_.emplace_back(m, static_cast<int>(H5Tget_size(type)));
    }
    flush();
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

/// Runs f on every rank and agrees on the outcome with one MPI_Allreduce when every rank succeeded; on a failure
/// every rank throws CollectiveError with the lowest failing rank's message, and the file is marked broken_ (not
/// closed by the destructor) unless every failure left it whole (FileStaysWhole: check_room).
template <class F>
void XdmfSeries::collectively(F&& f) {
  int code = 0;  // 0: done, 1: failed with the file whole, 2: failed
  std::string message;
  try {
    f();
  } catch (const FileStaysWhole& e) {
    code = 1, message = e.what();
  } catch (const std::exception& e) {
    code = 2, message = e.what();
  }
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, comm_);
  if (worst == 0) return;
  agree_on_failure(comm_, code != 0, message);
  if (worst == 2) broken_ = true, any_broken = true;
  throw CollectiveError(message);
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
  // the slabs of the steps already listed.
  Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, false, 1);
  const hid_t file = H5Fcreate(h5_path_.c_str(), H5F_ACC_TRUNC, fcpl, fapl);
  if (file < 0) fail(h5_path_, "cannot create the file");
  handle_ = file;
}

bool XdmfSeries::same_layout(const std::string& name, const LocalMesh& mesh) {
  bool same = false;
  collectively([&] {
    const auto file = static_cast<hid_t>(handle_);
    const auto [cells, nodes] = dataset_dims(file, name + "/topology");
    const auto vertices = dataset_dims(file, name + "/geometry").first;
    // The same mesh, checked by its sizes (the checkpoint already matched the job and the vertices).
    if (static_cast<GlobalIndex>(cells) != mesh.n_global_cells || static_cast<int>(nodes) != nodes_per_cell_ ||
        static_cast<GlobalIndex>(vertices) != mesh.n_global_vertices)
      throw InputError(h5_path_ + ": its mesh " + name + " has " + std::to_string(vertices) + " vertices and " +
                       std::to_string(cells) + " cells of " + std::to_string(nodes) + " vertices, this run's " +
                       std::to_string(mesh.n_global_vertices) + " and " + std::to_string(mesh.n_global_cells) +
                       " of " + std::to_string(nodes_per_cell_) + ": not this job's series");
    // Written before the rows had their mesh-file numbers (the mesh-file order): another layout.
    if (dataset_dims(file, name + "/original_vertex").first != vertices ||
        dataset_dims(file, name + "/original_cell").first != cells)
      return;
    const std::vector<std::int64_t> v = read_slab(h5_path_, file, name + "/original_vertex", vertices_);
    const std::vector<std::int64_t> c = read_slab(h5_path_, file, name + "/original_cell", cells_);
    same = std::equal(v.begin(), v.end(), mesh.original_vertex.begin()) &&
           std::equal(c.begin(), c.end(), mesh.cell_global.begin());
  });
  int mine = same ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm_);
  return all == 1;
}

void XdmfSeries::write_mesh(const LocalMesh& mesh, int part) {
  const auto file = static_cast<hid_t>(handle_);
  int size = 1;
  MPI_Comm_size(comm_, &size);
  const int precision = mesh.n_global_vertices <= std::numeric_limits<std::int32_t>::max() ? 4 : 8;
  if (part == 0) topology_precision_.emplace_back(mesh_, precision);
  // int32 vertex numbers while they fit (half the bytes: the topology is the largest array written once).
  auto write_numbers = [&]<class I>(I, hid_t group, const char* name, const Slab& slab, int cols, auto&& number) {
    std::vector<I> values(static_cast<std::size_t>(slab.count) * static_cast<std::size_t>(cols));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<I>(number(i));
    write_slab(h5_path_, group, name, slab, cols, slab_bytes(values), options_.gzip, size, nullptr);
  };
  auto write_as = [&](hid_t group, const char* name, const Slab& slab, int cols, auto&& number) {
    if (precision == 4)
      write_numbers(std::int32_t{}, group, name, slab, cols, number);
    else
      write_numbers(std::int64_t{}, group, name, slab, cols, number);
  };
  if (part == 0) {  // the coordinates (in the mesh group, created here) and their mesh-file numbers
    Handle group(H5Gcreate2(file, mesh_.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!group.valid()) fail(h5_path_, "cannot create " + mesh_);
    const std::vector<double> owned_coords(mesh.mesh.coords.begin(),
                                           mesh.mesh.coords.begin() + 3 * static_cast<std::ptrdiff_t>(n_owned_));
    write_slab(h5_path_, group, "geometry", vertices_, 3, slab_bytes(owned_coords), options_.gzip, size, nullptr);
    write_as(group, "original_vertex", vertices_, 1, [&](std::size_t i) { return mesh.original_vertex[i]; });
    return;
  }
  Handle group(H5Gopen2(file, mesh_.c_str(), H5P_DEFAULT), H5Gclose);
  const std::vector<LocalIndex>& local = nodes_per_cell_ == 4 ? mesh.mesh.tets : mesh.mesh.triangles;
  write_as(group, "topology", cells_, nodes_per_cell_,
           [&](std::size_t i) { return mesh.global_vertex[static_cast<std::size_t>(local[i])]; });
  write_as(group, "original_cell", cells_, 1, [&](std::size_t i) { return mesh.cell_global[i]; });
}

std::vector<char> XdmfSeries::stored_slab(const DataArray& a, bool cell) const {
  // Point data: the owned vertices (the first n_owned); cell data: every local cell.
  const auto n = static_cast<std::ptrdiff_t>(cell ? cells_.count : n_owned_);
  const auto [components, size] = stored_layout(a, options_);
  const auto nc = static_cast<std::size_t>(components);
  std::vector<char> bytes(static_cast<std::size_t>(n) * nc * static_cast<std::size_t>(size));
  if (a.is_int) {
    if (!bytes.empty()) std::memcpy(bytes.data(), a.int_values.data(), bytes.size());
    return bytes;
  }
  const double* v = a.values.data();
  const auto given = static_cast<std::size_t>(a.n_components);
  const std::size_t tuples = a.values.size() / static_cast<std::size_t>(a.stored_components());
  auto convert = [&]<class T>(T) {
    T* out = reinterpret_cast<T*>(bytes.data());
    if (a.symmetric) {  // 6 components, component after component
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        const auto row = static_cast<std::size_t>(i);
        for (std::size_t c = 0; c < 6; ++c) out[6 * row + c] = static_cast<T>(v[c * tuples + row]);
      }
    } else if (nc != given) {  // a symmetric row-major 3 x 3: its 6
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        const auto row = static_cast<std::size_t>(i);
        for (std::size_t c = 0; c < 6; ++c)
          out[6 * row + c] = static_cast<T>(v[9 * row + static_cast<std::size_t>(symmetric_components[c])]);
      }
    } else {
      const auto values = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n) * nc);
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t k = 0; k < values; ++k) out[k] = static_cast<T>(v[k]);
    }
  };
  if (size == 4)
    convert(float{});
  else
    convert(double{});
  return bytes;
}

void XdmfSeries::write_field(hid_t group, const std::string& group_name, const DataArray& a, bool cell,
                             std::vector<char> slab) {
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
  const bool single = a.is_int || options_.single;
  SlabBytes values{a.is_int ? H5T_STD_I32LE : single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                   a.is_int ? H5T_NATIVE_INT32 : single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, std::move(slab)};
  write_slab(h5_path_, group, a.name, cell ? cells_ : vertices_, stored_layout(a, options_).first, std::move(values),
             options_.gzip, size, cell ? "Cell" : "Node", &deferred_);
}

void XdmfSeries::wait_writers() {
  if (pending_.valid()) {
    std::future<OutputTimes> pending = std::move(pending_);
    times_.merge(pending.get());  // this rank's slabs on disk (or their error)
  }
  if (listing_.valid()) listing_.get();  // rank 0: the last .xdmf rewrite (or its error)
}

void XdmfSeries::mark_complete() {
  const std::string name = step_group_name(pending_step_->step);
  Handle group(H5Gopen2(static_cast<hid_t>(handle_), name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail(h5_path_, "cannot open " + name);
  set_attribute<std::int32_t>(h5_path_, group, "complete", 1);
}

void XdmfSeries::flush() {
  if (H5Fflush(static_cast<hid_t>(handle_), H5F_SCOPE_GLOBAL) < 0) fail(h5_path_, "cannot flush the file");
}

void XdmfSeries::list_pending() {
  std::erase_if(steps_, [&](const Step& s) { return s.step == pending_step_->step; });
  steps_.push_back(std::move(*pending_step_));
  pending_step_.reset();
  if (rank_ != 0) return;
  // A failure to start the thread is the rewrite's error: thrown by the next wait (on every rank).
  try {
    listing_ = std::async(std::launch::async, [path = xdmf_path_, text = xdmf_text()] { write_file_atomically(path, text); });
  } catch (...) {
    std::promise<void> failed;
    failed.set_exception(std::current_exception());
    listing_ = failed.get_future();
  }
}

void XdmfSeries::finish() {
  if (!pending_step_) return;
  OutputLap lap;
  collectively([&] { wait_writers(); });  // this rank's slabs on disk (or their error, on every rank)
  lap.lap(times_, "wait_writer");
  collectively([&] {
    mark_complete();
    lap.lap(times_, "complete_mark");
    flush();
  });
  lap.lap(times_, "h5_flush");
  list_pending();
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
    set_string_attribute(h5_path_, group, "mesh", mesh_);
  } catch (...) {
    H5Gclose(group);
    throw;
  }
  return group;
}

XdmfSeries::Slabs XdmfSeries::begin_step(const VtuPiece& piece, OutputLap& lap) {
  Slabs slabs;
  try {
    prepare_step(piece, lap, slabs);
  } catch (const CollectiveError&) {
    if (broken_) throw;
    // This step refused (no room) with the file whole: the step before, on disk, is listed before the run ends.
    finish();
    wait_listed();
    throw;
  }
  lap.lap(times_, "agree");
  return slabs;
}

void XdmfSeries::prepare_step(const VtuPiece& piece, OutputLap& lap, Slabs& slabs) {
  collectively([&] {
    wait_writers();
    lap.lap(times_, "wait_writer");
    check_room(h5_path_, step_bytes(piece, vertices_.n_global, cells_.n_global, options_), rank_ == 0);
    lap.lap(times_, "room");
    for (int cell = 0; cell < 2; ++cell)
      for (const DataArray& a : cell ? piece.cell_data : piece.point_data) {
        const bool linked = !first_step_group_.empty() &&
                            std::find(options_.constant_fields.begin(), options_.constant_fields.end(), a.name) !=
                                options_.constant_fields.end();
        slabs[static_cast<std::size_t>(cell)].push_back(linked ? std::vector<char>{} : stored_slab(a, cell == 1));
      }
    lap.lap(times_, "convert");
  });
}

void XdmfSeries::start_writer() {
  if (!deferred_.empty()) {
    // A failure to start the thread is the writer's error: thrown by the next wait (on every rank).
    try {
      pending_ = std::async(std::launch::async, [path = h5_path_, blocks = std::move(deferred_)] {
        return write_deferred(path, blocks);
      });
    } catch (...) {
      std::promise<OutputTimes> failed;
      failed.set_exception(std::current_exception());
      pending_ = failed.get_future();
    }
  }
  deferred_.clear();
}

void XdmfSeries::write_step(long long step, double time, const VtuPiece& piece) {
  OutputLap lap;
  // (1) The step before's slabs on disk on every rank, room for this step (every rank's file-size limit; rank 0
  // reserves the slabs on the shared file system: refused here, the file stays whole and closes) and this step's
  // arrays as stored, this rank's slabs (no MPI).
  Slabs slabs = begin_step(piece, lap);
  // (2) The step before marked complete, this step's group and datasets created and the file flushed. The creation
  // changes only HDF5's metadata cache, the same on every rank (the space of a dataset is allocated, not written,
  // and its values go to the writer thread): one agreement for all of them, the flush (which writes: it can fail on
  // one rank alone) last. With gzip every field is written collectively here, each agreed on by itself, so that no
  // rank waits in a collective call after another's failure.
  const std::string name = step_group_name(step);
  const bool listing = pending_step_.has_value();
  Step listed{step, time, {}, mesh_};
  std::optional<Handle> group;
  std::vector<std::function<void()>> batch;
  auto agree = [&] {
    collectively([&] {
      for (const auto& f : batch) f();
    });
    batch.clear();
  };
  if (listing) batch.emplace_back([&] { mark_complete(); });
  batch.emplace_back([&] { group.emplace(create_step_group(name, step, time), H5Gclose); });
  for (int cell = 0; cell < 2; ++cell) {
    const std::vector<DataArray>& arrays = cell ? piece.cell_data : piece.point_data;
    for (std::size_t k = 0; k < arrays.size(); ++k) {
      const DataArray& a = arrays[k];
      if (options_.gzip) agree();
      batch.emplace_back([&, cell, field = &a, slab = &slabs[static_cast<std::size_t>(cell)][k]] {
        write_field(*group, name, *field, cell == 1, std::move(*slab));
      });
      if (options_.gzip) agree();
      const auto [components, precision] = stored_layout(a, options_);
      listed.fields.push_back({a.name, cell == 1, components, a.is_int, precision});
    }
  }
  batch.emplace_back([&] {
    group.reset();
    if (!listing) return;
    lap.lap(times_, "datasets");
    flush();
  });
  agree();
  lap.lap(times_, listing ? "h5_flush" : "datasets");  // (with the agreement)
  if (listing) {
    list_pending();
    lap.lap(times_, "xdmf_rewrite");
  }
  if (first_step_group_.empty()) first_step_group_ = name;
  pending_step_ = std::move(listed);
  start_writer();
  lap.lap(times_, "writer_start");
  if (options_.gzip) finish();  // written collectively in the step: listed now
}

void XdmfSeries::write_xdmf() const { write_file_atomically(xdmf_path_, xdmf_text()); }

std::string XdmfSeries::xdmf_text() const {
  const std::string h5 = fs::path(h5_path_).filename().string();
  const GlobalIndex nv = vertices_.n_global, nc = cells_.n_global;
  auto mesh_text = [&](const std::string& mesh) {
    int precision = 8;
    for (const auto& [name, bytes] : topology_precision_)
      if (name == mesh) precision = bytes;
    return std::string("        <Topology TopologyType=\"") + (nodes_per_cell_ == 4 ? "Tetrahedron" : "Triangle") +
           "\" NumberOfElements=\"" + std::to_string(nc) + "\" NodesPerElement=\"" + std::to_string(nodes_per_cell_) +
           "\">\n          " +
           data_item(std::to_string(nc) + " " + std::to_string(nodes_per_cell_), true, precision, h5,
                     mesh + "/topology") +
           "\n        </Topology>\n        <Geometry GeometryType=\"XYZ\">\n          " +
           data_item(std::to_string(nv) + " 3", false, 8, h5, mesh + "/geometry") + "\n        </Geometry>\n";
  };
  std::string xml =
      "<?xml version=\"1.0\"?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n"
      "    <Grid Name=\"solution\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const Step& s : steps_) {
    const std::string group = step_group_name(s.step);
    xml += "      <Grid Name=\"" + group.substr(7) + "\" GridType=\"Uniform\">\n        <Time Value=\"" +
           exact_text(s.time) + "\"/>\n" + mesh_text(s.mesh);
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
