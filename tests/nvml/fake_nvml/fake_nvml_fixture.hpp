// SPDX-License-Identifier: Apache-2.0
// Test-side helper for the fake NVML: writes a script, points KAREUS_NVML_LIBRARY,
// KAREUS_FAKE_NVML_SCRIPT and KAREUS_FAKE_NVML_LOG at it for this process and its children, and
// reads back the log of clock setters.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kareus::testing {

inline nlohmann::json two_gpu_script() {
  std::ifstream in(std::string(KAREUS_TEST_DATA_DIR) + "/nvml/two_gpus.json");
  return nlohmann::json::parse(in);
}

class FakeNvml {
 public:
  explicit FakeNvml(const nlohmann::json& script = two_gpu_script()) {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("kareus-fake-nvml-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "script.json") << script.dump();
    setenv("KAREUS_NVML_LIBRARY", KAREUS_FAKE_NVML_PATH, 1);
    setenv("KAREUS_FAKE_NVML_SCRIPT", (dir_ / "script.json").c_str(), 1);
    setenv("KAREUS_FAKE_NVML_LOG", log_path().c_str(), 1);
  }
  ~FakeNvml() {
    unsetenv("KAREUS_NVML_LIBRARY");
    unsetenv("KAREUS_FAKE_NVML_SCRIPT");
    unsetenv("KAREUS_FAKE_NVML_LOG");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path log_path() const { return dir_ / "nvml.log"; }
  std::vector<std::string> log() const {
    std::vector<std::string> lines;
    std::ifstream in(log_path());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace kareus::testing
