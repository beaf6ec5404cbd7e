// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/cuda_executor.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>

#include "kareus/core/error.hpp"
#include "kareus/executor/cuda_launch_plan.hpp"
#include "partition_runner.hpp"

namespace kareus::executor {
namespace {

using SteadyClock = std::chrono::steady_clock;

void sleep_for(Seconds t) {
  if (t.value() > 0) std::this_thread::sleep_for(std::chrono::duration<double>(t.value()));
}

Seconds since(SteadyClock::time_point start) {
  return Seconds(std::chrono::duration<double>(SteadyClock::now() - start).count());
}

// One square bf16 product per run, large enough (about 1 TFLOP) to keep every SM busy for
// milliseconds, so that the few hundred runs of a probe fit in the launch queue and the host can
// read the clock while they execute.
cuda::LaunchPlan probe_plan() {
  cuda::ComputeLaunch gemm;
  gemm.name = "clock_probe";
  gemm.gemm = cuda::GemmLaunch{8192, 8192, 8192, 1, 1};
  cuda::LaunchPlan plan;
  plan.compute.push_back(gemm);
  return plan;
}

// Runs work for about `duration` and reads the SM clock half-way through.
MHz clock_under_load(cuda::PartitionRunner& runner, const nvml::Nvml& nvml, unsigned gpu,
                     Seconds duration) {
  const cuda::LaunchPlan plan = probe_plan();
  runner.prepare(plan);
  // The first product pays for cuBLAS's kernel selection; timing it would shorten the probe.
  runner.begin(plan, 1);
  runner.finish();
  constexpr long kTrial = 5;
  runner.begin(plan, kTrial);
  const Seconds per_run = runner.finish() / static_cast<double>(kTrial);
  runner.begin(plan, std::max(1L, static_cast<long>(duration / per_run)));
  sleep_for(duration * 0.5);
  const MHz clock = nvml.sm_clock(gpu);
  const bool still_running = runner.busy();
  runner.finish();
  if (!still_running) {
    throw Error::device(
        fmt::format("CUDA executor: the clock probe on GPU {} finished before its clock "
                    "was read, so the clock under load is unknown",
                    gpu));
  }
  return clock;
}

}  // namespace

CudaAvailability cuda_availability() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return {0, cudaGetErrorString(e)};
  if (count == 0) return {0, "the driver reports no CUDA device"};
  return {count, ""};
}

CudaExecutor::CudaExecutor(GpuSpec gpu, std::shared_ptr<const nvml::Nvml> nvml,
                           CudaExecutorOptions options)
    : gpu_(std::move(gpu)), nvml_(std::move(nvml)), options_(std::move(options)) {
  options_.protocol.validate();
  const CudaAvailability cuda = cuda_availability();
  if (cuda.devices == 0) throw Error::device("no CUDA device: " + cuda.reason);
  require(options_.device >= 0 && options_.device < cuda.devices, "CUDA executor", "device",
          std::to_string(options_.device), fmt::format("0..{}", cuda.devices - 1));
  runner_ = std::make_unique<cuda::PartitionRunner>(options_.device);
  const auto index = static_cast<unsigned>(options_.device);
  const std::string nvml_name = nvml_->name(index);
  if (nvml_name != runner_->device_name()) {
    throw Error::device(
        fmt::format("CUDA device {} is \"{}\" but NVML GPU {} is \"{}\": energy would be "
                    "read from another GPU; run with CUDA_DEVICE_ORDER=PCI_BUS_ID and "
                    "without CUDA_VISIBLE_DEVICES",
                    options_.device, runner_->device_name(), index, nvml_name));
  }
  // Half a second of work brings an idle GPU up to its working clock (NVML reads the idle clock
  // of an idle GPU).
  const MHz current = clock_under_load(*runner_, *nvml_, index, Seconds(0.5));
  clock_ = std::make_unique<GpuClock>(nvml_, index, options_.allow_clock_control, current);
}

CudaExecutor::~CudaExecutor() = default;

const std::string& CudaExecutor::device_name() const {
  return runner_->device_name();
}

std::vector<Measurement> CudaExecutor::measure(const partition::Partition& p,
                                               const std::vector<partition::ExecConfig>& configs) {
  const MeasurementProtocol& protocol = options_.protocol;
  const auto index = static_cast<unsigned>(options_.device);
  // Every configuration is checked before the first one runs, so a bad batch costs no GPU time.
  std::vector<cuda::LaunchPlan> plans;
  plans.reserve(configs.size());
  for (const auto& c : configs) {
    require(std::find(clock_->allowed().begin(), clock_->allowed().end(), c.clock) !=
                clock_->allowed().end(),
            "partition " + p.key, "config " + c.key(), format_number(c.clock.value()),
            clock_->describe());
    plans.push_back(cuda::plan_partition(p, c, runner_->sm_count()));
  }
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return configs[a].clock > configs[b].clock;
  });

  std::vector<Measurement> out(configs.size());
  observed_.assign(configs.size(), MHz(0.0));
  for (std::size_t i : order) {
    const cuda::LaunchPlan& plan = plans[i];
    const auto wall_start = SteadyClock::now();
    if (clock_->apply(configs[i].clock)) sleep_for(protocol.clock_settle);
    runner_->prepare(plan);

    // Zeus measure(): calibrate the iteration time, cool down, warm up, measure a fixed window.
    runner_->begin(plan, protocol.calibration_warmup);
    runner_->finish();
    runner_->begin(plan, std::max(1, protocol.calibration_iterations));
    const Seconds iteration =
        runner_->finish() / static_cast<double>(std::max(1, protocol.calibration_iterations));
    sleep_for(protocol.cooldown);
    runner_->begin(plan, protocol.warmup_iterations);
    runner_->finish();

    WindowReading reading;
    reading.iterations = protocol.window_iterations(iteration);
    const Joules before = nvml_->total_energy(index);
    runner_->begin(plan, reading.iterations);
    observed_[i] = nvml_->sm_clock(index);
    reading.rank_elapsed.push_back(runner_->finish());
    reading.rank_energy.push_back(nvml_->total_energy(index) - before);
    const ReducedReading r = reduce(reading, gpu_.static_power);
    out[i] = {r.time, r.total_energy, r.dynamic_energy, since(wall_start)};
  }
  return out;
}

}  // namespace kareus::executor
