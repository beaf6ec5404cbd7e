// SPDX-License-Identifier: Apache-2.0
#include "overlap_cuda.hpp"

#include <fmt/format.h>

#include "kareus/core/error.hpp"

#ifdef KAREUS_WITH_CUDA
#include <memory>

#include "kareus/executor/cuda_executor.hpp"
#endif

namespace kareus::cli {

CudaOverlapRun measure_overlap_on_cuda(const GpuSpec& gpu, int device,
                                       const workload::Kernel& compute,
                                       const workload::Kernel& comm, const std::vector<int>& sms) {
#ifdef KAREUS_WITH_CUDA
  const executor::CudaAvailability cuda = executor::cuda_availability();
  if (cuda.devices == 0) {
    throw Error::invalid("command line", "--executor", "cuda",
                         "no CUDA device here (" + cuda.reason + "); use --executor emulator");
  }
  executor::CudaExecutorOptions options;
  options.device = device;
  options.allow_clock_control = false;  // measure the card as it is
  executor::CudaExecutor gpu_executor(gpu, std::make_shared<nvml::Nvml>(), options);
  CudaOverlapRun run;
  run.description = fmt::format(
      "measured on {} (CUDA device {}); the collective is a single-GPU copy loop of its bus "
      "bytes on the given SMs, not a multi-GPU collective",
      gpu_executor.device_name(), device);
  run.clock_text = gpu_executor.clock().describe();
  for (int s : sms) {
    run.reports.push_back(
        executor::measure_overlap(gpu_executor, compute, comm, s, gpu_executor.clock().current()));
  }
  return run;
#else
  (void)gpu, (void)device, (void)compute, (void)comm, (void)sms;
  throw Error::invalid("command line", "--executor", "cuda",
                       "this kareus was built without the CUDA toolkit (no nvcc found); rebuild "
                       "where it is installed, or use --executor emulator");
#endif
}

}  // namespace kareus::cli
