// SPDX-License-Identifier: BSD-3-Clause
/// \file checkpoint.cpp
/// Partition-independent restart files (format and guarantees in checkpoint.hpp).
///
/// Implementation notes:
///  - The header values (step, time, dt, integrator, job text, field names, run id and start) are taken from
///    rank 0, which also stamps the write time; the other ranks only supply their owned vertices' field
///    values (their field_names may be empty).
///  - Each field is one collective MPI-IO access through a file view: the owned vertices sorted by
///    original index become an hindexed type (a block of 3 doubles per vertex at byte displacement
///    24 * original, runs of consecutive vertices merged into one block), resized to the field's extent
///    (N * 24 bytes). A rank that owns no vertex uses a plain MPI_DOUBLE view and accesses 0 values.
///    Values are permuted into / out of that sorted order in a buffer (no copy if already sorted).
///  - Every failure is collective: a rank that meets an error remembers it and still takes part in the
///    remaining collective calls of the current phase; at the end of each phase the ranks agree
///    (agree_on_failure) and all throw the lowest failing rank's message. Read errors about the file are
///    InputError on every rank; wrong arguments and write failures are CollectiveError.
///  - Writing goes to PATH.tmp (created or truncated to 0 bytes), MPI_File_sync, close, agreement (an
///    MPI_Allreduce: every rank has closed), then rank 0 checks the size, renames onto PATH and fsyncs the
///    directory. Validation happens before PATH.tmp is touched; any later failure removes PATH.tmp.
///  - Checksums (format version 2): each rank folds its sorted owned vertices, run by run, into a positioned CRC
///    register (crc32::Positioned) from the same buffer it writes or has read; one MPI_Allreduce (MPI_BXOR) per
///    write or read combines the fields' registers. Rank 0 writes the header and job text first, then, after the
///    fields and a collective reset of the file view to bytes, the checksum block and the end marker. On reading,
///    rank 0 checks everything but the fields (read_head, shared with read_checkpoint_info); every rank then
///    compares the combined field CRCs with the trailer's, so the verdict is the same everywhere.
#include "io/checkpoint.hpp"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "io/crc32.hpp"
#include "partition/collective.hpp"

namespace edgefem {

namespace {

namespace fs = std::filesystem;

// The file is little-endian and is written and read with the "native" MPI data representation, so the
// host must be little-endian (every platform edgefem targets is).
static_assert(std::endian::native == std::endian::little,
              "checkpoint files are little-endian: big-endian hosts are not supported");
static_assert(sizeof(double) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Aint) == 8);

constexpr std::size_t header_bytes = 512;
constexpr std::size_t name_bytes = 32;
constexpr std::size_t max_name_length = name_bytes - 1;
constexpr std::size_t max_fields = 8;
constexpr std::uint32_t format_version = 2;        ///< written; version 1 (no checksums) is still read
constexpr std::uint32_t cells_format_version = 3;  ///< written when there are cell fields
constexpr std::size_t vertex_bytes = 3 * sizeof(double);
constexpr std::size_t cell_width = 6;  ///< doubles per cell of a cell field
constexpr std::size_t cell_bytes = cell_width * sizeof(double);
constexpr char magic[16] = "EDGEFEM-CKPT";   // zero-padded to 16 bytes
constexpr char trailer[16] = "EDGEFEM-END";  // zero-padded to 16 bytes (the end marker)
/// Version 2: the checksum block before the end marker (CRC-32 of header, job text, each field slot, itself).
constexpr std::size_t checksum_bytes = 48;
constexpr std::size_t off_crc_header = 0, off_crc_job = 4, off_crc_fields = 8, off_crc_self = 40;
static_assert(off_crc_fields + 4 * max_fields == off_crc_self && off_crc_self + 8 == checksum_bytes);
/// Bounds that keep every offset far from int64 overflow (and rank 0's header + job text write in one
/// int-counted call); a header beyond them is corrupt.
constexpr std::int64_t max_vertices = std::int64_t{1} << 50;
constexpr std::uint64_t max_job_bytes = std::uint64_t{1} << 28;  // 256 MiB of YAML

// Header byte offsets. The run fields use bytes that the first files of version 1 left zero.
constexpr std::size_t off_version = 16, off_n_fields = 20, off_n_vertices = 24, off_step = 32, off_time = 40,
                      off_dt = 48, off_job_bytes = 56, off_integrator = 64, off_names = 96, off_run_id = 352,
                      off_run_started = 360, off_written = 368, off_n_cells = 376, off_n_cell_fields = 384;
static_assert(off_names + max_fields * name_bytes <= off_run_id && off_n_cell_fields + 4 <= header_bytes);

std::uint64_t padded8(std::uint64_t n) { return (n + 7) / 8 * 8; }

/// Where everything is in a file with these sizes.
struct Layout {
  std::int64_t n_vertices = 0;
  std::uint64_t n_fields = 0;
  std::uint64_t job_bytes = 0;
  std::uint32_t version = format_version;
  std::int64_t n_cells = 0;         ///< version 3
  std::uint64_t n_cell_fields = 0;  ///< version 3

  [[nodiscard]] MPI_Offset field_bytes() const {
    return static_cast<MPI_Offset>(n_vertices) * MPI_Offset{vertex_bytes};
  }
  [[nodiscard]] MPI_Offset field_offset(std::size_t f) const {
    return static_cast<MPI_Offset>(header_bytes + padded8(job_bytes)) + static_cast<MPI_Offset>(f) * field_bytes();
  }
  [[nodiscard]] MPI_Offset cell_field_offset(std::size_t f) const {
    return field_offset(n_fields) +
           static_cast<MPI_Offset>(f) * static_cast<MPI_Offset>(n_cells) * static_cast<MPI_Offset>(cell_bytes);
  }
  /// Where the checksum block (version 2) or the end marker (version 1) starts.
  [[nodiscard]] MPI_Offset trailer_offset() const { return cell_field_offset(n_cell_fields); }
  [[nodiscard]] MPI_Offset end_marker_offset() const {
    return trailer_offset() + (version >= 2 ? MPI_Offset{checksum_bytes} : MPI_Offset{0});
  }
  [[nodiscard]] MPI_Offset total_bytes() const { return end_marker_offset() + MPI_Offset{sizeof trailer}; }
};

/// The CRC-32s of a version-2 file (io/crc32.hpp: zlib's crc32 of those bytes).
struct Checksums {
  std::uint32_t header = 0;                        ///< the 512 header bytes
  std::uint32_t job = 0;                           ///< the job text with its zero padding
  std::array<std::uint32_t, max_fields> fields{};  ///< each field's N x 24 bytes; 0 for unused slots

