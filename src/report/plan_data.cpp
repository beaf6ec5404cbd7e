// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/report/plan_compare.hpp"
#include "kareus/report/plan_report.hpp"
#include "kareus/report/timeline.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::report {
namespace {

using plan_dir::kPartitions;
using plan_dir::kSchedule;
using plan_dir::kSummary;

// Points of one method's frontier CSV, cross-checked against the summary's count.
Json frontier_rows(const plan_dir::PlanFiles& files, const std::string& method,
                   std::int64_t expected, const JsonValue& selected) {
  const std::string name = plan_dir::frontier_file(method);
  const auto csv =
      CsvTable::parse(files.text(name, fmt::format("{} for every method in summary.json ({})",
                                                   plan_dir::written_by(), method)),
                      files.source(name));
  csv.require_columns({"time_s", "energy_j", "dynamic_energy_j", "plan"});
  if (static_cast<std::int64_t>(csv.rows()) != expected)
    throw Error(fmt::format("{}: {} points, but summary.json has frontier_size = {} for {}",
                            files.source(name), csv.rows(), expected, method));
  const bool chosen = selected.string("method") == method;
  const auto plan = selected.at("point").integer("plan");
  Json rows = Json::array();
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    const auto r = csv.row(i);
    rows.push_back({{"method", method},
                    {"time_s", r.positive_number("time_s")},
                    {"energy_j", r.positive_number("energy_j")},
                    {"dynamic_energy_j", r.non_negative_number("dynamic_energy_j")},
                    {"plan", r.integer("plan")},
                    {"selected", chosen && r.integer("plan") == plan}});
  }
  return rows;
}

// "deadline 4.2 s" / "energy budget 9000 J" / "max-throughput", as cmd_plan writes it.
Json selection_bound(const std::string& rule) {
  double v = 0;
  if (std::sscanf(rule.c_str(), "deadline %lf s", &v) == 1) return {{"deadline_s", v}};
  if (std::sscanf(rule.c_str(), "energy budget %lf J", &v) == 1) return {{"energy_budget_j", v}};
  return Json::object();
}

Json timeline_json(const Timeline& t, const Schedule& s) {
  Json bars = Json::array();
  for (const auto& b : t.bars)
    bars.push_back(
        {{"stage", b.stage},
         {"microbatch", b.microbatch},
         {"direction", b.direction},
         {"label", fmt::format("{}{}", b.direction == "forward" ? "F" : "B", b.microbatch)},
         {"start_s", b.start.value()},
         {"end_s", b.end.value()},
         {"clock_mhz", b.clock.value()},
         {"execution", b.execution}});
  Json gaps = Json::array();
  for (const auto& g : t.gaps)
    gaps.push_back({{"stage", g.stage},
                    {"start_s", g.start.value()},
                    {"end_s", g.end.value()},
                    {"waiting_s", (g.end - g.start).value()}});
  return {{"bars", bars},
          {"gaps", gaps},
          {"pipeline_time_s", t.pipeline_time.value()},
          {"tail_s", t.tail.value()},
          {"iteration_time_s", t.iteration_time().value()},
          {"predicted_iteration_time_s", s.predicted.iteration_time.value()},
          {"step_clock_instructions", t.step_clock_instructions}};
}

// Per partition key and stage, each configuration the schedule uses and how often; and every
// measured point of the key, marked where the schedule uses it.
Json partitions_page(const Schedule& s, const JsonValue& file) {
  using Use = std::tuple<std::string, int, std::string, int, std::string, int>;
  std::map<Use, int> uses;
  std::set<std::tuple<std::string, int, std::string, int>> chosen;
  for (const auto& st : s.stages)
    for (const auto& in : st.instructions)
      for (const auto* m : {&in.partitions, &in.recompute_partitions})
        for (const auto& [key, l] : *m) {
          const std::string role = m == &in.partitions ? in.direction : "recompute";
          ++uses[{key, st.stage, role, static_cast<int>(in.clock.value()), l.slot, l.sms}];
          chosen.insert({key, static_cast<int>(in.clock.value()), l.slot, l.sms});
        }
  Json choices = Json::array();
  for (const auto& [u, n] : uses)
    choices.push_back({{"key", std::get<0>(u)},
                       {"stage", std::get<1>(u)},
                       {"role", std::get<2>(u)},
                       {"clock_mhz", std::get<3>(u)},
                       {"slot", std::get<4>(u)},
                       {"sms", std::get<5>(u)},
                       {"instructions", n}});
  Json points = Json::array();
  const auto keys = file.at("keys");
  for (const auto& key : keys.keys()) {
    const auto list = keys.at(key);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto p = list.at(i);
      const int clock = p.positive_int("clock_mhz");
      const std::string slot = p.string("slot");
      const int sms = p.positive_int("sms");
      points.push_back({{"key", key},
                        {"clock_mhz", clock},
                        {"slot", slot},
                        {"sms", sms},
                        {"time_ms", 1e3 * p.positive_number("time_s")},
                        {"dynamic_energy_j", p.at("dynamic_energy_j").as_non_negative_number()},
                        {"frontier", p.at("frontier").as_bool()},
                        {"chosen", chosen.count({key, clock, slot, sms}) > 0}});
    }
  }
  return {{"method", file.string("method")}, {"choices", choices}, {"points", points}};
}

}  // namespace

