// SPDX-License-Identifier: Apache-2.0
// GPU kernels of a PyTorch profiler trace (torch.profiler export_chrome_trace: Chrome trace JSON,
// `traceEvents` with complete events "ph":"X", "ts" and "dur" in microseconds). Kernel events have
// "cat":"kernel". A kernel's pass comes from the enclosing "gpu_user_annotation" range whose name
// contains "forward" or "backward" (record_function("forward") in the training step).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/kernel_dvfs/profile.hpp"

namespace kareus::kernel_dvfs {

struct TraceKernel {
  std::string name;
  std::optional<Direction> pass = std::nullopt;
  Seconds start;
  Seconds duration;
};

struct TorchTrace {
  std::string source;
  std::vector<TraceKernel> kernels;  // in order of start time
  // Kernels that start before the previous one ends (other streams): the sequence model adds
  // their times as if they ran one after another.
  std::size_t overlapping = 0;
};

TorchTrace parse_torch_trace(std::string_view text, const std::string& source);
TorchTrace load_torch_trace(const std::filesystem::path& path);

}  // namespace kareus::kernel_dvfs
