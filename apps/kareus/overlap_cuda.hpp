// SPDX-License-Identifier: Apache-2.0
// `kareus overlap --executor cuda`: the kernel pair measured on this machine's GPU through the
// CUDA executor, at the GPU's current clock (never changed). In a build without the CUDA
// toolkit it refuses with a clear message.
#pragma once

#include <string>
#include <vector>

#include "kareus/executor/overlap.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus::cli {

struct CudaOverlapRun {
  std::vector<executor::OverlapReport> reports;  // one per SM count
  std::string description;                       // device and what the collective really is
  std::string clock_text;
};

CudaOverlapRun measure_overlap_on_cuda(const GpuSpec& gpu, int device,
                                       const workload::Kernel& compute,
                                       const workload::Kernel& comm, const std::vector<int>& sms);

}  // namespace kareus::cli
