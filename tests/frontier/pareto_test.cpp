// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/pareto.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"

namespace kareus::frontier {
namespace {

std::vector<ParetoPoint> random_points(Rng& rng, int n, bool coarse) {
  std::vector<ParetoPoint> points;
  for (int i = 0; i < n; ++i) {
    // Coarse values make ties in time, energy or both common.
    const double t = coarse ? static_cast<double>(rng.integer(1, 8)) : rng.uniform(1.0, 10.0);
    const double e = coarse ? static_cast<double>(rng.integer(1, 8)) : rng.uniform(1.0, 10.0);
    points.push_back(ParetoPoint{Seconds(t), Joules(e), static_cast<std::uint32_t>(i)});
  }
  return points;
}

bool weakly_dominates(const ParetoPoint& a, const ParetoPoint& b) {
  return a.time <= b.time && a.energy <= b.energy;
}

// Brute force: the points no other point dominates, one of each group of equal points.
std::vector<std::pair<double, double>> brute_force_front(const std::vector<ParetoPoint>& points) {
  std::vector<std::pair<double, double>> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
      if (i == j) continue;
      const bool strictly =
          weakly_dominates(points[j], points[i]) &&
          (points[j].time < points[i].time || points[j].energy < points[i].energy);
      dominated = strictly;
    }
    if (!dominated) front.emplace_back(points[i].time.value(), points[i].energy.value());
  }
  std::sort(front.begin(), front.end());
  front.erase(std::unique(front.begin(), front.end()), front.end());
  return front;
}

std::vector<std::pair<double, double>> values(const ParetoSet& set) {
  std::vector<std::pair<double, double>> out;
  for (const auto& p : set) out.emplace_back(p.time.value(), p.energy.value());
  return out;
}

void expect_strictly_monotone(const ParetoSet& set) {
  for (std::size_t i = 1; i < set.size(); ++i) {
    EXPECT_LT(set[i - 1].time, set[i].time);
    EXPECT_GT(set[i - 1].energy, set[i].energy);
  }
}

TEST(ParetoSet, ExactPruneEqualsBruteForce) {
  Rng rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    const auto points = random_points(rng, static_cast<int>(rng.integer(1, 40)), trial % 2 == 0);
    const auto set = ParetoSet::from_points(points);
    EXPECT_EQ(values(set), brute_force_front(points));
    expect_strictly_monotone(set);
  }
}

TEST(ParetoSet, InsertOneByOneEqualsBruteForce) {
  Rng rng(2);
  for (int trial = 0; trial < 300; ++trial) {
    const auto points = random_points(rng, static_cast<int>(rng.integer(1, 40)), trial % 2 == 0);
    ParetoSet set;
    for (const auto& p : points) set.insert(p);
    EXPECT_EQ(values(set), brute_force_front(points));
    expect_strictly_monotone(set);
  }
}

TEST(ParetoSet, InsertReportsWhetherThePointWasKept) {
  ParetoSet set;
  EXPECT_TRUE(set.insert({Seconds(2), Joules(2), 0}));
  EXPECT_FALSE(set.insert({Seconds(2), Joules(2), 1}));
  EXPECT_FALSE(set.insert({Seconds(3), Joules(2), 2}));
  EXPECT_TRUE(set.insert({Seconds(1), Joules(3), 3}));
  EXPECT_TRUE(set.insert({Seconds(1), Joules(1), 4}));
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].first, 4u);
}

TEST(ParetoSet, TolerancePruneKeepsACoverForEveryPoint) {
  Rng rng(3);
  const Tolerance tolerance{0.05, Seconds(0.1), Joules(0.2)};
  for (int trial = 0; trial < 300; ++trial) {
    const auto points = random_points(rng, static_cast<int>(rng.integer(1, 60)), false);
    const auto exact = ParetoSet::from_points(points);
    const auto pruned = ParetoSet::from_points(points, tolerance);
    EXPECT_LE(pruned.size(), exact.size());
    expect_strictly_monotone(pruned);
    for (const auto& p : pruned) {
      bool from_input = false;
      for (const auto& q : points) from_input |= q.first == p.first && q.time == p.time;
      EXPECT_TRUE(from_input);
    }
    for (const auto& p : points) {
      bool covered = false;
      for (const auto& q : pruned) {
        covered |= q.time.value() <= p.time.value() * 1.05 + 0.1 + 1e-12 &&
                   q.energy.value() <= p.energy.value() * 1.05 + 0.2 + 1e-12;
      }
      EXPECT_TRUE(covered) << "point (" << p.time.value() << ", " << p.energy.value() << ")";
    }
  }
}

