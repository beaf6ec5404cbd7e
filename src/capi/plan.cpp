// Planning through the C API: a workload struct or file in, a kareus_plan handle out.
#include <cmath>

#include "handles.hpp"
#include "kareus/planner/request.hpp"
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

kareus_plan* run_plan(const workload::Workload& w, const kareus_plan_options* options) {
  kareus_plan_options o;
  kareus_plan_options_init(&o);
  if (options) o = *options;
  planner::PlanRequest request;
  request.where = "plan options";
  if (o.methods) request.methods = planner::parse_methods(o.methods);
  request.strategy = search::parse_strategy(o.strategy ? o.strategy : "kareus");
  request.seed = o.seed;
  request.noise_sigma = o.noise_sigma;
  request.unit_time = Seconds(o.unit_time_s);
  request.check(w);
  planner::PlanOptions opt = request.options();
  std::unique_ptr<store::Store> db;
  if (o.store_path) {
    db = std::make_unique<store::Store>(o.store_path);
    opt.store = db.get();
  }
  auto plan = std::make_unique<kareus_plan>();
  plan->result = planner::plan(w, opt);
  for (const auto& [method, result] : plan->result.methods)
    plan->method_names.emplace_back(planner::to_string(method));
  return plan.release();
}

// const for the readers, mutable for kareus_plan_select, which adds the plans it polishes.
template <typename Plan>
auto& method_of(Plan* plan, const char* method) {
  required(plan, "plan");
  const auto m = planner::parse_method(required(method, "method"));
  const auto it = plan->result.methods.find(m);
  if (it == plan->result.methods.end())
    throw Error::invalid("plan", "method", method, "this plan has no frontier for it");
  return it->second;
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
  const planner::PlanOptions o;
  *options = kareus_plan_options{};
  options->seed = o.seed;
  options->noise_sigma = o.noise_sigma;
  options->unit_time_s = o.unit_time.value();
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
    const auto& p = frontier[index];
    *point = {p.time.value(), p.energy.value(), p.dynamic_energy.value()};
  });
}

kareus_status kareus_plan_select(kareus_plan* plan, const char* method, kareus_selection rule,
                                 double bound, size_t* index) {
  return kareus_plan_select_refined(plan, method, rule, bound, 0, index, nullptr);
}

kareus_status kareus_plan_select_refined(kareus_plan* plan, const char* method,
                                         kareus_selection rule, double bound, int milp_nodes,
                                         size_t* index, kareus_refinement* refinement) {
  return guarded([&] {
    required(index, "index");
    auto& m = method_of(plan, method);
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
        throw ArgumentError("rule = " + std::to_string(rule) + " is not a kareus_selection");
    }
    selection.milp_nodes = milp_nodes;
    const auto& chosen = planner::select_polished(m, selection);
    *index = static_cast<std::size_t>(&chosen - m.frontier.data());
    if (refinement) {
      *refinement = kareus_refinement{};
      if (const auto* r = planner::refinement_of(m, selection))
        *refinement = {r->improved ? 1 : 0, r->time_capped ? 1 : 0, r->seconds};
    }
  });
}

kareus_status kareus_plan_metrics(const kareus_plan* plan, const char* method,
                                  kareus_metrics* metrics) {
  return guarded([&] {
    required(metrics, "metrics");
    method_of(plan, method);
    const auto& m = plan->result.metrics.at(planner::parse_method(method));
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
    auto schedule = std::make_unique<kareus_schedule>();
    schedule->schedule = planner::make_schedule(plan->result, m.method, m.frontier[index]);
    *out = schedule.release();
  });
}

}  // extern "C"
