// SPDX-License-Identifier: Apache-2.0
#include "emulated_job.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

#include "kareus/calibration/measurements.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/executor/instruction.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/runtime/frequency_controller.hpp"

namespace kareus::testing {
namespace {

using RunWork = int (*)(unsigned, double, double, unsigned);
using DeviceTime = double (*)(unsigned);

struct Hooks {
  RunWork run_work = nullptr;
  DeviceTime device_time = nullptr;
};

Hooks fake_nvml_hooks() {
  // The same path the Nvml object loaded, so the same library instance and devices.
  void* lib = dlopen(nvml::nvml_library_path().c_str(), RTLD_NOW);
  Hooks h;
  if (lib) {
    h.run_work = reinterpret_cast<RunWork>(dlsym(lib, "kareusFakeNvmlRunWork"));
    h.device_time = reinterpret_cast<DeviceTime>(dlsym(lib, "kareusFakeNvmlDeviceTime"));
  }
  if (!h.run_work || !h.device_time)
    throw Error("emulated job: KAREUS_NVML_LIBRARY must be the fake NVML (tests/nvml/fake_nvml)");
  return h;
}

workload::Direction direction_of(const ScheduleInstruction& in) {
  return in.direction == "forward" ? workload::Direction::kForward : workload::Direction::kBackward;
}

emulator::KeyConfigs key_configs(const std::map<std::string, PartitionLaunch>& launches) {
  emulator::KeyConfigs out;
  for (const auto& [key, p] : launches) out[key] = {p.slot, p.sms};
  return out;
}

emulator::RunResult run(const workload::Workload& w, const emulator::Emulator& emu, int stage,
                        const ScheduleInstruction& in) {
  const auto policy = emulator::ClockPolicy::locked_at(in.clock);
  if (in.execution == "nanobatch")
    return emulator::run_instruction_nanobatch(w, emu, stage, direction_of(in), policy,
                                               key_configs(in.partitions),
                                               key_configs(in.recompute_partitions));
  return emulator::run_instruction_sequential(w, emu, stage, direction_of(in), policy);
}

// Start times of every instruction of every stage in one iteration of the 1F1B DAG: a forward
// waits for the stage before (and the activation's transfer), a backward for the stage after.
std::vector<std::vector<double>> start_times(const Schedule& s,
                                             const std::vector<std::vector<double>>& durations,
                                             double transfer) {
  const std::size_t stages = s.stages.size();
  std::map<std::tuple<std::size_t, int, std::string>, double> end;
  std::vector<std::vector<double>> start(stages);
  std::vector<std::size_t> next(stages, 0);
  std::vector<double> free(stages, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t st = 0; st < stages; ++st) {
      const auto& ins = s.stages[st].instructions;
      while (next[st] < ins.size()) {
        const ScheduleInstruction& in = ins[next[st]];
        double ready = free[st];
        const bool forward = in.direction == "forward";
        if ((forward && st > 0) || (!forward && st + 1 < stages)) {
          const auto dep = end.find({forward ? st - 1 : st + 1, in.microbatch, in.direction});
          if (dep == end.end()) break;
          ready = std::max(ready, dep->second + transfer);
        }
        start[st].push_back(ready);
        free[st] = ready + durations[st][next[st]];
        end[{st, in.microbatch, in.direction}] = free[st];
        ++next[st];
        progress = true;
      }
    }
  }
  for (std::size_t st = 0; st < stages; ++st)
    if (next[st] != s.stages[st].instructions.size())
      throw Error("emulated job: the schedule's instruction order cannot make progress");
  return start;
}

}  // namespace

std::string emulated_nvml_script(const GpuSpec& truth, int count,
                                 const std::vector<double>& power_limits) {
  std::vector<unsigned> clocks;
  for (MHz f : truth.supported_clocks())
    clocks.insert(clocks.begin(), static_cast<unsigned>(f.value()));
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < count; ++i) {
    const double limit = static_cast<std::size_t>(i) < power_limits.size()
                             ? power_limits[static_cast<std::size_t>(i)]
                             : truth.power_limit_default.value();
    devices.push_back({{"name", truth.display_name},
                       {"uuid", fmt::format("GPU-emulated-{:04d}", i)},
                       {"time", "emulated"},
                       {"default_sm_clock_mhz", static_cast<unsigned>(truth.clock_max.value())},
                       {"graphics_clocks_mhz",
                        {{std::to_string(static_cast<unsigned>(truth.memory_clock_mhz)), clocks}}},
                       {"power_model", {{"idle_w", truth.idle_power.value()}, {"w_per_mhz", 0.0}}},
                       {"power_limit_w", limit},
                       {"power_limit_min_w", truth.power_limit_min.value()},
                       {"power_limit_max_w", truth.power_limit_max.value()}});
  }
  return nlohmann::json{{"driver_version", "fake"}, {"devices", devices}}.dump(1);
}

