// SPDX-License-Identifier: Apache-2.0
// The configurations of the real-GPU check and the rank comparison it reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/executor/gpu_check.hpp"
#include "test_workloads.hpp"

namespace kareus::executor {
namespace {

using ::testing::ElementsAre;
using testing::llama3b;

TEST(GpuCheckPlan, EveryKeyEverySlotThreeSmCountsFromItsRange) {
  const auto w = llama3b(8, 1);
  const auto cases = plan_gpu_check(w, MHz(1755), {});
  std::vector<std::string> keys;
  for (const auto& c : cases) keys.push_back(c.partition.key);
  EXPECT_EQ(keys, partition::partition_keys(w));
  for (const auto& c : cases) {
    ASSERT_EQ(c.configs.size(), 3 * c.partition.launch_options.size()) << c.partition.key;
    std::set<int> sms;
    for (const auto& config : c.configs) {
      EXPECT_EQ(config.clock, MHz(1755));
      EXPECT_NE(c.partition.find_slot(config.slot), nullptr);
      sms.insert(config.comm_sms);
    }
    // TP8: the search range is 3..30 in steps of 3.
    EXPECT_THAT(sms, ElementsAre(3, 18, 30));
  }
}

TEST(GpuCheckPlan, SmallGroupsUseTheirOwnRange) {
  for (const auto& c : plan_gpu_check(llama3b(2, 1), MHz(1980), {})) {
    std::set<int> sms;
    for (const auto& config : c.configs) sms.insert(config.comm_sms);
    EXPECT_THAT(sms, ElementsAre(1, 11, 20));
  }
}

TEST(GpuCheckPlan, GivenSmCountsAndFirstSlotsOnly) {
  GpuCheckOptions o;
  o.comm_sms = {4, 8};
  o.slots_per_key = 1;
  for (const auto& c : plan_gpu_check(llama3b(4, 2), MHz(1980), o)) {
    ASSERT_EQ(c.configs.size(), 2u);
    EXPECT_EQ(c.configs[0].slot, c.partition.launch_options.front().name);
    EXPECT_EQ(c.configs[0].comm_sms, 4);
    EXPECT_EQ(c.configs[1].comm_sms, 8);
  }
}

TEST(GpuCheckPlan, RejectsBadInput) {
  GpuCheckOptions o;
  o.comm_sms = {0};
  EXPECT_THROW(plan_gpu_check(llama3b(2, 1), MHz(1980), o), Error);
  try {
    plan_gpu_check(llama3b(1, 1), MHz(1980), {});
    FAIL() << "a workload without collectives was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("tp >= 2"));
  }
}

TEST(RankAgreement, SameOrderReversedOrderAndTies) {
  const std::vector<double> reference{1.0, 2.0, 3.0, 4.0};
  EXPECT_TRUE(rank_agreement(reference, {10, 20, 30, 40}, 0.0).same());
  EXPECT_EQ(rank_agreement(reference, {10, 20, 30, 40}, 0.0).pairs, 6);
  const RankAgreement reversed = rank_agreement(reference, {4, 3, 2, 1}, 0.0);
  EXPECT_EQ(reversed.agreeing, 0);
  EXPECT_FALSE(reversed.same());
  // 1.00 and 1.01 are a tie within 2 %: their measured order does not count.
  const RankAgreement ties = rank_agreement({1.0, 1.01, 2.0}, {5, 4, 9}, 0.02);
  EXPECT_EQ(ties.pairs, 2);
  EXPECT_TRUE(ties.same());
  // A measured tie where the reference separates is not agreement.
  EXPECT_FALSE(rank_agreement({1.0, 2.0}, {3, 3}, 0.0).same());
  EXPECT_THROW(rank_agreement({1.0}, {1.0, 2.0}, 0.0), Error);
}

}  // namespace
}  // namespace kareus::executor
