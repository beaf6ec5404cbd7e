// SPDX-License-Identifier: Apache-2.0
// The `kareus` strategy: a search for what the planner composes, the per-clock
// (time, dynamic energy) fronts (kareus/search/clock_fronts.hpp). Differences from the artifact's
// MBO, each measured with bench/search_quality.cpp at the iteration level (docs/search.md):
// - the target is the union over clocks of per-clock fronts, not the (time, total energy)
//   frontier: the composition sums the keys' fronts clock by clock and skips a clock at which a
//   key has no point, so every clock needs its best configurations;
// - the initial sample screens shapes (SM count, slot) at the top clock, where the fastest plan
//   is, and spends what is left of half the cap on strata of the other clocks;
// - every clock is then covered with the three fastest measured shapes: the best shapes move
//   little from one clock to the next (docs/search.md), and without them the composed options
//   near the fast end lose up to 11 % energy; but a share of the cap is kept from the coverage
//   for the model-guided picks, which otherwise never ran on the keys the cap binds;
// - then batches of 4, picked greedily by the hypervolume each predicted point (XGBoost on
//   datasheet roofline features, src/search/roofline_prior.hpp) adds to its clock's front against
//   the other clocks' fronts, neighbours (one clock, SM or slot step) of front points first;
// - the cap follows the space (every shape once plus kPerClock per clock), never above half of
//   the artifact's full size for the size class, and the search stops earlier once every clock
//   is covered and no front moved by more than kStillMove for kStillBatches batches: the composed
//   fronts then have not moved by more than that either; a plan may move the model-guided picks
//   between its keys within their caps together (kareus/search/shared_picks.hpp).
// - with measurement noise, a reading is repeated only where it leaves a per-clock front decision
//   open (two points' dominance within 2 standard errors, kareus/search/front_confidence.hpp),
//   each repeat charged to the cap like a new configuration; the noise is estimated from the
//   repeats, starting with a probe of the fastest points, whose order picks the covering shapes.
// Ensemble optimism (mean - kappa x spread) lowered the hypervolume reached at this budget in
// earlier rounds, so it is not used.
#include <algorithm>
#include <numeric>

#include "kareus/core/rng.hpp"
#include "kareus/search/acquisition.hpp"
#include "kareus/search/clock_fronts.hpp"
#include "kareus/search/front_confidence.hpp"
#include "kareus/search/shared_picks.hpp"
#include "neighbours.hpp"
#include "observed.hpp"
#include "strategies.hpp"

