// SPDX-License-Identifier: Apache-2.0
// Running one pipeline instruction (a stage's forward or backward of one microbatch) on the
// emulator, sequentially or as a chain of nanobatch partitions with per-key configurations.
#pragma once

#include <map>
#include <string>

#include "kareus/executor/emulator.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::emulator {

struct PartitionConfig {
  std::string slot;  // launch slot name, e.g. "norm_0"
  int sms = 0;       // SMs of the collective
};
// Partition key -> configuration shared by all partitions with that key in the instruction.
using KeyConfigs = std::map<std::string, PartitionConfig>;

// Runs one partition with `config` (the library default when null: launch at partition start
// on the NCCL default channel count).
RunResult run_partition_with(const Emulator& emulator, const partition::Partition& p,
                             const PartitionConfig* config, const ClockPolicy& policy);

// The library-default configuration of the nanobatching baseline for a partition.
PartitionConfig default_partition_config(const Emulator& emulator, const partition::Partition& p);

// Sequential execution of the whole instruction.
RunResult run_instruction_sequential(const workload::Workload& w, const Emulator& emulator,
                                     int stage, workload::Direction d, const ClockPolicy& policy);

// Nanobatch execution: embedding / output / loss run sequentially on the full microbatch, the
// transformer layers as partitions. `configs` applies to the instruction's own direction and
// `recompute` to the re-run forward of a backward with full recomputation; keys missing from
// them run with library defaults.
RunResult run_instruction_nanobatch(const workload::Workload& w, const Emulator& emulator,
                                    int stage, workload::Direction d, const ClockPolicy& policy,
                                    const KeyConfigs& configs = {},
                                    const KeyConfigs& recompute = {});

}  // namespace kareus::emulator
