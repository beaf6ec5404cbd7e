// The selection tests' plan: perseus alone (fast, no partition search) at a 1 ms solver unit,
// with the selection plan() polishes for.
#pragma once

#include "kareus/planner/planner.hpp"

namespace kareus::planner {

inline PlanResult plan_perseus(const workload::Workload& w, const Selection& selection) {
  PlanOptions options;
  options.methods = {Method::kPerseus};
  options.unit_time = milliseconds(1);
  options.selection = selection;
  return plan(w, options);
}

}  // namespace kareus::planner