namespace kareus::search {
namespace {

struct KareusPlan {
  std::size_t screened;  // shapes read at the top clock
  std::size_t strata;    // configurations from strata of the other clocks
  std::size_t model;     // readings kept from the coverage for the model-guided picks
  std::size_t batch_size;
  std::size_t cap;
  bool covers_every_clock;  // the initial sample and three covering shapes fit in the cap
};

// The cap follows the space: every shape (SM count, slot) once at the top clock, and
// kPerClock configurations at every clock (kCoverShapes to cover it, the rest for its front);
// never more than half of what the artifact's MBO would take for the size class.
constexpr std::size_t kPerClock = 4;

// Fastest measured shapes every clock is covered with.
constexpr std::size_t kCoverShapes = 3;

// Repeats: the fastest points read twice to estimate the noise (no more repeats when they agree),
// at most kMaxSamples readings of one configuration, at most kRepeatShare of the cap on repeats.
constexpr std::size_t kProbe = 2;
constexpr std::size_t kMaxSamples = 3;
constexpr double kRepeatShare = 0.2;

// Share of the cap kept for the model-guided picks on keys where the three covering shapes would
// not reach every clock anyway. There the coverage spent the rest of the cap (on H100, every key)
// and no pick ran; the picks aim at the per-clock fronts the composition consumes, which the
// truncated covering shapes, near-duplicates of the fast end, do not. Where the three shapes fit
// they complete (taking the share from them cost an A100 TP8 workload 0.002 of hypervolume).
// Measured shares (benchmarks/search_quality.md): 0.10 and 0.25 helped the H100 CP2+TP4
// workloads less than 0.15.
constexpr double kModelShare = 0.15;

// The initial sample is half the cap, less where the rest could not pay for the probe and one
// covering shape at every other clock: the composition skips a clock at which any key has no
// point, so a clock left uncovered is lost to the whole instruction. On H100 CP2+TP4 the CP keys
// (20 shapes, 27 clocks, cap 42) left the 7 lowest clocks uncovered, which the exhaustive
// iteration frontier uses (tests/planner/search_coverage_test.cpp).
// The model's share is taken from covering shapes 2-3 and never from the screening, the strata or
// the first covering shape: the strata let the model see the clock range (taking the share from
// them first cost the TP8 workloads up to 0.006).
KareusPlan plan_for(SizeClass size_class, const ClockLayout& layout) {
  const std::size_t shapes = layout.id_at.front().size();
  const std::size_t cap = std::max<std::size_t>(
      1, std::min(paper_measurements(size_class) / 2, shapes + kPerClock * layout.clocks()));
  const std::size_t cover_one = kProbe + layout.clocks() - 1;
  const std::size_t initial =
      std::max<std::size_t>(1, cap > cover_one ? std::min(cap / 2, cap - cover_one) : cap / 2);
  const std::size_t screened = std::min(shapes, initial);
  const std::size_t room = cap - std::min(cap, screened + cover_one);
  const std::size_t cover_all = kProbe + kCoverShapes * (layout.clocks() - 1);
  const std::size_t short_of = initial + cover_all - std::min(initial + cover_all, cap);
  const std::size_t model =
      std::min({room, short_of, static_cast<std::size_t>(kModelShare * static_cast<double>(cap))});
  return {screened, std::min(initial - screened, room - model), model, 4, cap, short_of == 0};
}

// How far another clock may beat a point before it stops counting (see ClockFronts): room for
// the other keys of an instruction. 1 % and 10 % gave the same iteration hypervolume on the
// subset docs/search.md lists.
constexpr double kTolerance = 0.03;

// Relative move of a per-clock front below which a batch counts as still (0.1 %, well below the
// 0.5 % fastest-plan tolerance), and how many still batches in a row end the search.
constexpr double kStillMove = 1e-3;
constexpr std::size_t kStillBatches = 3;

// Batches of the initial sample and the coverage, as the sweeps of exhaustive and random search.
constexpr std::size_t kLargestBatch = 16;

// Neighbours of per-clock front points are picked before anything else.
enum Tier { kFrontNeighbour = 0, kElsewhere = 1 };
constexpr const char* kTierLabel[] = {"clock_front_neighbour", "hvi_clock"};

std::vector<Tier> tiers(const SearchState& state, const ClockLayout& layout,
                        const std::vector<std::vector<std::size_t>>& neighbours,
                        const std::vector<std::size_t>& candidates) {
  std::vector<std::vector<Point2>> points(layout.clocks());
  std::vector<std::vector<std::size_t>> ids(layout.clocks());
  for (const MeasuredPoint& p : state.points()) {
    const std::size_t c = layout.clock_of[p.id];
    points[c].push_back({p.measurement.time.value(), p.measurement.dynamic_energy.value()});
    ids[c].push_back(p.id);
  }
  std::vector<Tier> tier_of(state.size(), kElsewhere);
  for (std::size_t c = 0; c < layout.clocks(); ++c) {
    for (std::size_t i : pareto_indices(points[c])) {
      for (std::size_t n : neighbours[ids[c][i]]) tier_of[n] = kFrontNeighbour;
    }
  }
  std::vector<Tier> out;
  for (std::size_t id : candidates) out.push_back(tier_of[id]);
  return out;
}

// Greedy picks by the hypervolume each predicted point adds to its clock's front, from the lowest
// tier that has a candidate adding any; each pick's prediction joins its front before the next.
std::vector<std::size_t> pick_greedy(const std::vector<Point2>& seen, const ClockFronts& fronts,
                                     const ClockLayout& layout,
                                     const std::vector<std::size_t>& candidates,
                                     const std::vector<Point2>& predicted,
                                     const std::vector<Tier>& tier, std::size_t count,
                                     std::vector<std::string>& labels) {
  const Normaliser2 norm(seen);
  std::vector<std::vector<Point2>> front(fronts.clocks());
  std::vector<Front2> current;
  for (std::size_t c = 0; c < fronts.clocks(); ++c) {
    front[c] = norm(fronts.competition(c));
    current.emplace_back(front[c], norm.reference());
  }
  std::vector<bool> taken(predicted.size(), false);
  std::vector<std::size_t> picks;
  for (std::size_t pick = 0; pick < count; ++pick) {
    std::size_t best = predicted.size();
    double best_gain = 0.0;
    for (int round = kFrontNeighbour; round <= kElsewhere && best == predicted.size(); ++round) {
      for (std::size_t i = 0; i < predicted.size(); ++i) {
        if (taken[i] || tier[i] > round) continue;
        const double gain = current[layout.clock_of[candidates[i]]].improvement(norm(predicted[i]));
        if (gain > best_gain) {
          best_gain = gain;
          best = i;
        }
      }
    }
    if (best == predicted.size()) break;
    taken[best] = true;
    picks.push_back(best);
    labels.push_back(kTierLabel[tier[best]]);
    const std::size_t picked_clock = layout.clock_of[candidates[best]];
    const Point2 p = predicted[best];
    const double scale = 1 + fronts.tolerance();
    for (std::size_t c = 0; c < fronts.clocks(); ++c) {
      front[c].push_back(norm(c == picked_clock ? p : Point2{p.x * scale, p.y * scale}));
      current[c] = Front2(front[c], norm.reference());
    }
  }
  return picks;
}

// The first model's sample: shapes at the top clock (where the fastest plan is, and every shape's
// time and energy there anchor the model), then one random config from each of equal strata of
// the other clocks' ids ordered by clock, so the model sees the whole clock range: trees do not
// extrapolate.
std::vector<std::size_t> initial_sample(const ClockLayout& layout, std::size_t screened,
                                        std::size_t strata, Rng& rng) {
  const std::vector<std::size_t>& top = layout.id_at.back();
  std::vector<std::size_t> picked;
  for (std::size_t i : rng.sample_without_replacement(top.size(), screened)) {
    picked.push_back(top[i]);
  }
  std::vector<std::size_t> order;
  for (std::size_t c = 0; c + 1 < layout.clocks(); ++c) {
    for (std::size_t id : layout.id_at[c]) order.push_back(id);
  }
  strata = std::min(strata, order.size());
  for (std::size_t s = 0; s < strata; ++s) {
    const std::size_t begin = s * order.size() / strata;
    const std::size_t end = (s + 1) * order.size() / strata;
    picked.push_back(order[static_cast<std::size_t>(
        rng.integer(static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end) - 1))]);
  }
  return picked;
}

// The composition skips a clock at which any key has no point, so every clock gets one: the
// shape (SMs, slot) of the fastest configuration measured so far, which anchors each clock's
// front at its fast end.
std::vector<std::size_t> coverage(const SearchState& state, const ClockLayout& layout) {
  std::vector<const MeasuredPoint*> by_time;
  std::vector<bool> covered(layout.clocks(), false);
  for (const MeasuredPoint& p : state.points()) {
    covered[layout.clock_of[p.id]] = true;
    by_time.push_back(&p);
  }
  std::sort(by_time.begin(), by_time.end(), [](const MeasuredPoint* a, const MeasuredPoint* b) {
    return a->measurement.time < b->measurement.time;
  });
  // The shapes of the fastest few points on the measured (time, dynamic energy) front.
  std::vector<std::size_t> shapes;
  double best_energy = 1e300;
  for (const MeasuredPoint* p : by_time) {
    if (shapes.size() >= kCoverShapes) break;
    if (p->measurement.dynamic_energy.value() >= best_energy) continue;
    best_energy = p->measurement.dynamic_energy.value();
    if (std::find(shapes.begin(), shapes.end(), layout.shape_of[p->id]) == shapes.end()) {
      shapes.push_back(layout.shape_of[p->id]);
    }
  }
  std::vector<std::size_t> ids;
  for (std::size_t s : shapes) {
    for (std::size_t c = layout.clocks(); c-- > 0;) {
      const std::size_t id = layout.id_at[c][s];
      if (!state.is_measured(id)) ids.push_back(id);
    }
  }
  return ids;
}

// The ids of the `count` fastest measured points.
std::vector<std::size_t> fastest(const SearchState& state, std::size_t count) {
  std::vector<const MeasuredPoint*> by_time;
  for (const MeasuredPoint& p : state.points()) by_time.push_back(&p);
  std::sort(by_time.begin(), by_time.end(), [](const MeasuredPoint* a, const MeasuredPoint* b) {
    return a->measurement.time < b->measurement.time;
  });
  std::vector<std::size_t> ids;
  for (std::size_t i = 0; i < std::min(count, by_time.size()); ++i) ids.push_back(by_time[i]->id);
  return ids;
}

// Up to `count` points to read again where a per-clock front decision is open.
std::vector<std::size_t> to_repeat(const SearchState& state, const ClockLayout& layout,
                                   std::size_t count) {
  const Point2 sigma = state.noise();
  if (sigma.x == 0.0 && sigma.y == 0.0) return {};
  std::vector<std::vector<std::size_t>> ids;
  const std::vector<std::vector<SampledPoint>> points = state.sampled_by_clock(layout, ids);
  std::vector<std::size_t> out;
  for (const SetIndex& p : points_to_repeat(points, sigma, kMaxSamples, count)) {
    out.push_back(ids[p.set][p.index]);
  }
  return out;
}

}  // namespace

