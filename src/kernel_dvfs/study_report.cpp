// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>

#include "kareus/core/error.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/kernel_dvfs/study.hpp"

namespace kareus::kernel_dvfs {
namespace {

std::vector<std::string> all_notes(const KernelSequence& sequence, const StudyResult& result) {
  auto notes = sequence.notes;
  notes.insert(notes.end(), result.notes.begin(), result.notes.end());
  return notes;
}

Json outcome_json(const Outcome& o) {
  Json j{{"feasible", o.feasible}};
  if (!o.feasible) return j;
  j["energy_saving"] = o.energy_saving;
  j["slowdown"] = o.slowdown;
  j["time_s"] = o.cost.time.value();
  j["energy_j"] = o.cost.energy.value();
  j["switches"] = o.cost.switches;
  j["switch_time_s"] = o.cost.switch_time.value();
  j["switch_energy_j"] = o.cost.switch_energy.value();
  return j;
}

Json plan_json(const KernelSequence& sequence, const Outcome& o) {
  Json plan = Json::array();
  for (std::size_t k = 0; k < o.kernel_clock.size(); ++k)
    plan.push_back({{"kernel", sequence.kernels[k].name},
                    {"pass", pass_name(sequence.kernels[k].pass)},
                    {"clock_mhz", sequence.clocks[o.kernel_clock[k]].value()}});
  return plan;
}

Json baselines_json(const StudyResult& result, const BoundResult& bound) {
  Json j{{"max_clock", outcome_json(result.max_clock)},
         {"pass_level", outcome_json(bound.pass_level)}};
  if (result.governor) j["governor"] = outcome_json(*result.governor);
  return j;
}

std::string percent(double fraction) {
  return fmt::format("{:+.2f} %", 100.0 * fraction);
}

std::string saving(const Outcome& o) {
  return o.feasible ? fmt::format("{:.2f} %", 100.0 * o.energy_saving) : "infeasible";
}

std::string time_change(const Outcome& o) {
  return o.feasible ? percent(o.slowdown) : "-";
}

std::string switches(const Outcome& o) {
  return o.feasible ? std::to_string(o.cost.switches) : "-";
}

}  // namespace

Json study_json(const KernelSequence& sequence, const StudyOptions& options,
                const StudyResult& result, bool with_plan) {
  Json doc;
  doc["source"] = sequence.source;
  doc["notes"] = all_notes(sequence, result);
  doc["kernels"] = sequence.kernels.size();
  Json clocks = Json::array();
  for (MHz f : sequence.clocks) clocks.push_back(f.value());
  doc["clocks_mhz"] = clocks;
  doc["mode"] = options.ideal ? "ideal" : "realisable";
  if (!options.ideal) {
    Seconds lo = Seconds(1e300), hi{0};
    for (std::size_t a = 0; a < options.switching.latency.size(); ++a)
      for (std::size_t b = 0; b < options.switching.latency.size(); ++b)
        if (a != b) {
          lo = std::min(lo, options.switching.latency[a][b]);
          hi = std::max(hi, options.switching.latency[a][b]);
        }
    doc["switching"] = {{"model", "stall"},
                        {"source", options.switching_source},
                        {"latency_min_s", lo.value()},
                        {"latency_max_s", hi.value()},
                        {"power_w", options.switching.power.value()}};
  }
  doc["min_dwell_s"] = options.min_dwell.value();
  doc["reference"] = to_string(options.reference);
  doc["reference_time_s"] = result.reference_time.value();

  Json results = Json::array();
  for (const auto& b : result.bounds) {
    Json r = outcome_json(b.kernel_level);
    r["slowdown_bound"] = b.bound;
    r["time_budget_s"] = b.time_budget.value();
    r["phases"] = b.phases;
    r["quantum_s"] = b.quantum.value();
    r["quantisation_loss_s"] = b.quantisation_loss.value();
    if (b.kernel_ideal) r["ideal"] = outcome_json(*b.kernel_ideal);
    r["baselines"] = baselines_json(result, b);
    if (with_plan && b.kernel_level.feasible) r["plan"] = plan_json(sequence, b.kernel_level);
    results.push_back(std::move(r));
  }
  const auto& first = result.bounds.front();
  const Json head = outcome_json(first.kernel_level);
  for (const char* key : {"feasible", "energy_saving", "slowdown", "switches"})
    if (head.contains(key)) doc[key] = head[key];
  doc["baselines"] = baselines_json(result, first);
  doc["results"] = std::move(results);
  if (!result.curve.empty()) {
    Json curve = Json::array();
    for (const auto& p : result.curve)
      curve.push_back({{"time_s", p.time.value()},
                       {"energy_j", p.energy.value()},
                       {"lambda_w", p.lambda.value()}});
    doc["curve"] = std::move(curve);
  }
  return doc;
}

std::string study_text(const KernelSequence& sequence, const StudyOptions& options,
                       const StudyResult& result, bool with_plan) {
  // Prose lines folded within kLineWidth columns, as everything the CLI prints.
  std::string out =
      wrap(fmt::format("Per-kernel DVFS: {} ({} kernels, {} clocks {}-{} MHz)",
                       printable(sequence.source), sequence.kernels.size(), sequence.clocks.size(),
                       sequence.clocks.front().value(), sequence.clocks.back().value()),
           kLineWidth, "", "  ");
  for (const auto& note : all_notes(sequence, result))
    out += wrap(printable(note), kLineWidth, "  note: ", "    ");
  if (options.ideal)
    out += "Switching: ideal (free and instantaneous, as in Spaan et al.)\n";
  else
    out += wrap("Switching: stall model, " + printable(options.switching_source), kLineWidth, "",
                "  ");
  if (options.min_dwell.value() > 0)
    out += fmt::format("Minimum dwell: {} ms per phase\n", to_milliseconds(options.min_dwell));
  out +=
      fmt::format("Max clock: {:.4f} ms, {:.4f} J\n", to_milliseconds(result.max_clock.cost.time),
                  result.max_clock.cost.energy.value());
  if (result.governor)
    out += fmt::format("Default governor: {:.4f} ms, {:.4f} J (saving {}, time {})\n",
                       to_milliseconds(result.governor->cost.time),
                       result.governor->cost.energy.value(), saving(*result.governor),
                       time_change(*result.governor));
  out += fmt::format("Reference time ({}): {:.4f} ms\n\n",
                     options.reference == Reference::kGovernor ? "governor" : "max clock",
                     to_milliseconds(result.reference_time));

  std::vector<std::string> header{"slowdown bound", "energy saved", "time change", "switches"};
  if (!options.ideal) {
    header.push_back("ideal saved");
    header.push_back("ideal switches");
  }
  header.push_back("pass-level saved");
  header.push_back("pass-level time");
  TextTable table(header);
  for (const auto& b : result.bounds) {
    std::vector<std::string> row{fmt::format("{:.2f} %", 100.0 * b.bound), saving(b.kernel_level),
                                 time_change(b.kernel_level), switches(b.kernel_level)};
    if (b.kernel_ideal) {
      row.push_back(saving(*b.kernel_ideal));
      row.push_back(switches(*b.kernel_ideal));
    }
    row.push_back(saving(b.pass_level));
    row.push_back(time_change(b.pass_level));
    table.add_row(std::move(row));
  }
  out += table.render();
  out += "Savings and time changes are against the max clock.\n";

  if (with_plan) {
    for (const auto& b : result.bounds) {
      if (!b.kernel_level.feasible) continue;
      out += fmt::format("\nPlan at slowdown bound {:.2f} %:\n", 100.0 * b.bound);
      TextTable plan({"#", "kernel", "pass", "clock MHz"});
      for (std::size_t k = 0; k < sequence.kernels.size(); ++k)
        plan.add_row({std::to_string(k), sequence.kernels[k].name,
                      std::string(pass_name(sequence.kernels[k].pass)),
                      format_number(sequence.clocks[b.kernel_level.kernel_clock[k]].value())});
      out += plan.render();
    }
  }
  if (!result.curve.empty()) {
    out += "\nEnergy-time curve (Lagrangian sweep, free switching):\n";
    TextTable curve({"time ms", "energy J", "lambda W"});
    for (const auto& p : result.curve)
      curve.add_row({fmt::format("{:.4f}", to_milliseconds(p.time)),
                     fmt::format("{:.4f}", p.energy.value()),
                     fmt::format("{:.2f}", p.lambda.value())});
    out += curve.render();
  }
  return out;
}

}  // namespace kareus::kernel_dvfs
