// SPDX-License-Identifier: Apache-2.0
// The partition problem on the emulator, and the strategies on it.
#include "kareus/search/partition_problem.hpp"

#include <gtest/gtest.h>

#include <map>

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

// An executor whose readings change with every call, as a real GPU's do (temperature, noise).
class DriftingExecutor : public executor::Executor {
 public:
  explicit DriftingExecutor(executor::Executor& inner) : inner_(inner) {}
  std::string name() const override { return "drifting"; }
  const GpuSpec& gpu() const override { return inner_.gpu(); }
  const executor::MeasurementProtocol& protocol() const override { return inner_.protocol(); }
  std::vector<executor::Measurement> measure(
      const partition::Partition& p, const std::vector<partition::ExecConfig>& configs) override {
    ++calls;
    auto out = inner_.measure(p, configs);
    for (auto& m : out) m.time = m.time * (1.0 + 0.1 * calls);
    return out;
  }
  int calls = 0;

 private:
  executor::Executor& inner_;
};

// The datasheet roofline prior must not peek at the executor: its features are the same whatever
// was measured before, and the same as over an executor that measures differently.
TEST(PartitionProblem, PhysicalFeaturesIgnoreMeasurements) {
  Fixture f;
  DriftingExecutor drifting(f.executor);
  PartitionProblem problem(f.p, drifting);
  const PartitionProblem steady(f.p, f.executor);
  std::vector<std::vector<double>> before;
  for (std::size_t id = 0; id < problem.size(); ++id) {
    before.push_back(problem.physical_features(id));
    EXPECT_EQ(before.back(), steady.physical_features(id)) << problem.key(id);
  }
  EXPECT_EQ(drifting.calls, 0);
  problem.measure({100, 3});
  problem.measure({100});
  for (std::size_t id = 0; id < problem.size(); ++id)
    EXPECT_EQ(problem.physical_features(id), before[id]) << problem.key(id);
  EXPECT_EQ(drifting.calls, 2);
}

TEST(PartitionProblem, EachStrategyIsDeterministicUnderASeed) {
  for (Strategy s : {Strategy::kRandom, Strategy::kPaper, Strategy::kKareus}) {
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

std::vector<Point2> points_of(const SearchResult& r) {
  std::vector<Point2> out;
  for (const auto& m : r.measured)
    out.push_back({m.measurement.time.value(), m.measurement.total_energy.value()});
  return out;
}

SearchResult search_once(Strategy strategy, std::uint64_t seed, std::optional<std::size_t> budget) {
  Fixture f;
  PartitionProblem problem(f.p, f.executor);
  SearchOptions o;
  o.strategy = strategy;
  o.seed = seed;
  o.budget = budget;
  return run_search(problem, o);
}

TEST(PartitionProblem, KareusReachesTheExhaustiveFrontierWithFewMeasurements) {
  const std::vector<Point2> every = points_of(search_once(Strategy::kExhaustive, 0, std::nullopt));
  // Same reference point for every strategy: 1.1 x the maxima over all configurations.
  Point2 reference{0, 0};
  for (const Point2& p : every)
    reference = {std::max(reference.x, 1.1 * p.x), std::max(reference.y, 1.1 * p.y)};
  const double all = hypervolume_2d(every, reference);
  // Ten seeds, judged on the mean: on a single seed random search with kareus's budget beats
  // kareus about one time in five on this partition (both are near 97-99 %), so a per-seed
  // comparison cannot be both stable and sharp. Over seeds 1-20 kareus averages 98.4 % and
  // random search 97.5 %. The reference stays wide: with one at 1.05 x the maxima over the
  // exhaustive front, which credits only points near it, kareus does not beat random search
  // today (seeds 1-5 average 88.9 % against 88.5 %).
  double ours_sum = 0, random_sum = 0;
  constexpr int kSeeds = 10;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const SearchResult ours = search_once(Strategy::kKareus, seed, std::nullopt);
    // The search's budget: at most half of what the artifact's MBO would take on this partition.
    EXPECT_LE(ours.measured.size(),
              paper_measurements(size_class_of(Fixture{}.p.slots.size())) / 2);
    const SearchResult random = search_once(Strategy::kRandom, seed, ours.measured.size());
    ours_sum += hypervolume_2d(points_of(ours), reference) / all;
    random_sum += hypervolume_2d(points_of(random), reference) / all;
  }
  // The target is 99 % of the exhaustive frontier at the iteration level; on this one
  // partition the strategy reaches 98 % on average.
  EXPECT_GE(ours_sum / kSeeds, 0.975);
  EXPECT_GE(ours_sum / kSeeds, random_sum / kSeeds + 0.005) << "no better than random search";
}

// The model-guided picks take unmeasured neighbours (one clock, SM or slot step) of per-clock
// front points first, and look elsewhere only when no neighbour is predicted to add to a front:
// within a batch no neighbour follows a pick from elsewhere (gains only fall as the batch's
// predictions join the fronts), and on these two CP2+TP4 keys neighbours are most of the picks
// (all 48 over seeds 1-3; picked by predicted gain alone, 10 of them).
TEST(PartitionProblem, KareusPicksFrontNeighboursBeforeAnythingElse) {
  const auto w = testing::llama3b(4, 2);
  executor::EmulatorExecutor executor{emulator::Emulator(w.gpu)};
  std::size_t neighbours = 0, elsewhere = 0;
  for (const auto& p : partition::representative_partitions(w)) {
    if (p.key != "fwd_qkv_ag" && p.key != "bwd_qkv_rs") continue;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      PartitionProblem problem(p, executor);
      SearchOptions o;
      o.strategy = Strategy::kKareus;
      o.seed = seed;
      std::map<std::size_t, std::vector<std::string>> batches;
      for (const auto& m : run_search(problem, o).measured) {
        if (m.selected_by == "clock_front_neighbour" || m.selected_by == "hvi_clock")
          batches[m.batch].push_back(m.selected_by);
      }
      for (const auto& [batch, labels] : batches) {
        bool left = false;
        for (const auto& label : labels) {
          if (label == "hvi_clock") {
            left = true;
            ++elsewhere;
          } else {
            EXPECT_FALSE(left) << p.key << ", seed " << seed << ", batch " << batch
                               << ": a front neighbour picked after a pick from elsewhere";
            ++neighbours;
          }
        }
      }
    }
  }
  EXPECT_GT(neighbours, 2 * elsewhere)
      << neighbours << " neighbours, " << elsewhere << " elsewhere";
}

}  // namespace
}  // namespace kareus::search
