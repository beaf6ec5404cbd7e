// SPDX-License-Identifier: Apache-2.0
// A folder of its own per test process (name + pid under the system temp folder), removed when
// the process ends, for CLI tests that write files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace kareus::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kareus::testing
