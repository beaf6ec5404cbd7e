// SPDX-License-Identifier: Apache-2.0
// Planning through the C API: a workload struct or file in, a kareus_plan handle out.
#include <cmath>

#include "handles.hpp"
#include "kareus/planner/run.hpp"
#include "kareus/workload/workload.hpp"
#include "status.hpp"

namespace kareus::capi {
namespace {

workload::WorkloadRequest request_of(const kareus_workload& w) {
  workload::WorkloadRequest r;
  r.where = "kareus_workload";
  r.model = required(w.model, "workload->model");
  r.gpu = required(w.gpu, "workload->gpu");
  auto& p = r.parallelism;
  p.tp = w.tp;
  p.cp = w.cp;
  p.pp = w.pp;
  p.dp = w.dp;
  p.microbatch_size = w.microbatch_size;
  p.sequence_length = w.sequence_length;
  p.microbatches = w.microbatches;
  if (w.recompute != KAREUS_RECOMPUTE_NONE && w.recompute != KAREUS_RECOMPUTE_FULL)
    throw ArgumentError("workload->recompute = " + std::to_string(w.recompute) +
                        " is not a kareus_recompute");
  p.recompute = w.recompute == KAREUS_RECOMPUTE_FULL ? workload::Recompute::kFull
                                                     : workload::Recompute::kNone;
  p.gpus_per_node = w.gpus_per_node;
  return r;
}

planner::Selection selection_of(kareus_selection rule, double bound, int milp_nodes,
                                const char* parameter) {
  planner::Selection selection;
  switch (rule) {
    case KAREUS_SELECT_MAX_THROUGHPUT:
      break;
    case KAREUS_SELECT_DEADLINE:
      selection = {planner::SelectionRule::kDeadline, bound};
      break;
    case KAREUS_SELECT_ENERGY_BUDGET:
      selection = {planner::SelectionRule::kEnergyBudget, bound};
      break;
    default:
      throw ArgumentError(std::string(parameter) + " = " + std::to_string(rule) +
                          " is not a kareus_selection");
  }
  selection.milp_nodes = milp_nodes;
  return selection;
}

// The options as the caller's struct holds them: only this version's size is known today; a later
// struct that grows reads the fields an older caller's size covers and defaults the rest.
kareus_plan_options options_of(const kareus_plan_options* options) {
  kareus_plan_options o;
  kareus_plan_options_init(&o);
  if (!options) return o;
  if (options->size != sizeof(kareus_plan_options))
    throw ArgumentError("options->size = " + std::to_string(options->size) +
                        " is not the size of a kareus_plan_options this library knows (" +
                        std::to_string(sizeof(kareus_plan_options)) +
                        "); set it with kareus_plan_options_init");
  return *options;
}

// Options -> request, every field of it (PlanRequest::fields); the planner checks it.
planner::PlanRequest request_of(const kareus_plan_options& o) {
  planner::PlanRequest r;
  r.where = "plan options";
  if (o.methods) r.methods = planner::parse_methods(o.methods);
  if (o.strategy) r.strategy = search::parse_strategy(o.strategy);
  r.seed = o.seed;
  r.noise_sigma = o.noise_sigma;
  r.unit_time = Seconds(o.unit_time_s);
  if (o.clock_granularity)
    r.clock_granularity =
        planner::parse_clock_granularity(o.clock_granularity, r.where, "clock_granularity");
  r.switch_latency = Seconds(o.switch_latency_s);
  r.selection = selection_of(o.selection, o.bound, o.milp_nodes, "options->selection");
  if (o.enforceable)
    r.enforceable = planner::parse_enforceable(o.enforceable, r.where, "enforceable");
  return r;
}

kareus_plan* run_plan(const workload::Workload& w, const kareus_plan_options* options) {
  const kareus_plan_options o = options_of(options);
  planner::Context context;
  if (o.store_path) context.store = o.store_path;
  auto plan = std::make_unique<kareus_plan>();
  plan->outcome = planner::run(request_of(o), w, context);
  for (const auto& [method, result] : plan->outcome.result.methods)
    plan->method_names.emplace_back(planner::to_string(method));
  return plan.release();
}

const planner::MethodResult& method_of(const kareus_plan* plan, const char* method) {
  required(plan, "plan");
  const auto m = planner::parse_method(required(method, "method"));
  const auto& methods = plan->outcome.result.methods;
  const auto it = methods.find(m);
  if (it == methods.end())
    throw Error::invalid("plan", "method", method, "this plan has no frontier for it");
  return it->second;
}

kareus_point point_of(const planner::IterationPoint& p) {
  return {p.time.value(), p.energy.value(), p.dynamic_energy.value()};
}

kareus_refinement refinement_of(const std::optional<planner::SelectionRefinement>& r) {
  if (!r) return {};
  return {r->improved ? 1 : 0, r->time_capped ? 1 : 0, r->seconds};
}

double value_or_nan(const std::optional<double>& v) {
  return v ? *v : std::nan("");
}

}  // namespace
}  // namespace kareus::capi

using namespace kareus;
using namespace kareus::capi;

