// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file test_directory.hpp
/// A GoogleTest fixture that gives every test an empty directory of its own (serial tests), and whole-file reads
/// and writes. Test-only, header-only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

namespace edgefem::testing {

/// The whole content of a file, byte for byte ("" if it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Write `content` to `path` byte for byte, replacing the file.
inline void write_text(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

/// Fixture: dir_ = <temp>/<prefix>_<pid>_<test name>, emptied before the test and removed after it.
class DirectoryTest : public ::testing::Test {
 protected:
  explicit DirectoryTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + "_" + std::to_string(::getpid()) + "_" + std::string(info->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  /// Write `content` to dir_/name; its path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto path = dir_ / name;
    write_text(path, content);
    return path.string();
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace edgefem::testing
