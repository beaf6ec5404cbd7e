// SPDX-License-Identifier: Apache-2.0
// Clock granularity inside Kareus plans (beyond the paper). At instruction granularity
// (the paper) an instruction runs at one SM clock. At partition granularity a nanobatch option
// may run each step of the instruction (a partition, or the embedding / output-and-loss block
// around them) at its own clock, and pays the kernel-DVFS stall model for every change between
// consecutive steps: the stream waits the switch latency while the GPU draws the stall power.
// Each partition key keeps one configuration (launch slot, SMs) per instruction, as in the
// runtime schedule; only the clock varies per step. docs/clock-granularity.md explains the
// search and what it finds.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/frontier/switching_hull.hpp"
#include "kareus/hardware/clock_switch.hpp"
#include "kareus/planner/composition.hpp"

namespace kareus::planner {

enum class ClockGranularity { kInstruction, kPartition };
const char* to_string(ClockGranularity g);
// Throws kareus::Error naming `field` after `where` and the allowed values.
ClockGranularity parse_clock_granularity(const std::string& text,
                                         std::string_view where = "plan request",
                                         std::string_view field = "clock_granularity");

struct PartitionClockOptions {
  Seconds switch_latency = kDefaultSwitchLatency;
  // Whole-GPU power while the stream waits for a switch. Unset: the kernel-DVFS default, the
  // lowest average power of any step of the instruction at any clock (docs/kernel-dvfs.md).
  std::optional<Watts> switch_power;
};

// The instruction's nanobatch execution in run order: what `step_clocks` of an option index.
// Forward: [embedding], partitions, [output and loss]. Backward: [recomputed forward partitions],
// [output and loss], partitions, [embedding]. Brackets: only on the first / last stage, or under
// full recomputation.
struct InstructionStep {
  std::string config_key;  // partition key ("recompute:" prefix when recomputed); "" if none
  std::optional<partition::Partition> partition;
  std::vector<workload::Kernel> kernels;  // embedding or output-and-loss block, run sequentially
  std::string name() const;
};
std::vector<InstructionStep> instruction_steps(const workload::Workload& w, int stage,
                                               workload::Direction d);

// Adds to `instruction_options` (composed_options' result for the same instruction) the options
// that change clock between steps. For each configuration combination on that frontier, the
// clock sequences on the lower convex hull of (time, dynamic energy) including switch costs are
// found exactly by a Lagrangian sweep (Eisner-Severance) over a Viterbi DP; a key's partitions
// may only run at clocks where its configuration was measured. Sequences without a switch are
// not added: composed_options already holds them or something better. The result is the Pareto
// set of both, so it is never worse than `instruction_options`.
OptionSet partition_clock_options(const workload::Workload& w, const emulator::Emulator& emu,
                                  int stage, workload::Direction d, const std::vector<MHz>& clocks,
                                  const KeyFrontiers& keys, OptionSet instruction_options,
                                  const PartitionClockOptions& options);

// The stall power partition_clock_options charges for this instruction: options.switch_power,
// or the kernel-DVFS default.
Watts switch_power_of(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                      workload::Direction d, const std::vector<MHz>& clocks,
                      const KeyFrontiers& keys, const PartitionClockOptions& options);

// Direct emulation of an option with per-step clocks: every partition of the instruction run on
// the emulator at its step's clock with the option's configurations, plus `switch_latency` at
// `switch_power` for every clock change. Independent of the measurements the planner composed.
emulator::RunResult emulate_step_clocks(const workload::Workload& w, const emulator::Emulator& emu,
                                        int stage, workload::Direction d,
                                        const InstructionOption& option, Seconds switch_latency,
                                        Watts switch_power);

}  // namespace kareus::planner
