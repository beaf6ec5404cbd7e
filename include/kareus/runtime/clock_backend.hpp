// SPDX-License-Identifier: Apache-2.0
// Where the frequency controller sends its clock changes: NVML in this process (needs root), or
// kareusd, the privileged clock daemon (src/runtime/daemon_client.cpp). One GPU per backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/nvml/nvml.hpp"

namespace kareus::runtime {

class ClockBackend {
 public:
  virtual ~ClockBackend() = default;
  // Locks the SM clock to `clock` (min = max).
  virtual void set_sm_clock(MHz clock) = 0;
  // Back to the driver's default clock management.
  virtual void reset_sm_clock() = 0;
  virtual std::vector<MHz> supported_sm_clocks() = 0;
  // "NVML gpu 0", for messages.
  virtual std::string describe() const = 0;
  // The GPU's model as NVML names it ("NVIDIA A100-SXM4-40GB"); empty when unknown.
  virtual std::string gpu_name() { return {}; }
  // Locks the memory clock at its highest supported value / back to the driver's management.
  // The default refuses: a backend that cannot do it says so rather than ignoring it.
  virtual void lock_memory_clock_at_max();
  virtual void reset_memory_clock();
};

class NvmlClockBackend final : public ClockBackend {
 public:
  NvmlClockBackend(std::shared_ptr<const nvml::Nvml> nvml, unsigned gpu);
  void set_sm_clock(MHz clock) override;
  void reset_sm_clock() override;
  std::vector<MHz> supported_sm_clocks() override;
  std::string describe() const override;
  std::string gpu_name() override;
  void lock_memory_clock_at_max() override;
  void reset_memory_clock() override;

 private:
  std::shared_ptr<const nvml::Nvml> nvml_;
  unsigned gpu_;
};

}  // namespace kareus::runtime
