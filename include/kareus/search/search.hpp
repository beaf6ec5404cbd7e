// SPDX-License-Identifier: Apache-2.0
// Search over a Problem's configuration space for its time-energy Pareto frontier.
// Options in, SearchResult (with a printable Summary) out; every random choice comes from
// options.seed, so a run is a deterministic function of the seed and the measurements it sees.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/search/problem.hpp"

namespace kareus::search {

enum class Strategy {
  kExhaustive,  // every configuration: the ground truth
  kRandom,      // uniform without replacement
  kPaper,       // the artifact's multi-pass MBO
  kKareus,      // ours (see kareus_mbo.cpp)
};
Strategy parse_strategy(std::string_view name);
const char* to_string(Strategy strategy);

enum class StopReason {
  kSpaceExhausted,  // every configuration is measured
  kBudget,          // the --budget cap was reached
  kBatchesDone,     // the strategy's planned batches are done
  kConverged,       // the strategy's convergence test fired
};
const char* to_string(StopReason reason);

struct SearchProgress {
  std::size_t measurements = 0;
  // Most measurements this search can take (budget or space size), for a progress bar.
  std::size_t planned = 0;
  double hypervolume = 0.0;
  double gpu_hours = 0.0;
};

struct SearchOptions {
  Strategy strategy = Strategy::kKareus;
  std::uint64_t seed = 0;
  // Caps the number of measurements for any strategy; must be at least 1 when set.
  std::optional<std::size_t> budget;
  // Called after every measured batch.
  std::function<void(const SearchProgress&)> on_progress;
  // `kareus` only: the model-guided picks to take in place of its own share of the cap, which
  // moves by the difference; a plan shares them across its keys (kareus/search/shared_picks.hpp).
  std::optional<std::size_t> model_picks;
};

struct MeasuredPoint {
  std::size_t id = 0;
  // The mean of its readings (one unless the search repeated it).
  Measurement measurement;
  std::size_t samples = 1;
  std::size_t batch = 0;  // 0 is the initial sample
  // Which rule picked it ("initial", "hvi_total", "hvi_dynamic", "fastest", "uncertainty", ...).
  std::string selected_by;
};

struct SearchSummary {
  Strategy strategy = Strategy::kKareus;
  std::size_t configurations = 0;
  // Readings, repeats included; a repeat is charged like any measurement.
  std::size_t measurements_taken = 0;
  std::size_t measurements_reused = 0;
  // Readings that repeated a configuration already read (taken or reused).
  std::size_t repeats = 0;
  // Relative noise of time and dynamic energy estimated from the repeats (0 without repeats).
  double noise_time = 0.0;
  double noise_energy = 0.0;
  // Share of per-clock (time, dynamic energy) front points whose dominance against every other
  // point of their clock is decided beyond 2 standard errors of the estimated noise
  // (kareus/search/front_confidence.hpp). Unknown (nullopt) without repeats: nothing estimated
  // the noise.
  std::optional<double> confidence;
  std::size_t batches = 0;
  // Exact hypervolume (s x J) of the measured (time, total energy) points with the reference
  // point 1.1 x the observed maxima, the artifact's convention.
  double hypervolume = 0.0;
  // GPU time spent on measurements taken by this run (reused ones cost nothing again).
  double gpu_hours = 0.0;
  // GPU time the reused readings (repeats included) cost when an earlier run took them.
  double gpu_hours_reused = 0.0;
  StopReason stop_reason = StopReason::kSpaceExhausted;

  std::size_t measurements() const { return measurements_taken + measurements_reused; }
  std::string to_string() const;
};

struct SearchResult {
  // Every measured configuration, in measurement order.
  std::vector<MeasuredPoint> measured;
  // Config ids of the Pareto set of measured points in (time, total energy), by increasing time.
  std::vector<std::size_t> frontier_total;
  // The same in (time, dynamic energy).
  std::vector<std::size_t> frontier_dynamic;
  SearchSummary summary;
};

SearchResult run_search(Problem& problem, const SearchOptions& options);

// Hypervolume of (time, total energy) points, reference 1.1 x their maxima.
double observed_hypervolume(const std::vector<Measurement>& measurements);

}  // namespace kareus::search
