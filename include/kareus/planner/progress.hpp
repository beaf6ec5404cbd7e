// SPDX-License-Identifier: Apache-2.0
// What the planner reports while it works, as counts rather than text, so each front end decides
// how to show it: a redrawn line on a terminal, a few summary lines in a log, nothing when quiet.
#pragma once

#include <cstddef>
#include <string>

#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::planner {

enum class Method;

struct PlanProgress {
  Method method;
  // The method's partition searches: partitions finished, of `partitions` (0 for the methods
  // that search none), and the fraction of the current one its search has planned so far.
  std::size_t partitions_done = 0;
  std::size_t partitions = 0;
  double current_fraction = 0;
  std::size_t measurements = 0;  // taken and reused, the current search's included
  // Reused from the store, in the finished partitions (a running search does not say).
  std::size_t measurements_reused = 0;
  // Set once per method, after its pipeline frontier is solved; then the costs are final.
  bool finished = false;
  std::size_t frontier_points = 0;
  double profiling_gpu_hours = 0;         // the method's cost, reused measurements included
  double profiling_gpu_hours_reused = 0;  // of which the store answered
  // Once finished: where the method's pipeline solve spent its time, a selection's polish included.
  frontier::PipelineSolverSummary solver{};
};

}  // namespace kareus::planner
