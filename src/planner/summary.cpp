// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/summary.hpp"

#include "kareus/planner/ledger.hpp"
#include "kareus/workload/memory.hpp"

namespace kareus::planner {

Json to_json(const IterationPoint& p) {
  return {{"time_s", p.time.value()},
          {"energy_j", p.energy.value()},
          {"dynamic_energy_j", p.dynamic_energy.value()},
          {"plan", p.plan}};
}

Json to_json(const Metrics& m) {
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"max_throughput_time_reduction", opt(m.max_throughput_time_reduction)},
          {"max_throughput_energy_reduction", opt(m.max_throughput_energy_reduction)},
          {"iso_time_energy_reduction", opt(m.iso_time_energy_reduction)},
          {"iso_energy_time_reduction", opt(m.iso_energy_time_reduction)}};
}

Json to_json(const SelectionRefinement& r) {
  return {{"max_nodes", r.selection.milp_nodes},
          {"improved", r.improved},
          {"time_capped", r.time_capped},
          {"time_s", r.seconds}};
}

// One line per field: a field the solver's summary gains is one line here.
Json to_json(const frontier::PipelineSolverSummary& s) {
  return {{"unit_time_s", s.unit_time.value()},
          {"steps", s.steps},
          {"max_flow_solves", s.min_cuts},
          {"fallback_steps", s.fallback_steps},
          {"multi_unit_steps", s.multi_unit_steps},
          {"mean_critical_instructions", s.mean_critical_nodes},
          {"planned_slowest_units", s.planned_slowest_units},
          {"planned_fastest_units", s.planned_fastest_units},
          {"fast_end_lp_plans", s.fast_end_plans},
          {"fast_end_time_s", s.fast_end_seconds},
          {"polished_plans", s.polished_plans},
          {"polish_time_s", s.polish_seconds},
          {"solve_time_s", s.solve_seconds}};
}

Json to_json(const emulator::JobLedger& l) {
  return {{"energy_j",
           {{"static", l.static_energy.value()},
            {"idle", l.idle.value()},
            {"compute_dynamic", l.compute_dynamic.value()},
            {"collective_dynamic", l.collective_dynamic.value()},
            {"pipeline_waits", l.pipeline_waits.value()},
            {"total", l.total().value()}}},
          {"gpu_time_s",
           {{"compute", l.compute_time.value()},
            {"overlap", l.overlap_time.value()},
            {"collective", l.collective_time.value()},
            {"launch_gaps", l.launch_gap_time.value()},
            {"pipeline_waits", l.wait_time.value()},
            {"total", l.gpu_time().value()}}}};
}

namespace {

// Adds each frontier point's ledger to the method's frontier, max_throughput and min_energy, and
// to `selected` when the point is the chosen one.
void add_ledgers(Json& summary, const PlanResult& result, const PlanRequest& request,
                 const SelectedPlan& selected) {
  for (const auto& [m, r] : result.methods) {
    const auto ledgers =
        frontier_ledgers(result.workload, r, PartitionClockOptions{request.switch_latency, {}});
    Json& method = summary["methods"][to_string(m)];
    for (std::size_t i = 0; i < r.frontier.size(); ++i) {
      const Json ledger = to_json(ledgers[i]);
      method["frontier"][i]["ledger"] = ledger;
      if (&r.frontier[i] == &r.fastest()) method["max_throughput"]["ledger"] = ledger;
      if (&r.frontier[i] == &r.min_energy()) method["min_energy"]["ledger"] = ledger;
      if (m == selected.method && r.frontier[i].plan == selected.point.plan)
        summary["selected"]["point"]["ledger"] = ledger;
    }
  }
}

}  // namespace

Json to_json(const PlanResult& result) {
  Json methods = Json::object();
  for (const auto& [m, r] : result.methods) {
    Json frontier = Json::array();
    for (const auto& p : r.frontier) frontier.push_back(to_json(p));
    Json ten = Json::array();
    // Fastest first, as every frontier kareus prints (the function keeps the artifact's order).
    const auto sampled = ten_point_frontier(r);
    for (auto p = sampled.rbegin(); p != sampled.rend(); ++p) ten.push_back(to_json(*p));
    methods[to_string(m)] = {{"frontier", frontier},
                             {"ten_point_frontier", ten},
                             {"max_throughput", to_json(r.fastest())},
                             {"min_energy", to_json(r.min_energy())},
                             {"frontier_size", r.frontier.size()},
                             {"measurements", r.measurements},
                             {"measurements_reused", r.measurements_reused},
                             {"profiling_gpu_hours", r.profiling_gpu_hours},
                             {"profiling_gpu_hours_reused", r.profiling_gpu_hours_reused},
                             {"metrics", to_json(result.metrics.at(m))},
                             {"solver", to_json(r.solver.summary)}};
  }
  return {{"workload", result.workload.to_json()},
          {"memory", workload::to_json(workload::estimate_memory(result.workload))},
          {"methods", methods}};
}

Json plan_summary(const PlanResult& result, const PlanRequest& request,
                  const SelectedPlan& selected, const Json& provenance) {
  Json summary = to_json(result);
  summary["metrics"] = to_json(result.metrics.at(selected.method));
  summary["clock_granularity"] = {{"granularity", to_string(request.clock_granularity)},
                                  {"switch_latency_s", request.switch_latency.value()}};
  summary["provenance"] = provenance;
  summary["selected"] = {{"method", to_string(selected.method)},
                         {"rule", selected.selection.describe()},
                         {"point", to_json(selected.point)}};
  if (selected.refinement) summary["selected"]["milp_refinement"] = to_json(*selected.refinement);
  add_ledgers(summary, result, request, selected);
  return summary;
}

}  // namespace kareus::planner
