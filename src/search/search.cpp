#include "kareus/search/search.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "kareus/search/hypervolume.hpp"
#include "strategies.hpp"

namespace kareus::search {

namespace {
constexpr Strategy kStrategies[] = {Strategy::exhaustive, Strategy::random, Strategy::paper,
                                    Strategy::kareus};
}

Strategy parse_strategy(std::string_view name) {
  for (Strategy s : kStrategies) {
    if (name == to_string(s)) return s;
  }
  throw Error::invalid("", "strategy", name, "one of exhaustive, random, paper, kareus");
}

const char* to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::exhaustive:
      return "exhaustive";
    case Strategy::random:
      return "random";
    case Strategy::paper:
      return "paper";
    case Strategy::kareus:
      return "kareus";
  }
  return "?";
}

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::space_exhausted:
      return "space_exhausted";
    case StopReason::budget:
      return "budget";
    case StopReason::batches_done:
      return "batches_done";
    case StopReason::converged:
      return "converged";
  }
  return "?";
}

std::string SearchSummary::to_string() const {
  return fmt::format(
      "search {}: {} of {} configurations measured ({} taken, {} reused) in {} batches, "
      "hypervolume {:.6g} s*J, {:.3f} GPU-hours, stopped: {}",
      search::to_string(strategy), measurements(), configurations, measurements_taken,
      measurements_reused, batches, hypervolume, gpu_hours, search::to_string(stop_reason));
}

double observed_hypervolume(const std::vector<Measurement>& measurements) {
  if (measurements.empty()) return 0.0;
  std::vector<Point2> points;
  Point2 worst{0.0, 0.0};
  for (const auto& m : measurements) {
    points.push_back({m.time.value(), m.total_energy.value()});
    worst.x = std::max(worst.x, m.time.value());
    worst.y = std::max(worst.y, m.total_energy.value());
  }
  return hypervolume_2d(points, {1.1 * worst.x, 1.1 * worst.y});
}

SearchResult run_search(Problem& problem, const SearchOptions& options) {
  SearchState state(problem, options);
  StopReason reason = StopReason::space_exhausted;
  switch (options.strategy) {
    case Strategy::exhaustive:
      reason = run_exhaustive(state);
      break;
    case Strategy::random:
      reason = run_random(state);
      break;
    case Strategy::paper:
      reason = run_paper(state);
      break;
    case Strategy::kareus:
      reason = run_kareus(state);
      break;
  }
  return state.finish(reason);
}

}  // namespace kareus::search
