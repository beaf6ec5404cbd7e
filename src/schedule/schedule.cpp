// SPDX-License-Identifier: Apache-2.0
#include "kareus/schedule/schedule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <set>

#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"

namespace kareus {
namespace {

const std::set<std::string> kMethods = {"kareus", "perseus", "nanobatch-perseus", "megatron"};

std::string one_of(const JsonValue& value, std::initializer_list<std::string_view> allowed) {
  const std::string text = value.as_string();
  if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
    value.fail(fmt::format("expected one of: {}", fmt::join(allowed, ", ")));
  }
  return text;
}

int small_int(const JsonValue& value, std::int64_t min) {
  const std::int64_t v = value.as_integer();
  if (v < min || v > 1'000'000)
    value.fail(fmt::format("expected an integer in [{}, 1000000]", min));
  return static_cast<int>(v);
}

int clock_mhz(const JsonValue& value) {
  const std::int64_t v = value.as_integer();
  if (!is_clock_mhz(static_cast<double>(v))) value.fail(kClockMhzAllowed);
  return static_cast<int>(v);
}

// `text` without `prefix` when it starts with it.
std::optional<std::string_view> after(std::string_view text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return std::nullopt;
  return text.substr(prefix.size());
}

bool is_any_of(std::string_view text, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), text) != names.end();
}

// "fwd_" or "bwd_", the partitions of the instruction's own direction (or the recomputed forward).
std::map<std::string, PartitionLaunch> parse_partitions(const JsonValue& object,
                                                        std::string_view prefix) {
  std::map<std::string, PartitionLaunch> out;
  for (const std::string& key : object.keys()) {
    const JsonValue launch = object.at(key);
    if (!after(key, prefix) || !is_partition_key(key)) {
      launch.fail(
          fmt::format("not a partition of this instruction: expected {}attn, {}mlp, or "
                      "under context parallelism {}qkv, {}ao, {}o or {}a followed by "
                      "_ar, _ag, _rs or _p2p",
                      prefix, prefix, prefix, prefix, prefix, prefix));
    }
    launch.reject_unknown_keys({"slot", "sms"});
    PartitionLaunch p;
    p.slot = launch.string("slot");
    if (!is_launch_slot(p.slot)) {
      launch.at("slot").fail(
          "expected a launch slot: norm, linear, rope, attn, activation or none, then _ and its "
          "index, such as \"norm_0\"");
    }
    p.sms = small_int(launch.at("sms"), 1);
    out.emplace(key, std::move(p));
  }
  return out;
}

ScheduleInstruction parse_instruction(const JsonValue& json) {
  json.reject_unknown_keys({"microbatch", "direction", "clock_mhz", "execution", "partitions",
                            "recompute_partitions", "step_clocks_mhz", "predicted_time_s",
                            "predicted_energy_j"});
  ScheduleInstruction in;
  in.microbatch = small_int(json.at("microbatch"), 0);
  in.direction = one_of(json.at("direction"), {"forward", "backward"});
  in.clock = MHz(static_cast<double>(clock_mhz(json.at("clock_mhz"))));
  in.execution = one_of(json.at("execution"), {"sequential", "nanobatch"});
  if (auto partitions = json.find("partitions"))
    in.partitions = parse_partitions(*partitions, in.direction == "forward" ? "fwd_" : "bwd_");
  if (auto recompute = json.find("recompute_partitions")) {
    if (in.direction != "backward") recompute->fail("only a backward instruction recomputes");
    in.recompute_partitions = parse_partitions(*recompute, "fwd_");
  }
  if (auto t = json.find("predicted_time_s")) in.predicted_time = Seconds(t->as_positive_number());
  if (auto e = json.find("predicted_energy_j"))
    in.predicted_energy = Joules(e->as_positive_number());
  const bool has_partitions = !in.partitions.empty() || !in.recompute_partitions.empty();
  if (in.execution == "nanobatch" && in.partitions.empty()) {
    json.fail("a nanobatch instruction needs \"partitions\"");
  }
  if (in.execution == "sequential" && has_partitions) {
    json.fail("a sequential instruction launches no partitions; use execution \"nanobatch\"");
  }
  if (auto steps = json.find("step_clocks_mhz")) {
    if (in.execution != "nanobatch") steps->fail("only a nanobatch instruction has steps");
    if (!steps->is_array() || steps->size() == 0) steps->fail("expected a non-empty array");
    for (std::size_t i = 0; i < steps->size(); ++i)
      in.step_clocks.emplace_back(static_cast<double>(clock_mhz(steps->at(i))));
    if (in.step_clocks.front() != in.clock)
      steps->at(0).fail(fmt::format("expected clock_mhz ({:.0f}): the instruction starts at it",
                                    in.clock.value()));
  }
  return in;
}