std::vector<std::filesystem::path> play(const EmulatedJob& job) {
  auto nvml = std::make_shared<const nvml::Nvml>();
  const Hooks hooks = fake_nvml_hooks();
  const Schedule& s = job.schedule;
  const int stages = static_cast<int>(s.stages.size());
  workload::Workload w = calibration::schedule_workload(s, "schedule workload");
  w.gpu = job.truth;
  const emulator::Emulator exact(job.truth);

  std::vector<PlayedRank> ranks = job.ranks;
  if (ranks.empty())
    for (int st = 0; st < stages; ++st) ranks.push_back({st, st, static_cast<unsigned>(st), 1.0});

  struct Rank {
    PlayedRank played;
    workload::Workload w;  // its GPU at its power limit
    std::unique_ptr<emulator::Emulator> emu;
    std::unique_ptr<runtime::FrequencyController> controller;
  };
  std::vector<Rank> played;
  std::vector<std::filesystem::path> files;
  for (const PlayedRank& pr : ranks) {
    Rank r{pr, w, nullptr, nullptr};
    r.w.gpu.power_limit_default = nvml->power_limit(pr.gpu);
    r.emu = std::make_unique<emulator::Emulator>(r.w.gpu,
                                                 emulator::EmulatorOptions{job.noise_sigma, 0.0});
    runtime::ControllerOptions options;
    options.restore_on_signals = false;
    if (!job.record.empty()) {
      options.record =
          runtime::RecordOptions{job.record, pr.rank, pr.gpu, nvml,
                                 [time = hooks.device_time, gpu = pr.gpu] { return time(gpu); }};
      files.push_back(runtime::record_path_for_rank(job.record, pr.rank));
    }
    r.controller = std::make_unique<runtime::FrequencyController>(
        s, pr.stage, std::make_unique<runtime::NvmlClockBackend>(nvml, pr.gpu), options);
    played.push_back(std::move(r));
  }

  Rng rng(job.seed);
  const auto max_clock = emulator::ClockPolicy::locked_at(job.truth.clock_max);
  const double transfer = emulator::pipeline_transfers(w, exact, max_clock).time.value();
  const emulator::IterationTail tail = emulator::iteration_tail(w, exact, max_clock);
  const double tail_energy =
      tail.dynamic_energy.value() / w.total_gpus() + (job.truth.static_power * tail.time).value();
  auto work = [&](unsigned gpu, double seconds, double joules, double clock) {
    if (seconds <= 0) return;
    if (hooks.run_work(gpu, seconds, joules, static_cast<unsigned>(std::lround(clock))) != 0)
      throw Error(fmt::format("emulated job: NVML device {} is not an emulated-time device", gpu));
  };

  for (int it = 0; it < job.iterations; ++it) {
    // Every played rank's readings, and the stage's pace: its slowest rank's, or the exact
    // emulator's for a stage nobody plays.
    std::vector<std::vector<emulator::RunResult>> readings(played.size());
    std::vector<std::vector<double>> durations(static_cast<std::size_t>(stages));
    for (int st = 0; st < stages; ++st)
      for (const auto& in : s.stages[static_cast<std::size_t>(st)].instructions)
        durations[static_cast<std::size_t>(st)].push_back(run(w, exact, st, in).time.value());
    std::vector<bool> paced(static_cast<std::size_t>(stages), false);  // by a played rank
    for (std::size_t k = 0; k < played.size(); ++k) {
      Rank& r = played[k];
      const auto st = static_cast<std::size_t>(r.played.stage);
      const auto& ins = s.stages[st].instructions;
      for (std::size_t i = 0; i < ins.size(); ++i) {
        emulator::RunResult reading =
            r.emu->measure(run(r.w, *r.emu, r.played.stage, ins[i]), rng, Seconds(0));
        const Seconds extra = reading.time * (r.played.slowdown - 1);
        reading.time += extra;
        reading.static_energy += r.w.gpu.static_power * extra;
        reading.clock_seconds *= r.played.slowdown;
        readings[k].push_back(reading);
        double& pace = durations[st][i];
        pace = paced[st] ? std::max(pace, reading.time.value()) : reading.time.value();
      }
      paced[st] = true;
    }
    const auto starts = start_times(s, durations, transfer);
    double makespan = 0;
    for (int st = 0; st < stages; ++st)
      makespan = std::max(makespan, starts[static_cast<std::size_t>(st)].back() +
                                        durations[static_cast<std::size_t>(st)].back());

    for (std::size_t k = 0; k < played.size(); ++k) {
      Rank& r = played[k];
      const unsigned gpu = r.played.gpu;
      const auto st = static_cast<std::size_t>(r.played.stage);
      const auto& ins = s.stages[st].instructions;
      const double origin = hooks.device_time(gpu);
      const auto wait_until = [&](double t) {
        const double wait = t - (hooks.device_time(gpu) - origin);
        work(gpu, wait, (r.w.gpu.static_power * Seconds(wait)).value(),
             nvml->sm_clock(gpu).value());
      };
      for (std::size_t i = 0; i < ins.size(); ++i) {
        wait_until(starts[st][i]);
        r.controller->on_instruction_begin(r.played.stage, ins[i].microbatch, ins[i].direction);
        r.controller->wait_until_applied();
        const emulator::RunResult& x = readings[k][i];
        work(gpu, x.time.value(), x.total_energy().value(), x.average_clock().value());
        r.controller->on_instruction_end();
      }
      wait_until(makespan);
      work(gpu, tail.time.value(), tail_energy, nvml->sm_clock(gpu).value());
      r.controller->on_step_end();
    }
  }
  played.clear();  // controllers restore clocks and close their records
  return files;
}

}  // namespace kareus::testing
