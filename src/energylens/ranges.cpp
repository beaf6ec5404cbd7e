// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/ranges.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>

namespace kareus::energylens {
namespace {

using Read = std::function<std::optional<double>(const Sample&)>;

struct Input {
  std::string_view variable;
  Read read;
};

// Every numeric input features_of() reads, by its CSV column.
const std::array<Input, 10>& inputs() {
  static const std::array<Input, 10> all = {{
      {"tp", [](const Sample& s) -> std::optional<double> { return s.tp; }},
      {"pp", [](const Sample& s) -> std::optional<double> { return s.pp; }},
      {"dp", [](const Sample& s) -> std::optional<double> { return s.dp; }},
      {"batch", [](const Sample& s) -> std::optional<double> { return s.batch; }},
      {"input_tokens", [](const Sample& s) { return s.input_tokens; }},
      {"output_tokens", [](const Sample& s) -> std::optional<double> { return s.output_tokens; }},
      {"max_output_tokens", [](const Sample& s) { return s.max_output_tokens; }},
      {"requests", [](const Sample& s) { return s.requests; }},
      {"run_s",
       [](const Sample& s) { return s.run ? std::optional(s.run->value()) : std::nullopt; }},
      {"gpus_metered", [](const Sample& s) { return s.gpus_metered; }},
  }};
  return all;
}

const Input* input_named(std::string_view name) {
  for (const Input& in : inputs())
    if (in.variable == name) return &in;
  return nullptr;
}

}  // namespace

std::vector<TrainedRange> training_ranges(const std::vector<Sample>& rows) {
  std::vector<TrainedRange> out;
  for (const Input& in : inputs()) {
    std::optional<TrainedRange> range;
    for (const Sample& s : rows) {
      const std::optional<double> x = in.read(s);
      if (!x) continue;
      if (!range) range = TrainedRange{std::string(in.variable), *x, *x};
      range->low = std::min(range->low, *x);
      range->high = std::max(range->high, *x);
    }
    if (range) out.push_back(*range);
  }
  return out;
}

std::vector<OutOfRange> outside_ranges(const std::vector<TrainedRange>& ranges, const Sample& s) {
  std::vector<OutOfRange> out;
  for (const TrainedRange& r : ranges) {
    const std::optional<double> x = input_named(r.variable)->read(s);
    if (x && (*x < r.low || *x > r.high)) out.push_back({r.variable, *x, r.low, r.high});
  }
  return out;
}

Json ranges_to_json(const std::vector<TrainedRange>& ranges) {
  Json out = Json::object();
  for (const TrainedRange& r : ranges) out[r.variable] = {{"low", r.low}, {"high", r.high}};
  return out;
}

std::vector<TrainedRange> ranges_from_json(const JsonValue& v) {
  std::vector<TrainedRange> out;
  for (const std::string& name : v.keys()) {
    const JsonValue range = v.at(name);
    if (!input_named(name))
      range.fail(
          "an input of the closed form (tp, pp, dp, batch, input_tokens, output_tokens, "
          "max_output_tokens, requests, run_s, gpus_metered)");
    const TrainedRange r{name, range.number("low"), range.number("high")};
    if (r.low > r.high) range.fail(fmt::format("low <= high, got {:g} > {:g}", r.low, r.high));
    out.push_back(r);
  }
  return out;
}

std::string describe(const OutOfRange& o) {
  return fmt::format("{} {:g} (trained {:g}..{:g})", o.variable, o.value, o.low, o.high);
}

}  // namespace kareus::energylens
