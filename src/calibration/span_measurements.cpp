// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kareus/calibration/measurements.hpp"
#include "kareus/core/error.hpp"
#include "kareus/hardware/gpu_file.hpp"
#include "kareus/runtime/job_check.hpp"

namespace kareus::calibration {
namespace {

// Calibration fits this many constants at most from a handful of clocks; fewer spans than this
// cannot say anything about them.
constexpr std::size_t kMinSpans = 6;

std::string first_line(const measurement::Record& r) {
  return fmt::format("{} record 1", r.path.string());
}

emulator::KeyConfigs key_configs(const std::map<std::string, PartitionLaunch>& launches) {
  emulator::KeyConfigs out;
  for (const auto& [key, p] : launches) out[key] = {p.slot, p.sms};
  return out;
}

workload::Workload workload_of(const measurement::Record& r) {
  return schedule_workload(r.header.schedule, first_line(r) + " /schedule/workload");
}

// The workload without its GPU: what a record's schedule and --workload must agree on.
Json shape_of(const workload::Workload& w) {
  Json j = w.to_json();
  j.erase("gpu");
  return j;
}

std::string workload_name(const workload::Workload& w) {
  const auto& p = w.parallelism;
  return fmt::format("{} tp{} cp{} pp{} dp{} mbs{} seq{}", w.model.name, p.tp, p.cp, p.pp, p.dp,
                     p.microbatch_size, p.sequence_length);
}

}  // namespace

workload::Workload schedule_workload(const Schedule& s, const std::string& where) {
  Json echo = s.workload;
  if (echo.contains("gpu") && echo.at("gpu").is_string())
    echo["gpu"] = gpu_model_of(echo.at("gpu").get<std::string>());
  const JsonDocument doc = JsonDocument::parse(echo.dump(), where);
  return workload::make_workload(workload::workload_request_from_json(doc.root(), where));
}

std::vector<measurement::Record> read_records(const std::vector<std::string>& paths) {
  std::vector<measurement::Record> out;
  for (const auto& p : paths) out.push_back(measurement::read_record(p));
  return out;
}

std::size_t SpanMeasurements::add_config(Config c, const std::string& group_name) {
  const auto group = std::find(group_names_.begin(), group_names_.end(), group_name);
  c.group = static_cast<std::size_t>(group - group_names_.begin());
  if (group == group_names_.end()) group_names_.push_back(group_name);
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    const Config& o = configs_[i];
    if (o.workload == c.workload && o.stage == c.stage && o.direction == c.direction &&
        o.clock == c.clock && o.nanobatch == c.nanobatch && o.partitions == c.partitions &&
        o.recompute == c.recompute)
      return i;
  }
  configs_.push_back(std::move(c));
  return configs_.size() - 1;
}

