// SPDX-License-Identifier: Apache-2.0
#include "kareus/kernel_dvfs/torch_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/limits.hpp"

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

// Kept in microseconds until the passes are assigned: absolute timestamps are ~1e15 us, and a
// round trip through seconds could move a kernel edge across an annotation edge.
struct Event {
  Range range;
  double dur_us;
  std::string name;
};

// Timestamps are microseconds since some epoch; beyond 2^53 a double no longer holds every
// microsecond, and kernel edges would round across annotation edges.
constexpr double kMaxTimestampUs = 9007199254740992.0;

double timestamp_us(const JsonValue& event) {
  const JsonValue ts = event.at("ts");
  const double t = ts.as_number();
  if (std::fabs(t) > kMaxTimestampUs)
    ts.fail(fmt::format("a timestamp within +-{:.0f} microseconds (2^53)", kMaxTimestampUs));
  return t;
}

double duration_us(const JsonValue& event) {
  const JsonValue dur = event.at("dur");
  const double d = dur.as_number();
  if (!(d > 0 && d <= kMaxDurationSeconds * 1e6))
    dur.fail(fmt::format("a kernel duration must be > 0 and at most {:.0f} microseconds ({:.0f} s)",
                         kMaxDurationSeconds * 1e6, kMaxDurationSeconds));
  return d;
}

// The shortest annotation seen so far among those ending at or after a given time, the first in
// the file among equally long ones: a Fenwick tree of minima over the distinct end times, indexed
// from the latest end down.
class ShortestEnclosing {
 public:
  explicit ShortestEnclosing(const std::vector<Range>& annotations) : annotations_(annotations) {
    for (const Range& a : annotations) ends_.push_back(a.end_us);
    std::sort(ends_.begin(), ends_.end());
    ends_.erase(std::unique(ends_.begin(), ends_.end()), ends_.end());
    tree_.assign(ends_.size() + 1, kNone);
  }
  void add(std::size_t annotation) {
    const auto at = std::lower_bound(ends_.begin(), ends_.end(), annotations_[annotation].end_us);
    for (std::size_t i = from_latest(at); i < tree_.size(); i += i & (~i + 1))
      if (tree_[i] == kNone || shorter(annotation, tree_[i])) tree_[i] = annotation;
  }
  // Among the added annotations that end at or after `end_us`; kNone when there is none.
  std::size_t shortest_ending_after(double end_us) const {
    std::size_t best = kNone;
    const auto at = std::lower_bound(ends_.begin(), ends_.end(), end_us);
    for (std::size_t i = from_latest(at); i > 0; i -= i & (~i + 1))
      if (tree_[i] != kNone && (best == kNone || shorter(tree_[i], best))) best = tree_[i];
    return best;
  }
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

 private:
  // 1-based Fenwick index of the end time at `at`, counted from the latest end (0: past the end).
  std::size_t from_latest(std::vector<double>::const_iterator at) const {
    return static_cast<std::size_t>(ends_.end() - at);
  }
  bool shorter(std::size_t a, std::size_t b) const {
    const double la = annotations_[a].end_us - annotations_[a].begin_us;
    const double lb = annotations_[b].end_us - annotations_[b].begin_us;
    return la < lb || (la == lb && a < b);
  }
  const std::vector<Range>& annotations_;
  std::vector<double> ends_;
  std::vector<std::size_t> tree_;
};

// Each kernel's pass from the innermost (shortest) annotation that encloses it, in (n + m) log m
// for n kernels sorted by start and m annotations: a sweep over start times adds the annotations
// that have begun, and the tree answers which of them still runs when the kernel ends.
void assign_passes(std::vector<Event>& kernels, const std::vector<Range>& annotations) {
  std::vector<std::size_t> by_begin(annotations.size());
  for (std::size_t i = 0; i < by_begin.size(); ++i) by_begin[i] = i;
  std::stable_sort(by_begin.begin(), by_begin.end(), [&](std::size_t a, std::size_t b) {
    return annotations[a].begin_us < annotations[b].begin_us;
  });
  ShortestEnclosing open(annotations);
  std::size_t next = 0;
  for (Event& kernel : kernels) {
    Range& k = kernel.range;
    for (; next < by_begin.size() && annotations[by_begin[next]].begin_us <= k.begin_us; ++next)
      open.add(by_begin[next]);
    const std::size_t a = open.shortest_ending_after(k.end_us);
    if (a != ShortestEnclosing::kNone) k.pass = annotations[a].pass;
  }
}

TorchTrace from_document(const JsonDocument& doc, const std::string& source) {
  const JsonValue root = doc.root();
  // The Chrome trace format allows either an object with "traceEvents" or a bare event array.
  const JsonValue events = root.is_array() ? root : root.at("traceEvents");
  if (!events.is_array()) events.fail("expected the array of trace events");

  std::vector<Range> annotations;
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
    const double ts = timestamp_us(event);
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
    if (static_cast<std::int64_t>(kernels.size()) == kMaxKernels)
      event.fail(fmt::format("a trace may hold at most {} kernel events", kMaxKernels));
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
  assign_passes(kernels, annotations);
  TorchTrace trace;
  trace.source = source;
  double busy_until = kernels.front().range.begin_us;
  for (auto& [k, dur_us, name] : kernels) {
    if (k.begin_us < busy_until) ++trace.overlapping;
    busy_until = std::max(busy_until, k.end_us);
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
