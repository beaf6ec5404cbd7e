// SPDX-License-Identifier: Apache-2.0
// Schedules for recording calibration runs in tests: sequential 1F1B with every instruction at one
// clock, each instruction's prediction from the emulator on the workload's GPU.
#pragma once

#include "kareus/core/units.hpp"
#include "kareus/schedule/schedule.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::testing {

Schedule sweep_schedule(const workload::Workload& w, MHz clock);

}  // namespace kareus::testing
