// SPDX-License-Identifier: Apache-2.0
// What the opaque handles of kareus.h hold. They are defined at global scope because kareus.h
// declares them there (a C header has no namespaces).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/planner/run.hpp"
#include "kareus/runtime/energy_monitor.hpp"
#include "kareus/runtime/frequency_controller.hpp"
#include "kareus/schedule/schedule.hpp"

struct kareus_plan {
  kareus::planner::PlanOutcome outcome;
  std::vector<std::string> method_names;  // kept for the `const char*` the API hands out
};

struct kareus_schedule {
  kareus::Schedule schedule;
};

struct kareus_controller {
  std::unique_ptr<kareus::runtime::FrequencyController> controller;
};

namespace kareus::capi {

// A new handle holding `schedule`, for the caller to release with kareus_schedule_free.
inline kareus_schedule* wrap(Schedule schedule) {
  auto out = std::make_unique<kareus_schedule>();
  out->schedule = std::move(schedule);
  return out.release();
}

}  // namespace kareus::capi

struct kareus_monitor {
  std::unique_ptr<kareus::runtime::EnergyMonitor> monitor;
  std::size_t gpu_count = 0;
};
