// SPDX-License-Identifier: Apache-2.0
// The iteration-level half of bench_search_quality: what a partition search is worth
// to the frontier `kareus plan` composes. For every workload, the `kareus` method's iteration
// frontier with the partitions searched by `kareus`, by `paper` and by `random` (both capped per
// key at the measurements `kareus` took there), and by `kareus` under measurement noise, each
// against `kareus-exhaustive`'s.
//
// Scores are against the exhaustive frontier E:
// - hypervolume with a reference point just past E's far end (E's worst time and worst energy
//   plus 10 % of E's span in each): the 1.1 x worst-point reference of the artifact is dominated
//   by area every strategy gets, which let random search look good;
// - additive epsilon with both objectives divided by E's minima: how much (as a fraction of the
//   best time or energy) a found frontier must be shifted to cover every point of E;
// - the fastest plan's time against E's fastest.
// Under noise two scores:
// - what the search measured: the hook re-measures the found configurations noise-free before
//   composition, so a lucky reading does not count and the composition is not exposed to noise;
// - what the planner delivers: the composition runs on the noisy readings, as `kareus plan` does,
//   and each plan of its frontier is scored at the true values of the configurations it chose
//   (kareus/planner/realised.hpp), so plans picked for lucky readings count at what they cost.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "kareus/planner/planner.hpp"
#include "kareus/planner/realised.hpp"
#include "kareus/search/front_confidence.hpp"
#include "kareus/search/hypervolume.hpp"

namespace bench_iteration {

using namespace kareus;
using planner::Method;
using search::Point2;

std::vector<Point2> points_of(const std::vector<planner::IterationPoint>& frontier) {
  std::vector<Point2> out;
  for (const auto& p : frontier) out.push_back({p.time.value(), p.energy.value()});
  return out;
}

std::vector<Point2> points_of(const planner::MethodResult& m) {
  return points_of(m.frontier);
}

struct Scores {
  double hv = 0;       // fraction of E's hypervolume
  double epsilon = 0;  // additive, objectives / E's minima
  double fastest = 0;  // fastest time / E's fastest - 1
};

Scores score(const std::vector<Point2>& found, const std::vector<Point2>& exact) {
  Point2 lo{1e300, 1e300}, hi{0, 0};
  for (const auto& p : exact) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
  }
  const Point2 ref{hi.x + 0.1 * (hi.x - lo.x), hi.y + 0.1 * (hi.y - lo.y)};
  Scores s;
  s.hv = search::hypervolume_2d(found, ref) / search::hypervolume_2d(exact, ref);
  for (const auto& e : exact) {
    double best = 1e300;
    for (const auto& a : found)
      best = std::min(best, std::max((a.x - e.x) / lo.x, (a.y - e.y) / lo.y));
    s.epsilon = std::max(s.epsilon, best);
  }
  double fastest = 1e300;
  for (const auto& a : found) fastest = std::min(fastest, a.x);
  s.fastest = fastest / lo.x - 1;
  return s;
}

// Measurements the `paper` strategy would take on every key of `keys` at its full size.
std::size_t paper_size(const workload::Workload& w, const planner::KeyFrontiers& keys) {
  std::size_t n = 0;
  for (const auto& [key, r] : keys) {
    n += search::paper_measurements(
        search::size_class_of(store::find_partition(w, key).slots.size()));
  }
  return n;
}

// Readings, repeats included: what a budget counts.
std::size_t measurements(const planner::KeyFrontiers& keys) {
  std::size_t n = 0;
  for (const auto& [key, r] : keys) n += r.summary.measurements();
  return n;
}

struct Run {
  std::vector<Point2> frontier;
  std::map<std::string, std::size_t> per_key;  // measurements per key
  std::size_t measurements = 0;
  std::size_t paper_size = 0;
};

// How a noisy search is scored (see the top of this file); noise-free runs ignore it.
enum class Scoring { kMeasuredTruth, kRealisedPlans };