  [[nodiscard]] std::vector<char> encode() const {
    std::vector<char> block(checksum_bytes, 0);
    std::memcpy(block.data() + off_crc_header, &header, 4);
    std::memcpy(block.data() + off_crc_job, &job, 4);
    std::memcpy(block.data() + off_crc_fields, fields.data(), 4 * max_fields);
    const std::uint32_t self = crc32::of(block.data(), off_crc_self);
    std::memcpy(block.data() + off_crc_self, &self, 4);
    return block;
  }
  /// The checksums of a block, or nothing if the block fails its own CRC.
  static std::optional<Checksums> decode(const char* block) {
    std::uint32_t self = 0;
    std::memcpy(&self, block + off_crc_self, 4);
    if (crc32::of(block, off_crc_self) != self) return std::nullopt;
    Checksums c;
    std::memcpy(&c.header, block + off_crc_header, 4);
    std::memcpy(&c.job, block + off_crc_job, 4);
    std::memcpy(c.fields.data(), block + off_crc_fields, 4 * max_fields);
    return c;
  }
};

std::string hex32(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

/// "PATH: damaged checkpoint: WHAT fails its CRC-32 check (the trailer records X, the file gives Y)".
void check_crc(const std::string& path, const std::string& what, std::uint32_t recorded, std::uint32_t computed) {
  if (recorded != computed) {
    throw DamagedCheckpoint(path + ": damaged checkpoint: " + what + " fails its CRC-32 check (the trailer records " +
                            hex32(recorded) + ", the file gives " + hex32(computed) + ")");
  }
}

template <class T>
void put(std::vector<char>& buf, std::size_t offset, T value) {
  std::memcpy(buf.data() + offset, &value, sizeof value);
}
template <class T>
T get(const std::vector<char>& buf, std::size_t offset) {
  T value;
  std::memcpy(&value, buf.data() + offset, sizeof value);
  return value;
}
void put_name(std::vector<char>& buf, std::size_t offset, const std::string& name) {
  std::memcpy(buf.data() + offset, name.data(), std::min(name.size(), name_bytes));
}
std::string get_name(const std::vector<char>& buf, std::size_t offset) {
  const char* p = buf.data() + offset;
  return std::string(p, ::strnlen(p, name_bytes));
}

/// What is read and checked before the fields: header, layout, job text, checksums (version 2).
struct Head {
  std::vector<char> header = std::vector<char>(header_bytes, 0);
  Layout layout;
  std::string job_text;
  Checksums checksums;  ///< version 2
};

/// The layout `header` announces, its counts checked. Throws InputError naming `path` for a format version it does
/// not read, DamagedCheckpoint for a count out of range.
Layout read_layout(const std::string& path, const std::vector<char>& header) {
  auto damaged = [&](const std::string& what) { throw DamagedCheckpoint(path + ": " + what); };
  Layout layout;
  layout.version = get<std::uint32_t>(header, off_version);
  if (layout.version < 1 || layout.version > cells_format_version) {
    throw InputError(path + ": checkpoint format version " + std::to_string(layout.version) +
                     ", this edgefem reads versions 1 to 3");
  }
  layout.n_fields = get<std::uint32_t>(header, off_n_fields);
  layout.n_vertices = get<std::int64_t>(header, off_n_vertices);
  layout.job_bytes = get<std::uint64_t>(header, off_job_bytes);
  if (layout.n_fields > max_fields) {
    damaged("corrupt checkpoint header: " + std::to_string(layout.n_fields) + " fields (at most " +
            std::to_string(max_fields) + ")");
  }
  if (layout.n_vertices < 0 || layout.n_vertices > max_vertices)
    damaged("corrupt checkpoint header: vertex count " + std::to_string(layout.n_vertices));
  if (layout.job_bytes > max_job_bytes)
    damaged("corrupt checkpoint header: job text of " + std::to_string(layout.job_bytes) + " bytes");
  if (layout.version >= 3) {
    layout.n_cells = get<std::int64_t>(header, off_n_cells);
    layout.n_cell_fields = get<std::uint32_t>(header, off_n_cell_fields);
    if (layout.n_fields + layout.n_cell_fields > max_fields)
      damaged("corrupt checkpoint header: " + std::to_string(layout.n_fields) + " fields and " +
              std::to_string(layout.n_cell_fields) + " cell fields (at most " + std::to_string(max_fields) +
              " together)");
    if (layout.n_cells < 0 || layout.n_cells > max_vertices)
      damaged("corrupt checkpoint header: cell count " + std::to_string(layout.n_cells));
  }
  return layout;
}

/// Reads and checks everything but the fields of a file of `size` bytes through
/// `read_at(offset, data, bytes, what)` (which throws on a failed or short read). Throws DamagedCheckpoint naming
/// `path` for a truncated or corrupt file or a checksum that does not match, InputError for a file that is not
/// a checkpoint or of another version.
template <class ReadAt>
Head read_head(const std::string& path, std::int64_t size, ReadAt&& read_at) {
  auto damaged = [&](const std::string& what) { throw DamagedCheckpoint(path + ": " + what); };
  if (size <= 0) damaged("truncated checkpoint: the file is empty");
  Head h;
  const std::size_t head_read = static_cast<std::size_t>(std::min<std::int64_t>(size, header_bytes));
  read_at(0, h.header.data(), head_read, "header");
  // A file shorter than the magic number must at least start like one to count as truncated.
  if (std::memcmp(h.header.data(), magic, std::min(head_read, sizeof magic)) != 0)
    throw InputError(path + ": not an edgefem checkpoint (wrong magic number)");
  if (head_read < header_bytes) {
    damaged("truncated checkpoint: the file has " + std::to_string(size) + " bytes, less than the " +
            std::to_string(header_bytes) + "-byte header");
  }
  // Version 2 ends with the checksums and the end marker: when they are there and intact, the header is checked
  // before any of its values is believed (a damaged count would otherwise read as a truncated file).
  const std::uint32_t header_crc = crc32::of(h.header.data(), header_bytes);
  std::optional<Checksums> tail;
  const std::size_t tail_bytes = checksum_bytes + sizeof trailer;
  if (static_cast<std::uint64_t>(size) >= header_bytes + tail_bytes) {
    std::vector<char> block(tail_bytes);
    read_at(size - static_cast<std::int64_t>(tail_bytes), block.data(), tail_bytes, "trailer");
    if (std::memcmp(block.data() + checksum_bytes, trailer, sizeof trailer) == 0)
      tail = Checksums::decode(block.data());
  }
  if (tail) check_crc(path, "the header", tail->header, header_crc);

  h.layout = read_layout(path, h.header);
  const Layout& layout = h.layout;
  if (size != layout.total_bytes()) {
    damaged(std::string(size < layout.total_bytes() ? "truncated" : "corrupt") + " checkpoint: the header announces " +
            std::to_string(layout.total_bytes()) + " bytes, the file has " + std::to_string(size));
  }
  char end[sizeof trailer];
  read_at(layout.end_marker_offset(), end, sizeof end, "end marker");
  if (std::memcmp(end, trailer, sizeof trailer) != 0)
    damaged("truncated or corrupt checkpoint: the end marker 'EDGEFEM-END' is missing");
  if (layout.version >= 2) {
    // The size matches and the end marker is in place: the tail read above is this file's checksum block.
    if (!tail) damaged("damaged checkpoint: the checksums in the trailer fail their own CRC-32 check");
    h.checksums = *tail;
  }
  std::string padded(static_cast<std::size_t>(padded8(layout.job_bytes)), '\0');
  if (!padded.empty()) read_at(header_bytes, padded.data(), padded.size(), "job text");
  if (layout.version >= 2) check_crc(path, "the job text", h.checksums.job, crc32::of(padded.data(), padded.size()));
  padded.resize(static_cast<std::size_t>(layout.job_bytes));
  h.job_text = std::move(padded);
  return h;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

/// Which exception a failure becomes on every rank.
enum class Kind : char {
  collective = 'C',  ///< CollectiveError (wrong arguments, a failed write)
  input = 'I',       ///< InputError (a problem with the file)
  damaged = 'D',     ///< DamagedCheckpoint (truncated, corrupt, a checksum that does not match)
};

/// The first error this rank met during a phase of collective calls.
struct Failure {
  std::string message;  ///< empty: none
  Kind kind = Kind::collective;

  void set(std::string text, Kind k = Kind::collective) {
    if (!message.empty()) return;
    message = std::move(text);
    kind = k;
  }
  /// Records a failed MPI call ("PATH: WHAT: <MPI error string>"); returns rc == MPI_SUCCESS.
  bool check_mpi(int rc, const std::string& path, const std::string& what, Kind k = Kind::collective) {
    if (rc != MPI_SUCCESS) set(path + ": " + what + ": " + mpi_error_text(rc), k);
    return rc == MPI_SUCCESS;
  }
  /// Records the exception of a local step.
  void set_from(const std::exception& e) {
    if (dynamic_cast<const DamagedCheckpoint*>(&e) != nullptr)
      set(e.what(), Kind::damaged);
    else if (dynamic_cast<const InputError*>(&e) != nullptr)
      set(e.what(), Kind::input);
    else
      set(e.what());
  }
};

/// Collective: true on every rank if any rank failed; `failure` then holds the lowest failing rank's
/// message and kind on every rank.
bool any_failed(MPI_Comm comm, Failure& failure) {
  std::string message;
  if (!failure.message.empty()) message = static_cast<char>(failure.kind) + failure.message;
  if (!agree_on_failure(comm, !failure.message.empty(), message)) return false;
  failure.kind = message.empty() ? Kind::collective : static_cast<Kind>(message.front());
  failure.message = message.empty() ? std::string("checkpoint: unknown failure") : message.substr(1);
  return true;
}

[[noreturn]] void raise(const Failure& failure) {
  if (failure.kind == Kind::damaged) throw DamagedCheckpoint(failure.message);
  if (failure.kind == Kind::input) throw InputError(failure.message);
  throw CollectiveError(failure.message);
}

/// Runs the local step f (which throws std::exception on failure) on every rank, then agrees.
template <class F>
void local_step(MPI_Comm comm, F&& f) {
  Failure failure;
  try {
    f();
  } catch (const std::exception& e) {
    failure.set_from(e);
  }
  if (any_failed(comm, failure)) raise(failure);
}

[[noreturn]] void checkpoint_fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

/// Checks `owned` (indices in [0, n_vertices), no repeats, at most INT_MAX / 3 of them) and returns the
/// positions of `owned` sorted by original index.
std::vector<std::size_t> sorted_positions(const std::string& path, std::int64_t n_vertices,
                                          std::span<const std::int64_t> owned, int rank, bool cells = false) {
  const std::string item = cells ? "cell" : "vertex", items = cells ? "cells" : "vertices";
  const int limit = INT_MAX / (cells ? 6 : 3);
  if (owned.size() > static_cast<std::size_t>(limit)) {
    checkpoint_fail(path, "rank " + std::to_string(rank) + " owns " + std::to_string(owned.size()) + " " + items +
                   ", more than one MPI-IO call can transfer (" + std::to_string(limit) + ")");
  }
  for (std::size_t i = 0; i < owned.size(); ++i) {
    if (owned[i] < 0 || owned[i] >= n_vertices) {
      checkpoint_fail(path, "rank " + std::to_string(rank) + ": owned " + item + " " + std::to_string(i) + " has original index " +
                     std::to_string(owned[i]) + ", outside [0, " + std::to_string(n_vertices) + ")");
    }
  }
  std::vector<std::size_t> order(owned.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!std::is_sorted(owned.begin(), owned.end())) {
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return owned[a] < owned[b]; });
  }
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (owned[order[k]] == owned[order[k - 1]]) {
      checkpoint_fail(path, "rank " + std::to_string(rank) + " lists " + item + " " + std::to_string(owned[order[k]]) +
                     " twice among its owned " + items);
    }
  }
  return order;
}

