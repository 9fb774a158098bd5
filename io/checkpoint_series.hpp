// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file checkpoint_series.hpp
/// The checkpoints of a run in its output directory: DIR/checkpoint_NNNNNN.ckpt (NNNNNN: the step).
///
/// A run owns its checkpoints through the run id in their headers (io/checkpoint.hpp). A fresh run draws a
/// new id; a run restarted from a checkpoint continues that checkpoint's run (id and start time), so its
/// rotation continues the same series. When a run starts, the checkpoints of any other run in its directory
/// are moved to DIR/previous_run_<id>/ (never deleted; <id> is "unknown" for checkpoints without a run id or
/// unreadable ones), so the directory holds one run's checkpoints and a later `--restart DIR` cannot pick up
/// another run's. After each write the run deletes its own checkpoints but the two newest, never the one just
/// written. "Newer" orders by the run's start time, then the time the checkpoint was written, then the step:
/// a run restarted from an earlier checkpoint supersedes the later ones its first attempt wrote.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"

namespace edgefem {

/// Which run wrote a checkpoint.
struct CheckpointRun {
  std::uint64_t id = 0;      ///< 0: unknown (written before run ids)
  std::int64_t started = 0;  ///< ns since the Unix epoch (0: unknown)
};

/// "run 0123456789abcdef started 2025-05-01 12:00:00 UTC", or "a run without id (an older edgefem)" for id 0.
std::string describe_run(const CheckpointRun& run);

/// True if `a` is newer than `b`: a later run start, then a later write, then a higher step, then the path.
bool is_newer(const CheckpointInfo& a, const CheckpointInfo& b);

/// The files DIR/checkpoint_*.ckpt.
struct CheckpointListing {
  struct Unreadable {
    std::string path;
    std::string error;  ///< "PATH: what is wrong"
  };
  std::vector<CheckpointInfo> checkpoints;  ///< the complete ones, newest first
  std::vector<Unreadable> unreadable;       ///< the others, by name
};

/// Not collective. An absent directory lists nothing.
CheckpointListing list_checkpoints(const std::string& directory);

/// The checkpoint that `--restart PATH` continues, and lines for the user (unreadable files skipped).
struct RestartChoice {
  std::string path;
  std::vector<std::string> notes;
};

/// Collective (rank 0 looks, every rank gets the answer). PATH itself if it is not a directory, else the
/// newest checkpoint of the newest run in it. Throws CollectiveError on every rank if the directory holds no
/// complete checkpoint.
RestartChoice choose_restart_checkpoint(MPI_Comm comm, const std::string& path);

/// The checkpoint `--restart PATH` continues, read and verified (read_restart_checkpoint).
struct Restart {
  std::string path;                ///< the checkpoint used
  CheckpointState state;           ///< its contents (this rank's owned vertices)
  std::vector<std::string> notes;  ///< for the user: files skipped and why, the one used instead, a v1 file
};

/// Collective. `--restart PATH`: if PATH is not a directory, read_checkpoint(PATH) (a damaged file throws
/// DamagedCheckpoint on every rank: no fallback). If it is a directory: the checkpoints of its newest run
/// (choose_restart_checkpoint's order), newest first, read in turn until one is intact; each unreadable or
/// damaged one is skipped with a note saying why, and a note names the one used. Throws InputError on every
/// rank, naming every file skipped and why, if the newest run has no intact checkpoint. Moves, renames and
/// deletes nothing: a restart that fails leaves the directory as it was.
Restart read_restart_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                                std::span<const std::int64_t> owned_original, CellOwnership cells = {});

/// The checkpoints one run writes into its output directory.
class CheckpointSeries {
 public:
  /// Collective. `continued`: the run of the checkpoint this run restarted from (its id is kept; one
  /// without an id gets a new one); empty for a fresh run, which draws a new id on rank 0.
  CheckpointSeries(MPI_Comm comm, std::string directory, std::optional<CheckpointRun> continued);

  /// Collective: moves the checkpoints of other runs out of the directory into DIR/previous_run_<id>/ and
  /// returns one line per moved run for the user, the same on every rank (empty: nothing moved). Throws
  /// on every rank if a move fails.
  std::vector<std::string> set_aside_other_runs();

  /// Collective: writes DIR/checkpoint_<step>.ckpt (write_checkpoint) with this run's id, then deletes this
  /// run's older checkpoints but the two newest. Returns the path; the file exists on return (else this
  /// throws on every rank).
  std::string write(std::int64_t n_vertices, std::span<const std::int64_t> owned_original, CheckpointState state);

  [[nodiscard]] const CheckpointRun& run() const { return run_; }
  [[nodiscard]] const std::string& directory() const { return directory_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::string directory_;
  CheckpointRun run_;
};

}  // namespace edgefem