SpanMeasurements::SpanMeasurements(const std::vector<measurement::Record>& records,
                                   const GpuSpec& gpu,
                                   const std::optional<workload::Workload>& only_workload) {
  if (records.empty()) throw Error("calibration: no measurement records given");
  const measurement::Record& first = records.front();
  gpu_model_ = first.header.gpu.name;
  for (const auto& r : records) {
    files_.push_back(r.path.string());
    if (!runtime::same_gpu_model(r.header.gpu.name, gpu_model_))
      throw Error::invalid(first_line(r), "gpu.name", r.header.gpu.name,
                           fmt::format("the records mix GPU models ({} was measured on {}); "
                                       "calibrate one model at a time",
                                       first.path.string(), gpu_model_));
  }
  if (!runtime::same_gpu_model(gpu_model_, gpu.name))
    throw Error::invalid(
        first_line(first), "gpu.name", gpu_model_,
        fmt::format("measured on another GPU model than {} {}", field_ref("gpu"), gpu.name));

  const measurement::InstructionSpan* first_span = nullptr;
  const measurement::Record* first_span_record = nullptr;
  std::set<double> clocks;
  for (const auto& r : records) {
    const workload::Workload w = workload_of(r);
    if (only_workload && shape_of(w) != shape_of(*only_workload)) continue;
    std::size_t wi = workloads_.size();
    for (std::size_t i = 0; i < workloads_.size(); ++i)
      if (shape_of(workloads_[i]) == shape_of(w)) wi = i;
    if (wi == workloads_.size()) {
      workloads_.push_back(w);
      workload_names_.push_back(workload_name(w));
    }
    const StageSchedule& stage =
        r.header.schedule.stages.at(static_cast<std::size_t>(r.header.stage));
    for (const auto& s : r.instructions) {
      const ScheduleInstruction& in = stage.instructions.at(s.index);
      // A span that ran into the next instruction, or at several clocks, is no instruction's.
      if (!s.ended || !in.step_clocks.empty() || !(s.time.value() > 0) || !(s.energy.value() > 0))
        continue;
      Config c;
      c.workload = wi;
      c.stage = r.header.stage;
      c.direction =
          s.direction == "forward" ? workload::Direction::kForward : workload::Direction::kBackward;
      c.clock = s.clock;
      c.nanobatch = in.execution == "nanobatch";
      c.partitions = in.partitions;
      c.recompute = in.recompute_partitions;
      const std::string group = fmt::format("{} at {:g} MHz", workload_names_[wi], s.clock.value());
      spans_.push_back({add_config(std::move(c), group), s.time.value(), s.energy.value()});
      clocks.insert(s.clock.value());
      if (!first_span) {
        first_span = &s;
        first_span_record = &r;
      }
    }
  }
  if (!first_span)
    throw Error::invalid(first_line(first), "instructions", "no span with its end reported",
                         only_workload ? "none of the records is of " + field_ref("workload")
                                       : "record with kareus.torch, kareus run-schedule or a loop "
                                         "that calls on_instruction_end()");
  const std::string at =
      fmt::format("{} record {}", first_span_record->path.string(), first_span->line);
  require(spans_.size() >= kMinSpans, at, "instruction spans", std::to_string(spans_.size()),
          fmt::format("too few to calibrate; give {} at least", kMinSpans));
  require(clocks.size() >= 2, at, "clock_mhz",
          fmt::format("{:g} for every span", first_span->clock.value()),
          "spans at one clock cannot separate what depends on the clock; record schedules that "
          "run at two clocks at least");
}

Residuals SpanMeasurements::residuals(const GpuSpec& gpu,
                                      const std::vector<std::size_t>& groups) const {
  const std::set<std::size_t> wanted(groups.begin(), groups.end());
  const emulator::Emulator emu(gpu);
  std::vector<workload::Workload> on_gpu = workloads_;
  for (auto& w : on_gpu) w.gpu = gpu;
  std::map<std::size_t, emulator::RunResult> predicted;
  Residuals out;
  for (const Span& s : spans_) {
    const Config& c = configs_[s.config];
    if (!wanted.count(c.group)) continue;
    auto it = predicted.find(s.config);
    if (it == predicted.end()) {
      const auto policy = emulator::ClockPolicy::locked_at(c.clock);
      const auto& w = on_gpu[c.workload];
      it = predicted
               .emplace(s.config, c.nanobatch
                                      ? emulator::run_instruction_nanobatch(
                                            w, emu, c.stage, c.direction, policy,
                                            key_configs(c.partitions), key_configs(c.recompute))
                                      : emulator::run_instruction_sequential(w, emu, c.stage,
                                                                             c.direction, policy))
               .first;
    }
    out.log_ratio.push_back(std::log(it->second.time.value() / s.time));
    out.energy.push_back(false);
    out.log_ratio.push_back(std::log(it->second.total_energy().value() / s.energy));
    out.energy.push_back(true);
  }
  return out;
}

std::string SpanMeasurements::describe() const {
  return fmt::format(
      "{} instruction spans of {} configurations in {} record(s), {} workload(s), "
      "{} clock groups, measured on {}",
      spans_.size(), configs_.size(), files_.size(), workloads_.size(), group_names_.size(),
      gpu_model_);
}

}  // namespace kareus::calibration
