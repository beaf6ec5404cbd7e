// SPDX-License-Identifier: Apache-2.0
#include "kareus/measurement/record.hpp"

#include <fmt/format.h>

#include <set>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/text_file.hpp"

namespace kareus::measurement {
namespace {

// Key order is part of what a person reading the file sees first, so lines keep insertion order.
using Line = nlohmann::ordered_json;

std::string finish(const Line& line) {
  return line.dump() + "\n";
}

std::size_t index_of(const JsonValue& v, std::size_t count) {
  const std::int64_t i = v.as_integer();
  if (i < 0 || static_cast<std::size_t>(i) >= count)
    v.fail(fmt::format("the stage has instructions 0..{}", count - 1));
  return static_cast<std::size_t>(i);
}

int iteration_of(const JsonValue& line) {
  const JsonValue v = line.at("iteration");
  const std::int64_t i = v.as_integer();
  if (i < 0 || i > 1'000'000'000) v.fail("expected an iteration number >= 0");
  return static_cast<int>(i);
}

Boundaries parse_boundaries(const JsonValue& v) {
  const std::string s = v.as_string();
  if (s == "host") return Boundaries::kHost;
  if (s == "gpu") return Boundaries::kGpu;
  v.fail("expected \"host\" or \"gpu\"");
}

RecordHeader parse_header(const JsonValue& h) {
  h.reject_unknown_keys(
      {"kareus_measurement", "rank", "stage", "boundaries", "gpu", "started_utc", "schedule"});
  const JsonValue version = h.at("kareus_measurement");
  if (version.as_integer() != kRecordFormatVersion)
    version.fail(
        fmt::format("this kareus reads measurement records of version {}", kRecordFormatVersion));
  RecordHeader out;
  const JsonValue rank = h.at("rank");
  if (rank.as_integer() < 0 || rank.as_integer() > 1'000'000'000) rank.fail("expected a rank >= 0");
  out.rank = static_cast<int>(rank.as_integer());
  out.boundaries = parse_boundaries(h.at("boundaries"));
  const JsonValue gpu = h.at("gpu");
  gpu.reject_unknown_keys({"index", "uuid", "name", "driver", "power_limit_w"});
  const JsonValue index = gpu.at("index");
  if (index.as_integer() < 0 || index.as_integer() > 1'000'000) index.fail("expected an index");
  out.gpu.index = static_cast<unsigned>(index.as_integer());
  out.gpu.uuid = gpu.string("uuid");
  out.gpu.name = gpu.string("name");
  if (out.gpu.name.empty()) gpu.at("name").fail("expected the GPU's name as NVML reports it");
  out.gpu.driver = gpu.string("driver");
  out.gpu.power_limit = Watts(gpu.positive_number("power_limit_w"));
  out.started_utc = h.string("started_utc");
  const JsonValue schedule = h.at("schedule");
  out.schedule = parse_schedule(schedule.raw().dump(), h.source() + " /schedule");
  const JsonValue stage = h.at("stage");
  const std::int64_t s = stage.as_integer();
  if (s < 0 || s >= static_cast<std::int64_t>(out.schedule.stages.size()))
    stage.fail(fmt::format("the schedule has stages 0..{}", out.schedule.stages.size() - 1));
  out.stage = static_cast<int>(s);
  return out;
}

InstructionSpan parse_instruction(const JsonValue& j, const StageSchedule& stage, int line) {
  j.reject_unknown_keys({"type", "iteration", "index", "microbatch", "direction", "clock_mhz",
                         "observed_clock_mhz", "start_s", "time_s", "energy_j", "ended",
                         "predicted_time_s", "predicted_energy_j"});
  InstructionSpan s;
  s.line = line;
  s.iteration = iteration_of(j);
  s.index = index_of(j.at("index"), stage.instructions.size());
  const ScheduleInstruction& in = stage.instructions[s.index];
  s.microbatch = static_cast<int>(j.integer("microbatch"));
  s.direction = j.string("direction");
  if (s.microbatch != in.microbatch || s.direction != in.direction)
    j.at("index").fail(
        fmt::format("instruction {} of stage {} is the {} of microbatch {}, not the "
                    "{} of microbatch {}",
                    s.index, stage.stage, in.direction, in.microbatch, s.direction, s.microbatch));
  s.clock = MHz(j.positive_number("clock_mhz"));
  s.observed_clock = MHz(j.positive_number("observed_clock_mhz"));
  s.start = Seconds(j.at("start_s").as_non_negative_number());
  s.time = Seconds(j.at("time_s").as_non_negative_number());
  s.energy = Joules(j.at("energy_j").as_non_negative_number());
  s.ended = j.at("ended").as_bool();
  if (auto t = j.find("predicted_time_s")) s.predicted_time = Seconds(t->as_positive_number());
  if (auto e = j.find("predicted_energy_j")) s.predicted_energy = Joules(e->as_positive_number());
  return s;
}

ClockChange parse_clock(const JsonValue& j, const StageSchedule& stage) {
  j.reject_unknown_keys({"type", "iteration", "index", "clock_mhz", "lead_s", "late_s"});
  ClockChange c;
  c.iteration = iteration_of(j);
  c.index = index_of(j.at("index"), stage.instructions.size());
  c.clock = MHz(j.positive_number("clock_mhz"));
  c.lead = Seconds(j.at("lead_s").as_non_negative_number());
  c.late = Seconds(j.at("late_s").as_non_negative_number());
  return c;
}

IterationSpan parse_iteration(const JsonValue& j, int line) {
  j.reject_unknown_keys({"type", "iteration", "start_s", "time_s", "energy_j", "power_limit_w",
                         "predicted_time_s", "predicted_energy_per_gpu_j"});
  IterationSpan s;
  s.line = line;
  s.iteration = iteration_of(j);
  s.start = Seconds(j.at("start_s").as_non_negative_number());
  s.time = Seconds(j.at("time_s").as_non_negative_number());
  s.energy = Joules(j.at("energy_j").as_non_negative_number());
  s.power_limit = Watts(j.positive_number("power_limit_w"));
  if (auto t = j.find("predicted_time_s")) s.predicted_time = Seconds(t->as_positive_number());
  if (auto e = j.find("predicted_energy_per_gpu_j"))
    s.predicted_energy_per_gpu = Joules(e->as_positive_number());
  return s;
}

}  // namespace

const char* to_string(Boundaries b) {
  return b == Boundaries::kGpu ? "gpu" : "host";
}

std::size_t Record::unfinished_instructions() const {
  std::set<int> finished;
  for (const auto& it : iterations) finished.insert(it.iteration);
  std::size_t n = 0;
  for (const auto& s : instructions) n += finished.count(s.iteration) ? 0 : 1;
  return n;
}

std::optional<Joules> predicted_energy_per_gpu(const Schedule& schedule) {
  const auto gpus = schedule.workload.find("gpus");
  if (gpus == schedule.workload.end() || !gpus->is_number() || !(gpus->get<double>() >= 1))
    return std::nullopt;
  return schedule.predicted.energy / gpus->get<double>();
}

std::string header_line(const RecordHeader& h) {
  Line line = {{"kareus_measurement", kRecordFormatVersion},
               {"rank", h.rank},
               {"stage", h.stage},
               {"boundaries", to_string(h.boundaries)},
               {"gpu",
                {{"index", h.gpu.index},
                 {"uuid", h.gpu.uuid},
                 {"name", h.gpu.name},
                 {"driver", h.gpu.driver},
                 {"power_limit_w", h.gpu.power_limit.value()}}},
               {"started_utc", h.started_utc},
               {"schedule", Line::parse(to_json(h.schedule))}};
  return finish(line);
}

std::string to_line(const InstructionSpan& s) {
  Line line = {{"type", "instruction"},
               {"iteration", s.iteration},
               {"index", s.index},
               {"microbatch", s.microbatch},
               {"direction", s.direction},
               {"clock_mhz", s.clock.value()},
               {"observed_clock_mhz", s.observed_clock.value()},
               {"start_s", s.start.value()},
               {"time_s", s.time.value()},
               {"energy_j", s.energy.value()},
               {"ended", s.ended}};
  if (s.predicted_time) line["predicted_time_s"] = s.predicted_time->value();
  if (s.predicted_energy) line["predicted_energy_j"] = s.predicted_energy->value();
  return finish(line);
}

std::string to_line(const ClockChange& c) {
  return finish(Line{{"type", "clock"},
                     {"iteration", c.iteration},
                     {"index", c.index},
                     {"clock_mhz", c.clock.value()},
                     {"lead_s", c.lead.value()},
                     {"late_s", c.late.value()}});
}

std::string to_line(const IterationSpan& s) {
  Line line = {{"type", "iteration"},          {"iteration", s.iteration},
               {"start_s", s.start.value()},   {"time_s", s.time.value()},
               {"energy_j", s.energy.value()}, {"power_limit_w", s.power_limit.value()}};
  if (s.predicted_time) line["predicted_time_s"] = s.predicted_time->value();
  if (s.predicted_energy_per_gpu)
    line["predicted_energy_per_gpu_j"] = s.predicted_energy_per_gpu->value();
  return finish(line);
}

std::string end_line() {
  return finish(Line{{"type", "end"}});
}

Record read_record(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  const std::string file = path.string();
  if (text.empty())
    throw Error(
        fmt::format("{}: empty: expected a Kareus measurement record (a header line, then "
                    "one line per span; docs/measurement-format.md)",
                    file));
  Record r;
  r.path = path;
  std::size_t begin = 0;
  for (int number = 1; begin < text.size(); ++number) {
    const std::size_t end = text.find('\n', begin);
    const std::string where = fmt::format("{} record {}", file, number);
    if (end == std::string::npos)
      throw Error(
          fmt::format("{}: cut short (no end of line): the writer stopped while writing "
                      "it; delete that last line to use the {} records before it",
                      where, number - 1));
    const std::string_view body(text.data() + begin, end - begin);
    begin = end + 1;
    if (r.ended) throw Error(fmt::format("{}: a record after the end record", where));
    const JsonDocument doc = JsonDocument::parse(body, where);
    const JsonValue j = doc.root();
    if (!j.is_object()) j.fail("expected one JSON object per line");
    if (number == 1) {
      if (!j.contains("kareus_measurement"))
        j.fail("expected the header of a Kareus measurement record (\"kareus_measurement\": 1)");
      r.header = parse_header(j);
      continue;
    }
    const StageSchedule& stage = r.header.schedule.stages[static_cast<std::size_t>(r.header.stage)];
    const std::string type = j.string("type");
    if (type == "instruction")
      r.instructions.push_back(parse_instruction(j, stage, number));
    else if (type == "clock")
      r.clocks.push_back(parse_clock(j, stage));
    else if (type == "iteration")
      r.iterations.push_back(parse_iteration(j, number));
    else if (type == "end")
      r.ended = true;
    else
      j.at("type").fail("expected instruction, clock, iteration or end");
  }
  return r;
}

}  // namespace kareus::measurement
