// SPDX-License-Identifier: Apache-2.0
// Writes the measurement record of one rank (measurement/record.hpp, docs/measurement-format.md)
// while the frequency controller plays its stage: at each instruction boundary the GPU's energy
// counter and SM clock are read from NVML, and every finished span is appended as one line with
// one write(2) on a file opened O_APPEND, so whatever kills the job leaves every finished line.
// The controller calls it (ControllerOptions::record); it is not used on its own.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kareus/measurement/record.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::runtime {

struct RecordOptions {
  // The file to write; "{rank}" in it is replaced by the rank. It must not hold a record already:
  // an earlier run's measurements are never overwritten.
  std::filesystem::path path;
  int rank = 0;
  unsigned gpu = 0;  // NVML index of the stage's GPU
  // NVML for reading energy and clocks (reads need no privilege, also when clocks go through
  // kareusd); null: one is opened.
  std::shared_ptr<const nvml::Nvml> nvml;
  // Seconds since any fixed start; empty: the steady clock. A stand-in training job on an
  // emulated-time fake NVML device passes the device's own time.
  std::function<double()> clock;
};

// "run.{rank}.jsonl" with rank 3 -> "run.3.jsonl".
std::filesystem::path record_path_for_rank(const std::filesystem::path& path, int rank);

class RunRecorder {
 public:
  // Opens the file and writes the header. Throws Error when the file exists with content or
  // cannot be created, or when the GPU has no energy counter (before Volta).
  RunRecorder(const Schedule& schedule, int stage, measurement::Boundaries boundaries,
              RecordOptions options);
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  // Instruction `index` of the stage's order begins (ending the span before it, if still open).
  void instruction_begin(std::size_t index);
  // The instruction that began last ends.
  void instruction_end();
  // The iteration ends: its line is written and the next instruction starts the next iteration.
  void iteration_end();
  // A clock change the controller applied for instruction `index` of iteration `iteration`.
  void clock_applied(int iteration, std::size_t index, MHz clock, Seconds lead, Seconds late);
  // Writes the end line and closes the file; later calls do nothing. Idempotent.
  void close();
  // Boundaries taken where the GPU reaches them: one more is queued, one was reached; and waiting
  // until every queued one was reached (or the record closed).
  void marker_queued();
  void marker_reached();
  void wait_for_markers();

  const std::filesystem::path& path() const { return path_; }

 private:
  struct Reading {
    double time = 0;    // s, options_.clock
    double energy = 0;  // J, NVML's counter
  };
  struct Open {
    std::size_t index = 0;
    Reading at;
  };
  Reading read() const;
  // Runs `record` under mutex_ while the file is open; a failure stops recording.
  template <class F>
  void guarded(F&& record);
  // Under mutex_: ends the open span at `now`; writes the iteration's line.
  void close_span_locked(const Reading& now, bool ended);
  void iteration_end_locked(const Reading& now);
  void write_locked(const std::string& line);

  const StageSchedule stage_;
  std::optional<Joules> predicted_energy_per_gpu_;
  std::optional<Seconds> predicted_iteration_time_;
  RecordOptions options_;
  std::filesystem::path path_;
  Reading origin_;

  std::mutex mutex_;
  std::condition_variable markers_done_;
  int markers_ = 0;
  int fd_ = -1;
  int iteration_ = 0;
  std::optional<Open> open_;
  std::optional<Reading> iteration_start_;
};

}  // namespace kareus::runtime
