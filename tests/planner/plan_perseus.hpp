// SPDX-License-Identifier: Apache-2.0
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

// The iteration time `fraction` of the way from m's fastest point to its least-energy one: the
// selection tests' deadlines across the frontier.
inline double time_across(const MethodResult& m, double fraction) {
  const double fastest = m.fastest().time.value();
  return fastest + (m.min_energy().time.value() - fastest) * fraction;
}

}  // namespace kareus::planner
