// What `kareus plan` prints: the table a person reads.
#pragma once

#include <filesystem>
#include <string>

#include "kareus/planner/run.hpp"

namespace kareus::cli {

// The workload line, the methods side by side and the selected point. Within 120 columns with
// readable energy units, or, `wide`, every column in joules.
std::string plan_table(const planner::PlanOutcome& outcome, bool wide);

}  // namespace kareus::cli
