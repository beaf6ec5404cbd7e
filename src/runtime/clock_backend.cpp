// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/clock_backend.hpp"

#include <fmt/format.h>

namespace kareus::runtime {

NvmlClockBackend::NvmlClockBackend(std::shared_ptr<const nvml::Nvml> nvml, unsigned gpu)
    : nvml_(std::move(nvml)), gpu_(gpu) {
  const unsigned count = nvml_->device_count();
  require(gpu < count, "NVML", "gpu", std::to_string(gpu),
          fmt::format("this machine has {} GPU(s), indices 0..{}", count, count - 1));
}

void NvmlClockBackend::set_sm_clock(MHz clock) {
  nvml_->set_locked_sm_clock(gpu_, clock);
}

void NvmlClockBackend::reset_sm_clock() {
  nvml_->reset_locked_sm_clocks(gpu_);
}

std::vector<MHz> NvmlClockBackend::supported_sm_clocks() {
  return nvml_->supported_sm_clocks(gpu_);
}

void ClockBackend::lock_memory_clock_at_max() {
  throw Error(fmt::format("{} cannot lock the memory clock", describe()));
}

void ClockBackend::reset_memory_clock() {
  throw Error(fmt::format("{} cannot reset the memory clock", describe()));
}

void NvmlClockBackend::lock_memory_clock_at_max() {
  nvml_->set_locked_memory_clock(gpu_, nvml_->max_memory_clock(gpu_));
}

void NvmlClockBackend::reset_memory_clock() {
  nvml_->reset_locked_memory_clocks(gpu_);
}

std::string NvmlClockBackend::gpu_name() {
  return nvml_->name(gpu_);
}

std::string NvmlClockBackend::describe() const {
  return fmt::format("NVML gpu {}", gpu_);
}

}  // namespace kareus::runtime
