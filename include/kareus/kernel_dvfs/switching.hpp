// Clock-switch latency L(from, to) for a clock table: a published default, a single configured
// value, or a measured matrix in CSV.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/kernel_dvfs/planner.hpp"

namespace kareus::kernel_dvfs {

// p50 of request-to-settled time of nvmlDeviceSetGpuLockedClocks in one public NVML test
// (3000-3950 transitions per mode on a GPU with a 135-1530 MHz table): ~5 ms API call + ~20 ms
// settle. Velicka, Vysocky, Riha (IPDPSW 2025, arXiv 2502.20075) report 1 to 500 ms across GPUs
// and target clocks, so this is a middle-of-range default, not a per-GPU figure.
inline constexpr Seconds kDefaultSwitchLatency = milliseconds(25);

// Reads `from_mhz,to_mhz,latency_ms` rows. Every ordered pair of distinct clocks of `clocks` needs
// a row; rows for other clocks are rejected.
SwitchCost load_switch_latency_csv(const std::filesystem::path& path,
                                   const std::vector<MHz>& clocks, Watts power);
SwitchCost parse_switch_latency_csv(std::string_view text, const std::string& source,
                                    const std::vector<MHz>& clocks, Watts power);

}  // namespace kareus::kernel_dvfs
