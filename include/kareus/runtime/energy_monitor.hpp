// SPDX-License-Identifier: Apache-2.0
// Named measurement windows over GPU time and energy, after Zeus's ZeusMonitor: begin_window()
// and end_window() may nest or overlap. Energy comes from NVML's cumulative counter; a GPU whose
// counter is unsupported (pre-Volta) is measured by integrating sampled power instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/nvml/nvml.hpp"

namespace kareus::runtime {

struct EnergyMonitorOptions {
  // Zeus's PowerMonitor samples at half the counter's update period, at most 0.1 s apart;
  // NVML updates about every 100 ms (perseus-zeus-spec.md §3, "ZeusMonitor window API").
  Seconds power_sample_interval = milliseconds(50);
};

struct EnergyMeasurement {
  Seconds time;
  std::vector<unsigned> gpus;
  std::vector<Joules> gpu_energy;  // parallel to gpus
  Joules total_energy;
};

class EnergyMonitor {
 public:
  EnergyMonitor(std::shared_ptr<const nvml::Nvml> nvml, std::vector<unsigned> gpus,
                EnergyMonitorOptions options = {});
  ~EnergyMonitor();
  EnergyMonitor(const EnergyMonitor&) = delete;
  EnergyMonitor& operator=(const EnergyMonitor&) = delete;

  // Throws Error when a window of that name is already open.
  void begin_window(const std::string& name);
  // Throws Error when no window of that name is open.
  EnergyMeasurement end_window(const std::string& name);
  bool integrates_power(unsigned gpu) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Start {
    Clock::time_point time;
    std::vector<Joules> energy;
  };
  std::vector<Joules> read_energy();
  void sample_loop();

  std::shared_ptr<const nvml::Nvml> nvml_;
  std::vector<unsigned> gpus_;
  EnergyMonitorOptions options_;
  std::vector<bool> integrated_;  // parallel to gpus_

  std::mutex mutex_;
  std::map<std::string, Start> windows_;
  // Power integration state for the integrated GPUs.
  std::vector<Joules> integrated_energy_;
  std::vector<Watts> last_power_;
  Clock::time_point last_sample_;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread sampler_;
};

}  // namespace kareus::runtime