/// The file type selecting this rank's vertices (in `order`) inside one field: one block per run of
/// consecutive original indices (a partition of a mesh numbered along one direction owns long runs; the
/// fewer the blocks, the faster the collective I/O), extent one field. MPI_DOUBLE if it owns no vertex.
class FieldView {
 public:
  FieldView(std::span<const std::int64_t> owned, const std::vector<std::size_t>& order, std::int64_t n_vertices,
            int width = 3) {
    if (order.empty()) return;
    std::vector<MPI_Aint> displacements;
    std::vector<int> lengths;  // in doubles
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::int64_t v = owned[order[k]];
      if (k > 0 && v == owned[order[k - 1]] + 1) {
        lengths.back() += width;
      } else {
        displacements.push_back(static_cast<MPI_Aint>(v) * static_cast<MPI_Aint>(width * sizeof(double)));
        lengths.push_back(width);
      }
    }
    MPI_Datatype blocks = MPI_DATATYPE_NULL;
    MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_DOUBLE,
                             &blocks);
    MPI_Type_create_resized(blocks, 0,
                            static_cast<MPI_Aint>(n_vertices) * static_cast<MPI_Aint>(width * sizeof(double)), &type_);
    MPI_Type_free(&blocks);
    MPI_Type_commit(&type_);
    owns_type_ = true;
  }
  FieldView(const FieldView&) = delete;
  FieldView& operator=(const FieldView&) = delete;
  ~FieldView() {
    if (owns_type_) MPI_Type_free(&type_);
  }
  [[nodiscard]] MPI_Datatype type() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DOUBLE;
  bool owns_type_ = false;
};

/// The directory holding `path` ("." for a bare name).
fs::path parent_directory(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

/// fsync a directory so a rename in it is durable; filesystems that cannot (EINVAL, EROFS) are tolerated.
void fsync_directory(const std::string& path, const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) checkpoint_fail(path, "cannot open directory '" + dir.string() + "' for fsync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL && err != EROFS) {
    checkpoint_fail(path, "fsync of directory '" + dir.string() + "' failed: " + std::strerror(err));
  }
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}
int comm_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

