// SPDX-License-Identifier: Apache-2.0
// Progress reporting on stderr: a line redrawn in place on a terminal (count, rate, ETA), a line
// per quarter otherwise, then one line saying what was done; nothing when quiet. stdout stays clean
// for tables and --json documents.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace kareus {

class Progress {
 public:
  Progress(std::string label, std::size_t total, bool enabled = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Sets the number of steps done and an optional status text ("0.41 GPU-h").
  void update(std::size_t done, const std::string& status = "");
  void finish(const std::string& status = "");

 private:
  void draw(const std::string& status, bool final_line);

  std::string label_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  bool tty_;
  bool finished_ = false;
  int last_quarter_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace kareus
