// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/iteration.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kareus/executor/instruction.hpp"
#include "kareus/workload/pipeline.hpp"

namespace kareus::emulator {

const char* to_string(Execution e) {
  return e == Execution::kNanobatch ? "nanobatch" : "sequential";
}

using workload::Direction;

Seconds pipeline_makespan(int stages, int microbatches, const std::vector<Seconds>& forward,
                          const std::vector<Seconds>& backward, Seconds transfer) {
  const auto dag = workload::build_1f1b(stages, microbatches);
  std::vector<std::vector<int>> preds(dag.nodes.size());
  for (const auto& [from, to] : dag.edges) preds[to].push_back(from);
  std::vector<double> finish(dag.nodes.size(), 0.0);
  double makespan = 0;
  for (int id : dag.topological_order()) {
    const auto& node = dag.nodes[id];
    double start = 0;
    for (int p : preds[id]) {
      const double delay = dag.nodes[p].stage != node.stage ? transfer.value() : 0.0;
      start = std::max(start, finish[p] + delay);
    }
    const auto& durations = node.direction == Direction::kForward ? forward : backward;
    finish[id] = start + durations[node.stage].value();
    makespan = std::max(makespan, finish[id]);
  }
  return Seconds(makespan);
}

namespace {

double pipeline_replicas(const workload::Workload& w) {
  return static_cast<double>(w.gpus_per_stage()) * w.parallelism.dp;
}

Seconds ledger_time(const RunLedger& l) {
  return l.compute_time + l.overlap_time + l.collective_time + l.launch_gap_time;
}

}  // namespace

RunLedger scaled(const RunLedger& l, double n) {
  return {l.idle * n,         l.compute_dynamic * n, l.collective_dynamic * n, l.compute_time * n,
          l.overlap_time * n, l.collective_time * n, l.launch_gap_time * n};
}

Joules JobLedger::total() const {
  return static_energy + idle + compute_dynamic + collective_dynamic + pipeline_waits;
}

Seconds JobLedger::gpu_time() const {
  return compute_time + overlap_time + collective_time + launch_gap_time + wait_time;
}

JobLedger job_ledger(const workload::Workload& w,
                     const std::vector<InstructionResult>& instructions, const OutsideWork& tail,
                     const OutsideWork& transfers, Seconds iteration_time) {
  RunLedger work = tail.ledger;
  work += transfers.ledger;
  const double runs = w.parallelism.microbatches * pipeline_replicas(w);
  for (const auto& i : instructions) work += scaled(i.run.ledger, runs);
  const Watts blocked = w.gpu.static_power;
  const Seconds working = ledger_time(work);
  const Seconds all = iteration_time * static_cast<double>(w.total_gpus());
  JobLedger l;
  l.static_energy = blocked * working;
  l.idle = work.idle - l.static_energy;
  l.compute_dynamic = work.compute_dynamic;
  l.collective_dynamic = work.collective_dynamic;
  l.wait_time = all - working;
  l.pipeline_waits = blocked * l.wait_time;
  l.compute_time = work.compute_time;
  l.overlap_time = work.overlap_time;
  l.collective_time = work.collective_time;
  l.launch_gap_time = work.launch_gap_time;
  return l;
}

OutsideWork pipeline_transfers(const workload::Workload& w, const Emulator& emulator,
                               const ClockPolicy& policy) {
  const auto& p = w.parallelism;
  if (p.pp == 1) return {};
  const RunResult r = emulator.run_kernel(workload::pipeline_transfer(w), policy);
  const double transfers = 2.0 * p.microbatches * (p.pp - 1) * pipeline_replicas(w);
  return {r.time, r.dynamic_energy * transfers, scaled(r.ledger, transfers)};
}

IterationTail iteration_tail(const workload::Workload& w, const Emulator& emulator,
                             const ClockPolicy& policy) {
  IterationTail out;
  const bool reduce = w.parallelism.dp > 1 || w.parallelism.cp > 1;
  for (int s = 0; s < w.parallelism.pp; ++s) {
    RunResult stage = emulator.run_kernel(workload::optimizer_step(w, s), policy);
    const Seconds optimizer = stage.time;
    if (reduce) stage += emulator.run_kernel(workload::gradient_reduction(w, s), policy);
    if (stage.time > out.time) {
      out.time = stage.time;
      out.optimizer = optimizer;
      out.gradient_reduction = stage.time - optimizer;
    }
    out.dynamic_energy += stage.dynamic_energy * pipeline_replicas(w);
    out.ledger += scaled(stage.ledger, pipeline_replicas(w));
  }
  return out;
}

IterationResult simulate_iteration(const workload::Workload& w, const Emulator& emulator,
                                   const IterationOptions& options) {
  const auto& p = w.parallelism;
  ClockPolicy policy = options.clock;
  if (policy.mode == ClockPolicy::Mode::kLocked && policy.locked.value() <= 0)
    policy.locked = w.gpu.clock_max;

  IterationResult result;
  result.gpus = w.total_gpus();
  std::vector<Seconds> fwd(p.pp), bwd(p.pp);
  double busy = 0, clock_s = 0;
  const double replicas = pipeline_replicas(w);
  for (int s = 0; s < p.pp; ++s) {
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const RunResult r = options.execution == Execution::kSequential
                              ? run_instruction_sequential(w, emulator, s, d, policy)
                              : run_instruction_nanobatch(w, emulator, s, d, policy);
      (d == Direction::kForward ? fwd : bwd)[s] = r.time;
      result.instructions.push_back({s, d, r});
      result.dynamic_energy += r.dynamic_energy * (p.microbatches * replicas);
      busy += r.time.value() * p.microbatches;
      clock_s += r.clock_seconds * p.microbatches;
      if (options.breakdown) {
        const char* dir = workload::to_string(d);
        for (const auto& k : workload::instruction_kernels(w, s, d)) {
          auto& t = result.kernels[fmt::format("{}/{}/{}", s, dir, k.name)];
          const RunResult kr = emulator.run_kernel(k, policy);
          t.kind = workload::to_string(k.kind);
          t.stage = s;
          t.direction = dir;
          t.count += p.microbatches;
          t.time += kr.time * p.microbatches;
          t.dynamic_energy += kr.dynamic_energy * p.microbatches;
        }
      }
    }
  }
  const OutsideWork transfers = pipeline_transfers(w, emulator, policy);
  const IterationTail tail = iteration_tail(w, emulator, policy);
  result.dynamic_energy += transfers.dynamic_energy + tail.dynamic_energy;
  result.pipeline_transfer_time = transfers.time;
  result.gradient_reduction_time = tail.gradient_reduction;
  result.optimizer_time = tail.optimizer;
  result.iteration_time =
      pipeline_makespan(p.pp, p.microbatches, fwd, bwd, transfers.time) + tail.time;
  result.static_energy =
      w.gpu.static_power * result.iteration_time * static_cast<double>(result.gpus);
  result.ledger = job_ledger(w, result.instructions, tail, transfers, result.iteration_time);
  result.average_clock = MHz(busy > 0 ? clock_s / busy : 0);
  return result;
}

}  // namespace kareus::emulator