/// Collective, after every rank checked its own indices and the owned counts add up to n_vertices: checks
/// that no vertex is owned twice (hence none is unowned). Rank r gathers the indices in its block
/// [r*B, (r+1)*B) of the vertex range (B = ceil(N / P)) and marks them: O(N / P) memory per rank.
void check_exclusive_ownership(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                               std::span<const std::int64_t> owned, const std::string& item) {
  const int size = comm_size(comm);
  const int rank = comm_rank(comm);
  if (size == 1) return;  // no local repeats + count == N already prove it
  const std::int64_t block = std::max<std::int64_t>(1, (n_vertices + size - 1) / size);
  std::vector<int> send_counts(static_cast<std::size_t>(size), 0), recv_counts(static_cast<std::size_t>(size), 0);
  for (const std::int64_t g : owned) ++send_counts[static_cast<std::size_t>(g / block)];
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  std::vector<int> send_offsets(static_cast<std::size_t>(size) + 1, 0),
      recv_offsets(static_cast<std::size_t>(size) + 1, 0);
  for (int p = 0; p < size; ++p) {
    send_offsets[p + 1] = send_offsets[p] + send_counts[p];
    recv_offsets[p + 1] = recv_offsets[p] + recv_counts[p];  // <= block values in total when ownership is exclusive
  }
  std::vector<std::int64_t> send(owned.size());
  {
    std::vector<int> next(send_offsets.begin(), send_offsets.end() - 1);
    for (const std::int64_t g : owned) send[static_cast<std::size_t>(next[static_cast<std::size_t>(g / block)]++)] = g;
  }
  std::vector<std::int64_t> received(static_cast<std::size_t>(recv_offsets[size]));
  MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_INT64_T, received.data(), recv_counts.data(),
                recv_offsets.data(), MPI_INT64_T, comm);
  local_step(comm, [&] {
    const std::int64_t begin = std::min(n_vertices, static_cast<std::int64_t>(rank) * block);
    const std::int64_t end = std::min(n_vertices, begin + block);
    std::vector<unsigned char> seen(static_cast<std::size_t>(end - begin), 0);
    for (const std::int64_t g : received) {
      unsigned char& s = seen[static_cast<std::size_t>(g - begin)];
      if (s != 0) checkpoint_fail(path, item + " " + std::to_string(g) + " is owned by more than one rank");
      s = 1;
    }
    // Unreachable when the counts add up, kept as a guard.
    for (std::size_t i = 0; i < seen.size(); ++i) {
      if (seen[i] == 0) {
        checkpoint_fail(path, item + " " + std::to_string(begin + static_cast<std::int64_t>(i)) + " is owned by no rank");
      }
    }
  });
}

/// Collective: every vertex in [0, n_vertices) owned by exactly one rank (the owned counts add up to
/// n_vertices, and no vertex is owned twice).
void check_ownership(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                     std::span<const std::int64_t> owned, bool cells = false) {
  std::int64_t mine = static_cast<std::int64_t>(owned.size()), total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  const std::string items = cells ? " cells" : " vertices";
  if (total != n_vertices) {
    throw CollectiveError(path + ": the ranks own " + std::to_string(total) + items + " in total, the mesh has " +
                          std::to_string(n_vertices));
  }
  check_exclusive_ownership(comm, path, n_vertices, owned, cells ? "cell" : "vertex");
}

/// Collective: rank 0's sizes (vertices, fields, job text) and path define the file. Returns the layout and
/// sets `root_path` to rank 0's path on every rank.
Layout broadcast_root_layout(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                             const CheckpointState& state, std::string& root_path) {
  std::array<std::int64_t, 6> root{n_vertices,
                                   static_cast<std::int64_t>(state.field_names.size()),
                                   static_cast<std::int64_t>(state.job_text.size()),
                                   static_cast<std::int64_t>(path.size()),
                                   state.n_cells,
                                   static_cast<std::int64_t>(state.cell_field_names.size())};
  MPI_Bcast(root.data(), 6, MPI_INT64_T, 0, comm);
  root_path = path;
  root_path.resize(static_cast<std::size_t>(root[3]));
  MPI_Bcast(root_path.data(), static_cast<int>(root[3]), MPI_CHAR, 0, comm);
  Layout layout{root[0], static_cast<std::uint64_t>(root[1]), static_cast<std::uint64_t>(root[2])};
  layout.n_cells = root[4];
  layout.n_cell_fields = static_cast<std::uint64_t>(root[5]);
  if (layout.n_cell_fields > 0) layout.version = cells_format_version;
  return layout;
}

/// Rank 0's part of the argument check: the values only its header holds (directory, field names, integrator
/// name, job text size). Throws naming `path`.
void check_header_values(const std::string& path, const CheckpointState& state) {
  const fs::path dir = parent_directory(path);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) checkpoint_fail(path, "directory '" + dir.string() + "' does not exist");
  if (state.field_names.size() > max_fields) {
    checkpoint_fail(path, std::to_string(state.field_names.size()) + " fields, a checkpoint holds at most " +
                   std::to_string(max_fields));
  }
  if (state.fields.size() != state.field_names.size()) {
    checkpoint_fail(path, std::to_string(state.field_names.size()) + " field names but " + std::to_string(state.fields.size()) +
                   " fields");
  }
  if (state.field_names.size() + state.cell_field_names.size() > max_fields) {
    checkpoint_fail(path, std::to_string(state.field_names.size()) + " fields and " +
                   std::to_string(state.cell_field_names.size()) + " cell fields, a checkpoint holds at most " +
                   std::to_string(max_fields) + " together");
  }
  auto check_name = [&](const std::string& name, const std::string& what) {
    if (name.size() > max_name_length) {
      checkpoint_fail(path, what + " '" + name + "' is longer than " + std::to_string(max_name_length) + " characters");
    }
    if (name.find('\0') != std::string::npos) checkpoint_fail(path, what + " contains a NUL character");
  };
  check_name(state.integrator, "integrator name");
  std::vector<std::string> names = state.field_names;  // vertex and cell fields share the name slots
  names.insert(names.end(), state.cell_field_names.begin(), state.cell_field_names.end());
  for (std::size_t f = 0; f < names.size(); ++f) {
    if (names[f].empty()) checkpoint_fail(path, "field " + std::to_string(f) + " has an empty name");
    check_name(names[f], "field name");
    for (std::size_t g = 0; g < f; ++g) {
      if (names[g] == names[f]) checkpoint_fail(path, "field name '" + names[f] + "' given twice");
    }
  }
  if (state.job_text.size() > max_job_bytes) {
    checkpoint_fail(path, "job text of " + std::to_string(state.job_text.size()) + " bytes (at most " +
                   std::to_string(max_job_bytes) + ")");
  }
}