Json plan_page_data(const plan_dir::PlanFiles& files) {
  for (const char* f : {kSummary, kSchedule, kPartitions}) files.text(f);
  const auto summary_doc = JsonDocument::parse(files.text(kSummary), files.source(kSummary));
  const auto summary = summary_doc.root();
  const auto selected = summary.at("selected");

  Json methods = Json::array();
  Json frontier = Json::array();
  double gpu_hours = 0;
  std::int64_t measurements = 0, reused = 0;
  const auto ms = summary.at("methods");
  for (const auto& name : ms.keys()) {
    const auto m = ms.at(name);
    for (auto& row : frontier_rows(files, name, m.positive_integer("frontier_size"), selected))
      frontier.push_back(std::move(row));
    gpu_hours += m.at("profiling_gpu_hours").as_non_negative_number();
    measurements += m.integer("measurements");
    reused += m.integer("measurements_reused");
    methods.push_back({{"method", name},
                       {"max_throughput", m.at("max_throughput").raw()},
                       {"min_energy", m.at("min_energy").raw()},
                       {"frontier_size", m.positive_integer("frontier_size")},
                       {"ten_point_frontier", m.at("ten_point_frontier").raw()},
                       {"measurements", m.integer("measurements")},
                       {"measurements_reused", m.integer("measurements_reused")},
                       {"profiling_gpu_hours", m.number("profiling_gpu_hours")},
                       {"metrics", m.at("metrics").raw()}});
  }
  const std::string selected_method = selected.string("method");
  if (!ms.contains(selected_method))
    throw Error(fmt::format("{}: /selected/method = {}: not among /methods", files.source(kSummary),
                            selected_method));

  const auto schedule = parse_schedule(files.text(kSchedule), files.source(kSchedule));
  const auto w = workload::make_workload(workload::workload_request_from_json(
      summary.at("workload"), files.source(kSummary) + ": /workload"));
  const auto partitions_doc =
      JsonDocument::parse(files.text(kPartitions), files.source(kPartitions));

  Json provenance =
      summary.contains("provenance") ? summary.at("provenance").raw() : Json::object();
  provenance["measurements"] = measurements;
  provenance["measurements_reused"] = reused;
  provenance["profiling_gpu_hours"] = gpu_hours;

  Json selection = selected.raw();
  selection["bound"] = selection_bound(selected.string("rule"));
  // Why the selected plan costs what it does: against Perseus's fastest plan when it was planned,
  // otherwise against the selected method's least-energy plan.
  Json comparison = nullptr;
  if (selected.at("point").contains("ledger")) {
    const PlanRef against = ms.contains("perseus") ? PlanRef{"perseus", "fastest"}
                                                   : PlanRef{selected_method, "min-energy"};
    comparison = to_json(compare_plans(files, PlanRef{"", "selected"}, files, against));
  }
  return {{"workload", summary.at("workload").raw()},
          {"comparison", comparison},
          {"methods", methods},
          {"frontier", frontier},
          {"selected", selection},
          {"metrics", summary.at("metrics").raw()},
          {"timeline", timeline_json(emulate_timeline(w, schedule), schedule)},
          {"partitions", partitions_page(schedule, partitions_doc.root())},
          {"provenance", provenance}};
}

}  // namespace kareus::report
