// SPDX-License-Identifier: Apache-2.0
// The thermally stable measurement protocol (Kareus §5) as an explicit object:
// lock the clock and let it settle, calibrate the iteration time, cool down, warm up, then
// measure over a fixed window with the cumulative energy counter. Per-GPU energy is the job's
// energy over the GPUs, time is the slowest rank's. The emulator does not sleep through it, but
// every executor charges its wall time, so a search knows what it would cost on real GPUs.
#pragma once

#include <vector>

#include "kareus/core/units.hpp"

namespace kareus::executor {

struct MeasurementProtocol {
  // The artifact sleeps 2 s after nvmlDeviceSetGpuLockedClocks before it measures.
  Seconds clock_settle{2.0};
  // Zeus measure(): 10 warm-up + 100 timed iterations to calibrate the iteration time.
  int calibration_warmup = 10;
  int calibration_iterations = 100;
  // Idle before measuring; 5 s brought A100s below 32 °C in the paper (§6, thermally stable
  // profiling).
  Seconds cooldown{5.0};
  int warmup_iterations = 10;
  // Windows below about 2 s read noisy, low energy (NVML updates every ~100 ms); 5 s is stable.
  Seconds window{5.0};

  // Throws kareus::Error naming the field when a duration or count is negative or the window is
  // not positive.
  void validate() const;
  // Iterations in the measurement window: int(window / iteration time), at least one.
  long window_iterations(Seconds iteration_time) const;
  // Wall time of measuring one configuration whose iteration takes `iteration_time`; a clock
  // change adds the settle time.
  Seconds wall_time(Seconds iteration_time, bool clock_change) const;
};

// What one measurement window reads, per rank of the job.
struct WindowReading {
  long iterations = 0;
  std::vector<Seconds> rank_elapsed;  // wall time of the window on each rank
  std::vector<Joules> rank_energy;    // difference of each GPU's cumulative energy counter
};

// Per-GPU, per-iteration figures of a window.
struct ReducedReading {
  Seconds time;           // slowest rank's time per iteration
  Joules total_energy;    // job energy per iteration / GPUs
  Joules dynamic_energy;  // total - static power x time
};

// Throws kareus::Error when the reading has no ranks, mismatched rank counts or no iterations.
ReducedReading reduce(const WindowReading& reading, Watts static_power);

}  // namespace kareus::executor
