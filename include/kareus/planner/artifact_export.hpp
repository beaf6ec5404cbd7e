// SPDX-License-Identifier: Apache-2.0
// Plans in the Kareus artifact's Python format (docs/plan.md), so that its runtime can run
// them: freqs_pipeline_%05d.py (per stage, (instruction, MHz) in 1F1B order) and
// scheds_pipeline_%05d.py (per stage, the partition configurations of each instruction).
#pragma once

#include <filesystem>

#include "kareus/planner/planner.hpp"

namespace kareus::planner {

// Writes the two files for each point of the method's 10-point frontier into `dir`.
void export_artifact(const PlanResult& plan, Method method, const std::filesystem::path& dir);

}  // namespace kareus::planner
