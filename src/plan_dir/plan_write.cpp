// SPDX-License-Identifier: Apache-2.0
#include "kareus/plan_dir/plan_write.hpp"

#include <fmt/format.h>

#include <set>

namespace kareus::plan_dir {
namespace {

std::string frontier_csv(const planner::MethodResult& m) {
  std::string csv = "time_s,energy_j,dynamic_energy_j,plan\n";
  for (const auto& p : m.frontier)
    csv += fmt::format("{:.6f},{:.3f},{:.3f},{}\n", p.time.value(), p.energy.value(),
                       p.dynamic_energy.value(), p.plan);
  return csv;
}

}  // namespace

Json partitions_json(const planner::MethodResult& method) {
  Json keys = Json::object();
  Json confidence = Json::object();
  for (const auto& [key, result] : method.key_frontiers) {
    const search::SearchSummary& s = result.summary;
    confidence[key] = {{"repeats", s.repeats},
                       {"noise_time", s.noise_time},
                       {"noise_dynamic_energy", s.noise_energy},
                       {"front_decided", s.confidence ? Json(*s.confidence) : Json(nullptr)}};
    std::set<std::size_t> on_frontier;
    for (const auto& p : result.frontier_dynamic) on_frontier.insert(p.id);
    Json points = Json::array();
    for (const auto& p : result.measured)
      points.push_back({{"clock_mhz", p.config.clock.value()},
                        {"slot", p.config.slot},
                        {"sms", p.config.comm_sms},
                        {"time_s", p.time.value()},
                        {"dynamic_energy_j", p.dynamic_energy.value()},
                        {"samples", p.samples},
                        {"frontier", on_frontier.count(p.id) > 0}});
    keys[key] = std::move(points);
  }
  return {{"method", planner::to_string(method.method)},
          {"keys", std::move(keys)},
          {"confidence", std::move(confidence)}};
}

PlanFiles plan_files(const planner::PlanOutcome& outcome, const std::filesystem::path& dir) {
  PlanFiles files{dir, {}};
  for (const auto& [m, r] : outcome.result.methods)
    files.texts.emplace(frontier_file(planner::to_string(m)), frontier_csv(r));
  files.texts.emplace(kSchedule, to_json(outcome.schedule));
  files.texts.emplace(kSummary, outcome.summary.dump(2) + "\n");
  files.texts.emplace(
      kPartitions,
      partitions_json(outcome.result.methods.at(outcome.selected.method)).dump(2) + "\n");
  return files;
}

}  // namespace kareus::plan_dir
