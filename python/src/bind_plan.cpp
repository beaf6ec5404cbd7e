// SPDX-License-Identifier: Apache-2.0
// kareus.Workload, kareus.plan() and its result: per method, the iteration frontier, selection
// and the schedule of a chosen point. plan() runs planner::run, as `kareus plan` does.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <optional>

#include "bindings.hpp"
#include "kareus/core/error.hpp"
#include "kareus/planner/run.hpp"
#include "kareus/planner/summary.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::python {
namespace {

workload::Workload make_workload(const std::string& model, const std::string& gpu, int tp, int cp,
                                 int pp, int dp, int microbatch_size, int sequence_length,
                                 int microbatches, const std::string& recompute,
                                 std::vector<int> layer_split, int gpus_per_node) {
  workload::WorkloadRequest r;
  r.where = "kareus.Workload";
  r.model = model;
  r.gpu = gpu;
  auto& p = r.parallelism;
  p.tp = tp;
  p.cp = cp;
  p.pp = pp;
  p.dp = dp;
  p.microbatch_size = microbatch_size;
  p.sequence_length = sequence_length;
  p.microbatches = microbatches;
  p.recompute = workload::parse_recompute(recompute, r.where);
  p.layer_split = std::move(layer_split);
  p.gpus_per_node = gpus_per_node;
  return workload::make_workload(r);
}

// The selection of plan() and select(): by deadline, by energy budget, or max-throughput, and the
// deadline's MILP refinement (checked by the library: check_selection).
planner::Selection selection_of(const std::string& where, std::optional<double> deadline_s,
                                std::optional<double> energy_budget_j, int milp_nodes) {
  if (deadline_s && energy_budget_j)
    throw Error(where + ": give deadline_s or energy_budget_j, not both");
  planner::Selection s;
  if (deadline_s) s = {planner::SelectionRule::kDeadline, *deadline_s};
  if (energy_budget_j) s = {planner::SelectionRule::kEnergyBudget, *energy_budget_j};
  s.milp_nodes = milp_nodes;
  return s;
}

// Arguments -> request, every field of it (PlanRequest::fields); the planner checks it.
planner::PlanOutcome run_plan(
    const workload::Workload& w, const std::optional<std::vector<std::string>>& methods,
    const std::string& strategy, std::uint64_t seed,
    const std::optional<std::filesystem::path>& store_path, double noise_sigma, double unit_time_s,
    std::optional<double> deadline_s, std::optional<double> energy_budget_j, int milp_nodes,
    const std::string& clock_granularity, double switch_latency_s, const std::string& enforceable) {
  planner::PlanRequest request;
  request.where = "kareus.plan";
  if (methods) {
    request.methods.clear();
    for (const auto& name : *methods) request.methods.push_back(planner::parse_method(name));
  }
  request.strategy = search::parse_strategy(strategy);
  request.seed = seed;
  request.noise_sigma = noise_sigma;
  request.unit_time = Seconds(unit_time_s);
  request.clock_granularity =
      planner::parse_clock_granularity(clock_granularity, request.where, "clock_granularity");
  request.switch_latency = Seconds(switch_latency_s);
  request.selection = selection_of(request.where, deadline_s, energy_budget_j, milp_nodes);
  request.enforceable = planner::parse_enforceable(enforceable, request.where, "enforceable");
  planner::Context context;
  if (store_path) context.store = *store_path;
  return planner::run(request, w, context);
}

const planner::MethodResult& method_of(const planner::PlanOutcome& o, const std::string& name) {
  const auto& r = o.result;
  const auto it = r.methods.find(planner::parse_method(name));
  if (it == r.methods.end())
    throw Error::invalid("kareus.PlanResult", "method", name, "this plan has no frontier for it");
  return it->second;
}

py::dict metrics_dict(const planner::Metrics& m) {
  py::dict d;
  d["max_throughput_time_reduction"] = m.max_throughput_time_reduction;
  d["max_throughput_energy_reduction"] = m.max_throughput_energy_reduction;
  d["iso_time_energy_reduction"] = m.iso_time_energy_reduction;
  d["iso_energy_time_reduction"] = m.iso_energy_time_reduction;
  return d;
}

}  // namespace

