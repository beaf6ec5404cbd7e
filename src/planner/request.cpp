// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "field_check.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/frontier/unit_time.hpp"
#include "kareus/partition/partition.hpp"

namespace kareus::planner {
namespace {

std::string method_list(const std::vector<Method>& methods) {
  std::string text;
  for (const auto m : methods) text += (text.empty() ? "" : ",") + std::string(to_string(m));
  return text;
}

void check_with(const PlanOptions& o, const workload::Workload& w, const FieldCheck& c) {
  c.text(!o.methods.empty(), "methods", method_list(o.methods), "give at least one method");
  c.number(o.noise_sigma >= 0 && o.noise_sigma < 0.5, "noise_sigma", o.noise_sigma,
           "must be in [0, 0.5)");
  c.number(o.unit_time.value() > 0 && std::isfinite(o.unit_time.value()), "unit_time_s",
           o.unit_time.value(), "must be positive");
  const double latency = o.partition_clocks.switch_latency.value();
  c.number(latency >= 0 && latency <= kMaxWaitMilliseconds / 1e3, "switch_latency_s", latency,
           "must be a duration from 0 to one minute");
  check_selection(o.selection, c);
  if (needs_nanobatch_split(o.methods))
    partition::require_nanobatch_split(w, std::string(c.where()));
}

}  // namespace

bool needs_nanobatch_split(const std::vector<Method>& methods) {
  return std::any_of(methods.begin(), methods.end(),
                     [](Method m) { return m != Method::kMegatron && m != Method::kPerseus; });
}

std::vector<Method> parse_methods(std::string_view comma_separated) {
  std::vector<Method> out;
  std::size_t start = 0;
  while (start <= comma_separated.size()) {
    const std::size_t end = std::min(comma_separated.find(',', start), comma_separated.size());
    const std::string item(comma_separated.substr(start, end - start));
    if (!item.empty()) out.push_back(parse_method(item));
    start = end + 1;
  }
  return out;
}

void check_options(const PlanOptions& options, const workload::Workload& w) {
  check_with(options, w, FieldCheck(options.where, options.spellings));
}

void check_unit_time(const PlanOptions& options, Seconds smallest) {
  const FieldSpelling spelt = FieldCheck(options.where, options.spellings).spelling("unit_time_s");
  frontier::require_unit_time(options.unit_time, smallest, options.where, spelt.name, spelt.scale);
}

void PlanRequest::check(const workload::Workload& w) const {
  const FieldCheck c(where, spellings);
  // Checked before planning, which can take minutes, rather than when selecting; and before the
  // workload's fit to the methods, so that a bad bound is named as itself.
  if (selection.rule == SelectionRule::kDeadline)
    c.number(selection.bound > 0 && std::isfinite(selection.bound), "deadline_s", selection.bound,
             "must be a positive number of seconds");
  if (selection.rule == SelectionRule::kEnergyBudget)
    c.number(selection.bound > 0 && std::isfinite(selection.bound), "energy_budget_j",
             selection.bound, "must be a positive number of joules");
  check_with(options(), w, c);
}

PlanOptions PlanRequest::options() const {
  PlanOptions o;
  o.methods = methods;
  o.strategy = strategy;
  o.seed = seed;
  o.noise_sigma = noise_sigma;
  o.unit_time = unit_time;
  o.clock_granularity = clock_granularity;
  o.partition_clocks.switch_latency = switch_latency;
  o.selection = selection;
  o.where = where;
  o.spellings = spellings;
  return o;
}

Json PlanRequest::to_json() const {
  Json names = Json::array();
  for (const auto m : methods) names.push_back(planner::to_string(m));
  Json j{{"methods", names},
         {"strategy", search::to_string(strategy)},
         {"seed", seed},
         {"noise_sigma", noise_sigma},
         {"unit_time_s", unit_time.value()},
         {"clock_granularity", planner::to_string(clock_granularity)},
         {"switch_latency_s", switch_latency.value()},
         {"enforceable", planner::to_string(enforceable)}};
  if (selection.rule == SelectionRule::kDeadline) j["deadline_s"] = selection.bound;
  if (selection.rule == SelectionRule::kEnergyBudget) j["energy_budget_j"] = selection.bound;
  if (selection.milp_nodes != 0) j["milp_nodes"] = selection.milp_nodes;
  return j;
}

const std::vector<std::string>& PlanRequest::fields() {
  static const std::vector<std::string> names{
      "methods",           "strategy",         "seed",        "noise_sigma", "unit_time_s",
      "clock_granularity", "switch_latency_s", "enforceable", "deadline_s",  "energy_budget_j",
      "milp_nodes"};
  return names;
}

PlanRequest PlanRequest::from_json(const JsonValue& value) {
  const auto& known = fields();
  for (const auto& key : value.keys())
    require(std::find(known.begin(), known.end(), key) != known.end(), value.source(),
            value.pointer() + "/" + key, "(unknown field)",
            fmt::format("allowed: {}", fmt::join(known, ", ")));
  PlanRequest r;
  r.where = value.source();
  if (const auto m = value.find("methods")) {
    r.methods.clear();
    for (std::size_t i = 0; i < m->size(); ++i)
      r.methods.push_back(parse_method(m->at(i).as_string()));
  }
  if (const auto s = value.find("strategy")) r.strategy = search::parse_strategy(s->as_string());
  if (const auto s = value.find("seed")) {
    const std::int64_t seed = s->as_integer();
    require(seed >= 0, value.source(), value.pointer() + "/seed", std::to_string(seed),
            "must be a non-negative integer");
    r.seed = static_cast<std::uint64_t>(seed);
  }
  r.noise_sigma = value.number_or("noise_sigma", r.noise_sigma);
  r.unit_time = Seconds(value.number_or("unit_time_s", r.unit_time.value()));
  if (const auto g = value.find("clock_granularity"))
    r.clock_granularity = parse_clock_granularity(g->as_string(), value.source(),
                                                  value.pointer() + "/clock_granularity");
  r.switch_latency = Seconds(value.number_or("switch_latency_s", r.switch_latency.value()));
  if (const auto e = value.find("enforceable"))
    r.enforceable =
        parse_enforceable(e->as_string(), value.source(), value.pointer() + "/enforceable");
  const bool deadline = value.contains("deadline_s");
  const bool budget = value.contains("energy_budget_j");
  require(!(deadline && budget), value.source(), value.pointer() + "/deadline_s", "given",
          "give a deadline or an energy budget, not both");
  if (deadline) r.selection = {SelectionRule::kDeadline, value.number("deadline_s")};
  if (budget) r.selection = {SelectionRule::kEnergyBudget, value.number("energy_budget_j")};
  if (const auto n = value.find("milp_nodes")) {
    const std::int64_t nodes = n->as_integer();
    require(nodes >= 0 && nodes <= std::numeric_limits<int>::max(), value.source(),
            value.pointer() + "/milp_nodes", std::to_string(nodes),
            "must be a node count >= 0 (0: no refinement)");
    r.selection.milp_nodes = static_cast<int>(nodes);
  }
  return r;
}

}  // namespace kareus::planner