// Each microbatch runs forward then backward exactly once per stage, forwards and backwards each
// in microbatch order (1F1B and its warm-up/cool-down variants all satisfy this).
int check_order(const JsonValue& instructions, const StageSchedule& stage) {
  int next_forward = 0;
  int next_backward = 0;
  for (std::size_t i = 0; i < stage.instructions.size(); ++i) {
    const ScheduleInstruction& in = stage.instructions[i];
    const bool forward = in.direction == "forward";
    const int expected = forward ? next_forward : next_backward;
    if (in.microbatch != expected) {
      instructions.at(i).fail(
          fmt::format("expected the {} of microbatch {} here", in.direction, expected));
    }
    if (!forward && in.microbatch >= next_forward) {
      instructions.at(i).fail(
          fmt::format("backward of microbatch {} before its forward", in.microbatch));
    }
    (forward ? next_forward : next_backward) += 1;
  }
  if (next_forward != next_backward) {
    instructions.fail(fmt::format("{} forwards but {} backwards", next_forward, next_backward));
  }
  return next_forward;
}

// `earlier`: the instructions of the stages before this one, which count towards the bound.
StageSchedule parse_stage(const JsonValue& json, int index, std::size_t earlier) {
  // "summary" is derived from the instructions when written (stage_summary) and ignored here.
  json.reject_unknown_keys({"stage", "summary", "instructions"});
  StageSchedule stage;
  stage.stage = small_int(json.at("stage"), 0);
  if (stage.stage != index)
    json.at("stage").fail(fmt::format("expected {} (stages in order)", index));
  const JsonValue instructions = json.at("instructions");
  if (!instructions.is_array() || instructions.size() == 0) {
    instructions.fail("expected a non-empty array of instructions");
  }
  if (earlier + instructions.size() > static_cast<std::size_t>(kMaxInstructions)) {
    instructions.fail(
        fmt::format("{} instructions in stages 0..{}; a schedule holds at most {} "
                    "in all its stages",
                    earlier + instructions.size(), index, kMaxInstructions));
  }
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    stage.instructions.push_back(parse_instruction(instructions.at(i)));
  }
  return stage;
}

Json partitions_json(const std::map<std::string, PartitionLaunch>& partitions) {
  Json out = Json::object();
  for (const auto& [key, p] : partitions) out[key] = {{"slot", p.slot}, {"sms", p.sms}};
  return out;
}

Schedule schedule_from(const JsonValue& root) {
  if (!root.is_object()) root.fail("expected a schedule object");
  root.reject_unknown_keys({"format_version", "workload", "method", "predicted", "gpu", "stages"});
  Schedule s;
  s.format_version = root.positive_int("format_version");
  if (s.format_version != kScheduleFormatVersion) {
    root.at("format_version")
        .fail(fmt::format("this Kareus reads format_version {}", kScheduleFormatVersion));
  }
  const JsonValue workload = root.at("workload");
  if (!workload.is_object()) workload.fail("expected an object");
  s.workload = workload.raw();
  s.method = root.string("method");
  if (!kMethods.contains(s.method)) {
    root.at("method").fail("expected one of: kareus, perseus, nanobatch-perseus, megatron");
  }
  s.gpu = root.string("gpu");
  if (s.gpu.empty()) root.at("gpu").fail("expected the GPU name");

  const JsonValue predicted = root.at("predicted");
  predicted.reject_unknown_keys({"iteration_time_s", "energy_j", "dynamic_energy_j"});
  s.predicted.iteration_time = Seconds(predicted.at("iteration_time_s").as_positive_number());
  s.predicted.energy = Joules(predicted.at("energy_j").as_positive_number());
  s.predicted.dynamic_energy = Joules(predicted.at("dynamic_energy_j").as_non_negative_number());
  if (s.predicted.dynamic_energy > s.predicted.energy) {
    predicted.at("dynamic_energy_j").fail("must not exceed energy_j");
  }

  const JsonValue stages = root.at("stages");
  if (!stages.is_array() || stages.size() == 0) stages.fail("expected a non-empty array of stages");
  int microbatches = -1;
  std::size_t instruction_count = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    s.stages.push_back(parse_stage(stages.at(i), static_cast<int>(i), instruction_count));
    instruction_count += s.stages.back().instructions.size();
    const JsonValue instructions = stages.at(i).at("instructions");
    const int count = check_order(instructions, s.stages.back());
    if (microbatches >= 0 && count != microbatches) {
      instructions.fail(fmt::format("{} microbatches, but stage 0 runs {}", count, microbatches));
    }
    microbatches = count;
  }
  return s;
}

}  // namespace

