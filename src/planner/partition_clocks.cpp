// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/partition_clocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "config_key.hpp"
#include "kareus/core/error.hpp"

namespace kareus::planner {

using config_key::base_key;
using config_key::kRecomputePrefix;
using config_key::searchable;
using workload::Direction;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void add_partitions(std::vector<InstructionStep>& steps, const workload::Workload& w, Direction d,
                    int layers, bool recompute) {
  for (auto& p : partition::build_partitions(w, d, layers)) {
    std::string key = searchable(p) ? (recompute ? std::string(kRecomputePrefix) : "") + p.key : "";
    steps.push_back({std::move(key), std::move(p), {}});
  }
}

void add_block(std::vector<InstructionStep>& steps, std::vector<workload::Kernel> kernels) {
  steps.push_back({"", std::nullopt, std::move(kernels)});
}

emulator::RunResult run_step(const emulator::Emulator& emu, const InstructionStep& step,
                             const InstructionOption* option, MHz f) {
  const auto policy = emulator::ClockPolicy::locked_at(f);
  if (!step.partition) return emu.run_sequential(step.kernels, policy);
  const emulator::PartitionConfig* config = nullptr;
  if (option && !step.config_key.empty()) {
    const bool recompute = step.config_key.starts_with(kRecomputePrefix);
    const auto& configs = recompute ? option->recompute : option->configs;
    const auto it = configs.find(step.partition->key);
    if (it != configs.end()) config = &it->second;
  }
  return emulator::run_partition_with(emu, *step.partition, config, policy);
}

// Cost of the steps no configuration changes at every clock; empty rows for the others.
using CostTable = std::vector<std::vector<emulator::RunResult>>;

CostTable fixed_costs(const emulator::Emulator& emu, const std::vector<InstructionStep>& steps,
                      const std::vector<MHz>& clocks) {
  CostTable fixed(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].config_key.empty())
      for (MHz f : clocks) fixed[i].push_back(run_step(emu, steps[i], nullptr, f));
  return fixed;
}

struct MeasuredIndex {
  // (key, slot, sms, clock index) -> measured point
  std::map<std::tuple<std::string, std::string, int, std::size_t>, emulator::RunResult> points;
};

MeasuredIndex index_measurements(const KeyFrontiers& keys, const std::vector<MHz>& clocks) {
  MeasuredIndex index;
  for (const auto& [key, result] : keys)
    for (const auto& m : result.measured) {
      const auto c = std::find(clocks.begin(), clocks.end(), m.config.clock);
      if (c == clocks.end()) continue;
      emulator::RunResult r;
      r.time = m.time;
      r.dynamic_energy = m.dynamic_energy;
      index.points.try_emplace(
          {key, m.config.slot, m.config.comm_sms, static_cast<std::size_t>(c - clocks.begin())}, r);
    }
  return index;
}

const emulator::PartitionConfig& config_of(const InstructionOption& o, const std::string& ck) {
  if (ck.starts_with(kRecomputePrefix)) return o.recompute.at(ck.substr(kRecomputePrefix.size()));
  return o.configs.at(ck);
}

// One frontier::Step per instruction step for the combination of `o`: an option per clock at
// which the step can run, `clock` being the index into the search clocks.
std::vector<frontier::Step> steps_for(const std::vector<InstructionStep>& steps,
                                      const CostTable& fixed, const MeasuredIndex& index,
                                      const InstructionOption& o, std::size_t clocks) {
  std::vector<frontier::Step> out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    frontier::Step s{steps[i].name(), {}};
    for (std::size_t c = 0; c < clocks; ++c) {
      if (steps[i].config_key.empty()) {
        s.options.push_back({c, fixed[i][c].time, fixed[i][c].dynamic_energy});
        continue;
      }
      const auto& cfg = config_of(o, steps[i].config_key);
      const auto it = index.points.find({base_key(steps[i].config_key), cfg.slot, cfg.sms, c});
      if (it != index.points.end())
        s.options.push_back({c, it->second.time, it->second.dynamic_energy});
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The kernel-DVFS default stall power: the lowest average power of any step at any clock, all
// configurations the instruction could use included.
Watts default_switch_power(const workload::Workload& w, const std::vector<InstructionStep>& steps,
                           const CostTable& fixed, const KeyFrontiers& keys) {
  double dynamic = kInf;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].config_key.empty())
      for (const auto& r : fixed[i])
        dynamic = std::min(dynamic, (r.dynamic_energy / r.time).value());
  std::set<std::string> used;
  for (const auto& s : steps)
    if (!s.config_key.empty()) used.insert(base_key(s.config_key));
  for (const auto& key : used)
    for (const auto& m : keys.at(key).measured)
      dynamic = std::min(dynamic, (m.dynamic_energy / m.time).value());
  return w.gpu.static_power + Watts(std::max(0.0, dynamic));
}

std::string combination_of(const InstructionOption& o) {
  std::string id;
  for (const auto* configs : {&o.configs, &o.recompute}) {
    for (const auto& [key, c] : *configs) id += fmt::format("{}={}/{};", key, c.slot, c.sms);
    id += '|';
  }
  return id;
}

}  // namespace