void bind_plan(py::module_& m) {
  const workload::Parallelism defaults;
  py::class_<workload::Workload>(m, "Workload",
                                 "A training job: model, GPU type and parallelism, validated.")
      .def(py::init(&make_workload), py::arg("model"), py::arg("gpu"), py::kw_only(),
           py::arg("tp") = defaults.tp, py::arg("cp") = defaults.cp, py::arg("pp") = defaults.pp,
           py::arg("dp") = defaults.dp, py::arg("microbatch_size") = defaults.microbatch_size,
           py::arg("sequence_length") = defaults.sequence_length,
           py::arg("microbatches") = defaults.microbatches,
           py::arg("recompute") = workload::to_string(defaults.recompute),
           py::arg("layer_split") = defaults.layer_split,
           py::arg("gpus_per_node") = defaults.gpus_per_node)
      .def_static(
          "from_file",
          [](const std::filesystem::path& path) {
            return workload::make_workload(workload::read_workload_request(path.string()));
          },
          py::arg("path"), "Reads {\"model\": ..., \"gpu\": ..., \"parallelism\": {...}}.")
      .def_property_readonly("model", [](const workload::Workload& w) { return w.model.name; })
      .def_property_readonly("gpu", [](const workload::Workload& w) { return w.gpu.name; })
      .def_property_readonly("total_gpus", &workload::Workload::total_gpus)
      .def_property_readonly("stage_layers", &workload::Workload::stage_layers)
      .def("to_dict", [](const workload::Workload& w) { return to_python(w.to_json()); })
      .def("__repr__", [](const workload::Workload& w) {
        return "kareus.Workload(" + w.to_json().dump() + ")";
      });

  py::class_<planner::IterationPoint>(m, "IterationPoint",
                                      "One point of an iteration time-energy frontier.")
      .def_property_readonly("time_s",
                             [](const planner::IterationPoint& p) { return p.time.value(); })
      .def_property_readonly("energy_j",
                             [](const planner::IterationPoint& p) { return p.energy.value(); })
      .def_property_readonly(
          "dynamic_energy_j",
          [](const planner::IterationPoint& p) { return p.dynamic_energy.value(); })
      .def_readonly("plan", &planner::IterationPoint::plan)
      .def("__repr__", [](const planner::IterationPoint& p) {
        return "kareus.IterationPoint(time_s=" + format_number(p.time.value()) +
               ", energy_j=" + format_number(p.energy.value()) + ")";
      });

  py::class_<planner::SelectedPlan>(
      m, "SelectedPlan",
      "A plan chosen on one method's frontier: PlanResult.selected, or MethodResult.select().")
      .def_property_readonly(
          "method", [](const planner::SelectedPlan& s) { return planner::to_string(s.method); })
      .def_readonly("point", &planner::SelectedPlan::point)
      .def_property_readonly(
          "rule", [](const planner::SelectedPlan& s) { return s.selection.describe(); },
          "\"max-throughput\", \"deadline 5.5 s\" or \"energy budget 9000 J\".")
      .def_property_readonly(
          "refinement",
          [](const planner::SelectedPlan& s) -> py::object {
            if (!s.refinement) return py::none();
            return to_python(planner::to_json(*s.refinement));
          },
          "With milp_nodes > 0: max_nodes, improved, time_capped, time_s, as summary.json's "
          "selected.milp_refinement; else None.")
      .def("__repr__", [](const planner::SelectedPlan& s) {
        return "kareus.SelectedPlan(method=" + std::string(planner::to_string(s.method)) +
               ", rule=" + s.selection.describe() +
               ", time_s=" + format_number(s.point.time.value()) +
               ", energy_j=" + format_number(s.point.energy.value()) + ")";
      });

  py::class_<planner::MethodResult>(m, "MethodResult", "The frontier of one method.")
      .def_property_readonly(
          "method", [](const planner::MethodResult& r) { return planner::to_string(r.method); })
      .def_readonly("frontier", &planner::MethodResult::frontier, "Fastest first.")
      .def_readonly("measurements", &planner::MethodResult::measurements)
      .def_readonly("measurements_reused", &planner::MethodResult::measurements_reused)
      .def_readonly("profiling_gpu_hours", &planner::MethodResult::profiling_gpu_hours,
                    "What the method costs on real GPUs, reused measurements included.")
      .def_readonly("profiling_gpu_hours_reused",
                    &planner::MethodResult::profiling_gpu_hours_reused,
                    "The part of profiling_gpu_hours the store's reused measurements cost.")
      .def("fastest",
           [](const planner::MethodResult& r) { return planner::IterationPoint(r.fastest()); })
      .def("min_energy",
           [](const planner::MethodResult& r) { return planner::IterationPoint(r.min_energy()); })
      .def(
          "select",
          [](const planner::MethodResult& r, std::optional<double> deadline_s,
             std::optional<double> energy_budget_j, int milp_nodes) {
            const auto selection = selection_of("select", deadline_s, energy_budget_j, milp_nodes);
            // Only reads the result, which nothing changes after plan(): other threads go on.
            py::gil_scoped_release unlocked;
            return planner::select_polished(r, selection);
          },
          py::kw_only(), py::arg("deadline_s") = py::none(),
          py::arg("energy_budget_j") = py::none(), py::arg("milp_nodes") = 0,
          "The SelectedPlan with the least energy within deadline_s, the fastest within "
          "energy_budget_j, or the fastest. The selected plan is polished at the bound first, as "
          "`kareus plan --deadline` does, so its point may be one the frontier does not hold; the "
          "frontier stays as planned. milp_nodes > 0 (deadline_s only): the polished plan is then "
          "refined by exact sub-MILPs (CBC) over windows of 64 instructions, at most that many "
          "nodes each, as `kareus plan --milp-nodes` does (see SelectedPlan.refinement).")
      .def("ten_point_frontier",
           [](const planner::MethodResult& r) { return planner::ten_point_frontier(r); });

  py::class_<planner::PlanOutcome>(
      m, "PlanResult", "Per method, the iteration frontier; the selected plan and its schedule.")
      .def_property_readonly("workload",
                             [](const planner::PlanOutcome& o) { return o.result.workload; })
      .def_property_readonly("methods",
                             [](const planner::PlanOutcome& o) {
                               std::vector<std::string> names;
                               for (const auto& [method, result] : o.result.methods)
                                 names.emplace_back(planner::to_string(method));
                               return names;
                             })
      .def("__getitem__", &method_of, py::return_value_policy::reference_internal,
           py::arg("method"))
      .def_readonly("selected", &planner::PlanOutcome::selected,
                    "The plan plan()'s selection picks, on the method its enforceable runtime "
                    "can run best (kareus when planned and every decision is enforceable).")
      .def_property_readonly(
          "request", [](const planner::PlanOutcome& o) { return to_python(o.request.to_json()); },
          "The checked request plan() ran, with the fields of docs/plan.md's request.")
      .def(
          "to_dict",
          [](const planner::PlanOutcome& o) { return to_python(planner::to_json(o.result)); },
          "The plan as summary.json of `kareus plan` has it: workload and, per method, the "
          "frontier, its ends, measurements, metrics and the pipeline solver's summary.")
      .def(
          "summary", [](const planner::PlanOutcome& o) { return to_python(o.summary); },
          "summary.json of `kareus plan`, the selection, provenance and ledgers included.")
      .def(
          "metrics",
          [](const planner::PlanOutcome& o, const std::string& method) {
            return metrics_dict(o.result.metrics.at(method_of(o, method).method));
          },
          py::arg("method"))
      .def(
          "schedule",
          [](const planner::PlanOutcome& o, const std::string& method,
             const planner::IterationPoint& point) {
            return planner::make_schedule(o.result, method_of(o, method).method, point);
          },
          py::arg("method"), py::arg("point"), "The runtime schedule of a frontier point.")
      .def(
          "schedule",
          [](const planner::PlanOutcome& o, const planner::SelectedPlan& selected) {
            return planner::make_schedule(o.result, selected);
          },
          py::arg("selected"), "The runtime schedule of a SelectedPlan of this plan.");

  m.attr("PLAN_REQUEST_FIELDS") = planner::PlanRequest::fields();
  const planner::PlanRequest defaults_request;
  m.def("plan", &run_plan, py::arg("workload"), py::kw_only(), py::arg("methods") = py::none(),
        py::arg("strategy") = "kareus", py::arg("seed") = 0, py::arg("store") = py::none(),
        py::arg("noise_sigma") = 0.0, py::arg("unit_time_s") = defaults_request.unit_time.value(),
        py::arg("deadline_s") = py::none(), py::arg("energy_budget_j") = py::none(),
        py::arg("milp_nodes") = 0,
        py::arg("clock_granularity") = planner::to_string(defaults_request.clock_granularity),
        py::arg("switch_latency_s") = defaults_request.switch_latency.value(),
        py::arg("enforceable") = planner::to_string(defaults_request.enforceable),
        py::call_guard<py::gil_scoped_release>(),
        "Plans the workload: per method (megatron, perseus, nanobatch-perseus, kareus, "
        "kareus-exhaustive), the iteration time-energy frontier, as `kareus plan` does. store: "
        "SQLite measurement store to resume from and add to (None: none). deadline_s or "
        "energy_budget_j: the selection whose plan every method polishes and `selected` holds, as "
        "`kareus plan --deadline/--energy-budget` does; milp_nodes with deadline_s: each method's "
        "polished plan is then refined by CBC, as `kareus plan --milp-nodes` does. "
        "clock_granularity: \"instruction\" or \"partition\" (kareus clocks per partition, "
        "paying switch_latency_s per switch). enforceable: \"all\" or \"clocks\" (`selected` is "
        "then the best plan of megatron and perseus).");
}

}  // namespace kareus::python
