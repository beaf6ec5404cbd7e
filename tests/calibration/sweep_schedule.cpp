// SPDX-License-Identifier: Apache-2.0
#include "sweep_schedule.hpp"

#include <algorithm>

#include "kareus/executor/instruction.hpp"
#include "kareus/executor/iteration.hpp"

namespace kareus::testing {

Schedule sweep_schedule(const workload::Workload& w, MHz clock) {
  const emulator::Emulator emu(w.gpu);
  const auto policy = emulator::ClockPolicy::locked_at(clock);
  emulator::IterationOptions io;
  io.clock = policy;
  const emulator::IterationResult it = emulator::simulate_iteration(w, emu, io);
  Schedule s;
  s.workload = w.to_json();
  s.method = "perseus";
  s.gpu = w.gpu.name;
  s.predicted = {it.iteration_time, it.total_energy(), it.dynamic_energy};
  const int stages = w.parallelism.pp, microbatches = w.parallelism.microbatches;
  for (int st = 0; st < stages; ++st) {
    StageSchedule ss;
    ss.stage = st;
    const auto add = [&](int mb, workload::Direction d) {
      const emulator::RunResult r = emulator::run_instruction_sequential(w, emu, st, d, policy);
      ScheduleInstruction in;
      in.microbatch = mb;
      in.direction = workload::to_string(d);
      in.clock = clock;
      in.execution = "sequential";
      in.predicted_time = r.time;
      in.predicted_energy = r.total_energy();
      ss.instructions.push_back(in);
    };
    // 1F1B: stage st warms up with stages - st - 1 forwards.
    int f = 0, b = 0;
    for (int i = 0; i < std::min(stages - st - 1, microbatches); ++i)
      add(f++, workload::Direction::kForward);
    while (f < microbatches) {
      add(f++, workload::Direction::kForward);
      add(b++, workload::Direction::kBackward);
    }
    while (b < microbatches) add(b++, workload::Direction::kBackward);
    s.stages.push_back(std::move(ss));
  }
  validate_schedule(s, "sweep schedule");
  return s;
}

}  // namespace kareus::testing
