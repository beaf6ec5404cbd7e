#include "plan_output.hpp"

#include <fmt/format.h>

#include <optional>

#include "kareus/core/table.hpp"
#include "kareus/report/partitions_file.hpp"

namespace kareus::cli {
namespace {

std::string pct(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100 * *v) : "-";
}

std::string frontier_csv(const planner::MethodResult& m) {
  std::string csv = "time_s,energy_j,dynamic_energy_j,plan\n";
  for (const auto& p : m.frontier)
    csv += fmt::format("{:.6f},{:.3f},{:.3f},{}\n", p.time.value(), p.energy.value(),
                       p.dynamic_energy.value(), p.plan);
  return csv;
}

}  // namespace

void write_plan_files(const std::filesystem::path& dir, const planner::PlanResult& result,
                      const planner::PlanChoice& choice, const Schedule& schedule,
                      const Json& summary) {
  for (const auto& [m, r] : result.methods)
    write_file_atomically(dir / fmt::format("frontier_{}.csv", planner::to_string(m)),
                          frontier_csv(r));
  write_file_atomically(dir / "schedule.json", to_json(schedule));
  write_file_atomically(dir / "summary.json", summary.dump(2) + "\n");
  write_file_atomically(dir / "partitions.json",
                        report::partitions_json(result.methods.at(choice.method)).dump(2) + "\n");
}

std::string plan_table(const planner::PlanResult& result, const planner::PlanRequest& request,
                       const planner::PlanChoice& choice) {
  const auto& w = result.workload;
  TextTable table({"method", "fastest s", "energy J", "min-energy s", "energy J", "points",
                   "time vs megatron", "energy vs megatron", "iso-time energy", "iso-energy time",
                   "profiling GPU-h"});
  for (const auto& [m, r] : result.methods) {
    const auto& mt = result.metrics.at(m);
    table.add_row({planner::to_string(m), fmt::format("{:.3f}", r.fastest().time.value()),
                   fmt::format("{:.0f}", r.fastest().energy.value()),
                   fmt::format("{:.3f}", r.min_energy().time.value()),
                   fmt::format("{:.0f}", r.min_energy().energy.value()),
                   std::to_string(r.frontier.size()), pct(mt.max_throughput_time_reduction),
                   pct(mt.max_throughput_energy_reduction), pct(mt.iso_time_energy_reduction),
                   pct(mt.iso_energy_time_reduction),
                   fmt::format("{:.1f}", r.profiling_gpu_hours)});
  }
  std::string text = fmt::format(
      "{} on {} x {} (TP{} CP{} PP{} DP{}, {} microbatches of {} x {}); energy is per "
      "iteration for the whole job; reductions are positive when better\n\n",
      w.model.name, w.total_gpus(), w.gpu.name, w.parallelism.tp, w.parallelism.cp,
      w.parallelism.pp, w.parallelism.dp, w.parallelism.microbatches, w.parallelism.microbatch_size,
      w.parallelism.sequence_length);
  text += table.render();
  if (request.clock_granularity == planner::ClockGranularity::kPartition)
    text += fmt::format("\nkareus clocks per partition, {:g} ms per clock switch\n",
                        to_milliseconds(request.switch_latency));
  text += fmt::format("\nselected ({}, {}): {:.3f} s, {:.0f} J per iteration\n",
                      planner::to_string(choice.method), choice.selection.describe(),
                      choice.point->time.value(), choice.point->energy.value());
  return text;
}

}  // namespace kareus::cli
