// SPDX-License-Identifier: Apache-2.0
// The measurement record: what the runtime measured while it played a schedule, next to what the
// schedule predicted for the same spans. One JSON Lines file per rank, append-only: a header line,
// then one line per instruction, per applied clock change and per iteration, written whole with
// one write each, so a killed job leaves every line it finished. docs/measurement-format.md
// documents the format; kareus compare and kareus calibrate read it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::measurement {

inline constexpr int kRecordFormatVersion = 1;

// Where instruction boundaries were taken: where the GPU reached them on its queue (a CUDA
// stream), or where the host reached them (exact only when the host waits for the GPU).
enum class Boundaries { kHost, kGpu };
const char* to_string(Boundaries b);  // "host" | "gpu"

struct GpuIdentity {
  unsigned index = 0;  // NVML index
  std::string uuid;
  std::string name;    // as NVML names it ("NVIDIA A100-SXM4-40GB")
  std::string driver;  // driver version
  Watts power_limit;   // when the record started
};

struct RecordHeader {
  int rank = 0;
  int stage = 0;
  Boundaries boundaries = Boundaries::kHost;
  GpuIdentity gpu;
  std::string started_utc;  // ISO 8601, for people; times in the record count from the start
  Schedule schedule;        // the schedule played, predictions included
};

// One instruction of one iteration on this rank's GPU.
struct InstructionSpan {
  int iteration = 0;
  std::size_t index = 0;  // position in the stage's instruction order
  int microbatch = 0;
  std::string direction;
  MHz clock;           // the schedule's
  MHz observed_clock;  // read from NVML at the span's end: below `clock` when throttled
  Seconds start;       // since the record started
  Seconds time;
  Joules energy;  // NVML's energy counter over the span
  // True when the training loop reported the instruction's end; false when the span ends where
  // the next instruction (or the iteration's end) begins, waits between them included.
  bool ended = false;
  std::optional<Seconds> predicted_time;
  std::optional<Joules> predicted_energy;
  int line = 0;  // in the file, 1-based
};

// A clock change as it reached the GPU (the frequency controller's applied changes).
struct ClockChange {
  int iteration = 0;
  std::size_t index = 0;  // the instruction it was for
  MHz clock;
  Seconds lead;  // host reaching the instruction -> GPU reaching it
  Seconds late;  // GPU reaching it -> the clock applied
};

// One training iteration on this rank: from its first instruction's start to the iteration's end
// (after the optimizer step), pipeline waits and everything between instructions included.
struct IterationSpan {
  int iteration = 0;
  Seconds start;
  Seconds time;
  Joules energy;
  Watts power_limit;  // read at the iteration's end
  std::optional<Seconds> predicted_time;
  // The schedule's whole-job energy divided by the job's GPUs.
  std::optional<Joules> predicted_energy_per_gpu;
  int line = 0;
};

struct Record {
  std::filesystem::path path;
  RecordHeader header;
  std::vector<InstructionSpan> instructions;
  std::vector<ClockChange> clocks;
  std::vector<IterationSpan> iterations;
  bool ended = false;  // the writer closed it; false after a killed job

  // Instructions of iterations that have no iteration line (the job ended during them).
  std::size_t unfinished_instructions() const;
};

// Lines as the runtime writes them, each ending with '\n'.
std::string header_line(const RecordHeader& header);
std::string to_line(const InstructionSpan& span);
std::string to_line(const ClockChange& change);
std::string to_line(const IterationSpan& span);
std::string end_line();

// Reads and checks a record. Every error names the file and the record (its line): a record that
// is not JSON, a field out of range (a negative or non-finite energy, a clock of 0), an
// instruction the schedule does not have, or a last line cut short (written partly when the
// machine stopped).
Record read_record(const std::filesystem::path& path);

// The prediction an iteration line carries: the schedule's whole-job energy per GPU, when its
// workload echo says how many GPUs the job has.
std::optional<Joules> predicted_energy_per_gpu(const Schedule& schedule);

}  // namespace kareus::measurement
