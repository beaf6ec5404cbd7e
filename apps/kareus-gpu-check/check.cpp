// SPDX-License-Identifier: Apache-2.0
#include "check.hpp"

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "kareus/core/progress.hpp"
#include "kareus/executor/cuda_executor.hpp"

namespace kareus::gpu_check {
namespace {

std::vector<double> values(const std::vector<CheckRow>& rows, std::size_t begin, std::size_t end,
                           bool measured, bool energy) {
  std::vector<double> out;
  for (std::size_t i = begin; i < end; ++i) {
    const executor::Measurement& m = measured ? *rows[i].measured : rows[i].emulated;
    out.push_back(energy ? m.total_energy.value() : m.time.value());
  }
  return out;
}

}  // namespace

bool CheckResult::same_ranking() const {
  for (const auto& k : keys)
    if (!k.time.same() || !k.energy.same()) return false;
  return !keys.empty();
}

CheckResult run_check(const CheckRequest& request) {
  request.protocol.validate();
  const workload::Workload& w = request.workload;
  CheckResult result;
  result.dry_run = request.dry_run;

  std::unique_ptr<executor::CudaExecutor> gpu;
  if (request.dry_run) {
    result.device = "none (dry run)";
    result.clock = request.clock.value() > 0 ? request.clock : w.gpu.clock_max;
    result.clock_note =
        "dry run: nothing runs on a GPU; a measured run uses the clock the GPU "
        "reads under load and never changes it";
  } else {
    const executor::CudaAvailability cuda = executor::cuda_availability();
    if (cuda.devices == 0) {
      throw Error("no CUDA device (" + cuda.reason +
                  "); --dry-run lists the configurations without one");
    }
    executor::CudaExecutorOptions options;
    options.device = request.device;
    options.protocol = request.protocol;
    // The check compares at the clock the GPU chooses; it never locks clocks.
    options.allow_clock_control = false;
    gpu = std::make_unique<executor::CudaExecutor>(w.gpu, std::make_shared<nvml::Nvml>(), options);
    result.device = gpu->device_name();
    result.clock = gpu->clock().current();
    result.clock_note = gpu->clock().describe();
  }

  const auto cases = executor::plan_gpu_check(w, result.clock, request.options);
  executor::EmulatorExecutor emulated(emulator::Emulator(w.gpu), request.protocol);
  std::size_t total = 0;
  for (const auto& c : cases) total += c.configs.size();
  Progress progress(request.dry_run ? "emulating" : "measuring", total);
  for (const auto& c : cases) {
    const std::size_t first = result.rows.size();
    const auto em = emulated.measure(c.partition, c.configs);
    for (std::size_t i = 0; i < c.configs.size(); ++i) {
      result.rows.push_back({c.partition.key, c.configs[i], em[i], std::nullopt, std::nullopt});
      result.emulated_gpu_time += em[i].gpu_cost / executor::measurement_gpus(c.partition);
    }
    if (gpu) {
      const auto measured = gpu->measure(c.partition, c.configs);
      for (std::size_t i = 0; i < c.configs.size(); ++i) {
        result.rows[first + i].measured = measured[i];
        result.rows[first + i].observed_clock = gpu->observed_clocks()[i];
      }
      const std::size_t end = result.rows.size();
      result.keys.push_back({c.partition.key,
                             executor::rank_agreement(values(result.rows, first, end, false, false),
                                                      values(result.rows, first, end, true, false),
                                                      request.tie_tolerance),
                             executor::rank_agreement(values(result.rows, first, end, false, true),
                                                      values(result.rows, first, end, true, true),
                                                      request.tie_tolerance)});
    }
    progress.update(result.rows.size(), c.partition.key);
  }
  progress.finish();
  return result;
}

}  // namespace kareus::gpu_check
