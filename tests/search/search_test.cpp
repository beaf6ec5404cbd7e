// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/search.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/search/hypervolume.hpp"
#include "synthetic_problem.hpp"

namespace kareus::search {
namespace {

using testing::SyntheticProblem;
using testing::SyntheticShape;

SyntheticShape large_shape() {
  return {4, 4, 2.0e-3, 48e6, 0.005, 1};
}
SyntheticShape small_shape() {
  return {1, 1, 1.0e-3, 24e6, 0.005, 2};
}

SearchOptions with(Strategy strategy, std::uint64_t seed = 0) {
  SearchOptions o;
  o.strategy = strategy;
  o.seed = seed;
  return o;
}

std::vector<std::size_t> ids_of(const SearchResult& r) {
  std::vector<std::size_t> ids;
  for (const auto& p : r.measured) ids.push_back(p.id);
  return ids;
}

TEST(Search, ExhaustiveMeasuresEveryConfigOnce) {
  SyntheticProblem problem(small_shape());
  const SearchResult r = run_search(problem, with(Strategy::kExhaustive));
  EXPECT_EQ(r.summary.measurements_taken, problem.size());
  EXPECT_EQ(
      std::set<std::size_t>(problem.measured_ids().begin(), problem.measured_ids().end()).size(),
      problem.size());
  EXPECT_EQ(problem.measured_ids().size(), problem.size());
  EXPECT_EQ(r.summary.stop_reason, StopReason::kSpaceExhausted);
  EXPECT_DOUBLE_EQ(testing::hv_fraction(r, problem), 1.0);
  // The frontier is the Pareto set: no measured point dominates a frontier point.
  for (std::size_t id : r.frontier_total) {
    const Measurement f = problem.truth(id);
    for (const auto& p : r.measured) {
      EXPECT_FALSE(p.measurement.time < f.time && p.measurement.total_energy < f.total_energy);
    }
  }
  EXPECT_GT(r.summary.gpu_hours, 0.0);
}

TEST(Search, RandomIsWithoutReplacementAndSeeded) {
  SyntheticProblem problem(large_shape());
  SearchOptions options = with(Strategy::kRandom, 5);
  options.budget = 100;
  const SearchResult a = run_search(problem, options);
  EXPECT_EQ(a.measured.size(), 100u);
  const auto ids = ids_of(a);
  EXPECT_EQ(std::set<std::size_t>(ids.begin(), ids.end()).size(), 100u);
  EXPECT_EQ(a.summary.stop_reason, StopReason::kBudget);
  SyntheticProblem again(large_shape());
  EXPECT_EQ(ids_of(run_search(again, options)), ids);
  options.seed = 6;
  SyntheticProblem other(large_shape());
  EXPECT_NE(ids_of(run_search(other, options)), ids);
}

TEST(Search, ZeroBudgetIsAnError) {
  SyntheticProblem problem(small_shape());
  for (Strategy s :
       {Strategy::kExhaustive, Strategy::kRandom, Strategy::kPaper, Strategy::kKareus}) {
    SearchOptions options = with(s);
    options.budget = 0;
    try {
      run_search(problem, options);
      FAIL() << "budget 0 accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("budget"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(problem.measured_ids().empty());
}

TEST(Search, BudgetCapsEveryStrategy) {
  for (Strategy s :
       {Strategy::kExhaustive, Strategy::kRandom, Strategy::kPaper, Strategy::kKareus}) {
    SyntheticProblem problem(large_shape());
    SearchOptions options = with(s);
    options.budget = 30;
    const SearchResult r = run_search(problem, options);
    EXPECT_EQ(r.measured.size(), 30u) << to_string(s);
    EXPECT_EQ(r.summary.stop_reason, StopReason::kBudget) << to_string(s);
  }
}

TEST(Search, ParseStrategy) {
  EXPECT_EQ(parse_strategy("paper"), Strategy::kPaper);
  EXPECT_THROW(parse_strategy("bayes"), Error);
}

TEST(Search, PaperFollowsTheArtifactPlan) {
  SyntheticProblem problem(large_shape());
  const SearchResult r = run_search(problem, with(Strategy::kPaper, 3));
  std::map<std::size_t, std::map<std::string, int>> by_batch;
  for (const auto& p : r.measured) ++by_batch[p.batch][p.selected_by];
  EXPECT_EQ(by_batch[0], (std::map<std::string, int>{{"initial", 96}}));
  ASSERT_GE(r.summary.batches, 3u);  // the moving average needs two batches
  for (std::size_t b = 1; b < r.summary.batches; ++b) {
    EXPECT_EQ(by_batch[b]["hvi_total"] + by_batch[b]["fill"], 13 + 6 - by_batch[b]["hvi_dynamic"]);
    EXPECT_EQ(by_batch[b]["fastest"], 6);
    EXPECT_EQ(by_batch[b]["uncertainty"], 7);
  }
  if (r.summary.stop_reason == StopReason::kBatchesDone) {
    EXPECT_EQ(r.measured.size(), 96u + 4 * 32);
  } else {
    EXPECT_EQ(r.summary.stop_reason, StopReason::kConverged);
  }
  SyntheticProblem again(large_shape());
  EXPECT_EQ(ids_of(run_search(again, with(Strategy::kPaper, 3))), ids_of(r));
}

// 120 configurations on one feature (the id, shifted for the upper half). Ids 0-59 are slow and
// wasteful and all measure the same; ids 60-119 hold the whole Pareto front (time up, dynamic
// energy down with the id) with an irregular ripple in the energy that bootstrap members learn
// differently. A surrogate that learns anything sends every model-driven pick to the upper half,
// while constant predictions or a zero spread tie every candidate, and ties go to the lowest ids.
class TwoRegionProblem : public Problem {
 public:
  static constexpr std::size_t kHalf = 60;
  std::size_t size() const override { return 2 * kHalf; }
  std::string key(std::size_t id) const override { return std::to_string(id); }
  // The regions lie far apart in the feature, so that a tree's split between the measured
  // points of each never cuts into either.
  std::vector<double> raw_features(std::size_t id) const override {
    return {static_cast<double>(id) + (id >= kHalf ? 1000.0 : 0.0)};
  }
  Watts static_power() const override { return Watts(1.0); }
  std::size_t compute_ops() const override { return 1; }
  std::vector<Measurement> measure(const std::vector<std::size_t>& ids) override {
    std::vector<Measurement> out;
    for (std::size_t id : ids) out.push_back(truth(id));
    return out;
  }
  static Measurement truth(std::size_t id) {
    double time = 10.0, dynamic = 10.0;
    if (id >= kHalf) {
      const double j = static_cast<double>(id - kHalf);
      time = 1.0 + 0.05 * j;
      dynamic = 6.0 - 0.08 * j + 0.5 * static_cast<double>((id * 37) % 7) / 7.0;
    }
    return {Seconds(time), Joules(dynamic + time), Joules(dynamic), Seconds(0.0)};
  }
};

TEST(Search, PaperPicksFollowTheSurrogate) {
  for (std::uint64_t seed : {1, 2, 3}) {
    TwoRegionProblem problem;
    const SearchResult r = run_search(problem, with(Strategy::kPaper, seed));
    std::set<std::size_t> measured_before;
    for (const auto& p : r.measured)
      if (p.batch == 0) measured_before.insert(p.id);
    // The truly fastest configurations still unmeasured when the first batch was chosen.
    std::vector<std::size_t> by_time;
    for (std::size_t id = TwoRegionProblem::kHalf; id < problem.size(); ++id)
      if (!measured_before.contains(id)) by_time.push_back(id);
    const std::set<std::size_t> fastest_eight(by_time.begin(), by_time.begin() + 8);
    std::map<std::string, int> passes;
    for (const auto& p : r.measured) {
      if (p.batch != 1) continue;
      ++passes[p.selected_by];
      if (p.selected_by == "fill") continue;
      EXPECT_GE(p.id, TwoRegionProblem::kHalf)
          << "seed " << seed << ": " << p.selected_by << " picked a dominated configuration";
      if (p.selected_by == "fastest") {
        EXPECT_TRUE(fastest_eight.contains(p.id)) << "seed " << seed << ": id " << p.id;
      }
    }
    // Small size class: 16 per batch, 3 fastest and 4 uncertainty picks (paper_quota).
    EXPECT_EQ(passes["fastest"], 3) << "seed " << seed;
    EXPECT_EQ(passes["uncertainty"], 4) << "seed " << seed;
  }
}

// A problem whose configurations all measure the same: no batch can improve the hypervolume.
class FlatProblem : public testing::SyntheticProblem {
 public:
  using SyntheticProblem::SyntheticProblem;
  std::vector<Measurement> measure(const std::vector<std::size_t>& ids) override {
    return std::vector<Measurement>(ids.size(), truth(0));
  }
};

TEST(Search, PaperStopsEarlyWhenTheHypervolumeStalls) {
  FlatProblem problem(large_shape());
  const SearchResult r = run_search(problem, with(Strategy::kPaper, 1));
  EXPECT_EQ(r.summary.stop_reason, StopReason::kConverged);
  EXPECT_EQ(r.summary.batches, 3u);
  EXPECT_EQ(r.measured.size(), 96u + 2 * 32);
}

TEST(Search, KareusIsDeterministicUnderASeed) {
  SyntheticProblem a(large_shape());
  SyntheticProblem b(large_shape());
  EXPECT_EQ(ids_of(run_search(a, with(Strategy::kKareus, 9))),
            ids_of(run_search(b, with(Strategy::kKareus, 9))));
}

// The cap binds on this space (40 shapes x 18 clocks, cap 56): screening and three covering
// shapes at every clock would spend all of it, and before the model's share no model-guided pick
// ran. Every clock is still covered by at least one shape.
TEST(Search, KareusKeepsAShareOfTheCapForModelGuidedPicks) {
  SyntheticShape shape = large_shape();
  shape.compute_ops = 2;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SyntheticProblem problem(shape);
    const SearchResult r = run_search(problem, with(Strategy::kKareus, seed));
    std::map<std::string, std::size_t> by_rule;
    std::set<double> clocks;
    for (const auto& p : r.measured) {
      ++by_rule[p.selected_by];
      clocks.insert(problem.raw_features(p.id).at(0));
    }
    const std::size_t model = r.measured.size() - by_rule["initial"] - by_rule["clock_coverage"];
    EXPECT_GE(model, 6u) << "seed " << seed;
    EXPECT_EQ(clocks.size(), 18u) << "seed " << seed;
  }
}

// Where the cap lets three covering shapes reach every clock (40 shapes x 18 clocks, cap 112), the
// coverage completes and nothing is kept from it for the model.
TEST(Search, KareusCompletesThreeCoveringShapesWhereTheyFit) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SyntheticProblem problem(large_shape());
    const SearchResult r = run_search(problem, with(Strategy::kKareus, seed));
    std::map<std::vector<double>, std::size_t> clocks_of_shape;
    for (const auto& p : r.measured) {
      const std::vector<double> raw = problem.raw_features(p.id);
      ++clocks_of_shape[std::vector<double>(raw.begin() + 1, raw.end())];
    }
    const auto complete = std::count_if(clocks_of_shape.begin(), clocks_of_shape.end(),
                                        [](const auto& s) { return s.second == 18; });
    EXPECT_GE(complete, 3) << "seed " << seed;
  }
}

TEST(Search, SummaryPrintsItself) {
  SyntheticProblem problem(small_shape());
  SearchOptions options = with(Strategy::kRandom, 1);
  options.budget = 20;
  std::vector<SearchProgress> reports;
  options.on_progress = [&](const SearchProgress& p) { reports.push_back(p); };
  const SearchResult r = run_search(problem, options);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports.back().measurements, 20u);
  EXPECT_EQ(reports.back().planned, 20u);
  EXPECT_DOUBLE_EQ(reports.back().hypervolume, r.summary.hypervolume);
  const std::string text = r.summary.to_string();
  EXPECT_NE(text.find("20 of 180"), std::string::npos) << text;
  EXPECT_NE(text.find("stopped: budget"), std::string::npos) << text;
}

}  // namespace
}  // namespace kareus::search
