// SPDX-License-Identifier: Apache-2.0
// kareus simulate: one training iteration on the GPU emulator.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/planner/summary.hpp"
#include "workload_flags.hpp"

namespace kareus::cli {
namespace {

struct SimulateFlags {
  WorkloadFlags workload;
  double clock_mhz = 0;
  std::string governor;
  std::string execution = "sequential";
  bool breakdown = false;
  bool json = false;
};

TextTable ledger_table(const emulator::JobLedger& l) {
  TextTable t({"part", "energy J", "share", "GPU time s", "share"});
  const double e = l.total().value();
  const double g = l.gpu_time().value();
  const auto row = [&](const std::string& name, Joules j, std::optional<Seconds> s) {
    t.add_row({name, fmt::format("{:.0f}", j.value()), fmt::format("{:.1f}%", 100 * j.value() / e),
               s ? fmt::format("{:.2f}", s->value()) : "",
               s ? fmt::format("{:.1f}%", 100 * s->value() / g) : ""});
  };
  row("static (blocked power while working)", l.static_energy, std::nullopt);
  row("idle at the clock, above blocked power", l.idle, std::nullopt);
  row("compute dynamic", l.compute_dynamic, l.compute_time + l.overlap_time);
  row("collective dynamic", l.collective_dynamic, l.collective_time);
  row("pipeline waits", l.pipeline_waits, l.wait_time);
  t.add_row({"  of the time: compute beside a collective", "", "",
             fmt::format("{:.2f}", l.overlap_time.value()),
             fmt::format("{:.1f}%", 100 * l.overlap_time.value() / g)});
  t.add_row({"  launch gaps between kernels", "", "",
             fmt::format("{:.2f}", l.launch_gap_time.value()),
             fmt::format("{:.1f}%", 100 * l.launch_gap_time.value() / g)});
  t.add_row({"total", fmt::format("{:.0f}", e), "100.0%", fmt::format("{:.2f}", g), "100.0%"});
  return t;
}

std::string format_report(const workload::Workload& w, const emulator::IterationResult& r,
                          const std::string& clock_text, const std::string& execution,
                          bool breakdown) {
  const double gpus = r.gpus;
  // Folded at kLineWidth: the model and GPU names from files can make it long.
  std::string out =
      wrap(fmt::format(
          "{} on {} x {} (TP{} CP{} PP{} DP{}, {} microbatches of {} x {} tokens, recompute {}), "
          "{} execution, {}",
          printable(w.model.name), r.gpus, printable(w.gpu.name), w.parallelism.tp,
          w.parallelism.cp, w.parallelism.pp, w.parallelism.dp, w.parallelism.microbatches,
          w.parallelism.microbatch_size, w.parallelism.sequence_length,
          workload::to_string(w.parallelism.recompute), execution, clock_text)) +
      "\n";
  TextTable t({"figure", "whole job", "per GPU"});
  t.add_row({"iteration time (s)", fmt::format("{:.3f}", r.iteration_time.value()), ""});
  t.add_row({"energy total (J)", fmt::format("{:.0f}", r.total_energy().value()),
             fmt::format("{:.1f}", r.total_energy().value() / gpus)});
  t.add_row({"energy dynamic (J)", fmt::format("{:.0f}", r.dynamic_energy.value()),
             fmt::format("{:.1f}", r.dynamic_energy.value() / gpus)});
  t.add_row({"energy static (J)", fmt::format("{:.0f}", r.static_energy.value()),
             fmt::format("{:.1f}", r.static_energy.value() / gpus)});
  t.add_row({"average power (W)", "",
             fmt::format("{:.1f}", r.total_energy().value() / gpus / r.iteration_time.value())});
  t.add_row({"average busy clock (MHz)", "", fmt::format("{:.0f}", r.average_clock.value())});
  out += t.render();
  if (breakdown) {
    out += "\nwhere the iteration's energy and GPU time went, whole job:\n" +
           ledger_table(r.ledger).render();
    TextTable k({"stage", "dir", "kernel", "kind", "count", "time ms", "share", "dyn J"});
    for (const auto& [key, v] : r.kernels) {
      const std::string name = key.substr(key.rfind('/') + 1);
      k.add_row({std::to_string(v.stage), v.direction, name, v.kind, fmt::format("{:g}", v.count),
                 fmt::format("{:.2f}", to_milliseconds(v.time)),
                 fmt::format("{:.1f}%", 100 * v.time.value() / r.iteration_time.value()),
                 fmt::format("{:.1f}", v.dynamic_energy.value())});
    }
    out += "\nper-kernel totals, one GPU of each stage, one iteration:\n" + k.render();
  }
  return out;
}

Json to_json(const workload::Workload& w, const emulator::IterationResult& r,
             const std::string& clock_text, const std::string& execution) {
  const double gpus = r.gpus;
  Json doc{{"workload", w.to_json()},
           {"execution", execution},
           {"clock", clock_text},
           {"iteration_time_s", r.iteration_time.value()},
           {"energy_j",
            {{"total", r.total_energy().value()},
             {"dynamic", r.dynamic_energy.value()},
             {"static", r.static_energy.value()}}},
           {"per_gpu",
            {{"energy_j", r.total_energy().value() / gpus},
             {"dynamic_energy_j", r.dynamic_energy.value() / gpus},
             {"static_energy_j", r.static_energy.value() / gpus},
             {"average_power_w", r.total_energy().value() / gpus / r.iteration_time.value()}}},
           {"average_clock_mhz", r.average_clock.value()},
           {"pipeline_transfer_s", r.pipeline_transfer_time.value()},
           {"gradient_reduction_s", r.gradient_reduction_time.value()},
           {"optimizer_s", r.optimizer_time.value()},
           {"ledger", planner::to_json(r.ledger)}};
  Json instr = Json::array();
  for (const auto& i : r.instructions) {
    instr.push_back({{"stage", i.stage},
                     {"direction", workload::to_string(i.direction)},
                     {"time_s", i.run.time.value()},
                     {"dynamic_energy_j", i.run.dynamic_energy.value()},
                     {"average_clock_mhz", i.run.average_clock().value()}});
  }
  doc["instructions"] = instr;
  if (!r.kernels.empty()) {
    Json k = Json::array();
    for (const auto& [key, v] : r.kernels)
      k.push_back({{"stage", v.stage},
                   {"direction", v.direction},
                   {"kernel", key.substr(key.rfind('/') + 1)},
                   {"kind", v.kind},
                   {"count", v.count},
                   {"time_s", v.time.value()},
                   {"dynamic_energy_j", v.dynamic_energy.value()}});
    doc["kernels"] = k;
  }
  return doc;
}

}  // namespace

void register_simulate_command(CLI::App& app) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand("simulate", "Emulate one training iteration");
  flags->workload.add_to(*cmd);
  flags->workload.add_gpu_file_to(*cmd);
  auto* clock = cmd->add_option("--clock", flags->clock_mhz, "Locked SM clock in MHz");
  cmd->add_option("--governor", flags->governor,
                  "'default': unlocked clock throttled by the power limit")
      ->excludes(clock);
  cmd->add_option("--execution", flags->execution, "sequential or nanobatch")
      ->capture_default_str();
  cmd->add_flag("--breakdown", flags->breakdown, "Per-kernel table");
  add_json_flag(*cmd, flags->json);
  cmd->callback([flags, clock] {
    const auto w = flags->workload.resolve();
    emulator::IterationOptions opt;
    std::string clock_text;
    if (!flags->governor.empty()) {
      require(flags->governor == "default", "command line", "--governor", flags->governor,
              "allowed: default");
      opt.clock = emulator::ClockPolicy::governor(w.gpu.power_limit_default);
      clock_text =
          fmt::format("default governor (power limit {:g} W)", w.gpu.power_limit_default.value());
    } else {
      // A given --clock is checked as given: 0, -5 or nan must not fall back to the maximum.
      const MHz f = clock->count() > 0 ? MHz(flags->clock_mhz) : w.gpu.clock_max;
      require(w.gpu.supports_clock(f), "command line", "--clock", format_number(f.value()),
              fmt::format("must be a supported clock of {}: {:g}..{:g} MHz in steps of {:g}",
                          w.gpu.name, w.gpu.clock_min.value(), w.gpu.clock_max.value(),
                          w.gpu.clock_step.value()));
      opt.clock = emulator::ClockPolicy::locked_at(f);
      clock_text = fmt::format("clock locked at {:g} MHz", f.value());
    }
    if (flags->execution == "nanobatch") {
      partition::require_nanobatch_split(w, "command line");
      opt.execution = emulator::Execution::kNanobatch;
    } else {
      require(flags->execution == "sequential", "command line", "--execution", flags->execution,
              "allowed: sequential, nanobatch");
    }
    opt.breakdown = flags->breakdown;
    const emulator::Emulator emu(w.gpu);
    const auto result = emulator::simulate_iteration(w, emu, opt);
    std::cout << (flags->json
                      ? to_json(w, result, clock_text, flags->execution).dump(2) + "\n"
                      : format_report(w, result, clock_text, flags->execution, flags->breakdown));
  });
}

}  // namespace kareus::cli
