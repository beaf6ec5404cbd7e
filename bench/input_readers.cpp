// SPDX-License-Identifier: Apache-2.0
// Speed of the input readers against the size of their input, to show each is linear in it:
//  - JsonObjects: a workload whose "_note" holds n objects of two keys (JsonDocument::parse and
//    the duplicate-key check every JSON reader runs), n = 10^3 .. 10^6;
//  - ScheduleInstructions: a one-stage schedule of n nanobatch instructions (parse_schedule),
//    n = 10^3 .. 250,000, the bound on instructions;
//  - TraceKernels: a trace of n kernels inside n/8 alternating forward/backward annotations,
//    all inside one step range (parse_torch_trace), n = 10^3 .. 10^6, the bound on kernels;
//  - CsvRows: a kernel profile of n rows (CsvTable::parse), n = 10^3 .. 10^6.
// Google Benchmark fits time = c x n (the "BigO" row, with its RMS error); items per second stay
// flat where a reader is linear. docs/hardening.md has the table.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>

#include "kareus/core/csv.hpp"
#include "kareus/core/json.hpp"
#include "kareus/kernel_dvfs/torch_trace.hpp"
#include "kareus/schedule/schedule.hpp"

namespace {

using namespace kareus;

std::string json_array(std::int64_t n) {
  std::string text = R"({"model": "llama3.2-3b", "_note": [)";
  for (std::int64_t i = 0; i < n; ++i)
    text += fmt::format(R"({}{{"id": {}, "text": "row"}})", i ? ", " : "", i);
  return text + "]}";
}

std::string schedule(std::int64_t n) {
  std::string instructions;
  for (std::int64_t m = 0; m < n / 2; ++m) {
    for (const char* direction : {"forward", "backward"}) {
      const char* key = direction[0] == 'f' ? "fwd_attn" : "bwd_attn";
      instructions += fmt::format(
          R"({}{{"microbatch": {}, "direction": "{}", "clock_mhz": 1410, "execution": "nanobatch",)"
          R"( "partitions": {{"{}": {{"slot": "norm_0", "sms": 12}}}}}})",
          instructions.empty() ? "" : ",\n", m, direction, key);
    }
  }
  return fmt::format(R"({{"format_version": 1, "method": "kareus", "gpu": "a100-sxm4-40gb",
    "workload": {{}}, "predicted": {{"iteration_time_s": 1, "energy_j": 1, "dynamic_energy_j": 0}},
    "stages": [{{"stage": 0, "instructions": [{}]}}]}})",
                     instructions);
}

std::string trace(std::int64_t n) {
  std::string events;
  // One annotation per 8 kernels, forward and backward in turn, each inside an outer step range.
  events += R"({"ph": "X", "cat": "gpu_user_annotation", "name": "step", "ts": 0, "dur": 1e9})";
  for (std::int64_t k = 0; k < n; ++k) {
    if (k % 8 == 0)
      events += fmt::format(
          R"(, {{"ph": "X", "cat": "gpu_user_annotation", "name": "{}", "ts": {}, "dur": 80}})",
          (k / 8) % 2 ? "backward" : "forward", 10 * k);
    events += fmt::format(R"(, {{"ph": "X", "cat": "kernel", "name": "k{}", "ts": {}, "dur": 9}})",
                          k % 16, 10 * k + 1);
  }
  return "{\"traceEvents\": [" + events + "]}";
}

std::string csv(std::int64_t n) {
  std::string text = "kernel,clock_mhz,time_s,energy_j,pass\n";
  for (std::int64_t i = 0; i < n; ++i)
    text += fmt::format("k{},{},{},{},forward\n", i / 4, 1410 - 30 * (i % 4), 1e-3, 0.25);
  return text;
}

template <class Make, class Read>
void run(benchmark::State& state, Make make, Read read) {
  const std::int64_t n = state.range(0);
  const std::string text = make(n);
  for (auto _ : state) benchmark::DoNotOptimize(read(text));
  state.SetComplexityN(n);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.SetItemsProcessed(state.iterations() * n);
}

void JsonObjects(benchmark::State& state) {
  run(state, json_array, [](const std::string& t) { return JsonDocument::parse(t, "w.json"); });
}

void ScheduleInstructions(benchmark::State& state) {
  run(state, schedule, [](const std::string& t) { return parse_schedule(t, "s.json"); });
}

void TraceKernels(benchmark::State& state) {
  run(state, trace,
      [](const std::string& t) { return kernel_dvfs::parse_torch_trace(t, "t.json"); });
}

void CsvRows(benchmark::State& state) {
  run(state, csv, [](const std::string& t) { return CsvTable::parse(t, "p.csv"); });
}

// Timed in ms and fitted to c x n.
void linear(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->Complexity(benchmark::oN);
}

void up_to_a_million(benchmark::internal::Benchmark* b) {
  linear(b->RangeMultiplier(10)->Range(1'000, 1'000'000));
}

BENCHMARK(JsonObjects)->Apply(up_to_a_million);
BENCHMARK(ScheduleInstructions)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Arg(250'000)->Apply(linear);
BENCHMARK(TraceKernels)->Apply(up_to_a_million);
BENCHMARK(CsvRows)->Apply(up_to_a_million);

}  // namespace

BENCHMARK_MAIN();
