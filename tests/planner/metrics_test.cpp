// SPDX-License-Identifier: Apache-2.0
// The paper's metrics (Kareus §6; docs/plan.md, "Metrics") on hand-made frontiers.
#include <gtest/gtest.h>

#include "hand_made.hpp"

namespace kareus::planner {
namespace {

using testing::hand_made;

const MethodResult kMegatron = hand_made(Method::kMegatron, {{5.0, 1000}});
const MethodResult kPerseus = hand_made(Method::kPerseus, {{5.0, 950}, {5.5, 850}, {6.0, 800}});

TEST(Metrics, MaxThroughputComparesFastestPointsWithMegatron) {
  const auto m = hand_made(Method::kKareus, {{4.0, 900}, {4.5, 780}, {5.0, 700}, {5.8, 650}});
  const auto r = compute_metrics(m, &kMegatron, &kPerseus);
  EXPECT_DOUBLE_EQ(*r.max_throughput_time_reduction, 1 - 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(*r.max_throughput_energy_reduction, 1 - 900.0 / 1000.0);
}

TEST(Metrics, IsoTimeAndIsoEnergyCompareWithPerseusEnds) {
  const auto m = hand_made(Method::kKareus, {{4.0, 900}, {4.5, 780}, {5.0, 700}, {5.8, 650}});
  const auto r = compute_metrics(m, &kMegatron, &kPerseus);
  // Deadline = Perseus's fastest time 5.0 s: least energy within it is 700 J vs Perseus's 950 J.
  EXPECT_DOUBLE_EQ(*r.iso_time_energy_reduction, 1 - 700.0 / 950.0);
  // Budget = Perseus's least energy 800 J: fastest within it is 4.5 s vs Perseus's 6.0 s.
  EXPECT_DOUBLE_EQ(*r.iso_energy_time_reduction, 1 - 4.5 / 6.0);
}

TEST(Metrics, AgainstItselfEverythingIsZero) {
  const auto r = compute_metrics(kPerseus, &kPerseus, &kPerseus);
  EXPECT_DOUBLE_EQ(*r.max_throughput_time_reduction, 0.0);
  EXPECT_DOUBLE_EQ(*r.max_throughput_energy_reduction, 0.0);
  EXPECT_DOUBLE_EQ(*r.iso_time_energy_reduction, 0.0);
  EXPECT_DOUBLE_EQ(*r.iso_energy_time_reduction, 0.0);
}

TEST(Metrics, WorseMethodsGetNegativeReductionsOrNone) {
  // Slower than Perseus everywhere and never as frugal: no point meets either bound.
  const auto slow = hand_made(Method::kNanobatchPerseus, {{5.5, 900}, {6.5, 820}});
  const auto r = compute_metrics(slow, &kMegatron, &kPerseus);
  EXPECT_FALSE(r.iso_time_energy_reduction.has_value());
  EXPECT_FALSE(r.iso_energy_time_reduction.has_value());
  EXPECT_DOUBLE_EQ(*r.max_throughput_time_reduction, 1 - 5.5 / 5.0);
  EXPECT_LT(*r.max_throughput_time_reduction, 0.0);
  // Megatron's single point meets the iso-time deadline with more energy than Perseus.
  const auto mega = compute_metrics(kMegatron, &kMegatron, &kPerseus);
  EXPECT_DOUBLE_EQ(*mega.iso_time_energy_reduction, 1 - 1000.0 / 950.0);
  EXPECT_FALSE(mega.iso_energy_time_reduction.has_value());
}

TEST(Metrics, MissingBaselinesLeaveTheirMetricsEmpty) {
  const auto r = compute_metrics(kPerseus, nullptr, nullptr);
  EXPECT_FALSE(r.max_throughput_time_reduction.has_value());
  EXPECT_FALSE(r.max_throughput_energy_reduction.has_value());
  EXPECT_FALSE(r.iso_time_energy_reduction.has_value());
  EXPECT_FALSE(r.iso_energy_time_reduction.has_value());
}

}  // namespace
}  // namespace kareus::planner
