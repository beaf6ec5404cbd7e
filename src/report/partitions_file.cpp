#include "kareus/report/partitions_file.hpp"

#include <set>

namespace kareus::report {

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

}  // namespace kareus::report
