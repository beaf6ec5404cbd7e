// SPDX-License-Identifier: Apache-2.0
#include "plan_output.hpp"

#include <fmt/format.h>

#include <optional>

#include "kareus/core/printable.hpp"
#include "kareus/core/readable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/workload/memory.hpp"

namespace kareus::cli {
namespace {

std::string pct(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100 * *v) : "-";
}

// The table's cost column is what each method costs; say how much of it this run did not pay.
std::string profiling_note(const planner::PlanResult& result) {
  std::string note;
  for (const auto& [m, r] : result.methods)
    if (r.profiling_gpu_hours_reused > 0)
      note +=
          fmt::format("{}{} {:.1f} of {:.1f} GPU-h", note.empty() ? "" : ", ",
                      planner::to_string(m), r.profiling_gpu_hours_reused, r.profiling_gpu_hours);
  if (note.empty()) return "";
  return "\nprofiling GPU-h reused from the store (paid by earlier runs): " + note + "\n";
}

// Readable units within 120 columns, or joules in full for --wide.
std::string energy_text(Joules e, bool wide) {
  return wide ? fmt::format("{:.0f}", e.value()) : readable_energy(e);
}

}  // namespace

std::string selected_line(const planner::SelectedPlan& selected, bool wide) {
  return fmt::format("selected ({}, {}): {:.3f} s, {} per iteration\n",
                     planner::to_string(selected.method), selected.selection.describe(),
                     selected.point.time.value(), energy_text(selected.point.energy, wide));
}

std::string plan_table(const planner::PlanOutcome& outcome, bool wide) {
  const auto& result = outcome.result;
  const auto& request = outcome.request;
  const auto& selected = outcome.selected;
  const auto& w = result.workload;
  // Within 120 columns by default: the vs-megatron pair and the counts are in --wide and in
  // summary.json.
  std::vector<std::string> header{"method", "fastest s", "energy", "min-energy s", "energy"};
  if (wide) header.insert(header.end(), {"points", "time vs megatron", "energy vs megatron"});
  header.insert(header.end(), {"iso-time energy", "iso-energy time", "profiling GPU-h"});
  if (wide) header.insert(header.end(), {"of which reused", "measurements", "reused"});
  TextTable table(header);
  const auto energy = [wide](Joules e) { return energy_text(e, wide); };
  for (const auto& [m, r] : result.methods) {
    const auto& mt = result.metrics.at(m);
    std::vector<std::string> row{
        planner::to_string(m), fmt::format("{:.3f}", r.fastest().time.value()),
        energy(r.fastest().energy), fmt::format("{:.3f}", r.min_energy().time.value()),
        energy(r.min_energy().energy)};
    if (wide)
      row.insert(row.end(),
                 {std::to_string(r.frontier.size()), pct(mt.max_throughput_time_reduction),
                  pct(mt.max_throughput_energy_reduction)});
    row.insert(row.end(), {pct(mt.iso_time_energy_reduction), pct(mt.iso_energy_time_reduction),
                           fmt::format("{:.1f}", r.profiling_gpu_hours)});
    if (wide)
      row.insert(row.end(),
                 {fmt::format("{:.1f}", r.profiling_gpu_hours_reused),
                  std::to_string(r.measurements), std::to_string(r.measurements_reused)});
    table.add_row(row);
  }
  std::string text = fmt::format(
      "{} on {} x {} (TP{} CP{} PP{} DP{}, {} microbatches of {} x {})\n"
      "energy is per iteration for the whole job{}; reductions are positive when better "
      "(iso-*: against perseus)\n",
      printable(w.model.name), w.total_gpus(), printable(w.gpu.name), w.parallelism.tp,
      w.parallelism.cp, w.parallelism.pp, w.parallelism.dp, w.parallelism.microbatches,
      w.parallelism.microbatch_size, w.parallelism.sequence_length, wide ? ", in joules" : "");
  const workload::MemoryEstimate memory = workload::estimate_memory(w);
  text += fmt::format(
      "memory per GPU: about {:.1f} of {:g} GiB (stage {}: {:.1f} model states, {:.1f} "
      "activations; at least {:.1f} in any layout)\n\n",
      memory.estimate_gib(), memory.capacity_gib, memory.stage, memory.model_states_gib,
      memory.activations_gib, memory.lower_bound_gib);
  text += table.render();
  text += profiling_note(result);
  if (request.clock_granularity == planner::ClockGranularity::kPartition)
    text += fmt::format("\nkareus clocks per partition, {:g} ms per clock switch\n",
                        to_milliseconds(request.switch_latency));
  text += "\n" + selected_line(selected, wide);
  if (const auto& r = selected.refinement)
    text += fmt::format("MILP refinement (CBC, at most {} nodes per window, {:.2f} s{}): {}\n",
                        r->selection.milp_nodes, r->seconds, r->time_capped ? ", time-capped" : "",
                        r->improved ? "found this cheaper plan" : "found no cheaper plan");
  return text;
}

}  // namespace kareus::cli
