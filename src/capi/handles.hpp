// What the opaque handles of kareus.h hold. They are defined at global scope because kareus.h
// declares them there (a C header has no namespaces).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/planner/planner.hpp"
#include "kareus/runtime/energy_monitor.hpp"
#include "kareus/runtime/frequency_controller.hpp"
#include "kareus/schedule/schedule.hpp"

struct kareus_plan {
  kareus::planner::PlanResult result;
  std::vector<std::string> method_names;  // kept for the `const char*` the API hands out
};

struct kareus_schedule {
  kareus::Schedule schedule;
};

struct kareus_controller {
  std::unique_ptr<kareus::runtime::FrequencyController> controller;
};

struct kareus_monitor {
  std::unique_ptr<kareus::runtime::EnergyMonitor> monitor;
  std::size_t gpu_count = 0;
};