const char* to_string(ClockGranularity g) {
  return g == ClockGranularity::kInstruction ? "instruction" : "partition";
}

ClockGranularity parse_clock_granularity(const std::string& text, std::string_view where,
                                         std::string_view field) {
  for (auto g : {ClockGranularity::kInstruction, ClockGranularity::kPartition})
    if (text == to_string(g)) return g;
  throw Error::invalid(where, field, text, "allowed: instruction, partition");
}

std::string InstructionStep::name() const {
  if (partition) return config_key.empty() ? partition->key : config_key;
  return kernels.empty() ? "" : kernels.front().name + "...";
}

std::vector<InstructionStep> instruction_steps(const workload::Workload& w, int stage,
                                               Direction d) {
  const int layers = w.stage_layers().at(stage);
  const bool first = stage == 0;
  const bool last = stage == w.parallelism.pp - 1;
  std::vector<InstructionStep> steps;
  // The order of emulator::run_instruction_nanobatch, which the runtime follows too.
  if (d == Direction::kForward) {
    if (first) add_block(steps, workload::embedding_kernels(w, d));
    add_partitions(steps, w, d, layers, false);
    if (last) add_block(steps, workload::output_and_loss_kernels(w, d));
  } else {
    if (w.parallelism.recompute == workload::Recompute::kFull)
      add_partitions(steps, w, Direction::kForward, layers, true);
    if (last) add_block(steps, workload::output_and_loss_kernels(w, d));
    add_partitions(steps, w, d, layers, false);
    if (first) add_block(steps, workload::embedding_kernels(w, d));
  }
  return steps;
}

OptionSet partition_clock_options(const workload::Workload& w, const emulator::Emulator& emu,
                                  int stage, Direction d, const std::vector<MHz>& clocks,
                                  const KeyFrontiers& keys, OptionSet instruction_options,
                                  const PartitionClockOptions& options) {
  require(std::isfinite(options.switch_latency.value()) && options.switch_latency.value() >= 0,
          "partition clock options", "switch_latency_s",
          format_number(options.switch_latency.value()), "must be a finite number of seconds >= 0");
  const auto steps = instruction_steps(w, stage, d);
  const auto fixed = fixed_costs(emu, steps, clocks);
  const Watts power = options.switch_power.value_or(default_switch_power(w, steps, fixed, keys));
  require(power >= w.gpu.static_power, "partition clock options", "switch_power_w",
          format_number(power.value()),
          fmt::format("must be at least the GPU's static power ({} W): the GPU stays on during a "
                      "switch",
                      format_number(w.gpu.static_power.value())));
  // The pipeline adds static power x time itself, so a switch adds only its dynamic part here.
  const auto switching = frontier::uniform_switch_cost(clocks.size(), options.switch_latency,
                                                       power - w.gpu.static_power);
  const auto index = index_measurements(keys, clocks);

  std::vector<InstructionOption> out = instruction_options;
  std::set<std::string> seen;
  for (const auto& base : instruction_options) {
    if (!base.nanobatch || base.configs.empty() || !seen.insert(combination_of(base)).second)
      continue;
    const auto ksteps = steps_for(steps, fixed, index, base, clocks.size());
    for (const auto& v : frontier::switching_hull(ksteps, clocks.size(), switching)) {
      if (v.cost.switches == 0) continue;
      InstructionOption o = base;
      o.time = v.cost.time;
      o.dynamic_energy = v.cost.energy;
      o.step_clocks.clear();
      for (std::size_t i = 0; i < ksteps.size(); ++i)
        o.step_clocks.push_back(clocks[ksteps[i].options[v.choice[i]].clock]);
      o.clock = o.step_clocks.front();
      out.push_back(std::move(o));
    }
  }
  return pareto_options(std::move(out));
}

Watts switch_power_of(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                      Direction d, const std::vector<MHz>& clocks, const KeyFrontiers& keys,
                      const PartitionClockOptions& options) {
  if (options.switch_power) return *options.switch_power;
  const auto steps = instruction_steps(w, stage, d);
  return default_switch_power(w, steps, fixed_costs(emu, steps, clocks), keys);
}

emulator::RunResult emulate_step_clocks(const workload::Workload& w, const emulator::Emulator& emu,
                                        int stage, Direction d, const InstructionOption& option,
                                        Seconds switch_latency, Watts switch_power) {
  const auto steps = instruction_steps(w, stage, d);
  if (!option.step_clocks.empty() && option.step_clocks.size() != steps.size())
    throw Error(fmt::format("an option has {} step clocks for an instruction of {} steps",
                            option.step_clocks.size(), steps.size()));
  emulator::RunResult total;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const MHz f = option.step_clocks.empty() ? option.clock : option.step_clocks[i];
    if (i > 0 && !option.step_clocks.empty() && f != option.step_clocks[i - 1]) {
      emulator::RunResult stall;
      stall.time = switch_latency;
      stall.static_energy = w.gpu.static_power * switch_latency;
      stall.dynamic_energy = (switch_power - w.gpu.static_power) * switch_latency;
      total += stall;
    }
    total += run_step(emu, steps[i], &option, f);
  }
  return total;
}

}  // namespace kareus::planner