TEST(ParetoSet, ToleranceThinsADenseFront) {
  std::vector<ParetoPoint> points;
  for (int i = 0; i < 1000; ++i)
    points.push_back({Seconds(1.0 + i * 1e-3), Joules(2.0 - i * 1e-3), static_cast<unsigned>(i)});
  EXPECT_EQ(ParetoSet::from_points(points).size(), 1000u);
  const auto thin = ParetoSet::from_points(points, Tolerance{0.0, Seconds(0.0), Joules(0.0999)});
  EXPECT_EQ(thin.size(), 10u);
  EXPECT_THROW(ParetoSet::from_points(points, Tolerance{-0.1}), Error);
}

TEST(ParetoSet, MergeEqualsPruneOfUnion) {
  Rng rng(4);
  for (int trial = 0; trial < 200; ++trial) {
    const auto pa = random_points(rng, static_cast<int>(rng.integer(0, 30)), trial % 2 == 0);
    const auto pb = random_points(rng, static_cast<int>(rng.integer(0, 30)), trial % 2 == 0);
    auto all = pa;
    all.insert(all.end(), pb.begin(), pb.end());
    const auto merged = merge(ParetoSet::from_points(pa), ParetoSet::from_points(pb));
    EXPECT_EQ(values(merged), brute_force_front(all));
  }
}

TEST(ParetoSet, MinkowskiSumEqualsPruneOfAllPairwiseSums) {
  Rng rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const bool coarse = trial % 3 == 0;
    const Tolerance tolerance =
        trial % 2 == 0 ? Tolerance{} : Tolerance{0.01, Seconds(0.05), Joules(0.05)};
    const auto a =
        ParetoSet::from_points(random_points(rng, static_cast<int>(rng.integer(1, 30)), coarse));
    const auto b =
        ParetoSet::from_points(random_points(rng, static_cast<int>(rng.integer(1, 30)), coarse));
    std::vector<ParetoPoint> sums;
    for (std::uint32_t i = 0; i < a.size(); ++i)
      for (std::uint32_t j = 0; j < b.size(); ++j)
        sums.push_back({a[i].time + b[j].time, a[i].energy + b[j].energy, i, j});
    const auto expected = ParetoSet::from_points(sums, tolerance);
    const auto sum = minkowski_sum(a, b, tolerance);
    ASSERT_EQ(sum.size(), expected.size());
    for (std::size_t k = 0; k < sum.size(); ++k) {
      EXPECT_EQ(sum[k].time, expected[k].time);
      EXPECT_EQ(sum[k].energy, expected[k].energy);
      // The parent indices trace the point back to its operands.
      EXPECT_EQ(sum[k].time, a[sum[k].first].time + b[sum[k].second].time);
      EXPECT_EQ(sum[k].energy, a[sum[k].first].energy + b[sum[k].second].energy);
    }
  }
}

TEST(ParetoSet, SummingManySetsStaysSmallWithTolerance) {
  Rng rng(6);
  const Tolerance tolerance{1e-3, Seconds(0.0), Joules(0.0)};
  ParetoSet total = ParetoSet::from_points(random_points(rng, 50, false));
  for (int k = 0; k < 40; ++k)
    total = minkowski_sum(total, ParetoSet::from_points(random_points(rng, 50, false)), tolerance);
  // Relative tolerance 1e-3 on a front spanning a few x in time allows about ln(range)/1e-3 points.
  EXPECT_LT(total.size(), 3000u);
  EXPECT_GT(total.size(), 10u);
}

TEST(ParetoSet, ScaleMultipliesEveryPointAndKeepsTheIndex) {
  const auto set = ParetoSet::from_points(
      {{Seconds(1), Joules(5), 7}, {Seconds(2), Joules(3), 8}, {Seconds(4), Joules(2), 9}});
  const auto scaled = scale(set, 3);
  ASSERT_EQ(scaled.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(scaled[i].time.value(), 3 * set[i].time.value());
    EXPECT_DOUBLE_EQ(scaled[i].energy.value(), 3 * set[i].energy.value());
    EXPECT_EQ(scaled[i].first, i);
  }
  EXPECT_THROW(scale(set, 0), Error);
}

}  // namespace
}  // namespace kareus::frontier
