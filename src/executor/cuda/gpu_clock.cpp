// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/gpu_clock.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kareus/core/error.hpp"

namespace kareus::executor {

GpuClock::GpuClock(std::shared_ptr<const nvml::Nvml> nvml, unsigned gpu, bool allow_control,
                   MHz current)
    : nvml_(std::move(nvml)), gpu_(gpu), controlled_(allow_control), current_(current) {
  allowed_ = controlled_ ? nvml_->supported_sm_clocks(gpu_) : std::vector<MHz>{current_};
  require(!allowed_.empty(), fmt::format("GPU {}", gpu_), "supported SM clocks", "none",
          "NVML must list at least one clock to lock");
}

GpuClock::~GpuClock() {
  if (locked_.value() <= 0) return;
  try {
    nvml_->reset_locked_sm_clocks(gpu_);
  } catch (const Error& e) {
    // A destructor must not throw; the user has to know the GPU may still be locked.
    fmt::print(stderr, "kareus: could not reset the locked clock of GPU {}: {}\n", gpu_, e.what());
  }
}

bool GpuClock::apply(MHz clock) {
  if (std::find(allowed_.begin(), allowed_.end(), clock) == allowed_.end()) {
    const std::string where = fmt::format("GPU {} clock", gpu_);
    if (!controlled_) {
      throw Error::invalid(
          where, "clock_mhz", format_number(clock.value()),
          fmt::format("only the current {} MHz: Kareus changes GPU clocks only "
                      "with {}",
                      format_number(current_.value()), field_ref("allow_clock_control")));
    }
    throw Error::invalid(where, "clock_mhz", format_number(clock.value()),
                         fmt::format("a supported clock of this GPU, {}..{} MHz",
                                     format_number(allowed_.back().value()),
                                     format_number(allowed_.front().value())));
  }
  if (!controlled_ || clock == locked_) return false;
  nvml_->set_locked_sm_clock(gpu_, clock);
  locked_ = clock;
  return true;
}

std::string GpuClock::describe() const {
  if (controlled_) {
    return fmt::format(
        "SM clock locked per configuration through NVML on GPU {} "
        "(allow_clock_control), reset to the driver's default afterwards",
        gpu_);
  }
  return fmt::format(
      "SM clock not controlled: fixed at the {} MHz GPU {} ran at under load "
      "(allow_clock_control is off)",
      format_number(current_.value()), gpu_);
}

}  // namespace kareus::executor
