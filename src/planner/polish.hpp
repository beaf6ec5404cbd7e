// SPDX-License-Identifier: Apache-2.0
// The polish and MILP refinement of a selection's plan, shared by plan() (the selection of its
// options) and select_polished (a selection made afterwards, on a copy of the solver's plans).
#pragma once

#include <optional>
#include <vector>

#include "kareus/planner/planner.hpp"

namespace kareus::planner {

// Polishes the plan `selection` will pick at its bound into `solver` (m's own, or a copy of it),
// from the frontier as solved (m.unpolished): frontier::polish_within for a deadline (the job's
// iteration time, the tail more than the pipeline's), polish_within_budget for an energy budget
// (the whole job's energy), then, for a deadline with milp_nodes > 0, the MILP refinement, whose
// record it returns. The points `solver`'s frontier held before join again (a point they
// dominate is no better a choice).
std::optional<SelectionRefinement> polish_selection(const Selection& selection,
                                                    const MethodResult& m,
                                                    frontier::PipelineSolverResult& solver,
                                                    const frontier::RefineProgressFn& on_refine);

// The whole-job points of `solver`'s frontier (m's or a copy of it), fastest first.
std::vector<IterationPoint> job_frontier(const MethodResult& m,
                                         const frontier::PipelineSolverResult& solver);

// The least-energy point within `deadline`, or the fastest within `budget`; null when none is.
// The selection rules and the iso-time and iso-energy metrics share them.
const IterationPoint* least_energy_within(const std::vector<IterationPoint>& frontier,
                                          Seconds deadline);
const IterationPoint* fastest_within(const std::vector<IterationPoint>& frontier, Joules budget);

}  // namespace kareus::planner
