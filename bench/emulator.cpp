// SPDX-License-Identifier: Apache-2.0
// Speed of the emulator: one partition evaluation is the unit the search pays per candidate.
#include <benchmark/benchmark.h>

#include "kareus/executor/instruction.hpp"
#include "kareus/executor/iteration.hpp"

namespace {

using namespace kareus;

workload::Workload llama_tp8() {
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = "a100-sxm4-40gb";
  r.parallelism = {8, 1, 2, 1, 8, 4096, 8, workload::Recompute::kFull, {}, 8};
  return workload::make_workload(r);
}

void BM_PartitionEvaluation(benchmark::State& state) {
  const auto w = llama_tp8();
  const emulator::Emulator emu(w.gpu);
  const auto parts = partition::representative_partitions(w);
  const auto& p = parts.front();  // fwd_attn: the largest forward partition
  const emulator::PartitionConfig config{p.launch_options.back().name, 12};
  const auto policy = emulator::ClockPolicy::locked_at(MHz(1230));
  for (auto _ : state)
    benchmark::DoNotOptimize(emulator::run_partition_with(emu, p, &config, policy));
}
BENCHMARK(BM_PartitionEvaluation);

void BM_PartitionEvaluationGovernor(benchmark::State& state) {
  const auto w = llama_tp8();
  const emulator::Emulator emu(w.gpu);
  const auto parts = partition::representative_partitions(w);
  const auto& p = parts.front();
  const emulator::PartitionConfig config{p.launch_options.front().name, 24};
  const auto policy = emulator::ClockPolicy::governor(w.gpu.power_limit_default);
  for (auto _ : state)
    benchmark::DoNotOptimize(emulator::run_partition_with(emu, p, &config, policy));
}
BENCHMARK(BM_PartitionEvaluationGovernor);

void BM_IterationSequential(benchmark::State& state) {
  const auto w = llama_tp8();
  const emulator::Emulator emu(w.gpu);
  emulator::IterationOptions opt;
  for (auto _ : state) benchmark::DoNotOptimize(emulator::simulate_iteration(w, emu, opt));
}
BENCHMARK(BM_IterationSequential)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
