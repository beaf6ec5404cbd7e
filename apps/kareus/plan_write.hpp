// SPDX-License-Identifier: Apache-2.0
// Where `kareus plan` writes, checked before it plans, and the writing of its outputs as a set.
#pragma once

#include <filesystem>
#include <optional>

#include "kareus/planner/run.hpp"
#include "kareus/report/chart_library.hpp"

namespace kareus::cli {

struct PlanOutputPaths {
  std::filesystem::path out;       // --out: the plan's files; empty for none
  std::filesystem::path artifact;  // --export-artifact: the artifact's files; empty for none
  std::filesystem::path report;    // --report: the page; empty for none
};

// Refuses, before any work, a path that cannot be written (under a file, a file given as a
// folder, no write permission), naming the flag.
void check_plan_output_paths(const PlanOutputPaths& paths);

// Writes every output of one plan. The --out and --export-artifact folders are staged and put in
// place only after all files, the page included, were written: when any of them fails, neither
// folder changes.
void write_plan_outputs(const PlanOutputPaths& paths, const planner::PlanOutcome& outcome,
                        const std::optional<report::ChartLibrary>& library);

}  // namespace kareus::cli
