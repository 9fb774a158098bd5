// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file checkpoint.hpp
/// Restart files of a dynamic run, independent of the partition: every per-vertex field is stored in the
/// order of the input mesh's vertices (LocalMesh::original_vertex), so a run checkpointed on R ranks can
/// restart on any number of ranks. Written with MPI-IO (each rank writes its owned vertices in place, one
/// collective write per field), to a temporary name, synced, then renamed by rank 0: a killed job leaves
/// either the previous complete checkpoint or the new complete one, never a truncated file. Every part of the
/// file carries a CRC-32 (io/crc32.hpp: zlib's crc32 of its bytes) in the trailer, checked on every read: a
/// truncated or damaged file is refused (DamagedCheckpoint) with what is wrong, never half-used.
///
/// File format (little-endian, documented in docs/guide/dynamics.md "Checkpoints"):
///   header, 512 bytes:
///     char[16]  magic "EDGEFEM-CKPT\0\0\0\0"
///     uint32    format version (2, or 3 when the file has cell fields; version 1 files, without checksums, are
///               still read)
///     uint32    number of fields F (<= 8)
///     int64     number of vertices N
///     int64     step (completed time steps)
///     float64   time
///     float64   dt (the nominal step)
///     uint64    byte length L of the job text
///     char[32]  integrator name, NUL-padded
///     F x char[32] field names, NUL-padded (e.g. "position", "velocity")
///     zero padding to byte 352
///     uint64    run id (0: written before run ids: an "unknown" run)
///     int64     when the run started, nanoseconds since the Unix epoch (0: unknown)
///     int64     when this checkpoint was written, nanoseconds since the Unix epoch (0: unknown)
///     int64     version 3: number of cells M (the mesh's cells, global cell order = the input mesh's)
///     uint32    version 3: number of cell fields C (F + C <= 8; their names follow the F field names)
///     zero padding to 512 bytes
///   (The run fields use bytes that the first version-1 files left zero: files without them read as run 0.)
///   job text: L bytes (the YAML of the job that wrote the checkpoint), zero-padded to a multiple of 8
///   F fields, each N x 3 float64 (vertex-major: x, y, z of vertex 0, then vertex 1, ...)
///   version 3: C cell fields, each M x 6 float64 (cell-major, in global cell order; e.g. the plastic strain of
///   the position-based integrator, tensor components xx, yy, zz, xy, yz, zx)
///   trailer, 64 bytes (version 1: only the last 16, the end marker):
///     uint32    CRC-32 of the 512 header bytes
///     uint32    CRC-32 of the job text with its zero padding (padded L bytes)
///     8 x uint32  CRC-32 of each field's N x 24 bytes, then of each cell field's M x 48 bytes (slots past
///                 F + C: 0)
///     uint32    CRC-32 of the 40 bytes above (the checksums' own check)
///     uint32    0
///     char[16]  end marker "EDGEFEM-END\0\0\0\0\0"
///   A field's CRC is that of its bytes in the file, whatever the number of ranks: each rank computes the
///   contribution of its runs of owned vertices at their place in the field (crc32::Positioned) and the
///   contributions are XORed across the ranks, so a file written on 2 ranks verifies when read on 3, and
///   `python3 -c "import zlib; zlib.crc32(field_bytes)"` gives the same value.
#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace edgefem {

/// A checkpoint that is truncated, longer than its header announces, has a corrupt header value or a CRC-32
/// that does not match: what() names the file and what is wrong ("PATH: damaged checkpoint: field 'velocity'
/// fails its CRC-32 check (the trailer records 0x..., the file gives 0x...)"). Thrown on every rank.
struct DamagedCheckpoint : InputError {
  using InputError::InputError;
};

struct CheckpointState {
  std::int64_t step = 0;
  double time = 0.0;
  double dt = 0.0;
  std::string integrator;
  std::string job_text;
  std::vector<std::string> field_names;  ///< at most 8, each at most 31 characters
  /// Per field: 3 values per vertex of `owned_original` (in that order) on this rank.
  std::vector<std::vector<double>> fields;
  /// Cell fields (format version 3; at most 8 - fields.size()): 6 values per cell of `owned_cells` (in that
  /// order) on this rank. For writing, `n_cells` (the mesh's) and `owned_cells` (the global index of each of
  /// this rank's cells; every cell on exactly one rank) say where they go; read_checkpoint fills the names and
  /// values for the cells it is given.
  std::vector<std::string> cell_field_names;
  std::vector<std::vector<double>> cell_fields;
  std::int64_t n_cells = 0;
  std::vector<std::int64_t> owned_cells;
  /// The run that wrote the checkpoint (io/checkpoint_series.hpp): drawn when a run starts fresh, kept by a
  /// run restarted from it. 0: written before run ids existed.
  std::uint64_t run_id = 0;
  std::int64_t run_started = 0;  ///< when that run started fresh, ns since the Unix epoch (0: unknown)
  /// When the file was written, ns since the Unix epoch (0: unknown); set by write_checkpoint, not read by it.
  std::int64_t written = 0;
  /// The file's format version, set by read_checkpoint: 1 has no checksums (its contents were not verified).
  std::uint32_t format_version = 0;
};

/// A checkpoint's header without its fields, read by one process without MPI (listing a directory).
struct CheckpointInfo {
  std::string path;
  std::int64_t step = 0;
  double time = 0.0;
  std::uint64_t run_id = 0;
  std::int64_t run_started = 0;
  std::int64_t written = 0;
  std::uint32_t format_version = 0;  ///< 1: no checksums
};

/// Collective. `owned_original[i]` is the input-mesh index of this rank's i-th owned vertex; every vertex
/// in [0, n_vertices) must be owned by exactly one rank. Writes `path` atomically (temp + sync + rename).
/// Throws on every rank (CollectiveError / InputError) if any rank fails; an existing file at `path` is then
/// left untouched.
void write_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                      std::span<const std::int64_t> owned_original, const CheckpointState& state);

/// The cells whose cell fields a rank reads: the mesh's cell count and the global index of each of this rank's
/// cells (every cell on exactly one rank). Empty (n_cells 0): the cell fields are not read (nor checked).
struct CellOwnership {
  std::int64_t n_cells = 0;
  std::span<const std::int64_t> owned;
};

/// Collective. Reads the header on every rank and each rank's owned vertices of every field, and checks every
/// CRC-32 (version 2). Throws on every rank naming the file and the problem: DamagedCheckpoint for a truncated
/// file (size differs from what the header announces, or the end marker is missing), a corrupt header value or
/// a checksum that does not match (header, job text, the trailer's checksums, each field by name); InputError
/// for cannot open, not a checkpoint (magic), another version, or a vertex count different from `n_vertices`
/// ("checkpoint has N vertices, the job's mesh has M"). `owned_original` must cover every vertex exactly once
/// across the ranks (the fields' checksums are combined from every rank's part). With `cells` (n_cells > 0) the
/// cell fields are read and checked too ("checkpoint has M cells, the job's mesh has K" if they differ).
CheckpointState read_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                                std::span<const std::int64_t> owned_original, CellOwnership cells = {});

/// Not collective. The header of `path`; throws InputError naming the file if it is not a checkpoint of
/// version 1, 2 or 3, DamagedCheckpoint if it is incomplete (size announced by the header, end marker) or if its
/// header, job text or trailer fail their CRC-32 (the fields are checked by read_checkpoint).
CheckpointInfo read_checkpoint_info(const std::string& path);

}  // namespace edgefem
