// SPDX-License-Identifier: Apache-2.0
#include "kareus/report/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "kareus/core/error.hpp"
#include "kareus/executor/instruction.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/workload/pipeline.hpp"

namespace kareus::report {
namespace {

using workload::Direction;

emulator::KeyConfigs key_configs(const std::map<std::string, PartitionLaunch>& launches) {
  emulator::KeyConfigs out;
  for (const auto& [key, l] : launches) out[key] = {l.slot, l.sms};
  return out;
}

// Instructions of one kind with the same clock and configurations take the same time, so each
// distinct one is emulated once.
std::string cache_key(int stage, const ScheduleInstruction& in) {
  std::string k = fmt::format("{}/{}/{}/{}", stage, in.direction, in.clock.value(), in.execution);
  for (const auto* m : {&in.partitions, &in.recompute_partitions}) {
    k += "|";
    for (const auto& [key, l] : *m) k += fmt::format("{}:{}:{};", key, l.slot, l.sms);
  }
  return k;
}

}  // namespace

Timeline emulate_timeline(const workload::Workload& w, const Schedule& schedule) {
  const emulator::Emulator emu(w.gpu);
  const int stages = static_cast<int>(schedule.stages.size());
  const int microbatches = w.parallelism.microbatches;
  require(stages == w.parallelism.pp, "schedule.json", "/stages", std::to_string(stages),
          fmt::format("the plan's workload has {} pipeline stages", w.parallelism.pp));
  const bool governed = schedule.method == "megatron";
  // Transfers and the reduction run at the maximum clock, as the planner charges them.
  const auto at_max = emulator::ClockPolicy::locked_at(w.gpu.clock_max);
  const Seconds transfer = emulator::pipeline_transfers(w, emu, at_max).time;

  Timeline t;
  t.tail = emulator::iteration_tail(w, emu, at_max).time;
  std::map<std::string, Seconds> durations;
  auto duration = [&](int s, const ScheduleInstruction& in) {
    const auto key = cache_key(s, in);
    if (auto it = durations.find(key); it != durations.end()) return it->second;
    const Direction d = in.direction == "forward" ? Direction::kForward : Direction::kBackward;
    const auto policy = governed ? emulator::ClockPolicy::governor(w.gpu.power_limit_default)
                                 : emulator::ClockPolicy::locked_at(in.clock);
    const auto run =
        in.execution == "nanobatch"
            ? emulator::run_instruction_nanobatch(w, emu, s, d, policy, key_configs(in.partitions),
                                                  key_configs(in.recompute_partitions))
            : emulator::run_instruction_sequential(w, emu, s, d, policy);
    return durations[key] = run.time;
  };

  // End of each (stage, direction, microbatch); negative while not yet placed.
  std::vector<double> fwd_end(stages * microbatches, -1), bwd_end(stages * microbatches, -1);
  std::vector<std::size_t> next(stages, 0);
  std::vector<double> free_at(stages, 0);
  std::size_t placed = 0, total = 0;
  for (const auto& st : schedule.stages) total += st.instructions.size();
  // List scheduling in each stage's order: an instruction starts when its stage is free and the
  // neighbour it depends on has finished and sent its tensor.
  while (placed < total) {
    bool progress = false;
    for (int s = 0; s < stages; ++s) {
      const auto& list = schedule.stages[s].instructions;
      while (next[s] < list.size()) {
        const auto& in = list[next[s]];
        const int mb = in.microbatch;
        require(mb < microbatches, "schedule.json", fmt::format("/stages/{}/microbatch", s),
                std::to_string(mb),
                fmt::format("the plan's workload has {} microbatches", microbatches));
        const bool forward = in.direction == "forward";
        double ready = 0;
        if (forward && s > 0) ready = fwd_end[(s - 1) * microbatches + mb];
        if (!forward && s + 1 < stages) ready = bwd_end[(s + 1) * microbatches + mb];
        if (ready < 0) break;  // the neighbour has not run it yet
        if ((forward && s > 0) || (!forward && s + 1 < stages)) ready += transfer.value();
        const double start = std::max(ready, free_at[s]);
        const double end = start + duration(s, in).value();
        if (start > free_at[s]) t.gaps.push_back({s, Seconds(free_at[s]), Seconds(start)});
        t.bars.push_back(
            {s, mb, in.direction, Seconds(start), Seconds(end), in.clock, in.execution});
        if (!in.step_clocks.empty()) ++t.step_clock_instructions;
        (forward ? fwd_end : bwd_end)[s * microbatches + mb] = end;
        free_at[s] = end;
        ++next[s];
        ++placed;
        progress = true;
      }
    }
    if (!progress)
      throw Error("schedule.json: the stages' instruction orders wait on each other (deadlock)");
  }
  t.pipeline_time = Seconds(*std::max_element(free_at.begin(), free_at.end()));
  // A stage that finishes early waits for the others before the reduction.
  for (int s = 0; s < stages; ++s)
    if (free_at[s] < t.pipeline_time.value())
      t.gaps.push_back({s, Seconds(free_at[s]), t.pipeline_time});
  return t;
}

}  // namespace kareus::report
