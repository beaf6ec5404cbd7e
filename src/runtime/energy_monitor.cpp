// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/energy_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kareus/core/error.hpp"
#include "kareus/nvml/nvml_api.h"
#include "quiet_thread.hpp"

namespace kareus::runtime {

EnergyMonitor::EnergyMonitor(std::shared_ptr<const nvml::Nvml> nvml, std::vector<unsigned> gpus,
                             EnergyMonitorOptions options)
    : nvml_(std::move(nvml)), gpus_(std::move(gpus)), options_(options) {
  require(!gpus_.empty(), "energy monitor", "gpus", "[]", "expected at least one GPU");
  require(options_.power_sample_interval > Seconds(0), "energy monitor", "power_sample_interval",
          format_number(options_.power_sample_interval.value()), "must be positive");
  bool any_integrated = false;
  for (unsigned gpu : gpus_) {
    bool integrated = false;
    try {
      nvml_->total_energy(gpu);
    } catch (const nvml::NvmlError& e) {
      if (e.code() != NVML_ERROR_NOT_SUPPORTED) throw;
      integrated = true;
    }
    integrated_.push_back(integrated);
    any_integrated = any_integrated || integrated;
    integrated_energy_.emplace_back(0.0);
    last_power_.push_back(integrated ? nvml_->power(gpu) : Watts(0));
  }
  last_sample_ = Clock::now();
  if (any_integrated) sampler_ = quiet_thread([this] { sample_loop(); });
}

EnergyMonitor::~EnergyMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

bool EnergyMonitor::integrates_power(unsigned gpu) const {
  const auto it = std::find(gpus_.begin(), gpus_.end(), gpu);
  return it != gpus_.end() && integrated_[static_cast<std::size_t>(it - gpus_.begin())];
}

void EnergyMonitor::sample_loop() {
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.power_sample_interval.value()));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval, [&] { return stopping_; })) {
    const auto now = Clock::now();
    const Seconds dt(std::chrono::duration<double>(now - last_sample_).count());
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      if (!integrated_[i]) continue;
      // Trapezoidal rule between consecutive samples.
      const Watts power = nvml_->power(gpus_[i]);
      integrated_energy_[i] += (last_power_[i] + power) * 0.5 * dt;
      last_power_[i] = power;
    }
    last_sample_ = now;
  }
}

// Caller holds mutex_.
std::vector<Joules> EnergyMonitor::read_energy() {
  const Seconds since_sample(std::chrono::duration<double>(Clock::now() - last_sample_).count());
  std::vector<Joules> out;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    out.push_back(integrated_[i] ? integrated_energy_[i] + last_power_[i] * since_sample
                                 : nvml_->total_energy(gpus_[i]));
  }
  return out;
}

void EnergyMonitor::begin_window(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (windows_.contains(name)) {
    throw Error(fmt::format("energy monitor: window \"{}\" is already open", name));
  }
  windows_[name] = {Clock::now(), read_energy()};
}

EnergyMeasurement EnergyMonitor::end_window(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = windows_.find(name);
  if (it == windows_.end()) {
    throw Error(fmt::format("energy monitor: no window \"{}\" is open", name));
  }
  const std::vector<Joules> energy = read_energy();
  EnergyMeasurement m;
  m.time = Seconds(std::chrono::duration<double>(Clock::now() - it->second.time).count());
  m.gpus = gpus_;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    m.gpu_energy.push_back(energy[i] - it->second.energy[i]);
    m.total_energy += m.gpu_energy.back();
  }
  windows_.erase(it);
  return m;
}

}  // namespace kareus::runtime
