// The partition problem on the emulator, and the strategies on it.
#include "kareus/search/partition_problem.hpp"

#include <gtest/gtest.h>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/search/hypervolume.hpp"
#include "kareus/search/search.hpp"

namespace kareus::search {
namespace {

struct Fixture {
  workload::Workload w = testing::llama3b(4, 2);
  executor::EmulatorExecutor executor{emulator::Emulator(w.gpu)};
  partition::Partition p = [this] {
    for (auto& q : partition::representative_partitions(w)) {
      if (q.key == "fwd_ao_ag") return q;
    }
    throw Error("fwd_ao_ag missing");
  }();
};

TEST(PartitionProblem, EncodesAndMeasuresConfigurations) {
  Fixture f;
  PartitionProblem problem(f.p, f.executor);
  ASSERT_EQ(problem.size(), 18u * 20 * 2);
  EXPECT_EQ(problem.key(3), "linear_0/2sm@1410MHz");
  // Clock in MHz, SM index, one-hot launch slot.
  EXPECT_EQ(problem.raw_features(3), (std::vector<double>{1410, 1, 0, 1}));
  EXPECT_EQ(problem.physical_features(3).size(), problem.physical_features(0).size());
  EXPECT_EQ(problem.compute_ops(), f.p.slots.size());
  EXPECT_EQ(problem.static_power(), f.w.gpu.static_power);
  const auto m = problem.measure({3, 0});
  ASSERT_EQ(m.size(), 2u);
  const auto direct = f.executor.measure(f.p, {problem.space().at(3)});
  EXPECT_DOUBLE_EQ(m[0].time.value(), direct[0].time.value());
  EXPECT_FALSE(m[0].reused);
}

// Fewer measured configurations are never slower than more: the datasheet roofline prior must
// not peek at the emulator, so its features are the same whatever was measured before.
TEST(PartitionProblem, PhysicalFeaturesIgnoreMeasurements) {
  Fixture f;
  PartitionProblem problem(f.p, f.executor);
  const auto before = problem.physical_features(100);
  problem.measure({100});
  EXPECT_EQ(problem.physical_features(100), before);
}

TEST(PartitionProblem, EachStrategyIsDeterministicUnderASeed) {
  for (Strategy s : {Strategy::random, Strategy::paper, Strategy::kareus}) {
    std::vector<std::vector<std::size_t>> runs;
    for (int repeat = 0; repeat < 2; ++repeat) {
      Fixture f;
      PartitionProblem problem(f.p, f.executor);
      SearchOptions o;
      o.strategy = s;
      o.seed = 5;
      o.budget = 40;
      std::vector<std::size_t> ids;
      for (const auto& m : run_search(problem, o).measured) ids.push_back(m.id);
      runs.push_back(ids);
    }
    EXPECT_EQ(runs[0], runs[1]) << to_string(s);
    EXPECT_LE(runs[0].size(), 40u);
  }
}

TEST(PartitionProblem, KareusReachesTheExhaustiveFrontierWithFewMeasurements) {
  Fixture f;
  PartitionProblem problem(f.p, f.executor);
  SearchOptions o;
  o.strategy = Strategy::exhaustive;
  const SearchResult all = run_search(problem, o);
  // Same reference point for every strategy: 1.1 x the maxima over all configurations.
  std::vector<Point2> every;
  double wx = 0, wy = 0;
  for (const auto& m : all.measured) {
    wx = std::max(wx, m.measurement.time.value());
    wy = std::max(wy, m.measurement.total_energy.value());
    every.push_back({m.measurement.time.value(), m.measurement.total_energy.value()});
  }
  const auto fraction = [&](Strategy strategy, std::uint64_t seed,
                            std::optional<std::size_t> budget) {
    Fixture g;
    PartitionProblem again(g.p, g.executor);
    SearchOptions so;
    so.strategy = strategy;
    so.seed = seed;
    so.budget = budget;
    const SearchResult r = run_search(again, so);
    std::vector<Point2> found;
    for (const auto& m : r.measured)
      found.push_back({m.measurement.time.value(), m.measurement.total_energy.value()});
    return std::pair{
        hypervolume_2d(found, {1.1 * wx, 1.1 * wy}) / hypervolume_2d(every, {1.1 * wx, 1.1 * wy}),
        r.measured.size()};
  };
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto [ours, measured] = fraction(Strategy::kareus, seed, std::nullopt);
    EXPECT_LE(measured, 40u);
    // Issue 12 asks 99 % of the exhaustive frontier at the iteration level; on this one
    // partition the strategy reaches 98-99 %.
    EXPECT_GE(ours, 0.975) << "seed " << seed;
    const auto [random, unused] = fraction(Strategy::random, seed, measured);
    EXPECT_GT(ours, random) << "seed " << seed << ": no better than random search";
  }
}

}  // namespace
}  // namespace kareus::search
