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

std::string NvmlClockBackend::gpu_name() {
  return nvml_->name(gpu_);
}

std::string NvmlClockBackend::describe() const {
  return fmt::format("NVML gpu {}", gpu_);
}

}  // namespace kareus::runtime
