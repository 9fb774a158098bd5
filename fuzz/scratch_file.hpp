// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file scratch_file.hpp
/// The readers take a path: each fuzz input is written to a file in a directory of this process
/// (removed at exit), then read back by the reader under test.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace edgefem::fuzz {

/// EDGEFEM_FUZZ_VERBOSE=1: print each input's InputError (to see what a seed or a replayed input exercises).
inline bool verbose() {
  static const bool on = std::getenv("EDGEFEM_FUZZ_VERBOSE") != nullptr;
  return on;
}

class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "edgefem-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("edgefem fuzz: mkdtemp");
      std::abort();
    }
    dir_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return dir_; }

  /// Writes `size` bytes to `name` in the directory (replacing it) and returns the file's path.
  std::string write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    const std::string file = (dir_ / name).string();
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::perror(("edgefem fuzz: cannot write " + file).c_str());
      std::abort();
    }
    return file;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace edgefem::fuzz
