// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/composition.hpp"

#include <algorithm>

#include "config_key.hpp"
#include "kareus/core/error.hpp"
#include "kareus/frontier/pareto.hpp"

namespace kareus::planner {

using config_key::base_key;
using config_key::kRecomputePrefix;
using config_key::searchable;
using workload::Direction;

namespace {

// The instruction's partitions in order, each tagged with the key its configuration comes from.
struct TaggedPartition {
  const partition::Partition* partition;
  std::string config_key;  // "" when nothing configures it
};

struct InstructionLayout {
  std::vector<partition::Partition> forward, backward;  // owning storage
  std::vector<TaggedPartition> tagged;
};

InstructionLayout layout_of(const workload::Workload& w, int stage, Direction d) {
  InstructionLayout l;
  const int layers = w.stage_layers().at(stage);
  const bool recompute =
      d == Direction::kBackward && w.parallelism.recompute == workload::Recompute::kFull;
  if (d == Direction::kForward || recompute)
    l.forward = partition::build_partitions(w, Direction::kForward, layers);
  if (d == Direction::kBackward) l.backward = partition::build_partitions(w, d, layers);
  for (const auto& p : l.forward)
    l.tagged.push_back(
        {&p, !searchable(p)
                 ? ""
                 : (d == Direction::kBackward ? std::string(kRecomputePrefix) : "") + p.key});
  for (const auto& p : l.backward) l.tagged.push_back({&p, searchable(p) ? p.key : ""});
  return l;
}

// Everything at clock f that no key's configuration changes: embedding, output and loss, the
// trail partitions (fixed configuration) and partitions that overlap nothing.
emulator::RunResult fixed_cost(const workload::Workload& w, const emulator::Emulator& emu,
                               int stage, Direction d, const InstructionLayout& l,
                               const emulator::ClockPolicy& policy) {
  emulator::RunResult total;
  const bool first = stage == 0;
  const bool last = stage == w.parallelism.pp - 1;
  if (first) total += emu.run_sequential(workload::embedding_kernels(w, d), policy);
  if (last) total += emu.run_sequential(workload::output_and_loss_kernels(w, d), policy);
  for (const auto& t : l.tagged)
    if (t.config_key.empty())
      total += emulator::run_partition_with(emu, *t.partition, nullptr, policy);
  return total;
}

std::map<std::string, int> key_counts(const InstructionLayout& l) {
  std::map<std::string, int> counts;
  for (const auto& t : l.tagged)
    if (!t.config_key.empty()) ++counts[t.config_key];
  return counts;
}

}  // namespace

OptionSet pareto_options(std::vector<InstructionOption> options) {
  std::sort(options.begin(), options.end(), [](const auto& a, const auto& b) {
    return a.time < b.time || (a.time == b.time && a.dynamic_energy < b.dynamic_energy);
  });
  OptionSet out;
  for (auto& o : options)
    if (out.empty() || o.dynamic_energy < out.back().dynamic_energy) out.push_back(std::move(o));
  return out;
}

OptionSet sequential_options(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                             Direction d, const std::vector<MHz>& clocks) {
  std::vector<InstructionOption> out;
  for (MHz f : clocks) {
    const auto r =
        emulator::run_instruction_sequential(w, emu, stage, d, emulator::ClockPolicy::locked_at(f));
    out.push_back({r.time, r.dynamic_energy, f, false, false, {}, {}, {}});
  }
  return pareto_options(std::move(out));
}

OptionSet default_nanobatch_options(const workload::Workload& w, const emulator::Emulator& emu,
                                    int stage, Direction d, const std::vector<MHz>& clocks) {
  // The library defaults are spelt out per key so that the exported schedule tells the runtime
  // what to launch, as it must for any nanobatch instruction (docs/schedule-format.md).
  InstructionOption defaults;
  const auto layout = layout_of(w, stage, d);
  for (const auto& t : layout.tagged) {
    if (t.config_key.empty()) continue;
    const auto cfg = emulator::default_partition_config(emu, *t.partition);
    if (t.config_key.starts_with(kRecomputePrefix)) {
      defaults.recompute[t.partition->key] = cfg;
    } else {
      defaults.configs[t.partition->key] = cfg;
    }
  }
  std::vector<InstructionOption> out;
  for (MHz f : clocks) {
    const auto r =
        emulator::run_instruction_nanobatch(w, emu, stage, d, emulator::ClockPolicy::locked_at(f),
                                            defaults.configs, defaults.recompute);
    out.push_back(
        {r.time, r.dynamic_energy, f, false, true, defaults.configs, defaults.recompute, {}});
  }
  return pareto_options(std::move(out));
}

OptionSet composed_options(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                           Direction d, const std::vector<MHz>& clocks, const KeyFrontiers& keys) {
  const auto layout = layout_of(w, stage, d);
  std::map<std::string, int> counts;
  for (const auto& t : layout.tagged)
    if (!t.config_key.empty()) ++counts[t.config_key];

  std::vector<InstructionOption> out;
  for (MHz f : clocks) {
    const auto policy = emulator::ClockPolicy::locked_at(f);
    // Per key: its measured points at this clock, Pareto-pruned in (time, dynamic energy).
    struct KeyPart {
      std::string config_key;
      const store::PartitionSearchResult* result;
      std::vector<std::size_t> point_of;  // ParetoSet index -> measured index
      frontier::ParetoSet scaled;
    };
    std::vector<KeyPart> parts;
    bool complete = true;
    for (const auto& [config_key, count] : counts) {
      const std::string key = base_key(config_key);
      const auto it = keys.find(key);
      if (it == keys.end()) throw Error("internal: no search result for partition key " + key);
      std::vector<frontier::ParetoPoint> pts;
      for (std::size_t i = 0; i < it->second.measured.size(); ++i) {
        const auto& m = it->second.measured[i];
        if (m.config.clock != f) continue;
        pts.push_back({m.time, m.dynamic_energy, static_cast<std::uint32_t>(i)});
      }
      if (pts.empty()) {
        complete = false;
        break;
      }
      const auto set = frontier::ParetoSet::from_points(std::move(pts));
      KeyPart kp{config_key, &it->second, {}, frontier::scale(set, count)};
      for (const auto& p : set) kp.point_of.push_back(p.first);
      parts.push_back(std::move(kp));
    }
    if (!complete) continue;
    // Nothing to overlap (TP = CP = 1): splitting into nanobatches only shrinks the kernels, and a
    // nanobatch instruction without partitions is not a schedule the runtime can play, so
    // sequential execution (added below) stands alone.
    if (parts.empty()) continue;
    // Minkowski sums, keeping each intermediate set to trace a sum back to its configurations.
    std::vector<frontier::ParetoSet> chain{parts.front().scaled};
    for (std::size_t k = 1; k < parts.size(); ++k)
      chain.push_back(frontier::minkowski_sum(chain.back(), parts[k].scaled));
    const auto fixed = fixed_cost(w, emu, stage, d, layout, policy);
    for (std::size_t j = 0; j < chain.back().size(); ++j) {
      InstructionOption o;
      o.time = chain.back()[j].time + fixed.time;
      o.dynamic_energy = chain.back()[j].energy + fixed.dynamic_energy;
      o.clock = f;
      o.nanobatch = true;
      std::uint32_t idx = static_cast<std::uint32_t>(j);
      for (std::size_t k = parts.size(); k-- > 0;) {
        const auto& point = chain[k][idx];
        // In a sum, `second` indexes the key's scaled set; the first key is the chain's head.
        const std::uint32_t in_scaled = k == 0 ? idx : point.second;
        const std::uint32_t in_set = parts[k].scaled[in_scaled].first;
        const auto& m = parts[k].result->measured[parts[k].point_of[in_set]];
        const emulator::PartitionConfig cfg{m.config.slot, m.config.comm_sms};
        const std::string& ck = parts[k].config_key;
        if (ck.starts_with(kRecomputePrefix)) {
          o.recompute[base_key(ck)] = cfg;
        } else {
          o.configs[ck] = cfg;
        }
        if (k > 0) idx = point.first;
      }
      out.push_back(std::move(o));
    }
  }
  // Sequential execution is always a candidate: where nanobatch splitting loses, the
  // instruction frontier falls back to it by itself (Kareus §4.5).
  for (auto& o : sequential_options(w, emu, stage, d, clocks)) out.push_back(std::move(o));
  return pareto_options(std::move(out));
}

Joules job_dynamic_energy(const workload::Workload& w, Seconds solver_time, Joules solver_energy) {
  const double replicas =
      static_cast<double>(w.gpus_per_stage()) * static_cast<double>(w.parallelism.dp);
  const Joules stage_static =
      w.gpu.static_power * solver_time * static_cast<double>(w.parallelism.pp);
  return (solver_energy - stage_static) * replicas;
}

emulator::RunResult composed_value(const workload::Workload& w, const emulator::Emulator& emu,
                                   int stage, Direction d, const InstructionOption& option,
                                   const KeyFrontiers& keys) {
  if (!option.nanobatch || !option.step_clocks.empty())
    throw Error("internal: composed_value takes a nanobatch option at one clock");
  const auto layout = layout_of(w, stage, d);
  emulator::RunResult total =
      fixed_cost(w, emu, stage, d, layout, emulator::ClockPolicy::locked_at(option.clock));
  for (const auto& [config_key, count] : key_counts(layout)) {
    const std::string key = base_key(config_key);
    const auto& chosen =
        config_key.starts_with(kRecomputePrefix) ? option.recompute : option.configs;
    const auto cfg = chosen.find(key);
    const auto it = keys.find(key);
    if (cfg == chosen.end() || it == keys.end())
      throw Error("internal: no configuration or search result for partition key " + key);
    const auto m = std::find_if(it->second.measured.begin(), it->second.measured.end(),
                                [&](const store::PartitionPoint& p) {
                                  return p.config.clock == option.clock &&
                                         p.config.slot == cfg->second.slot &&
                                         p.config.comm_sms == cfg->second.sms;
                                });
    if (m == it->second.measured.end())
      throw Error("internal: partition key " + key + " has no reading of its configuration");
    total.time += m->time * static_cast<double>(count);
    total.dynamic_energy += m->dynamic_energy * static_cast<double>(count);
  }
  return total;
}

}  // namespace kareus::planner