KareusBudget kareus_budget(const Problem& problem) {
  const KareusPlan plan = plan_for(size_class_of(problem.compute_ops()), clock_layout(problem));
  return {plan.cap, plan.model, plan.covers_every_clock};
}

StopReason run_kareus(SearchState& state) {
  Problem& problem = state.problem();
  const ClockLayout layout = clock_layout(problem);
  KareusPlan plan = plan_for(size_class_of(problem.compute_ops()), layout);
  const KareusPlan own = plan;
  // A plan shares the model-guided picks across its keys (kareus/search/shared_picks.hpp).
  if (const auto picks = state.options().model_picks) {
    plan.cap = plan.cap - plan.model + *picks;
    plan.model = *picks;
  }
  const FeatureMatrix features = all_features(problem, true);
  const std::vector<std::vector<std::size_t>> neighbours = raw_neighbours(problem);
  Rng rng(state.options().seed);

  ClockFronts fronts(layout.clocks(), kTolerance);
  const auto add_to_fronts = [&](std::size_t from) {
    double moved = 0.0;
    for (std::size_t i = from; i < state.points().size(); ++i) {
      const MeasuredPoint& p = state.points()[i];
      moved = std::max(
          moved, fronts.add(layout.clock_of[p.id],
                            {p.measurement.time.value(), p.measurement.dynamic_energy.value()}));
    }
    return moved;
  };
  const std::size_t max_repeats =
      static_cast<std::size_t>(kRepeatShare * static_cast<double>(plan.cap));
  // Repeats where a front decision is open; the fronts are rebuilt from the new means.
  const auto settle = [&](std::vector<std::size_t> ids) {
    const std::size_t spent_on_repeats = state.spent() - state.points().size();
    ids.resize(std::min({ids.size(), max_repeats - std::min(max_repeats, spent_on_repeats),
                         plan.cap - std::min(plan.cap, state.spent())}));
    if (ids.empty()) return;
    state.repeat(ids);
    fronts = ClockFronts(layout.clocks(), kTolerance);
    add_to_fronts(0);
  };
  const auto take = [&](const std::vector<std::size_t>& ids,
                        const std::vector<std::string>& labels) {
    const std::size_t before = state.points().size();
    // The initial sample and the coverage are large; measured in batches of at most
    // kLargestBatch, a store records them as they come, so a killed search loses little.
    for (std::size_t begin = 0; begin < ids.size(); begin += kLargestBatch) {
      const std::size_t end = std::min(ids.size(), begin + kLargestBatch);
      state.measure(std::vector<std::size_t>(ids.begin() + begin, ids.begin() + end),
                    std::vector<std::string>(labels.begin() + begin, labels.begin() + end));
    }
    return add_to_fronts(before);
  };
  const std::vector<std::size_t> initial = initial_sample(layout, plan.screened, plan.strata, rng);
  take(initial, std::vector<std::string>(initial.size(), "initial"));
  // The probe; with noise, the rest of the coverage decision (its shapes and the runner-up) too.
  settle(fastest(state, kProbe));
  if (state.noise().x > 0.0 || state.noise().y > 0.0) {
    std::vector<std::size_t> decision = fastest(state, kCoverShapes + 1);
    std::erase_if(decision, [&](std::size_t id) { return state.point_of(id).samples > 1; });
    settle(decision);
  }
  {
    // Under noise the model's share goes back to the coverage: the planner pools a shape's
    // readings across clocks (docs/search.md), so covering shapes are what its noisy readings
    // need; kept from them, the realised hypervolume fell (benchmarks/search_quality.md).
    const bool noisy = state.noise().x > 0.0 || state.noise().y > 0.0;
    // A key that gave its share to the plan's pool takes it back under noise, for its coverage;
    // the pool pays it (SharedPicks::record). Given away, the realised hypervolume under noise
    // fell.
    if (noisy && plan.model < own.model) plan = own;
    const std::size_t until = plan.cap - (noisy ? 0 : plan.model);
    std::vector<std::size_t> cover = coverage(state, layout);
    cover.resize(std::min(cover.size(), until - std::min(until, state.spent())));
    take(cover, std::vector<std::string>(cover.size(), "clock_coverage"));
  }

  std::size_t still = 0;
  while (state.remaining() > 0 && state.spent() < plan.cap) {
    const Observed seen = observed(state, features);
    const std::vector<std::size_t> candidates = state.unmeasured();
    BoosterParams params;
    params.seed = rng.fork_seed();
    const PredictedPoints predicted = predicted_points(
        ObjectiveModel(seen.x, seen.y, params).predict(features.select(candidates)),
        problem.static_power());

    const std::vector<Tier> tier = tiers(state, layout, neighbours, candidates);
    const std::size_t count = std::min(plan.batch_size, plan.cap - state.spent());
    std::vector<std::string> labels;
    std::vector<std::size_t> ids;
    for (std::size_t c : pick_greedy(seen.dynamic, fronts, layout, candidates, predicted.dynamic,
                                     tier, count, labels)) {
      ids.push_back(candidates[c]);
    }
    // The model expects nothing left to move any front: as still as a still batch.
    if (ids.empty()) return state.stop_reason(StopReason::kConverged);
    const double moved = take(ids, labels);
    settle(to_repeat(state, layout, plan.batch_size));
    still = moved < kStillMove ? still + 1 : 0;
    if (still >= kStillBatches && fronts.covered() == fronts.clocks()) {
      return state.stop_reason(StopReason::kConverged);
    }
  }
  return state.stop_reason(StopReason::kBatchesDone);
}

}  // namespace kareus::search
