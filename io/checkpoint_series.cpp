// SPDX-License-Identifier: BSD-3-Clause
/// \file checkpoint_series.cpp
/// A run's checkpoints in its output directory (ownership, rotation, restart choice: checkpoint_series.hpp).
/// Rank 0 does every file-system operation; the other ranks get its answers by broadcast.
#include "io/checkpoint_series.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/stopwatch.hpp"
#include "partition/collective.hpp"

namespace edgefem {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t n_kept = 2;  ///< checkpoints a run keeps

/// Rank 0's `text` on every rank.
void broadcast(MPI_Comm comm, std::string& text) {
  std::int64_t length = static_cast<std::int64_t>(text.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, 0, comm);
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
}

/// Rank 0's `lines` on every rank.
void broadcast(MPI_Comm comm, std::vector<std::string>& lines) {
  std::int64_t n = static_cast<std::int64_t>(lines.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, comm);
  lines.resize(static_cast<std::size_t>(n));
  for (std::string& line : lines) broadcast(comm, line);
}

std::string hex_id(std::uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, id);
  return text;
}

bool is_checkpoint_name(const fs::path& path) {
  return path.filename().string().rfind("checkpoint_", 0) == 0 && path.extension() == ".ckpt";
}

/// A new run id: 64 random bits mixed with the time and the process id; never 0.
std::uint64_t draw_run_id() {
  std::random_device device;
  std::uint64_t id = (static_cast<std::uint64_t>(device()) << 32) ^ static_cast<std::uint64_t>(device());
  std::seed_seq seq{static_cast<std::uint64_t>(unix_time_ns()), static_cast<std::uint64_t>(::getpid()), id};
  std::mt19937_64 mix(seq);
  id ^= mix();
  return id == 0 ? 1 : id;
}

/// "steps 15 and 20", "step 5", "steps 5, 10 and 15".
std::string list_steps(std::vector<std::int64_t> steps) {
  std::sort(steps.begin(), steps.end());
  std::string text = steps.size() == 1 ? "step " : "steps ";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i > 0) text += i + 1 == steps.size() ? " and " : ", ";
    text += std::to_string(steps[i]);
  }
  return text;
}

}  // namespace

std::string describe_run(const CheckpointRun& run) {
  if (run.id == 0) return "a run without id (an older edgefem)";
  std::string text = "run " + hex_id(run.id);
  if (run.started != 0) {
    const std::time_t seconds = static_cast<std::time_t>(run.started / 1000000000);
    std::tm utc{};
    char when[32];
    if (::gmtime_r(&seconds, &utc) != nullptr && std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &utc) > 0)
      text += std::string(" started ") + when;
  }
  return text;
}

bool is_newer(const CheckpointInfo& a, const CheckpointInfo& b) {
  return std::tie(a.run_started, a.written, a.step, a.path) > std::tie(b.run_started, b.written, b.step, b.path);
}

CheckpointListing list_checkpoints(const std::string& directory) {
  CheckpointListing listing;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    if (!is_checkpoint_name(entry.path()) || !entry.is_regular_file(ec)) continue;
    try {
      listing.checkpoints.push_back(read_checkpoint_info(entry.path().string()));
    } catch (const InputError& e) {
      listing.unreadable.push_back({entry.path().string(), e.what()});
    }
  }
  std::sort(listing.checkpoints.begin(), listing.checkpoints.end(), is_newer);
  std::sort(listing.unreadable.begin(), listing.unreadable.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return listing;
}

RestartChoice choose_restart_checkpoint(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  RestartChoice choice;
  run_collectively(comm, [&] {
    if (rank != 0) return;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      choice.path = path;
      return;
    }
    const CheckpointListing listing = list_checkpoints(path);
    for (const auto& bad : listing.unreadable) choice.notes.push_back("skipping " + bad.error);
    if (listing.checkpoints.empty()) {
      throw InputError("--restart: no complete checkpoint_*.ckpt in directory '" + path + "'" +
                       (listing.unreadable.empty() ? "" : " (" + listing.unreadable.front().error + ")"));
    }
    choice.path = listing.checkpoints.front().path;
  });
  broadcast(comm, choice.path);
  broadcast(comm, choice.notes);
  return choice;
}

Restart read_restart_checkpoint(MPI_Comm comm, const std::string& path, std::int64_t n_vertices,
                                std::span<const std::int64_t> owned_original, CellOwnership cells) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0 lists the candidates: PATH itself, or the newest run's checkpoints of the directory, newest first.
  std::vector<std::string> candidates, skipped;
  std::string run;  // the newest run, described (a directory only)
  run_collectively(comm, [&] {
    if (rank != 0) return;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      candidates.push_back(path);
      return;
    }
    const CheckpointListing listing = list_checkpoints(path);
    for (const auto& bad : listing.unreadable) skipped.push_back(bad.error);
    if (listing.checkpoints.empty()) {
      std::string why;
      for (const std::string& s : skipped) why += "; skipped " + s;
      throw InputError("--restart: no complete checkpoint_*.ckpt in directory '" + path + "'" + why);
    }
    const CheckpointInfo& newest = listing.checkpoints.front();
    run = describe_run(CheckpointRun{newest.run_id, newest.run_started});
    for (const CheckpointInfo& c : listing.checkpoints) {
      if (c.run_id == newest.run_id && c.run_started == newest.run_started) candidates.push_back(c.path);
    }
  });
  broadcast(comm, candidates);
  broadcast(comm, skipped);
  broadcast(comm, run);
  const bool directory = !run.empty();

  Restart restart;
  for (const std::string& s : skipped) restart.notes.push_back("skipping " + s);
  for (const std::string& candidate : candidates) {
    try {
      restart.state = read_checkpoint(comm, candidate, n_vertices, owned_original, cells);  // throws on every rank
    } catch (const DamagedCheckpoint& e) {
      if (!directory) throw;
      skipped.push_back(e.what());
      restart.notes.push_back(std::string("skipping ") + e.what());
      continue;
    }
    restart.path = candidate;
    break;
  }
  if (restart.path.empty()) {
    std::string why;
    for (const std::string& s : skipped) why += "; skipped " + s;
    throw InputError("--restart: no intact checkpoint of the newest run (" + run + ") in directory '" + path + "'" +
                     why);
  }
  if (!skipped.empty()) restart.notes.push_back("using " + restart.path + ", the newest intact checkpoint of " + run);
  if (restart.state.format_version < 2) {
    restart.notes.push_back(restart.path + " is a checkpoint of format version " +
                            std::to_string(restart.state.format_version) +
                            ", without checksums: its contents cannot be verified");
  }
  return restart;
}

