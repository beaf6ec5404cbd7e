// SPDX-License-Identifier: Apache-2.0
// The pipeline solver's time unit as a front end's user typed it.
#pragma once

#include <string_view>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

// Refuses `unit` below `smallest` (smallest_unit_time of the problem) with a one-line kareus::Error
// that names the field as the front end spells it (`where`, `name`) and the value and the smallest
// allowed in the unit its user types (`scale` converts seconds to it). A smallest that is not
// finite (a profile time near the double range) is left to solve_pipeline's per-option checks,
// which name the offending option.
// The longest measured option of any instruction: no unit below longest / kMaxPipelineSolverSteps
// can work, whatever the DAG.
Seconds longest_option_time(const PipelineProblem& problem);

void require_unit_time(Seconds unit, Seconds smallest, std::string_view where,
                       std::string_view name, double scale);

}  // namespace kareus::frontier
