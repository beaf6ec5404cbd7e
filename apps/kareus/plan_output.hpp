// SPDX-License-Identifier: Apache-2.0
// What `kareus plan` prints: the table a person reads.
#pragma once

#include <filesystem>
#include <string>

#include "kareus/planner/run.hpp"

namespace kareus::cli {

// "selected (kareus, max-throughput): 4.312 s, 20.8 kJ per iteration", the table's last line and
// all that --quiet prints when nothing is written.
std::string selected_line(const planner::SelectedPlan& selected, bool wide);

// The workload line, the methods side by side and the selected point. Within 120 columns with
// readable energy units, or, `wide`, every column in joules.
std::string plan_table(const planner::PlanOutcome& outcome, bool wide);

}  // namespace kareus::cli
