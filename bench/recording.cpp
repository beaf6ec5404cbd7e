// SPDX-License-Identifier: Apache-2.0
// What a measurement record costs the training loop: the frequency controller's calls at every
// instruction boundary with and without a record, on the fake NVML (tests/nvml/fake_nvml), every
// instruction at one clock so that no clock change is timed. After the benchmarks, the cost per
// instruction is set against the shortest instruction of every workload in data/workloads
// (sequential, at the top clock, on the emulator): the share of iteration time a record takes.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "kareus/core/paths.hpp"
#include "kareus/executor/instruction.hpp"
#include "kareus/runtime/frequency_controller.hpp"

namespace {

using namespace kareus;
namespace fs = std::filesystem;

// One stage of 2 x 16 sequential instructions, all at 1410 MHz.
Schedule one_clock_schedule() {
  Schedule s;
  s.method = "perseus";
  s.gpu = "a100-sxm4-40gb";
  s.predicted = {Seconds(1), Joules(1000), Joules(500)};
  StageSchedule st;
  for (const char* d : {"forward", "backward"})
    for (int mb = 0; mb < 16; ++mb) {
      ScheduleInstruction in;
      in.microbatch = mb;
      in.direction = d;
      in.clock = MHz(1410);
      in.execution = "sequential";
      in.predicted_time = Seconds(0.01);
      in.predicted_energy = Joules(3);
      st.instructions.push_back(in);
    }
  s.stages.push_back(st);
  return s;
}

struct FakeGpu {
  fs::path dir = fs::temp_directory_path() / fmt::format("kareus-bench-recording-{}", getpid());
  FakeGpu() {
    fs::create_directories(dir);
    std::ofstream(dir / "nvml.json")
        << R"({"devices": [{"name": "NVIDIA A100-SXM4-40GB", "default_sm_clock_mhz": 1410,
               "graphics_clocks_mhz": {"1215": [1410, 900]},
               "power_model": {"idle_w": 52, "w_per_mhz": 0.25}}]})";
    setenv("KAREUS_NVML_LIBRARY", KAREUS_FAKE_NVML_PATH, 1);
    setenv("KAREUS_FAKE_NVML_SCRIPT", (dir / "nvml.json").c_str(), 1);
  }
  ~FakeGpu() { fs::remove_all(dir); }
};

void play(benchmark::State& state, bool record) {
  const FakeGpu gpu;
  const Schedule s = one_clock_schedule();
  auto nvml = std::make_shared<const nvml::Nvml>();
  runtime::ControllerOptions o;
  o.restore_on_signals = false;
  if (record) o.record = runtime::RecordOptions{gpu.dir / "run.jsonl", 0, 0, nvml, {}};
  runtime::FrequencyController c(s, 0, std::make_unique<runtime::NvmlClockBackend>(nvml, 0), o);
  const auto& ins = s.stages[0].instructions;
  for (auto _ : state) {
    for (const auto& in : ins) {
      c.on_instruction_begin(0, in.microbatch, in.direction);
      c.on_instruction_end();
    }
    c.on_step_end();
  }
  state.counters["per_instruction"] =
      benchmark::Counter(static_cast<double>(state.iterations() * ins.size()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_InstructionsWithoutRecord(benchmark::State& state) {
  play(state, false);
}
BENCHMARK(BM_InstructionsWithoutRecord)->Unit(benchmark::kMicrosecond);

void BM_InstructionsWithRecord(benchmark::State& state) {
  play(state, true);
}
BENCHMARK(BM_InstructionsWithRecord)->Unit(benchmark::kMicrosecond);

// Seconds per instruction boundary, measured here once more outside Google Benchmark so that the
// comparison below uses one figure per configuration (medians of 7 runs of 200 iterations).
double seconds_per_instruction(bool record) {
  const FakeGpu gpu;
  const Schedule s = one_clock_schedule();
  std::vector<double> runs;
  for (int run = 0; run < 7; ++run) {
    auto nvml = std::make_shared<const nvml::Nvml>();
    runtime::ControllerOptions o;
    o.restore_on_signals = false;
    fs::remove(gpu.dir / "run.jsonl");
    if (record) o.record = runtime::RecordOptions{gpu.dir / "run.jsonl", 0, 0, nvml, {}};
    runtime::FrequencyController c(s, 0, std::make_unique<runtime::NvmlClockBackend>(nvml, 0), o);
    const auto& ins = s.stages[0].instructions;
    const auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < 200; ++it) {
      for (const auto& in : ins) {
        c.on_instruction_begin(0, in.microbatch, in.direction);
        c.on_instruction_end();
      }
      c.on_step_end();
    }
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                   (200.0 * static_cast<double>(ins.size())));
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// The shortest instruction of the catalogue's workloads: the case where a record costs most.
std::pair<std::string, double> shortest_instruction() {
  std::pair<std::string, double> best{"", 1e9};
  for (const auto& entry : fs::directory_iterator(data_dir() / "workloads")) {
    if (entry.path().extension() != ".json") continue;
    auto r = workload::read_workload_request(entry.path().string());
    const workload::Workload w = workload::make_workload(r);
    const emulator::Emulator emu(w.gpu);
    for (int st = 0; st < w.parallelism.pp; ++st)
      for (auto d : {workload::Direction::kForward, workload::Direction::kBackward}) {
        const double t = emulator::run_instruction_sequential(
                             w, emu, st, d, emulator::ClockPolicy::locked_at(w.gpu.clock_max))
                             .time.value();
        if (t < best.second) best = {entry.path().stem().string(), t};
      }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const double without = seconds_per_instruction(false), with = seconds_per_instruction(true);
  const auto [workload, shortest] = shortest_instruction();
  // A record adds its cost at each boundary; an iteration is its instructions and more.
  const double share = (with - without) / shortest;
  std::cout << fmt::format(
      "\nper instruction: {:.2f} us without a record, {:.2f} us with one: {:.2f} us for the "
      "record\nshortest instruction of data/workloads: {:.2f} ms ({}, sequential at the top "
      "clock)\nthe record costs {:.4f} % of it; every instruction of an iteration is at least "
      "that long, so a record costs at most that share of iteration time\n",
      1e6 * without, 1e6 * with, 1e6 * (with - without), 1e3 * shortest, workload, 100 * share);
  return share < 0.01 ? 0 : 1;
}
