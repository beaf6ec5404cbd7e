// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/artifact_export.hpp"

#include <fmt/format.h>

#include "kareus/core/json.hpp"

namespace kareus::planner {
namespace {

// The artifact serialises a configuration as "<slot>-none-<sms>-1024" (1024-thread blocks).
std::string artifact_config(const emulator::KeyConfigs& configs, const std::string& key) {
  const auto it = configs.find(key);
  if (it == configs.end()) return "None";
  return fmt::format("'{}-none-{}-1024'", it->second.slot, it->second.sms);
}

std::vector<std::string> keys_in_order(const workload::Workload& w, workload::Direction d) {
  std::vector<std::string> out;
  for (const auto& k : partition::partition_keys(w))
    if (k.starts_with(d == workload::Direction::kForward ? "fwd_" : "bwd_")) out.push_back(k);
  return out;
}

}  // namespace

void export_artifact(const PlanResult& plan, Method method, const std::filesystem::path& dir) {
  const auto& m = plan.methods.at(method);
  const auto& w = plan.workload;
  const bool overlap = w.parallelism.microbatch_size % 2 == 0;
  const auto fwd_keys =
      overlap ? keys_in_order(w, workload::Direction::kForward) : std::vector<std::string>{};
  const auto bwd_keys =
      overlap ? keys_in_order(w, workload::Direction::kBackward) : std::vector<std::string>{};
  for (const auto& point : ten_point_frontier(m)) {
    const auto assignment = m.solver.assignment(point.plan);
    std::string freqs = "[\n";
    std::string scheds = "[\n";
    const auto& dag = m.problem.dag;
    for (int stage = 0; stage < dag.stages; ++stage) {
      freqs += "  [";
      scheds += "  [";
      for (int node : dag.stage_order[stage]) {
        const auto& instr = dag.nodes[node];
        const auto& o = m.option_sets[m.problem.option_set_of[node]][assignment[node]];
        const bool fwd = instr.direction == workload::Direction::kForward;
        const char* name = fwd ? "forward" : "backward";
        freqs += fmt::format("('{}', {:.0f}), ", name, o.clock.value());
        std::string item = fmt::format("('{}'", name);
        if (!fwd)
          for (const auto& k : fwd_keys) item += ", " + artifact_config(o.recompute, k);
        for (const auto& k : fwd ? fwd_keys : bwd_keys)
          item += ", " + artifact_config(o.configs, k);
        scheds += item + "), ";
      }
      freqs += "],\n";
      scheds += "],\n";
    }
    const double stage_static =
        w.gpu.static_power.value() * (point.time.value()) * w.parallelism.pp;
    const double replicas = static_cast<double>(w.gpus_per_stage()) * w.parallelism.dp;
    const std::string footer = fmt::format(
        "]\n# method: {}\n# iteration time (s): {:.4f}\n# total cost: {:.2f}\n"
        "# total cost with P2P: {:.2f}\n",
        to_string(method), point.time.value(), point.dynamic_energy.value() / replicas,
        point.dynamic_energy.value() / replicas + stage_static);
    write_file_atomically(dir / fmt::format("freqs_pipeline_{:05d}.py", point.plan),
                          freqs + footer);
    write_file_atomically(dir / fmt::format("scheds_pipeline_{:05d}.py", point.plan),
                          scheds + footer);
  }
}

}  // namespace kareus::planner
