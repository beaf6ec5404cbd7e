// SPDX-License-Identifier: Apache-2.0
// Instruction options (Kareus §4.4): for every pipeline instruction type (stage, direction), the
// Pareto set of (time, dynamic energy) over its execution choices — one SM clock per
// instruction, and under nanobatch overlap one configuration per partition key.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kareus/executor/instruction.hpp"
#include "kareus/store/partition_search.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::planner {

struct InstructionOption {
  Seconds time;           // one GPU, one microbatch
  Joules dynamic_energy;  // one GPU, one microbatch
  MHz clock;              // locked clock; for the default governor its average clock
  bool governor = false;  // runs under the default governor instead of a locked clock
  bool nanobatch = false;
  emulator::KeyConfigs configs;    // the instruction's own partitions
  emulator::KeyConfigs recompute;  // the re-run forward of a backward under full recomputation
  // Partition clock granularity only: the clock of each step of instruction_steps() (`clock` is
  // the first); empty when the whole instruction runs at `clock` (partition_clocks.hpp).
  std::vector<MHz> step_clocks;
};

// Pareto set in (time, dynamic energy), by increasing time.
using OptionSet = std::vector<InstructionOption>;
OptionSet pareto_options(std::vector<InstructionOption> options);

// Search results per partition key, as the planner composes them.
using KeyFrontiers = std::map<std::string, store::PartitionSearchResult>;

// Sequential execution at each clock (Megatron+Perseus).
OptionSet sequential_options(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                             workload::Direction d, const std::vector<MHz>& clocks);
// Nanobatch overlap with library defaults at each clock (Nanobatching+Perseus).
OptionSet default_nanobatch_options(const workload::Workload& w, const emulator::Emulator& emu,
                                    int stage, workload::Direction d,
                                    const std::vector<MHz>& clocks);
// Kareus: per clock, the Minkowski sum of the keys' measured frontiers at that clock (each
// scaled by how often the key occurs in the instruction) plus the work no key configures; a
// clock at which some key has no measurement is skipped, as in the artifact.
OptionSet composed_options(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                           workload::Direction d, const std::vector<MHz>& clocks,
                           const KeyFrontiers& keys);

// The whole job's dynamic energy for a pipeline solver cost, which covers one GPU per stage with
// static power included: that cost less the stages' static energy, times each stage's replicas
// (tensor/context parallel GPUs and data-parallel copies). The planner's frontier and the realised
// frontier both scale by it.
Joules job_dynamic_energy(const workload::Workload& w, Seconds solver_time, Joules solver_energy);

// What composed_options charges for a nanobatch option at one clock (no step clocks) when its
// keys' configurations read as in `keys`: the same sum of scaled readings plus the work no key
// configures. Throws kareus::Error when a configuration has no reading in `keys`.
emulator::RunResult composed_value(const workload::Workload& w, const emulator::Emulator& emu,
                                   int stage, workload::Direction d,
                                   const InstructionOption& option, const KeyFrontiers& keys);

}  // namespace kareus::planner