CheckpointSeries::CheckpointSeries(MPI_Comm comm, std::string directory, std::optional<CheckpointRun> continued)
    : comm_(comm), directory_(std::move(directory)) {
  MPI_Comm_rank(comm_, &rank_);
  if (continued && continued->id != 0) {
    run_ = *continued;
  } else if (rank_ == 0) {
    run_ = CheckpointRun{draw_run_id(), unix_time_ns()};
  }
  std::uint64_t id = run_.id;
  std::int64_t started = run_.started;
  MPI_Bcast(&id, 1, MPI_UINT64_T, 0, comm_);
  MPI_Bcast(&started, 1, MPI_INT64_T, 0, comm_);
  run_ = CheckpointRun{id, started};
}

std::vector<std::string> CheckpointSeries::set_aside_other_runs() {
  std::vector<std::string> lines;
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    const CheckpointListing listing = list_checkpoints(directory_);
    // Other runs' checkpoints by folder name; unreadable files go with the unknown run.
    struct Group {
      std::string what;
      std::vector<std::string> paths;
      std::vector<std::int64_t> steps;
    };
    std::map<std::string, Group> groups;
    for (const CheckpointInfo& c : listing.checkpoints) {
      if (c.run_id == run_.id) continue;
      Group& g = groups["previous_run_" + (c.run_id == 0 ? std::string("unknown") : hex_id(c.run_id))];
      if (g.what.empty()) g.what = describe_run(CheckpointRun{c.run_id, c.run_started});
      g.paths.push_back(c.path);
      g.steps.push_back(c.step);
    }
    for (const auto& bad : listing.unreadable) {
      Group& g = groups["previous_run_unknown"];
      if (g.what.empty()) g.what = describe_run(CheckpointRun{});
      g.paths.push_back(bad.path);
    }
    for (auto& entry : groups) {
      // (Not a structured binding: clang before 16 cannot capture one in the lambda below.)
      const std::string& folder = entry.first;
      Group& g = entry.second;
      // A folder of that name from an earlier move keeps its files: take the first one without these names.
      auto taken = [&](const fs::path& folder_path) {
        return std::any_of(g.paths.begin(), g.paths.end(), [&](const std::string& path) {
          std::error_code ec;
          return fs::exists(folder_path / fs::path(path).filename(), ec) || ec;
        });
      };
      fs::path target = fs::path(directory_) / folder;
      for (int k = 2; taken(target); ++k) target = fs::path(directory_) / (folder + "_" + std::to_string(k));
      std::error_code ec;
      fs::create_directories(target, ec);
      if (ec) {
        throw InputError("output.directory: cannot create '" + target.string() + "' to move the checkpoints of " +
                         "another run into: " + ec.message());
      }
      for (const std::string& path : g.paths) {
        fs::rename(path, target / fs::path(path).filename(), ec);
        if (ec) {
          throw InputError("output.directory: cannot move '" + path + "' (a checkpoint of another run) into '" +
                           target.string() + "': " + ec.message());
        }
      }
      const std::size_t n = g.paths.size();
      std::string line = "moved " + std::to_string(n) + " checkpoint" + (n == 1 ? "" : "s") + " of another run (" +
                         g.what;
      if (!g.steps.empty()) line += ", " + list_steps(g.steps);
      if (const std::size_t bad = n - g.steps.size(); bad > 0)
        line += ", " + std::to_string(bad) + " unreadable file" + (bad == 1 ? "" : "s");
      lines.push_back(line + ") from '" + directory_ + "' to '" + target.string() + "/'");
    }
  });
  broadcast(comm_, lines);
  return lines;
}

std::string CheckpointSeries::write(std::int64_t n_vertices, std::span<const std::int64_t> owned_original,
                                    CheckpointState state) {
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint_%06lld.ckpt", static_cast<long long>(state.step));
  const std::string path = (fs::path(directory_) / name).string();
  state.run_id = run_.id;
  state.run_started = run_.started;
  write_checkpoint(comm_, path, n_vertices, owned_original, state);
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    // This run's checkpoints, newest first; the one just written is kept whatever the clock says.
    std::size_t kept = 1;
    std::error_code ec;
    for (const CheckpointInfo& c : list_checkpoints(directory_).checkpoints) {
      if (c.run_id != run_.id || fs::equivalent(c.path, path, ec)) continue;
      if (kept < n_kept)
        ++kept;
      else
        fs::remove(c.path, ec);  // a file that cannot be removed stays: it belongs to this run
    }
    if (!fs::is_regular_file(path, ec)) throw CollectiveError(path + ": the checkpoint just written is missing");
  });
  return path;
}

}  // namespace edgefem
