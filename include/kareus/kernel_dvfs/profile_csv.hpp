// SPDX-License-Identifier: Apache-2.0
// Measured per-kernel profile in CSV: one row per (kernel, clock).
//
//   kernel,clock_mhz,time_s,energy_j[,pass]
//
// Kernels run in the order of their first row; a kernel launched twice needs two names
// (e.g. "gemm#1", "gemm#2"). `pass` (forward|backward) is optional and enables the pass-level
// baseline. Every kernel must be measured at every clock.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/kernel_dvfs/profile.hpp"

namespace kareus::kernel_dvfs {

// `allowed_clocks`: the GPU's clock table when known; otherwise the clocks of the first kernel in
// the file define the allowed set. A row at any other clock is rejected.
KernelSequence parse_profile_csv(std::string_view text, const std::string& source,
                                 const std::optional<std::vector<MHz>>& allowed_clocks);
KernelSequence load_profile_csv(const std::filesystem::path& path,
                                const std::optional<std::vector<MHz>>& allowed_clocks);

}  // namespace kareus::kernel_dvfs
