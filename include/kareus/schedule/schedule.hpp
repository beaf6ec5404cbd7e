// SPDX-License-Identifier: Apache-2.0
// The schedule the planner exports and the runtime enforces: per pipeline stage, its instructions
// in execution (1F1B) order with the SM clock to run each at and, under nanobatch overlap, where
// and on how many SMs each partition's communication kernel is launched. docs/schedule-format.md
// documents the JSON form. Plain structs and strings so the C API and Python can wrap them.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/core/units.hpp"

namespace kareus {

inline constexpr int kScheduleFormatVersion = 1;

// Where a partition's communication kernel starts (a launch slot such as "norm_0" or "attn_0")
// and how many SMs it occupies.
struct PartitionLaunch {
  std::string slot;
  int sms = 0;
  bool operator==(const PartitionLaunch&) const = default;
};

struct ScheduleInstruction {
  int microbatch = 0;
  std::string direction;  // "forward" | "backward"
  MHz clock;              // whole MHz
  std::string execution;  // "sequential" | "nanobatch"
  // Keyed by partition name (fwd_attn, fwd_mlp, bwd_attn, ...); empty for sequential execution.
  std::map<std::string, PartitionLaunch> partitions;
  // The forward partitions re-run inside a backward instruction under full recomputation.
  std::map<std::string, PartitionLaunch> recompute_partitions;
  // Optional, nanobatch only (`kareus plan --clock-granularity partition`): the clock of every
  // step of the instruction in run order, the first equal to `clock`; empty: `clock` throughout.
  std::vector<MHz> step_clocks;
  // Optional: the planner's predicted time of the instruction, from which each stage's summary
  // gives the time spent at each clock.
  std::optional<Seconds> predicted_time;
  // Optional: the planner's predicted board energy of the instruction on one GPU of its stage
  // (one microbatch, static power included), what NVML's energy counter reads over it.
  std::optional<Joules> predicted_energy;
  bool operator==(const ScheduleInstruction&) const = default;
};

struct StageSchedule {
  int stage = 0;
  std::vector<ScheduleInstruction> instructions;
  bool operator==(const StageSchedule&) const = default;
};

struct PredictedCost {
  Seconds iteration_time;
  Joules energy;
  Joules dynamic_energy;
  bool operator==(const PredictedCost&) const = default;
};

struct Schedule {
  int format_version = kScheduleFormatVersion;
  Json workload = Json::object();  // echo of the workload the plan was made for, free-form
  std::string method;              // kareus | perseus | nanobatch-perseus | megatron
  std::string gpu;
  PredictedCost predicted;
  std::vector<StageSchedule> stages;
  bool operator==(const Schedule&) const = default;
};

// Reads and validates a schedule; every error names the file and the JSON pointer of the field.
Schedule load_schedule(const std::filesystem::path& path);
Schedule parse_schedule(std::string_view text, const std::string& source_name);
// Throws Error (naming `where`) unless `schedule` satisfies what load_schedule checks, so a
// schedule built in memory is held to the same rules as one read from a file.
void validate_schedule(const Schedule& schedule, std::string_view where);
std::string to_json(const Schedule& schedule);

// Whether `key` names a partition as `kareus plan` writes them (docs/schedule-format.md): fwd_ or
// bwd_, then attn or mlp, or under context parallelism qkv, ao, o or a followed by the collective
// beside it (_ar, _ag, _rs, _p2p).
bool is_partition_key(std::string_view key);
// Whether `slot` names a launch slot: its kernel class (norm, linear, rope, attn, activation,
// none), '_' and its index within the segment, e.g. "norm_0".
bool is_launch_slot(std::string_view slot);

}  // namespace kareus
