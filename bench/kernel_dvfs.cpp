// SPDX-License-Identifier: Apache-2.0
// Quality benchmark: per-kernel DVFS savings for one GPT-3-XL layer (forward + backward) on the
// emulated RTX 3080 Ti, A100 and H100, ideal (as Spaan et al.) and with a clock-switch latency of
// 1, 10, 25 and 100 ms, against one clock per pass. Prints the markdown tables of
// docs/benchmarks/kernel_dvfs.md.
#include <fmt/format.h>

#include <iostream>

#include "kareus/core/table.hpp"
#include "kareus/kernel_dvfs/emulated.hpp"
#include "kareus/kernel_dvfs/study.hpp"

namespace {

using namespace kareus;
using namespace kareus::kernel_dvfs;

std::string cell(const Outcome& o) {
  if (!o.feasible) return "infeasible";
  return fmt::format("{:.2f} % ({:+.2f} %, {} sw)", 100 * o.energy_saving, 100 * o.slowdown,
                     o.cost.switches);
}

// What kernel-level DVFS can save at almost no slowdown comes from kernels whose time barely
// moves with the clock (memory-bound ones, or ones waiting for the host): their share of the
// energy at the maximum clock, and what running each at its cheapest clock within 0.6 % of its
// time would save of the whole.
std::string clock_insensitive_share(const kernel_dvfs::KernelSequence& seq) {
  double total = 0, share = 0, saved = 0;
  const std::size_t top = seq.max_clock();
  for (const auto& k : seq.kernels) {
    total += k.energy[top].value();
    double best = k.energy[top].value();
    for (std::size_t c = 0; c < seq.clocks.size(); ++c)
      if (k.time[c] <= k.time[top] * 1.006) best = std::min(best, k.energy[c].value());
    if (k.time[seq.clocks.size() > 1 ? 0 : top] <= k.time[top] * 1.006)
      share += k.energy[top].value();
    saved += k.energy[top].value() - best;
  }
  return fmt::format(
      "Kernels whose time at the lowest clock is within 0.6 % of the top clock's: {:.1f} % of the "
      "energy at the top clock. Each kernel alone at its cheapest clock within 0.6 % of its time "
      "saves {:.1f} % of the whole.\n",
      100 * share / total, 100 * saved / total);
}

}  // namespace

int main() {
  const std::vector<double> bounds{0.0, 0.006, 0.01, 0.02, 0.05};
  const std::vector<double> latencies_ms{1, 10, 25, 100};
  std::string out;
  for (const char* gpu : {"rtx3080ti", "a100-sxm4-40gb", "h100-sxm"}) {
    workload::WorkloadRequest request;
    request.model = "gpt3-xl";
    request.gpu = gpu;
    request.parallelism.microbatch_size = 1;
    request.parallelism.sequence_length = 2048;  // GPT-3's context length
    // One layer's kernels, as in the paper: the whole model's training states need not fit.
    request.training_job = false;
    const auto w = workload::make_workload(request);
    const auto seq = emulate_layers(w, 1, planning_clocks(w.gpu));

    StudyOptions ideal;
    ideal.slowdowns = bounds;
    ideal.ideal = true;
    ideal.power_limit = w.gpu.power_limit_default;
    const StudyResult ideal_result = run_study(seq, ideal);
    std::vector<StudyResult> real;
    for (double ms : latencies_ms) {
      StudyOptions o = ideal;
      o.ideal = false;
      o.switching =
          frontier::uniform_switch_cost(seq.clocks.size(), milliseconds(ms), w.gpu.static_power);
      real.push_back(run_study(seq, o));
    }

    out += fmt::format(
        "### {} ({} kernels, {} clocks {:.0f}-{:.0f} MHz; max clock {:.3f} ms, {:.3f} J)\n\n", gpu,
        seq.kernels.size(), seq.clocks.size(), seq.clocks.front().value(),
        seq.clocks.back().value(), to_milliseconds(ideal_result.max_clock.cost.time),
        ideal_result.max_clock.cost.energy.value());
    std::vector<std::string> header{"slowdown bound", "kernel-level, ideal"};
    for (double ms : latencies_ms) header.push_back(fmt::format("kernel-level, L = {:g} ms", ms));
    header.push_back("pass-level, ideal");
    TextTable table(header);
    for (std::size_t b = 0; b < bounds.size(); ++b) {
      std::vector<std::string> row{fmt::format("{:.1f} %", 100 * bounds[b]),
                                   cell(ideal_result.bounds[b].kernel_level)};
      for (const auto& r : real) row.push_back(cell(r.bounds[b].kernel_level));
      row.push_back(cell(ideal_result.bounds[b].pass_level));
      table.add_row(std::move(row));
    }
    if (ideal_result.governor)
      out +=
          fmt::format("Default governor at {:.0f} W: saving {:.2f} %, time {:+.2f} %.\n\n",
                      w.gpu.power_limit_default.value(), 100 * ideal_result.governor->energy_saving,
                      100 * ideal_result.governor->slowdown);
    out += table.render_markdown() + "\n" + clock_insensitive_share(seq) + "\n";
  }
  std::cout << out;
  return 0;
}