Run plan_with(const workload::Workload& w, search::Strategy strategy, std::uint64_t seed,
              double noise, const std::map<std::string, std::size_t>& budgets,
              Scoring scoring = Scoring::kMeasuredTruth) {
  planner::PlanOptions o;
  o.methods = {Method::kKareus};
  o.strategy = strategy;
  o.seed = seed;
  o.noise_sigma = noise;
  o.key_budgets = budgets;
  Run run;
  o.on_key_frontiers = [&](Method, planner::KeyFrontiers& keys) {
    for (const auto& [key, r] : keys) run.per_key[key] = r.summary.measurements();
    run.measurements = measurements(keys);
    run.paper_size = paper_size(w, keys);
    if (noise > 0 && scoring == Scoring::kMeasuredTruth) keys = planner::true_readings(w, keys);
  };
  const planner::MethodResult m = planner::plan(w, o).methods.at(Method::kKareus);
  run.frontier = noise > 0 && scoring == Scoring::kRealisedPlans
                     ? points_of(planner::realised_frontier(w, m))
                     : points_of(m);
  return run;
}

// Reference for the noise target: `kareus-exhaustive` under noise, every configuration read
// `reads` times (repeats are independent samples, averaged), composed from those readings as the
// planner composes (with more than one reading the noise is estimated from the spread, so the
// planner pools across clocks as it does for `kareus`), each plan valued at its configurations'
// true readings. Scored the "measured" way it reaches 1 by construction (every configuration,
// re-measured noise-free), so only the realised frontier is returned. With `known_sigma` the
// planner is handed the true noise instead of an estimate (read once, nothing estimates it).
Run exhaustive_reference(const workload::Workload& w, std::uint64_t seed, double noise,
                         std::size_t reads, bool known_sigma = false) {
  planner::PlanOptions o;
  o.methods = {Method::kKareusExhaustive};
  o.seed = seed;
  o.noise_sigma = noise;
  Run run;
  o.on_key_frontiers = [&](Method, planner::KeyFrontiers& keys) {
    const auto exec = planner::default_executor(w, o);
    for (auto& [key, r] : keys) {
      std::vector<partition::ExecConfig> configs;
      for (const auto& m : r.measured) configs.push_back(m.config);
      std::vector<std::vector<Point2>> readings(configs.size());
      for (std::size_t i = 0; i < configs.size(); ++i) {
        readings[i].push_back({r.measured[i].time.value(), r.measured[i].dynamic_energy.value()});
      }
      for (std::size_t repeat = 1; repeat < reads; ++repeat) {
        const auto again = exec->measure_repeat(store::find_partition(w, key), configs, repeat);
        for (std::size_t i = 0; i < configs.size(); ++i) {
          auto& m = r.measured[i];
          const auto n = static_cast<double>(m.samples);
          m.time = (m.time * n + again[i].time) / (n + 1);
          m.total_energy = (m.total_energy * n + again[i].total_energy) / (n + 1);
          m.dynamic_energy = (m.dynamic_energy * n + again[i].dynamic_energy) / (n + 1);
          ++m.samples;
          readings[i].push_back({again[i].time.value(), again[i].dynamic_energy.value()});
        }
        r.summary.measurements_taken += configs.size();
        r.summary.repeats += configs.size();
      }
      const Point2 sigma =
          known_sigma ? Point2{noise, noise} : search::pooled_relative_sigma(readings);
      r.summary.noise_time = sigma.x;
      r.summary.noise_energy = sigma.y;
      // The planner weighs each key's noise estimate by its repeats.
      if (known_sigma) r.summary.repeats = std::max<std::size_t>(r.summary.repeats, 1);
    }
    for (const auto& [key, r] : keys) run.per_key[key] = r.summary.measurements();
    run.measurements = measurements(keys);
    run.paper_size = paper_size(w, keys);
  };
  run.frontier = points_of(
      planner::realised_frontier(w, planner::plan(w, o).methods.at(Method::kKareusExhaustive)));
  return run;
}

}  // namespace bench_iteration