/// This rank's write_checkpoint arguments, checked against rank 0's (`root_path`, `layout`) and on their own;
/// returns the positions of the owned vertices sorted by original index. Throws naming the file.
std::vector<std::size_t> check_write_arguments(const std::string& path, const std::string& root_path,
                                               const Layout& layout, std::int64_t n_vertices,
                                               std::span<const std::int64_t> owned_original,
                                               const CheckpointState& state, int rank) {
  if (root_path.empty()) checkpoint_fail("write_checkpoint", "empty file name");
  if (path != root_path) {
    checkpoint_fail(root_path,
         "write_checkpoint called with a different path on rank " + std::to_string(rank) + " ('" + path + "')");
  }
  if (n_vertices != layout.n_vertices) {
    checkpoint_fail(path, "rank " + std::to_string(rank) + " passes n_vertices = " + std::to_string(n_vertices) +
                   ", rank 0 passes " + std::to_string(layout.n_vertices));
  }
  if (n_vertices < 0 || n_vertices > max_vertices) checkpoint_fail(path, "invalid vertex count " + std::to_string(n_vertices));
  if (rank == 0) check_header_values(path, state);
  if (state.fields.size() != layout.n_fields) {
    checkpoint_fail(path, "rank " + std::to_string(rank) + " passes " + std::to_string(state.fields.size()) +
                   " fields, rank 0 names " + std::to_string(layout.n_fields));
  }
  for (std::size_t f = 0; f < state.fields.size(); ++f) {
    if (state.fields[f].size() != 3 * owned_original.size()) {
      const std::string name = f < state.field_names.size() ? "'" + state.field_names[f] + "'" : std::to_string(f);
      checkpoint_fail(path, "field " + name + " on rank " + std::to_string(rank) + " has " +
                     std::to_string(state.fields[f].size()) + " values, expected 3 x " +
                     std::to_string(owned_original.size()) + " owned vertices");
    }
  }
  if (state.n_cells != layout.n_cells || state.cell_fields.size() != layout.n_cell_fields ||
      state.cell_field_names.size() != state.cell_fields.size()) {
    checkpoint_fail(path, "rank " + std::to_string(rank) + " passes " + std::to_string(state.cell_fields.size()) +
                   " cell fields (" + std::to_string(state.cell_field_names.size()) + " names) of " +
                   std::to_string(state.n_cells) + " cells, rank 0 names " + std::to_string(layout.n_cell_fields) +
                   " of " + std::to_string(layout.n_cells));
  }
  if (state.n_cells < 0 || state.n_cells > max_vertices)
    checkpoint_fail(path, "invalid cell count " + std::to_string(state.n_cells));
  for (std::size_t f = 0; f < state.cell_fields.size(); ++f) {
    if (state.cell_fields[f].size() != cell_width * state.owned_cells.size()) {
      checkpoint_fail(path, "cell field '" + state.cell_field_names[f] + "' on rank " + std::to_string(rank) + " has " +
                     std::to_string(state.cell_fields[f].size()) + " values, expected 6 x " +
                     std::to_string(state.owned_cells.size()) + " cells");
    }
  }
  return sorted_positions(path, n_vertices, owned_original, rank);
}

/// What rank 0 writes at offset 0: the header, then the job text padded to 8 bytes.
std::vector<char> encode_header(const Layout& layout, const CheckpointState& state) {
  std::vector<char> head(header_bytes + padded8(state.job_text.size()), 0);
  std::memcpy(head.data(), magic, sizeof magic);
  put<std::uint32_t>(head, off_version, layout.version);
  put<std::uint32_t>(head, off_n_fields, static_cast<std::uint32_t>(layout.n_fields));
  put<std::int64_t>(head, off_n_vertices, layout.n_vertices);
  put<std::int64_t>(head, off_step, state.step);
  put<double>(head, off_time, state.time);
  put<double>(head, off_dt, state.dt);
  put<std::uint64_t>(head, off_job_bytes, layout.job_bytes);
  put<std::uint64_t>(head, off_run_id, state.run_id);
  put<std::int64_t>(head, off_run_started, state.run_started);
  put<std::int64_t>(head, off_written, unix_time_ns());
  put_name(head, off_integrator, state.integrator);
  for (std::size_t f = 0; f < state.field_names.size(); ++f)
    put_name(head, off_names + f * name_bytes, state.field_names[f]);
  if (layout.version >= cells_format_version) {
    put<std::int64_t>(head, off_n_cells, layout.n_cells);
    put<std::uint32_t>(head, off_n_cell_fields, static_cast<std::uint32_t>(layout.n_cell_fields));
    for (std::size_t f = 0; f < state.cell_field_names.size(); ++f)
      put_name(head, off_names + (state.field_names.size() + f) * name_bytes, state.cell_field_names[f]);
  }
  std::memcpy(head.data() + header_bytes, state.job_text.data(), state.job_text.size());
  return head;
}

/// The header values of a checkpoint (everything but the job text and the fields).
CheckpointState decode_header(const std::vector<char>& head, std::size_t n_fields, std::size_t n_cell_fields) {
  CheckpointState state;
  state.step = get<std::int64_t>(head, off_step);
  state.time = get<double>(head, off_time);
  state.dt = get<double>(head, off_dt);
  state.integrator = get_name(head, off_integrator);
  state.run_id = get<std::uint64_t>(head, off_run_id);
  state.run_started = get<std::int64_t>(head, off_run_started);
  state.written = get<std::int64_t>(head, off_written);
  for (std::size_t f = 0; f < n_fields; ++f) state.field_names.push_back(get_name(head, off_names + f * name_bytes));
  for (std::size_t f = 0; f < n_cell_fields; ++f)
    state.cell_field_names.push_back(get_name(head, off_names + (n_fields + f) * name_bytes));
  return state;
}

/// After a successful collective access of `count` doubles: records a short transfer ("PATH: WHAT: VERB n of
/// count values") in `failure`.
void check_count(Failure& failure, MPI_Status& status, int count, const std::string& path, const std::string& what,
                 const char* verb, Kind kind = Kind::collective) {
  int moved = count;  // (ROMIO leaves the status of a 0-count access unset)
  if (count > 0) MPI_Get_count(&status, MPI_DOUBLE, &moved);
  if (moved != count) {
    failure.set(path + ": " + what + ": " + verb + " " + std::to_string(moved) + " of " + std::to_string(count) +
                    " values",
                kind);
  }
}

/// One rank's access to the fields of an open checkpoint file: its owned vertices' original indices,
/// `order` (their positions sorted by original index) and where failures are recorded.
struct FieldAccess {
  MPI_File fh;
  const std::string& path;
  std::span<const std::int64_t> owned;
  const std::vector<std::size_t>& order;
  std::int64_t n_vertices;  ///< the items of a field: vertices, or cells (width 6)
  Failure& failure;
  std::size_t width = 3;  ///< doubles per item
};

/// Collective: creates (or truncates) `tmp` on every rank, errors returned; throws on every rank if any fails.
/// Returns after every rank's truncation of a stale file is done.
MPI_File create_temporary(MPI_Comm comm, const std::string& path, const std::string& tmp, Failure& failure) {
  MPI_File fh = MPI_FILE_NULL;
  failure.check_mpi(MPI_File_open(comm, tmp.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), path,
                    "cannot create '" + tmp + "'");
  if (any_failed(comm, failure)) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    raise(failure);
  }
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  failure.check_mpi(MPI_File_set_size(fh, 0), path, "cannot truncate '" + tmp + "'");
  MPI_Barrier(comm);  // no rank writes before every rank's truncation of a stale PATH.tmp is done
  return fh;
}

