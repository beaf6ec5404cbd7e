// SPDX-License-Identifier: Apache-2.0
// The chosen schedule as it runs: every instruction of every stage re-run on the emulator with
// its clock and partition configurations, placed as early as the 1F1B order and the activation
// transfers between stages allow, so that the waiting between instructions shows.
#pragma once

#include <string>
#include <vector>

#include "kareus/schedule/schedule.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::report {

struct TimelineBar {
  int stage = 0;
  int microbatch = 0;
  std::string direction;  // "forward" | "backward"
  Seconds start;
  Seconds end;
  MHz clock;  // the schedule's clock (the governor's average clock for megatron)
  std::string execution;
};

// Time a stage waits with nothing to run: for its neighbour's activation or gradient.
struct TimelineGap {
  int stage = 0;
  Seconds start;
  Seconds end;
};

struct Timeline {
  std::vector<TimelineBar> bars;
  std::vector<TimelineGap> gaps;
  Seconds pipeline_time;  // the last instruction's end
  Seconds tail;  // after the pipeline drains: gradient reduction (DP or CP > 1), optimizer step
  Seconds iteration_time() const { return pipeline_time + tail; }
  // Instructions with per-partition clocks run at their first clock here (docs/report.md).
  int step_clock_instructions = 0;
};

// `megatron` schedules run under the default power governor, as the planner ran them; every
// other method at the schedule's locked clocks.
Timeline emulate_timeline(const workload::Workload& w, const Schedule& schedule);

}  // namespace kareus::report
