// SPDX-License-Identifier: Apache-2.0
// How long a locked-clock change takes to settle on a GPU, for every model that charges it: the
// per-kernel DVFS stall model and partition-granularity clocks in Kareus plans.
#pragma once

#include "kareus/core/units.hpp"

namespace kareus {

// p50 of request-to-settled time of nvmlDeviceSetGpuLockedClocks in one public NVML test
// (3000-3950 transitions per mode on a GPU with a 135-1530 MHz table): ~5 ms API call + ~20 ms
// settle. Velicka, Vysocky, Riha (IPDPSW 2025, arXiv 2502.20075) report 1 to 500 ms across GPUs
// and target clocks, so this is a middle-of-range default, not a per-GPU figure.
inline constexpr Seconds kDefaultSwitchLatency = milliseconds(25);

}  // namespace kareus