/// Rank 0: the header and job text at offset 0 of `tmp`; returns their checksums.
Checksums write_header(MPI_File fh, const std::string& path, const std::string& tmp, const Layout& layout,
                       const CheckpointState& state, Failure& failure) {
  const std::vector<char> head = encode_header(layout, state);
  Checksums checksums;
  checksums.header = crc32::of(head.data(), header_bytes);
  checksums.job = crc32::of(head.data() + header_bytes, head.size() - header_bytes);
  MPI_Status status;
  failure.check_mpi(MPI_File_write_at(fh, 0, head.data(), static_cast<int>(head.size()), MPI_BYTE, &status), path,
                    "writing the header to '" + tmp + "'");
  return checksums;
}

/// Rank 0: the checksum block and the end marker after the fields of `tmp`.
void write_trailer(MPI_File fh, const std::string& path, const std::string& tmp, const Layout& layout,
                   const Checksums& checksums, Failure& failure) {
  std::vector<char> block = checksums.encode();
  block.insert(block.end(), trailer, trailer + sizeof trailer);
  MPI_Status status;
  failure.check_mpi(MPI_File_write_at(fh, layout.trailer_offset(), block.data(), static_cast<int>(block.size()),
                                      MPI_BYTE, &status),
                    path, "writing the checksums and the end marker to '" + tmp + "'");
}

/// This rank's contribution to the CRC-32 of one field (crc32::Positioned): `data` holds the values of its owned
/// vertices sorted by original index, each run of consecutive vertices at its place in the field.
/// The OpenMP threads each fold a contiguous share of the vertices (contributions of disjoint parts XOR together).
std::uint32_t field_contribution(const FieldAccess& file, const double* data) {
  const std::size_t item_bytes = file.width * sizeof(double);
  const std::uint64_t length = static_cast<std::uint64_t>(file.n_vertices) * item_bytes;
  const std::size_t m = file.order.size();
  const int shares = m < 65536 ? 1 : omp_get_max_threads();
  std::uint32_t sum = 0;
#pragma omp parallel for reduction(^ : sum) schedule(static, 1) num_threads(shares)
  for (int share = 0; share < shares; ++share) {
    crc32::Positioned crc(length);
    const std::size_t end_share = m * static_cast<std::size_t>(share + 1) / static_cast<std::size_t>(shares);
    for (std::size_t k = m * static_cast<std::size_t>(share) / static_cast<std::size_t>(shares); k < end_share;) {
      const std::int64_t first = file.owned[file.order[k]];
      std::size_t end = k + 1;
      while (end < end_share && file.owned[file.order[end]] == first + static_cast<std::int64_t>(end - k)) ++end;
      crc.add(static_cast<std::uint64_t>(first) * item_bytes, data + file.width * k, (end - k) * item_bytes);
      k = end;
    }
    sum ^= crc.contribution();
  }
  return sum;
}

/// Collective: the CRC-32 of every field from the ranks' contributions (the same on every rank).
std::vector<std::uint32_t> combine_field_crcs(MPI_Comm comm, std::vector<std::uint32_t> contributions,
                                              std::int64_t n_vertices, std::size_t item_bytes = vertex_bytes) {
  MPI_Allreduce(MPI_IN_PLACE, contributions.data(), static_cast<int>(contributions.size()), MPI_UINT32_T, MPI_BXOR,
                comm);
  for (std::uint32_t& crc : contributions)
    crc = crc32::Positioned::finish(crc, static_cast<std::uint64_t>(n_vertices) * item_bytes);
  return contributions;
}

/// Collective: writes this rank's values of every field (in sorted order) through its field view; returns its
/// contribution to each field's CRC-32.
std::vector<std::uint32_t> write_fields(const FieldAccess& file, const std::string& tmp, const Layout& layout,
                                        const std::vector<std::vector<double>>& fields, bool cells = false) {
  const std::size_t w = file.width;
  const FieldView view(file.owned, file.order, file.n_vertices, static_cast<int>(w));
  const bool identity = std::is_sorted(file.owned.begin(), file.owned.end());
  std::vector<double> buffer(identity ? 0 : w * file.order.size());
  const int count = static_cast<int>(w * file.order.size());
  const std::size_t n_fields = cells ? layout.n_cell_fields : layout.n_fields;
  std::vector<std::uint32_t> contributions(n_fields, 0);
  for (std::size_t f = 0; f < n_fields; ++f) {
    const std::vector<double>& values = fields[f];
    if (!identity) {
      for (std::size_t k = 0; k < file.order.size(); ++k) {
        for (std::size_t d = 0; d < w; ++d) buffer[w * k + d] = values[w * file.order[k] + d];
      }
    }
    const double* data = identity ? values.data() : buffer.data();
    contributions[f] = field_contribution(file, data);
    const std::string what = std::string(cells ? "writing cell field " : "writing field ") + std::to_string(f) +
                             " to '" + tmp + "'";
    const MPI_Offset offset = cells ? layout.cell_field_offset(f) : layout.field_offset(f);
    file.failure.check_mpi(MPI_File_set_view(file.fh, offset, MPI_DOUBLE, view.type(), "native", MPI_INFO_NULL),
                           file.path, what);
    MPI_Status status;
    if (file.failure.check_mpi(MPI_File_write_all(file.fh, data, count, MPI_DOUBLE, &status), file.path, what))
      check_count(file.failure, status, count, file.path, what, "wrote");
  }
  return contributions;
}

/// Rank 0, once every rank has closed `tmp`: checks its size, renames it onto `path` and fsyncs the directory.
/// A failure is recorded in `failure` and `tmp` removed.
void commit_on_root(const std::string& path, const std::string& tmp, const Layout& layout, Failure& failure) {
  try {
    std::error_code ec;
    const auto size = fs::file_size(tmp, ec);
    if (ec) checkpoint_fail(path, "cannot stat '" + tmp + "': " + ec.message());
    if (size != static_cast<std::uintmax_t>(layout.total_bytes())) {
      checkpoint_fail(path, "'" + tmp + "' has " + std::to_string(size) + " bytes after writing, expected " +
                     std::to_string(layout.total_bytes()));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      checkpoint_fail(path, "cannot rename '" + tmp + "' into place: " + std::strerror(errno));
    }
    fsync_directory(path, parent_directory(path));
  } catch (const std::exception& e) {
    failure.set(e.what());
    ::unlink(tmp.c_str());  // if the rename failed (ENOENT otherwise: harmless)
  }
}

/// Collective: opens `path` for reading on every rank, errors returned (rank 0 first looks for the file, for a
/// plain message in the common case). Throws InputError on every rank if any rank cannot open it.
MPI_File open_checkpoint(MPI_Comm comm, const std::string& path, Failure& failure) {
  if (comm_rank(comm) == 0) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (st.type() == fs::file_type::not_found)
      failure.set(path + ": cannot open the checkpoint: no such file", Kind::input);
    else if (st.type() == fs::file_type::directory)
      failure.set(path + ": cannot open the checkpoint: it is a directory", Kind::input);
  }
  if (any_failed(comm, failure)) raise(failure);
  MPI_File fh = MPI_FILE_NULL;
  failure.check_mpi(MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), path,
                    "cannot open the checkpoint", Kind::input);
  if (any_failed(comm, failure)) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    raise(failure);
  }
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  return fh;
}

