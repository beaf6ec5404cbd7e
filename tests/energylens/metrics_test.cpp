// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kareus::energylens {
namespace {

Sample row(const std::string& scenario, double energy) {
  Sample s;
  s.scenario = scenario;
  s.energy = Joules(energy);
  return s;
}

TEST(EnergyLensMetrics, MapeIsMeanAbsoluteRelativeErrorInPercent) {
  EXPECT_DOUBLE_EQ(mape_percent({100.0, 200.0}, {110.0, 150.0}), 17.5);
}

TEST(EnergyLensMetrics, Top1AndPairwiseOnHandMadeScenarios) {
  // Scenario A: measured 10 < 20 < 30, prediction ranks 20 first: Top-1 miss, 2 of 3 pairs.
  // Scenario B: measured 5 < 7, prediction right: Top-1 hit, 1 of 1 pair.
  // Scenario C: a single row, so it counts for neither measure.
  const std::vector<Sample> s = {row("A", 10), row("A", 20), row("A", 30),
                                 row("B", 5),  row("B", 7),  row("C", 1)};
  const std::vector<std::size_t> rows = {0, 1, 2, 3, 4, 5};
  const SelectionScore score = selection_score(s, rows, {2.0, 1.0, 3.0, 0.1, 0.2, 9.0});
  EXPECT_EQ(score.scenarios, 2u);
  EXPECT_DOUBLE_EQ(score.top1, 0.5);
  // A's pick costs 20 / 10 - 1, B's nothing: the mean over the two scenarios.
  EXPECT_DOUBLE_EQ(score.regret, 0.5);
  EXPECT_EQ(score.pairs, 4u);
  EXPECT_DOUBLE_EQ(score.pairwise, 3.0 / 4.0);
}

TEST(EnergyLensMetrics, ParallelismPairsAreThoseWhoseDegreesDiffer) {
  // Rows 0 and 1 share TP/PP/DP (batch differs); row 2 has TP 2, row 3 DP 2. Of the five pairs
  // with row 2 or 3, the prediction orders (0, 2) and (1, 2) right; row 3, measured worst, is
  // predicted best, so (0, 3), (1, 3) and (2, 3) are wrong.
  std::vector<Sample> s = {row("A", 1), row("A", 2), row("A", 3), row("A", 4)};
  s[2].tp = 2.0;
  s[3].dp = 2.0;
  const SelectionScore score = selection_score(s, {0, 1, 2, 3}, {1.0, 2.0, 3.0, 0.5});
  EXPECT_EQ(score.parallelism_pairs, 5u);
  EXPECT_DOUBLE_EQ(score.pairwise_parallelism, 2.0 / 5.0);
  const SelectionScore same = selection_score(s, {0, 1}, {1.0, 2.0});
  EXPECT_EQ(same.parallelism_pairs, 0u);
  EXPECT_TRUE(std::isnan(same.pairwise_parallelism));
}

TEST(EnergyLensMetrics, TiesAreDocumentedHalves) {
  // A predicted tie between the best and another row: Top-1 credit 1/2, that pair 1/2.
  // A measured tie (rows 2 and 3): the pair is skipped.
  const std::vector<Sample> s = {row("A", 1), row("A", 2), row("A", 3), row("A", 3)};
  const SelectionScore score = selection_score(s, {0, 1, 2, 3}, {1.0, 1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(score.top1, 0.5);
  EXPECT_DOUBLE_EQ(score.regret, 0.5);  // the tied pick averages 1 and 2 J: 1.5 / 1 - 1
  EXPECT_EQ(score.pairs, 5u);
  EXPECT_DOUBLE_EQ(score.pairwise, 4.5 / 5.0);
}

TEST(EnergyLensMetrics, SeparatedPairsAreDistinctConfigurationsMoreThanFivePercentApart) {
  // Batches 1, 2, 4 measured 100, 103, 120 J, and a repeat of batch 4 at 130 J. Of the six
  // pairs only (1, 4), (2, 4), (1, 4'), (2, 4') are distinct configurations more than 5 % apart
  // (100 vs 103 is within 5 %; 120 vs 130 is one configuration run twice). The prediction orders
  // (1, 2) and the repeat wrong, and of the separated pairs only (1, 4') wrong: 3 of 4.
  std::vector<Sample> s = {row("A", 100), row("A", 103), row("A", 120), row("A", 130)};
  s[0].batch = 1.0;
  s[1].batch = 2.0;
  s[2].batch = s[3].batch = 4.0;
  const SelectionScore score = selection_score(s, {0, 1, 2, 3}, {2.0, 1.0, 5.0, 1.5});
  EXPECT_EQ(score.pairs, 6u);
  EXPECT_EQ(score.separated_pairs, 4u);
  EXPECT_DOUBLE_EQ(score.pairwise_separated, 3.0 / 4.0);
  // Exactly at the threshold (105 / 100 - 1 = kSeparation) a pair is not separated.
  std::vector<Sample> e = {row("B", 100), row("B", 100 * (1.0 + kSeparation))};
  e[1].batch = 2.0;
  EXPECT_EQ(selection_score(e, {0, 1}, {1.0, 2.0}).separated_pairs, 0u);
  EXPECT_TRUE(std::isnan(selection_score(e, {0, 1}, {1.0, 2.0}).pairwise_separated));
}

TEST(EnergyLensMetrics, OnlyTheListedRowsCount) {
  const std::vector<Sample> s = {row("A", 1), row("A", 2), row("A", 3)};
  const SelectionScore score = selection_score(s, {1, 2}, {5.0, 4.0});
  EXPECT_DOUBLE_EQ(score.top1, 0.0);
  EXPECT_DOUBLE_EQ(score.pairwise, 0.0);
  const SelectionScore none = selection_score(s, {1}, {5.0});
  EXPECT_TRUE(std::isnan(none.top1));
  EXPECT_TRUE(std::isnan(none.regret));
  EXPECT_TRUE(std::isnan(none.pairwise));
}

}  // namespace
}  // namespace kareus::energylens
