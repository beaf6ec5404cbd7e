// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/instruction.hpp"

#include <fmt/format.h>

#include "kareus/core/error.hpp"

namespace kareus::emulator {

using workload::Direction;

PartitionConfig default_partition_config(const Emulator& emulator, const partition::Partition& p) {
  if (p.fixed) return {p.slots.front().name, partition::kTrailSms};
  return {p.slots.front().name, emulator.gpu().nccl_default_channels};
}

RunResult run_partition_with(const Emulator& emulator, const partition::Partition& p,
                             const PartitionConfig* config, const ClockPolicy& policy) {
  PartitionProgram program;
  program.compute = p.compute;
  if (p.comm) {
    const PartitionConfig cfg =
        (config && !p.fixed) ? *config : default_partition_config(emulator, p);
    const partition::LaunchSlot* slot = p.find_slot(cfg.slot);
    if (!slot) {
      std::string known;
      for (const auto& s : p.slots) known += (known.empty() ? "" : ", ") + s.name;
      throw Error::invalid("", fmt::format("partition {} slot", p.key), cfg.slot,
                           "allowed: " + known);
    }
    program.comm = &*p.comm;
    program.comm_sms = cfg.sms;
    program.launch_index = slot->op_index;
  }
  return emulator.run_partition(program, policy);
}

RunResult run_instruction_sequential(const workload::Workload& w, const Emulator& emulator,
                                     int stage, Direction d, const ClockPolicy& policy) {
  const auto kernels = workload::instruction_kernels(w, stage, d);
  return emulator.run_sequential(kernels, policy);
}

namespace {

RunResult run_partitions(const Emulator& emulator, const std::vector<partition::Partition>& parts,
                         const KeyConfigs& configs, const ClockPolicy& policy) {
  RunResult total;
  for (const auto& p : parts) {
    const auto it = configs.find(p.key);
    total += run_partition_with(emulator, p, it == configs.end() ? nullptr : &it->second, policy);
  }
  return total;
}

}  // namespace

RunResult run_instruction_nanobatch(const workload::Workload& w, const Emulator& emulator,
                                    int stage, Direction d, const ClockPolicy& policy,
                                    const KeyConfigs& configs, const KeyConfigs& recompute) {
  const int layers = w.stage_layers().at(stage);
  const bool first = stage == 0;
  const bool last = stage == w.parallelism.pp - 1;
  RunResult total;
  if (d == Direction::kForward) {
    if (first) total += emulator.run_sequential(workload::embedding_kernels(w, d), policy);
    total += run_partitions(emulator, partition::build_partitions(w, d, layers), configs, policy);
    if (last) total += emulator.run_sequential(workload::output_and_loss_kernels(w, d), policy);
  } else {
    if (w.parallelism.recompute == workload::Recompute::kFull) {
      total += run_partitions(emulator, partition::build_partitions(w, Direction::kForward, layers),
                              recompute, policy);
    }
    if (last) total += emulator.run_sequential(workload::output_and_loss_kernels(w, d), policy);
    total += run_partitions(emulator, partition::build_partitions(w, d, layers), configs, policy);
    if (first) total += emulator.run_sequential(workload::embedding_kernels(w, d), policy);
  }
  return total;
}

}  // namespace kareus::emulator