/// Rank 0: reads and checks everything but the fields of an open checkpoint (read_head). Throws InputError or
/// DamagedCheckpoint naming `path`.
Head read_header(MPI_File fh, const std::string& path) {
  MPI_Offset size = 0;
  Failure io;
  if (!io.check_mpi(MPI_File_get_size(fh, &size), path, "cannot get the file size", Kind::input))
    throw InputError(io.message);
  auto read_at = [&](std::int64_t offset, char* data, std::size_t bytes, const char* what) {
    MPI_Status status;
    if (!io.check_mpi(MPI_File_read_at(fh, offset, data, static_cast<int>(bytes), MPI_BYTE, &status), path,
                      std::string("reading the ") + what, Kind::input)) {
      throw InputError(io.message);
    }
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != static_cast<int>(bytes)) throw DamagedCheckpoint(path + ": short read of the " + what);
  };
  return read_head(path, size, read_at);
}

/// Collective: rank 0's header, job text and checksums to every rank.
void broadcast_head(MPI_Comm comm, Head& h) {
  MPI_Bcast(h.header.data(), static_cast<int>(header_bytes), MPI_CHAR, 0, comm);
  std::int64_t job_bytes = static_cast<std::int64_t>(h.job_text.size());
  MPI_Bcast(&job_bytes, 1, MPI_INT64_T, 0, comm);
  h.job_text.resize(static_cast<std::size_t>(job_bytes));
  MPI_Bcast(h.job_text.data(), static_cast<int>(job_bytes), MPI_CHAR, 0, comm);
  std::array<std::uint32_t, 2 + max_fields> crcs{};
  crcs[0] = h.checksums.header, crcs[1] = h.checksums.job;
  std::copy(h.checksums.fields.begin(), h.checksums.fields.end(), crcs.begin() + 2);
  MPI_Bcast(crcs.data(), static_cast<int>(crcs.size()), MPI_UINT32_T, 0, comm);
  h.checksums.header = crcs[0], h.checksums.job = crcs[1];
  std::copy(crcs.begin() + 2, crcs.end(), h.checksums.fields.begin());
  h.layout = Layout{get<std::int64_t>(h.header, off_n_vertices), get<std::uint32_t>(h.header, off_n_fields),
                    static_cast<std::uint64_t>(job_bytes), get<std::uint32_t>(h.header, off_version)};
  if (h.layout.version >= cells_format_version) {
    h.layout.n_cells = get<std::int64_t>(h.header, off_n_cells);
    h.layout.n_cell_fields = get<std::uint32_t>(h.header, off_n_cell_fields);
  }
}

/// Closes `fh` and throws `failure` (on every rank, once all have agreed on it).
[[noreturn]] void close_and_raise(MPI_File& fh, const Failure& failure) {
  MPI_File_close(&fh);
  raise(failure);
}

/// Collective: rank 0 reads and checks the header, job text and trailer of the open `fh` (read_header), then
/// every rank gets them (broadcast_head). If rank 0 fails, closes `fh` and throws on every rank.
Head share_head(MPI_Comm comm, MPI_File& fh, const std::string& path, Failure& failure) {
  Head h;
  if (comm_rank(comm) == 0) {
    try {
      h = read_header(fh, path);
    } catch (const std::exception& e) {
      failure.set_from(e);
    }
  }
  if (any_failed(comm, failure)) close_and_raise(fh, failure);
  broadcast_head(comm, h);
  return h;
}

/// Collective: the checkpoint's vertex count is the job mesh's `n_vertices`, and, when its cell fields are read
/// (`read_cells`), its cell count is `n_cells`. Otherwise closes `fh` and throws InputError on every rank.
void check_mesh_sizes(MPI_Comm comm, MPI_File& fh, const std::string& path, const Layout& layout,
                      std::int64_t n_vertices, bool read_cells, std::int64_t n_cells, Failure& failure) {
  if (layout.n_vertices != n_vertices) {
    failure.set(path + ": checkpoint has " + std::to_string(layout.n_vertices) + " vertices, the job's mesh has " +
                    std::to_string(n_vertices),
                Kind::input);
  }
  if (read_cells && layout.n_cells != n_cells) {
    failure.set(path + ": checkpoint has " + std::to_string(layout.n_cells) + " cells, the job's mesh has " +
                    std::to_string(n_cells),
                Kind::input);
  }
  if (any_failed(comm, failure)) close_and_raise(fh, failure);
}

/// Collective: the CRC-32 of each field (`what` and its name: "field 'u'", "cell field 'p'"), combined from the
/// ranks' `contributions` over `n_items` items of `item_bytes`, against the trailer's `recorded` ones; the first
/// mismatch goes to `failure` (a damaged checkpoint).
void verify_field_crcs(MPI_Comm comm, const std::string& path, const char* what, const std::vector<std::string>& names,
                       const std::uint32_t* recorded, const std::vector<std::uint32_t>& contributions,
                       std::int64_t n_items, std::size_t item_bytes, Failure& failure) {
  const std::vector<std::uint32_t> crcs = combine_field_crcs(comm, contributions, n_items, item_bytes);
  for (std::size_t f = 0; f < crcs.size() && failure.message.empty(); ++f) {
    try {
      check_crc(path, what + ("'" + names[f] + "'"), recorded[f], crcs[f]);
    } catch (const DamagedCheckpoint& e) {
      failure.set(e.what(), Kind::damaged);
    }
  }
}

/// Collective: reads this rank's values of every field (named `field_names`) through its field view; puts its
/// contribution to each field's CRC-32 into `contributions`.
std::vector<std::vector<double>> read_fields(const FieldAccess& file, const Layout& layout,
                                             const std::vector<std::string>& field_names,
                                             std::vector<std::uint32_t>& contributions, bool cells = false) {
  const std::size_t w = file.width;
  const FieldView view(file.owned, file.order, file.n_vertices, static_cast<int>(w));
  std::vector<double> buffer(w * file.order.size());
  const int count = static_cast<int>(buffer.size());
  const std::size_t n_fields = cells ? layout.n_cell_fields : layout.n_fields;
  std::vector<std::vector<double>> fields(n_fields);
  contributions.assign(n_fields, 0);
  for (std::size_t f = 0; f < n_fields; ++f) {
    const std::string what = std::string(cells ? "reading cell field '" : "reading field '") + field_names[f] + "'";
    const MPI_Offset offset = cells ? layout.cell_field_offset(f) : layout.field_offset(f);
    file.failure.check_mpi(MPI_File_set_view(file.fh, offset, MPI_DOUBLE, view.type(), "native", MPI_INFO_NULL),
                           file.path, what, Kind::input);
    MPI_Status status;
    if (file.failure.check_mpi(MPI_File_read_all(file.fh, buffer.data(), count, MPI_DOUBLE, &status), file.path, what,
                               Kind::input))
      check_count(file.failure, status, count, file.path, what, "read", Kind::input);
    contributions[f] = field_contribution(file, buffer.data());
    std::vector<double>& values = fields[f];
    values.resize(buffer.size());
    for (std::size_t k = 0; k < file.order.size(); ++k) {
      for (std::size_t d = 0; d < w; ++d) values[w * file.order[k] + d] = buffer[w * k + d];
    }
  }
  return fields;
}

}  // namespace