bool is_partition_key(std::string_view key) {
  std::optional<std::string_view> rest = after(key, "fwd_");
  if (!rest) rest = after(key, "bwd_");
  if (!rest) return false;
  if (*rest == "attn" || *rest == "mlp") return true;
  // Under context parallelism a segment is named after what it computes and the collective
  // beside it: qkv_ag, ao_rs, a_p2p, ...
  const std::size_t cut = rest->rfind('_');
  return cut != std::string_view::npos &&
         is_any_of(rest->substr(0, cut), {"qkv", "ao", "o", "a"}) &&
         is_any_of(rest->substr(cut + 1), {"ar", "ag", "rs", "p2p"});
}

bool is_launch_slot(std::string_view slot) {
  const std::size_t cut = slot.rfind('_');
  if (cut == std::string_view::npos) return false;
  const std::string_view index = slot.substr(cut + 1);
  return is_any_of(slot.substr(0, cut), {"norm", "linear", "rope", "attn", "activation", "none"}) &&
         !index.empty() && index.size() <= 6 &&
         std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Schedule parse_schedule(std::string_view text, const std::string& source_name) {
  return schedule_from(JsonDocument::parse(text, source_name).root());
}

Schedule load_schedule(const std::filesystem::path& path) {
  return schedule_from(JsonDocument::load_file(path).root());
}

void validate_schedule(const Schedule& schedule, std::string_view where) {
  parse_schedule(to_json(schedule), std::string(where));
}

namespace {

using OrderedJson = nlohmann::ordered_json;

// Per stage: how often the clock changes within one iteration (between instructions and between
// steps) and, when every instruction carries its predicted time, the time spent at each clock.
OrderedJson stage_summary(const StageSchedule& stage) {
  std::size_t changes = 0;
  std::optional<MHz> current;
  bool timed = true;
  std::map<std::int64_t, double> time_at;
  for (const ScheduleInstruction& in : stage.instructions) {
    std::vector<MHz> clocks = in.step_clocks;
    if (clocks.empty()) clocks.push_back(in.clock);
    for (MHz f : clocks) {
      if (current && *current != f) ++changes;
      current = f;
    }
    // A stepped instruction's time is not split by step, so its clocks' times are unknown.
    if (!in.predicted_time || !in.step_clocks.empty()) timed = false;
    if (timed) time_at[static_cast<std::int64_t>(in.clock.value())] += in.predicted_time->value();
  }
  OrderedJson out = {{"instructions", stage.instructions.size()}, {"clock_changes", changes}};
  if (timed) {
    OrderedJson at = OrderedJson::object();
    for (const auto& [mhz, t] : time_at) at[std::to_string(mhz)] = t;
    out["time_at_clock_s"] = std::move(at);
  }
  return out;
}

}  // namespace

std::string to_json(const Schedule& s) {
  OrderedJson stages = OrderedJson::array();
  for (const StageSchedule& stage : s.stages) {
    OrderedJson instructions = OrderedJson::array();
    for (const ScheduleInstruction& in : stage.instructions) {
      OrderedJson j = {{"microbatch", in.microbatch},
                       {"direction", in.direction},
                       {"clock_mhz", static_cast<std::int64_t>(in.clock.value())},
                       {"execution", in.execution}};
      if (in.predicted_time) j["predicted_time_s"] = in.predicted_time->value();
      if (in.predicted_energy) j["predicted_energy_j"] = in.predicted_energy->value();
      if (!in.partitions.empty()) j["partitions"] = partitions_json(in.partitions);
      if (!in.recompute_partitions.empty()) {
        j["recompute_partitions"] = partitions_json(in.recompute_partitions);
      }
      if (!in.step_clocks.empty()) {
        OrderedJson steps = OrderedJson::array();
        for (MHz f : in.step_clocks) steps.push_back(static_cast<std::int64_t>(f.value()));
        j["step_clocks_mhz"] = std::move(steps);
      }
      instructions.push_back(std::move(j));
    }
    // The header first, so a reader sees which stage and what it does before its instructions.
    stages.push_back({{"stage", stage.stage},
                      {"summary", stage_summary(stage)},
                      {"instructions", std::move(instructions)}});
  }
  const OrderedJson root = {{"format_version", s.format_version},
                            {"method", s.method},
                            {"gpu", s.gpu},
                            {"workload", s.workload},
                            {"predicted",
                             {{"iteration_time_s", s.predicted.iteration_time.value()},
                              {"energy_j", s.predicted.energy.value()},
                              {"dynamic_energy_j", s.predicted.dynamic_energy.value()}}},
                            {"stages", std::move(stages)}};
  return root.dump(2) + "\n";
}

}  // namespace kareus