extern "C" {

void kareus_workload_init(kareus_workload* workload) {
  if (!workload) return;
  const workload::Parallelism p;
  *workload = kareus_workload{};
  workload->tp = p.tp;
  workload->cp = p.cp;
  workload->pp = p.pp;
  workload->dp = p.dp;
  workload->microbatch_size = p.microbatch_size;
  workload->sequence_length = p.sequence_length;
  workload->microbatches = p.microbatches;
  workload->recompute =
      p.recompute == workload::Recompute::kFull ? KAREUS_RECOMPUTE_FULL : KAREUS_RECOMPUTE_NONE;
  workload->gpus_per_node = p.gpus_per_node;
}

void kareus_plan_options_init(kareus_plan_options* options) {
  if (!options) return;
  const planner::PlanRequest r;
  *options = kareus_plan_options{};
  options->size = sizeof(kareus_plan_options);
  options->seed = r.seed;
  options->noise_sigma = r.noise_sigma;
  options->unit_time_s = r.unit_time.value();
  options->switch_latency_s = r.switch_latency.value();
  options->selection = KAREUS_SELECT_MAX_THROUGHPUT;
  options->milp_nodes = r.selection.milp_nodes;
}

kareus_status kareus_plan_create(const kareus_workload* workload,
                                 const kareus_plan_options* options, kareus_plan** out) {
  return guarded([&] {
    required(out, "out");
    *out = run_plan(workload::make_workload(request_of(*required(workload, "workload"))), options);
  });
}

kareus_status kareus_plan_create_from_file(const char* workload_path,
                                           const kareus_plan_options* options, kareus_plan** out) {
  return guarded([&] {
    required(out, "out");
    *out = run_plan(workload::make_workload(
                        workload::read_workload_request(required(workload_path, "workload_path"))),
                    options);
  });
}

void kareus_plan_free(kareus_plan* plan) {
  delete plan;
}

kareus_status kareus_plan_method_count(const kareus_plan* plan, size_t* count) {
  return guarded([&] { *required(count, "count") = required(plan, "plan")->method_names.size(); });
}

kareus_status kareus_plan_method_name(const kareus_plan* plan, size_t index, const char** name) {
  return guarded([&] {
    required(name, "name");
    check_index(index, required(plan, "plan")->method_names.size(), "method");
    *name = plan->method_names[index].c_str();
  });
}

kareus_status kareus_plan_frontier_size(const kareus_plan* plan, const char* method, size_t* size) {
  return guarded([&] { *required(size, "size") = method_of(plan, method).frontier.size(); });
}

kareus_status kareus_plan_frontier_point(const kareus_plan* plan, const char* method, size_t index,
                                         kareus_point* point) {
  return guarded([&] {
    required(point, "point");
    const auto& frontier = method_of(plan, method).frontier;
    check_index(index, frontier.size(), "frontier point");
    *point = point_of(frontier[index]);
  });
}

kareus_status kareus_plan_selected(const kareus_plan* plan, const char** method,
                                   kareus_point* point, kareus_refinement* refinement) {
  return guarded([&] {
    const auto& selected = required(plan, "plan")->outcome.selected;
    if (method) *method = planner::to_string(selected.method);
    if (point) *point = point_of(selected.point);
    if (refinement) *refinement = refinement_of(selected.refinement);
  });
}

kareus_status kareus_plan_selected_schedule(const kareus_plan* plan, kareus_schedule** out) {
  return guarded([&] {
    required(out, "out");
    *out = wrap(required(plan, "plan")->outcome.schedule);
  });
}

kareus_status kareus_plan_summary(const kareus_plan* plan, char** json) {
  return guarded([&] {
    required(json, "json");
    *json = copy_to_malloc(required(plan, "plan")->outcome.summary.dump(2));
  });
}

kareus_status kareus_plan_request(const kareus_plan* plan, char** json) {
  return guarded([&] {
    required(json, "json");
    *json = copy_to_malloc(required(plan, "plan")->outcome.request.to_json().dump(2));
  });
}

kareus_status kareus_plan_select(const kareus_plan* plan, const char* method, kareus_selection rule,
                                 double bound, kareus_point* point, kareus_schedule** schedule) {
  return kareus_plan_select_refined(plan, method, rule, bound, 0, point, schedule, nullptr);
}

kareus_status kareus_plan_select_refined(const kareus_plan* plan, const char* method,
                                         kareus_selection rule, double bound, int milp_nodes,
                                         kareus_point* point, kareus_schedule** schedule,
                                         kareus_refinement* refinement) {
  return guarded([&] {
    required(point, "point");
    const auto selected = planner::select_polished(method_of(plan, method),
                                                   selection_of(rule, bound, milp_nodes, "rule"));
    kareus_schedule* made =
        schedule ? wrap(planner::make_schedule(plan->outcome.result, selected)) : nullptr;
    *point = point_of(selected.point);
    if (schedule) *schedule = made;
    if (refinement) *refinement = refinement_of(selected.refinement);
  });
}

kareus_status kareus_plan_metrics(const kareus_plan* plan, const char* method,
                                  kareus_metrics* metrics) {
  return guarded([&] {
    required(metrics, "metrics");
    const auto& m = plan->outcome.result.metrics.at(method_of(plan, method).method);
    *metrics = {value_or_nan(m.max_throughput_time_reduction),
                value_or_nan(m.max_throughput_energy_reduction),
                value_or_nan(m.iso_time_energy_reduction),
                value_or_nan(m.iso_energy_time_reduction)};
  });
}

kareus_status kareus_plan_schedule(const kareus_plan* plan, const char* method, size_t index,
                                   kareus_schedule** out) {
  return guarded([&] {
    required(out, "out");
    const auto& m = method_of(plan, method);
    check_index(index, m.frontier.size(), "frontier point");
    *out = wrap(planner::make_schedule(plan->outcome.result, m.method, m.frontier[index]));
  });
}

}  // extern "C"
