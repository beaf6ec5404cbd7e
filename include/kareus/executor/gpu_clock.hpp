// SPDX-License-Identifier: Apache-2.0
// The SM clock a real-GPU executor measures at. Kareus changes a GPU's clock only when the user
// allows it explicitly (CudaExecutorOptions::allow_clock_control); otherwise the clock axis of the
// search is one value, the clock the GPU runs at under load, and every report says that it was not
// controlled.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/nvml/nvml.hpp"

namespace kareus::executor {

class GpuClock {
 public:
  // `current` is the SM clock read while the GPU was busy (an idle GPU reads its idle clock).
  GpuClock(std::shared_ptr<const nvml::Nvml> nvml, unsigned gpu, bool allow_control, MHz current);
  // Hands the clock back to the driver when this object locked it.
  ~GpuClock();
  GpuClock(const GpuClock&) = delete;
  GpuClock& operator=(const GpuClock&) = delete;

  bool controlled() const { return controlled_; }
  MHz current() const { return current_; }
  // The clocks a configuration may ask for: the GPU's supported clocks (highest first) with
  // control, else only current().
  const std::vector<MHz>& allowed() const { return allowed_; }
  // Gets the GPU to run the next measurement at `clock`; true when that changed the clock (the
  // protocol then lets it settle). Throws kareus::Error for a clock outside allowed(), naming
  // allow_clock_control when control is off.
  bool apply(MHz clock);
  // One line for reports: how the clock was set.
  std::string describe() const;

 private:
  std::shared_ptr<const nvml::Nvml> nvml_;
  unsigned gpu_;
  bool controlled_;
  MHz current_;
  std::vector<MHz> allowed_;
  MHz locked_{0.0};  // 0 while this object has not locked the clock
};

}  // namespace kareus::executor
