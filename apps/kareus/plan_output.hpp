// What `kareus plan` writes: the plan's files (frontier CSVs, schedule.json, summary.json,
// partitions.json) and the table a person reads.
#pragma once

#include <filesystem>
#include <string>

#include "kareus/planner/run.hpp"

namespace kareus::cli {

// frontier_<method>.csv per method, schedule.json, summary.json and partitions.json, each
// written atomically.
void write_plan_files(const std::filesystem::path& dir, const planner::PlanOutcome& outcome);

// The workload line, the methods side by side and the selected point. Within 120 columns with
// readable energy units, or, `wide`, every column in joules.
std::string plan_table(const planner::PlanOutcome& outcome, bool wide);

}  // namespace kareus::cli
