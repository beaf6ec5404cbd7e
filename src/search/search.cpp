// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/search.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "kareus/search/hypervolume.hpp"
#include "strategies.hpp"

namespace kareus::search {

namespace {
constexpr Strategy kStrategies[] = {Strategy::kExhaustive, Strategy::kRandom, Strategy::kPaper,
                                    Strategy::kKareus};
}

Strategy parse_strategy(std::string_view name) {
  for (Strategy s : kStrategies) {
    if (name == to_string(s)) return s;
  }
  throw Error::invalid("", "strategy", name, "one of exhaustive, random, paper, kareus");
}

const char* to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::kExhaustive:
      return "exhaustive";
    case Strategy::kRandom:
      return "random";
    case Strategy::kPaper:
      return "paper";
    case Strategy::kKareus:
      return "kareus";
  }
  return "?";
}

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kSpaceExhausted:
      return "space_exhausted";
    case StopReason::kBudget:
      return "budget";
    case StopReason::kBatchesDone:
      return "batches_done";
    case StopReason::kConverged:
      return "converged";
  }
  return "?";
}

std::string SearchSummary::to_string() const {
  const std::string noise =
      repeats == 0 ? std::string()
                   : fmt::format(", {} repeats, noise {:.2g} time {:.2g} energy, confidence {}",
                                 repeats, noise_time, noise_energy,
                                 confidence ? fmt::format("{:.2f}", *confidence) : "unknown");
  return fmt::format(
      "search {}: {} of {} configurations measured ({} taken, {} reused{}) in {} batches, "
      "hypervolume {:.6g} s*J, {:.3f} GPU-hours, stopped: {}",
      search::to_string(strategy), measurements() - repeats, configurations, measurements_taken,
      measurements_reused, noise, batches, hypervolume, gpu_hours, search::to_string(stop_reason));
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
  StopReason reason = StopReason::kSpaceExhausted;
  switch (options.strategy) {
    case Strategy::kExhaustive:
      reason = run_exhaustive(state);
      break;
    case Strategy::kRandom:
      reason = run_random(state);
      break;
    case Strategy::kPaper:
      reason = run_paper(state);
      break;
    case Strategy::kKareus:
      reason = run_kareus(state);
      break;
  }
  return state.finish(reason);
}

}  // namespace kareus::search
