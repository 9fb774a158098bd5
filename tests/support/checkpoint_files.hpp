// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file checkpoint_files.hpp
/// Checkpoint files edited by hand for the tests (format: io/checkpoint.hpp): single bits flipped, a version-2
/// file turned into the version 1 an edgefem before checksums wrote, header edits re-sealed with fresh checksums,
/// and a snapshot of a directory tree (names, sizes, CRC-32 of the contents) to prove that nothing changed.
/// Test-only, header-only, no MPI.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "io/crc32.hpp"

namespace edgefem::ckptfile {

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
T get(const std::vector<char>& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

template <class T>
void put(std::vector<char>& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

/// Where things are in a checkpoint of version 2 (its own header's values).
struct Offsets {
  std::size_t job = 512, job_padded = 0, fields = 0, field_bytes = 0, n_fields = 0, checksums = 0, end = 0;
};

inline Offsets offsets(const std::vector<char>& bytes) {
  Offsets o;
  o.n_fields = get<std::uint32_t>(bytes, 20);
  o.field_bytes = static_cast<std::size_t>(get<std::int64_t>(bytes, 24)) * 24;
  o.job_padded = (get<std::uint64_t>(bytes, 56) + 7) / 8 * 8;
  o.fields = 512 + o.job_padded;
  o.checksums = o.fields + o.n_fields * o.field_bytes;
  o.end = o.checksums + 48;
  return o;
}

/// Flips bit `bit` of byte `offset` of `path`.
inline void flip_bit(const std::string& path, std::size_t offset, int bit = 0) {
  std::vector<char> bytes = read_bytes(path);
  bytes.at(offset) = static_cast<char>(bytes.at(offset) ^ (1 << bit));
  write_bytes(path, bytes);
}

/// Recomputes the header's, the job text's and the checksums' own CRC-32 of a version-2 `path` after its header
/// was edited on purpose (the fields' CRCs are kept).
inline void reseal(const std::string& path) {
  std::vector<char> bytes = read_bytes(path);
  const Offsets o = offsets(bytes);
  put<std::uint32_t>(bytes, o.checksums, crc32::of(bytes.data(), 512));
  put<std::uint32_t>(bytes, o.checksums + 4, crc32::of(bytes.data() + o.job, o.job_padded));
  put<std::uint32_t>(bytes, o.checksums + 40, crc32::of(bytes.data() + o.checksums, 40));
  write_bytes(path, bytes);
}

/// Turns a version-2 `path` into what an edgefem before checksums wrote: version 1, no checksum block; with
/// `strip_run` also without the run fields (bytes 352..375 zero: an edgefem before run ids).
inline void to_version1(const std::string& path, bool strip_run = false) {
  std::vector<char> bytes = read_bytes(path);
  const Offsets o = offsets(bytes);
  put<std::uint32_t>(bytes, 16, 1);
  if (strip_run) std::memset(bytes.data() + 352, 0, 24);
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(o.checksums),
              bytes.begin() + static_cast<std::ptrdiff_t>(o.end));
  write_bytes(path, bytes);
}

/// Every file under `dir` (relative path) with its size and CRC-32: equal snapshots mean nothing was created,
/// moved, renamed, deleted or changed.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    const std::string name = std::filesystem::relative(e.path(), dir).string();
    if (e.is_directory()) {
      out[name + "/"] = "directory";
      continue;
    }
    const std::vector<char> bytes = read_bytes(e.path().string());
    out[name] = std::to_string(bytes.size()) + " bytes, crc " + std::to_string(crc32::of(bytes.data(), bytes.size()));
  }
  return out;
}

}  // namespace edgefem::ckptfile
