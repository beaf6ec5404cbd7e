// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/ledger.hpp"

#include <map>
#include <utility>

#include "kareus/executor/instruction.hpp"

namespace kareus::planner {
namespace {

using workload::Direction;

// One GPU, one microbatch of the instruction as `o` runs it.
emulator::RunResult replay(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                           Direction d, const InstructionOption& o,
                           const KeyFrontiers& key_frontiers, const PartitionClockOptions& clocks) {
  if (o.governor)
    return emulator::run_instruction_sequential(
        w, emu, stage, d, emulator::ClockPolicy::governor(w.gpu.power_limit_default));
  if (!o.step_clocks.empty())
    return emulate_step_clocks(
        w, emu, stage, d, o, clocks.switch_latency,
        switch_power_of(w, emu, stage, d, w.gpu.search_clocks(), key_frontiers, clocks));
  const auto policy = emulator::ClockPolicy::locked_at(o.clock);
  if (!o.nanobatch) return emulator::run_instruction_sequential(w, emu, stage, d, policy);
  return emulator::run_instruction_nanobatch(w, emu, stage, d, policy, o.configs, o.recompute);
}

}  // namespace

std::vector<emulator::JobLedger> frontier_ledgers(const workload::Workload& w,
                                                  const MethodResult& m,
                                                  const PartitionClockOptions& clocks) {
  const emulator::Emulator emu(w.gpu);
  // The work outside the instructions as plan() charges it: at the maximum clock.
  const auto at_max = emulator::ClockPolicy::locked_at(w.gpu.clock_max);
  const emulator::OutsideWork tail = emulator::iteration_tail(w, emu, at_max);
  const emulator::OutsideWork transfers = emulator::pipeline_transfers(w, emu, at_max);
  const double microbatches = w.parallelism.microbatches;
  std::map<std::pair<int, int>, emulator::RunResult> replayed;  // (set, option) -> run
  const auto& dag = m.problem.dag;
  std::vector<emulator::JobLedger> out;
  for (const IterationPoint& p : m.frontier) {
    const std::vector<int> assignment = m.solver.assignment(p.plan);
    // job_ledger takes one run per (stage, direction) for every microbatch: each node is that
    // run's 1/microbatches share.
    std::vector<emulator::InstructionResult> runs;
    for (std::size_t node = 0; node < dag.nodes.size(); ++node) {
      const int set = static_cast<int>(m.problem.option_set_of[node]);
      const int option = assignment[node];
      auto it = replayed.find({set, option});
      if (it == replayed.end()) {
        const InstructionOption& o = m.option_sets[set][option];
        const Direction d = set % 2 == 0 ? Direction::kForward : Direction::kBackward;
        it = replayed
                 .emplace(std::pair{set, option},
                          replay(w, emu, set / 2, d, o, m.key_frontiers, clocks))
                 .first;
      }
      emulator::RunResult share = it->second;
      share.ledger = emulator::scaled(share.ledger, 1.0 / microbatches);
      runs.push_back({dag.nodes[node].stage, dag.nodes[node].direction, share});
    }
    out.push_back(emulator::job_ledger(w, runs, tail, transfers, p.time));
  }
  return out;
}

}  // namespace kareus::planner
