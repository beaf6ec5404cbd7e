// SPDX-License-Identifier: Apache-2.0
// Clock-switch latency L(from, to) for a clock table: the published default
// (kDefaultSwitchLatency, hardware/clock_switch.hpp), a single configured value, or a measured
// matrix in CSV.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/step_sequence.hpp"
#include "kareus/hardware/clock_switch.hpp"

namespace kareus::kernel_dvfs {

// Reads `from_mhz,to_mhz,latency_ms` rows. Every ordered pair of distinct clocks of `clocks` needs
// a row; rows for other clocks are rejected.
frontier::SwitchCost load_switch_latency_csv(const std::filesystem::path& path,
                                             const std::vector<MHz>& clocks, Watts power);
frontier::SwitchCost parse_switch_latency_csv(std::string_view text, const std::string& source,
                                              const std::vector<MHz>& clocks, Watts power);

}  // namespace kareus::kernel_dvfs