void write_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                      std::span<const std::int64_t> owned_original, const CheckpointState& state) {
  const int rank = comm_rank(comm);
  std::string root_path;
  const Layout layout = broadcast_root_layout(comm, path, n_vertices, state, root_path);

  // Phase 1: arguments, each rank its own.
  std::vector<std::size_t> order, cell_order;
  local_step(comm, [&] {
    order = check_write_arguments(path, root_path, layout, n_vertices, owned_original, state, rank);
    if (layout.n_cell_fields > 0) cell_order = sorted_positions(path, layout.n_cells, state.owned_cells, rank, true);
  });

  // Phase 2: every vertex (and cell) owned by exactly one rank.
  check_ownership(comm, path, n_vertices, owned_original);
  if (layout.n_cell_fields > 0) check_ownership(comm, path, layout.n_cells, state.owned_cells, true);

  // Phase 3: write PATH.tmp.
  const std::string tmp = path + ".tmp";
  Failure failure;
  MPI_File fh = create_temporary(comm, path, tmp, failure);
  Checksums checksums;
  if (rank == 0) checksums = write_header(fh, path, tmp, layout, state, failure);
  const std::vector<std::uint32_t> crcs = combine_field_crcs(
      comm, write_fields(FieldAccess{fh, path, owned_original, order, n_vertices, failure}, tmp, layout, state.fields),
      n_vertices);
  std::copy(crcs.begin(), crcs.end(), checksums.fields.begin());
  if (layout.n_cell_fields > 0) {
    const FieldAccess cells{fh, path, state.owned_cells, cell_order, layout.n_cells, failure, cell_width};
    const std::vector<std::uint32_t> cell_crcs =
        combine_field_crcs(comm, write_fields(cells, tmp, layout, state.cell_fields, true), layout.n_cells, cell_bytes);
    std::copy(cell_crcs.begin(), cell_crcs.end(),
              checksums.fields.begin() + static_cast<std::ptrdiff_t>(layout.n_fields));
  }
  // Back to the whole file as bytes (collective) for rank 0's explicit-offset write of the trailer.
  failure.check_mpi(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), path,
                    "resetting the file view of '" + tmp + "'");
  if (rank == 0) write_trailer(fh, path, tmp, layout, checksums, failure);
  failure.check_mpi(MPI_File_sync(fh), path, "syncing '" + tmp + "'");
  failure.check_mpi(MPI_File_close(&fh), path, "closing '" + tmp + "'");

  // Phase 4: every rank has closed (the agreement is an all-reduce); rank 0 commits.
  if (any_failed(comm, failure)) {
    if (rank == 0) ::unlink(tmp.c_str());
    raise(failure);
  }
  if (rank == 0) commit_on_root(path, tmp, layout, failure);
  if (any_failed(comm, failure)) raise(failure);
}

CheckpointState read_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                                std::span<const std::int64_t> owned_original, CellOwnership cells) {
  const int rank = comm_rank(comm);

  // Phase 1: arguments.
  std::vector<std::size_t> order, cell_order;
  local_step(comm, [&] {
    if (n_vertices < 0) checkpoint_fail(path, "invalid vertex count " + std::to_string(n_vertices));
    order = sorted_positions(path, n_vertices, owned_original, rank);
    if (cells.n_cells > 0) cell_order = sorted_positions(path, cells.n_cells, cells.owned, rank, true);
  });

  // Phase 2: open.
  Failure failure;
  MPI_File fh = open_checkpoint(comm, path, failure);

  // Phase 3: rank 0 reads and checks header, job text and trailer, then broadcasts them.
  Head h = share_head(comm, fh, path, failure);
  const Layout& layout = h.layout;
  const bool read_cells = cells.n_cells > 0 && layout.n_cell_fields > 0;
  check_mesh_sizes(comm, fh, path, layout, n_vertices, read_cells, cells.n_cells, failure);
  // Every vertex read by exactly one rank: the fields' checksums are combined from the ranks' parts.
  try {
    check_ownership(comm, path, n_vertices, owned_original);
    if (read_cells) check_ownership(comm, path, cells.n_cells, cells.owned, true);
  } catch (const Error&) {  // thrown on every rank
    MPI_File_close(&fh);
    throw;
  }
  CheckpointState state = decode_header(h.header, layout.n_fields, layout.n_cell_fields);
  state.job_text = std::move(h.job_text);
  state.format_version = layout.version;

  // Phase 4: every rank reads its owned vertices of every field; version 2: the fields' CRC-32s, combined over
  // the ranks, match the trailer's.
  std::vector<std::uint32_t> contributions;
  state.fields = read_fields(FieldAccess{fh, path, owned_original, order, n_vertices, failure}, layout,
                             state.field_names, contributions);
  std::vector<std::uint32_t> cell_contributions;
  if (read_cells) {
    state.cell_fields = read_fields(FieldAccess{fh, path, cells.owned, cell_order, cells.n_cells, failure, cell_width},
                                    layout, state.cell_field_names, cell_contributions, true);
    state.n_cells = cells.n_cells;
    state.owned_cells.assign(cells.owned.begin(), cells.owned.end());
  } else {
    state.cell_field_names.clear();  // not read
  }
  failure.check_mpi(MPI_File_close(&fh), path, "closing the checkpoint", Kind::input);
  if (layout.version >= 2) {
    verify_field_crcs(comm, path, "field ", state.field_names, h.checksums.fields.data(), contributions, n_vertices,
                      vertex_bytes, failure);
    if (read_cells)
      verify_field_crcs(comm, path, "cell field ", state.cell_field_names, h.checksums.fields.data() + layout.n_fields,
                        cell_contributions, cells.n_cells, cell_bytes, failure);
  }
  if (any_failed(comm, failure)) raise(failure);
  return state;
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the checkpoint: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::int64_t size = static_cast<std::int64_t>(in.tellg());
  auto read_at = [&](std::int64_t offset, char* data, std::size_t bytes, const char* what) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(data, static_cast<std::streamsize>(bytes));
    if (!in) throw DamagedCheckpoint(path + ": short read of the " + what);
  };
  const Head h = read_head(path, size, read_at);
  CheckpointInfo info;
  info.path = path;
  info.step = get<std::int64_t>(h.header, off_step);
  info.time = get<double>(h.header, off_time);
  info.run_id = get<std::uint64_t>(h.header, off_run_id);
  info.run_started = get<std::int64_t>(h.header, off_run_started);
  info.written = get<std::int64_t>(h.header, off_written);
  info.format_version = h.layout.version;
  return info;
}

}  // namespace edgefem
