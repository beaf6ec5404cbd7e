// SPDX-License-Identifier: Apache-2.0
// Selection rules (deadline, energy budget, max throughput) and the artifact's 10-point sampling.
#include <gtest/gtest.h>

#include <set>

#include "common/error_of.hpp"
#include "hand_made.hpp"
#include "kareus/planner/selection.hpp"

namespace kareus::planner {
namespace {

using kareus::testing::error_of;
using testing::hand_made;

const MethodResult kFour =
    hand_made(Method::kKareus, {{4.0, 200}, {4.5, 150}, {5.0, 120}, {6.0, 100}});

TEST(Selection, DeadlineTakesTheLeastEnergyWithinIt) {
  EXPECT_EQ(select_by_deadline(kFour, Seconds(4.7)).energy, Joules(150));
  EXPECT_EQ(select_by_deadline(kFour, Seconds(5.0)).energy, Joules(120));  // bound inclusive
  EXPECT_EQ(select_by_deadline(kFour, Seconds(100)).energy, Joules(100));
  EXPECT_EQ(select_by_deadline(kFour, Seconds(4.0)).energy, Joules(200));
}

TEST(Selection, EnergyBudgetTakesTheFastestWithinIt) {
  EXPECT_EQ(select_by_energy_budget(kFour, Joules(160)).time, Seconds(4.5));
  EXPECT_EQ(select_by_energy_budget(kFour, Joules(120)).time, Seconds(5.0));  // bound inclusive
  EXPECT_EQ(select_by_energy_budget(kFour, Joules(1e9)).time, Seconds(4.0));
  EXPECT_EQ(select_by_energy_budget(kFour, Joules(100)).time, Seconds(6.0));
}

TEST(Selection, MaxThroughputIsTheFastestPoint) {
  EXPECT_EQ(select_max_throughput(kFour).time, Seconds(4.0));
  EXPECT_EQ(select_max_throughput(kFour).plan, 3u);
}

TEST(Selection, UnreachableOrInvalidBoundsNameTheBoundAndTheRange) {
  const auto below = error_of([] { select_by_deadline(kFour, Seconds(3.9)); });
  // The library serves the CLI, C and Python alike, so it names the bound, not a flag.
  EXPECT_NE(below.find("deadline = 3.9"), std::string::npos) << below;
  EXPECT_NE(below.find("3.9"), std::string::npos) << below;
  EXPECT_NE(below.find("4.000-6.000 s"), std::string::npos) << below;
  const auto poor = error_of([] { select_by_energy_budget(kFour, Joules(99)); });
  EXPECT_NE(poor.find("energy budget = 99"), std::string::npos) << poor;
  EXPECT_NE(poor.find("100-200 J"), std::string::npos) << poor;
  for (double bad : {0.0, -1.0}) {
    EXPECT_NE(error_of([&] { select_by_deadline(kFour, Seconds(bad)); }).find("positive"),
              std::string::npos);
    EXPECT_NE(error_of([&] { select_by_energy_budget(kFour, Joules(bad)); }).find("positive"),
              std::string::npos);
  }
}

TEST(Selection, UnknownMethodListsTheMethods) {
  const auto e = error_of([] { parse_method("zeus"); });
  EXPECT_NE(e.find("zeus"), std::string::npos) << e;
  EXPECT_NE(e.find("nanobatch-perseus"), std::string::npos) << e;
  for (Method m : {Method::kMegatron, Method::kPerseus, Method::kNanobatchPerseus, Method::kKareus,
                   Method::kKareusExhaustive})
    EXPECT_EQ(parse_method(to_string(m)), m);
}

// A frontier of n points whose plan index is its position from the slow end, as the artifact
// numbers its plan files.
MethodResult frontier_of(std::size_t n) {
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = n; i-- > 0;)
    points.push_back({10.0 - 0.001 * static_cast<double>(i), 1000.0 + static_cast<double>(i)});
  return hand_made(Method::kPerseus, points);
}

std::vector<std::uint32_t> plans_of(const std::vector<IterationPoint>& points) {
  std::vector<std::uint32_t> out;
  for (const auto& p : points) out.push_back(p.plan);
  return out;
}

TEST(TenPointFrontier, ReproducesTheArtifactSamplesFor2496Plans) {
  const auto m = frontier_of(2496);
  ASSERT_EQ(m.frontier.front().plan, 2495u);
  EXPECT_EQ(plans_of(ten_point_frontier(m)),
            (std::vector<std::uint32_t>{324, 658, 992, 1326, 1660, 1827, 1994, 2161, 2328, 2495}));
}

TEST(TenPointFrontier, AnySizeGivesTenDistinctPointsEndingAtTheFastest) {
  for (std::size_t n = 1; n <= 600; ++n) {
    SCOPED_TRACE(n);
    const auto plans = plans_of(ten_point_frontier(frontier_of(n)));
    ASSERT_EQ(plans.size(), std::min<std::size_t>(n, 10));
    EXPECT_EQ(plans.back(), n - 1);
    EXPECT_TRUE(std::is_sorted(plans.begin(), plans.end()));
    EXPECT_EQ(std::set<std::uint32_t>(plans.begin(), plans.end()).size(), plans.size());
  }
}

TEST(TenPointFrontier, DenserAtTheFastEnd) {
  const auto plans = plans_of(ten_point_frontier(frontier_of(300)));
  EXPECT_GT(plans[1] - plans[0], plans[9] - plans[8]);
}

}  // namespace
}  // namespace kareus::planner
