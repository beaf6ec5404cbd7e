#include "kareus/kernel_dvfs/torch_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus::kernel_dvfs {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

struct Range {
  double begin_us = 0;
  double end_us = 0;
  std::optional<Direction> pass = std::nullopt;
};

double duration_us(const JsonValue& event) {
  const JsonValue dur = event.at("dur");
  const double d = dur.as_number();
  if (!(d > 0)) dur.fail("a kernel duration must be > 0 microseconds");
  return d;
}

TorchTrace from_document(const JsonDocument& doc, const std::string& source) {
  const JsonValue root = doc.root();
  // The Chrome trace format allows either an object with "traceEvents" or a bare event array.
  const JsonValue events = root.is_array() ? root : root.at("traceEvents");
  if (!events.is_array()) events.fail("expected the array of trace events");

  std::vector<Range> annotations;
  // Kept in microseconds until the passes are assigned: absolute timestamps are ~1e15 us, and a
  // round trip through seconds could move a kernel edge across an annotation edge.
  struct Event {
    Range range;
    double dur_us;
    std::string name;
  };
  std::vector<Event> kernels;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const JsonValue event = events.at(i);
    if (!event.is_object()) event.fail("expected a trace event object");
    const std::string cat = event.string_or("cat", "");
    if (cat != "kernel" && cat != "gpu_user_annotation") continue;
    const JsonValue ph = event.at("ph");
    if (ph.as_string() != "X") ph.fail("expected \"X\" (a complete event with ts and dur)");
    const std::string name = event.string("name");
    if (name.empty()) event.at("name").fail("expected a non-empty kernel name");
    const double ts = event.number("ts");
    const double dur = duration_us(event);
    if (cat == "gpu_user_annotation") {
      const std::string n = lower(name);
      std::optional<Direction> pass;
      if (n.find("backward") != std::string::npos)
        pass = Direction::kBackward;
      else if (n.find("forward") != std::string::npos)
        pass = Direction::kForward;
      if (pass) annotations.push_back({ts, ts + dur, pass});
      continue;
    }
    kernels.push_back({{ts, ts + dur, std::nullopt}, dur, name});
  }
  if (kernels.empty())
    throw Error(
        fmt::format("{}: no GPU kernel events (\"cat\": \"kernel\"); a trace recorded "
                    "without CUDA activity has none",
                    source));

  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return a.range.begin_us < b.range.begin_us;
  });
  TorchTrace trace;
  trace.source = source;
  double busy_until = kernels.front().range.begin_us;
  for (auto& [k, dur_us, name] : kernels) {
    if (k.begin_us < busy_until) ++trace.overlapping;
    busy_until = std::max(busy_until, k.end_us);
    // The innermost (shortest) enclosing annotation decides.
    double narrowest = 0;
    for (const auto& a : annotations) {
      if (a.begin_us <= k.begin_us && k.end_us <= a.end_us &&
          (k.pass == std::nullopt || a.end_us - a.begin_us < narrowest)) {
        k.pass = a.pass;
        narrowest = a.end_us - a.begin_us;
      }
    }
    trace.kernels.push_back({name, k.pass, microseconds(k.begin_us), microseconds(dur_us)});
  }
  return trace;
}

}  // namespace

TorchTrace parse_torch_trace(std::string_view text, const std::string& source) {
  return from_document(JsonDocument::parse(text, source), source);
}

TorchTrace load_torch_trace(const std::filesystem::path& path) {
  return from_document(JsonDocument::load_file(path), path.string());
}

}  // namespace kareus::kernel_dvfs
