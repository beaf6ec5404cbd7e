// SPDX-License-Identifier: Apache-2.0
// The JSON form of a plan, one for every front end: `kareus plan` writes it as summary.json and
// prints it with --json, Python returns it from PlanResult.to_dict(). docs/plan.md lists the
// fields.
#pragma once

#include "kareus/core/json.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/planner/request.hpp"
#include "kareus/planner/selection.hpp"

namespace kareus::planner {

Json to_json(const IterationPoint& point);
Json to_json(const Metrics& metrics);  // a reduction that has no baseline is null
// {"max_nodes", "improved", "time_capped", "time_s"}, as pipeline-solve's milp_refinement.
Json to_json(const SelectionRefinement& refinement);
// The pipeline solver's summary, as summary.json's methods.<m>.solver and pipeline-solve --json's
// solver: counts, times in seconds (`*_time_s`), and `*_units` in `unit_time_s`.
Json to_json(const frontier::PipelineSolverSummary& summary);
// {"energy_j": {static, idle, compute_dynamic, collective_dynamic, pipeline_waits, total},
//  "gpu_time_s": {compute, overlap, collective, launch_gaps, pipeline_waits, total}}.
Json to_json(const emulator::JobLedger& ledger);

// {"workload": ..., "memory": (workload/memory.hpp), "methods": {name: {frontier,
// ten_point_frontier, max_throughput, min_energy, frontier_size, measurements, measurements_reused,
// profiling_gpu_hours, metrics, solver}}}.
Json to_json(const PlanResult& result);

// to_json(result) plus the chosen method's metrics, the clock granularity, the selection (with its
// milp_refinement when it asked for one), `provenance` (version, executor, store, noise, seed) and
// the ledger (planner/ledger.hpp) of every frontier point, of each method's max-throughput and
// min-energy points and of the selected one.
Json plan_summary(const PlanResult& result, const PlanRequest& request,
                  const SelectedPlan& selected, const Json& provenance);

}  // namespace kareus::planner
