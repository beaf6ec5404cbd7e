// SPDX-License-Identifier: Apache-2.0
// The real-GPU executor: runs a partition's compute kernels with the workload's shapes on one
// CUDA stream and its collective as a copy loop on N SMs on another, launched after the chosen
// slot through an event (see cuda_launch_plan.hpp), and measures each configuration with the
// thermally stable protocol: CUDA events for time, NVML's cumulative counter for energy.
//
// One GPU: the collective is a local copy of the bytes one GPU moves in it (docs/validation.md
// says what that leaves out). Built only where CMake finds the CUDA toolkit (kareus_executor_cuda);
// it needs a CUDA device and the NVIDIA driver at run time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/executor/executor.hpp"
#include "kareus/executor/gpu_clock.hpp"
#include "kareus/nvml/nvml.hpp"

namespace kareus::executor {

namespace cuda {
class PartitionRunner;
}

// How many CUDA devices this process sees; when none, why (no driver, no device, ...).
struct CudaAvailability {
  int devices = 0;
  std::string reason;
};
CudaAvailability cuda_availability();

struct CudaExecutorOptions {
  // CUDA device ordinal; it must also be the GPU's NVML index, which holds with
  // CUDA_DEVICE_ORDER=PCI_BUS_ID and no CUDA_VISIBLE_DEVICES (the executor checks the names).
  int device = 0;
  // Lock the SM clock of each configuration through NVML. Off: every configuration must ask for
  // the clock the GPU runs at under load (GpuClock::current()).
  bool allow_clock_control = false;
  MeasurementProtocol protocol;
};

class CudaExecutor : public Executor {
 public:
  // Opens the device, checks it against NVML and reads its clock under load. Throws
  // kareus::Error when there is no usable device or the protocol is invalid.
  CudaExecutor(GpuSpec gpu, std::shared_ptr<const nvml::Nvml> nvml, CudaExecutorOptions options);
  ~CudaExecutor() override;

  // "cuda": real measurements are stored apart from emulated ones.
  std::string name() const override { return "cuda"; }
  const GpuSpec& gpu() const override { return gpu_; }
  const MeasurementProtocol& protocol() const override { return options_.protocol; }
  // Measures in descending clock order, answers in the order given. Throws kareus::Error for a
  // configuration the partition or the clock policy does not allow.
  std::vector<Measurement> measure(const partition::Partition& p,
                                   const std::vector<partition::ExecConfig>& configs) override;

  const GpuClock& clock() const { return *clock_; }
  // The SM clock NVML read in the middle of each window of the last measure(), in its order:
  // without clock control it shows whether the governor moved the clock.
  const std::vector<MHz>& observed_clocks() const { return observed_; }
  const std::string& device_name() const;

 private:
  GpuSpec gpu_;
  std::shared_ptr<const nvml::Nvml> nvml_;
  CudaExecutorOptions options_;
  std::unique_ptr<cuda::PartitionRunner> runner_;
  std::unique_ptr<GpuClock> clock_;
  std::vector<MHz> observed_;
};

}  // namespace kareus::executor
