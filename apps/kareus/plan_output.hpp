// What `kareus plan` writes: the plan's files (frontier CSVs, schedule.json, summary.json,
// partitions.json) and the table a person reads.
#pragma once

#include <filesystem>
#include <string>

#include "kareus/planner/summary.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::cli {

// frontier_<method>.csv per method, schedule.json, summary.json and partitions.json, each
// written atomically.
void write_plan_files(const std::filesystem::path& dir, const planner::PlanResult& result,
                      const planner::PlanChoice& choice, const Schedule& schedule,
                      const Json& summary);

// "selected (kareus, max-throughput): 4.312 s, 20.8 kJ per iteration", the table's last line and
// all that --quiet prints when nothing is written.
std::string selected_line(const planner::PlanChoice& choice, bool wide);

// The workload line, the methods side by side and the selected point. Within 120 columns with
// readable energy units, or, `wide`, every column in joules.
std::string plan_table(const planner::PlanResult& result, const planner::PlanRequest& request,
                       const planner::PlanChoice& choice, bool wide);

}  // namespace kareus::cli
