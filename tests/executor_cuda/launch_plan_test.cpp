// SPDX-License-Identifier: Apache-2.0
// The translation of partitions into CUDA launches keeps every kernel's FLOPs and bytes and the
// chosen launch point; it needs no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/executor/cuda_launch_plan.hpp"
#include "test_workloads.hpp"

namespace kareus::executor::cuda {
namespace {

using testing::llama3b;
using workload::Direction;

constexpr int kH100Sms = 132;  // NVIDIA H100 SXM5 datasheet

partition::ExecConfig first_config(const partition::Partition& p) {
  return {p.launch_options.front().name, 12, MHz(1980)};
}

class EveryPartition : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(EveryPartition, KeepsEachKernelsFlopsAndBytes) {
  const auto [tp, cp] = GetParam();
  const auto w = llama3b(tp, cp);
  for (Direction d : {Direction::kForward, Direction::kBackward}) {
    for (const auto& p : partition::build_partitions(w, d, 2)) {
      partition::ExecConfig config{p.slots.front().name, 12, MHz(1980)};
      const LaunchPlan plan = plan_partition(p, config, kH100Sms);
      ASSERT_EQ(plan.compute.size(), p.compute.size()) << p.key;
      for (std::size_t i = 0; i < p.compute.size(); ++i) {
        const workload::Kernel& k = p.compute[i];
        const ComputeLaunch& c = plan.compute[i];
        EXPECT_EQ(c.name, k.name);
        if (c.gemm) {
          const double flops =
              2.0 * c.gemm->m * c.gemm->n * c.gemm->k * c.gemm->batch * c.gemm->calls;
          EXPECT_NEAR(flops / k.flops, 1.0, 1e-9) << p.key << " " << k.name;
        } else {
          ASSERT_TRUE(c.elementwise.has_value()) << k.name;
          const double bytes = 2.0 * c.elementwise->elements * (c.elementwise->inputs + 1);
          // Whole bf16 pairs per stream: at most one pair per stream off.
          EXPECT_NEAR(bytes, k.bytes, 4.0 * (c.elementwise->inputs + 1)) << k.name;
          EXPECT_EQ(c.elementwise->elements % 2, 0);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, EveryPartition,
                         ::testing::Values(std::pair{8, 1}, std::pair{2, 1}, std::pair{4, 2}));

TEST(LaunchPlan, AttentionRunsTwoProductsForwardAndFiveBackward) {
  const auto w = llama3b(8, 1);
  auto calls = [&](Direction d) {
    for (const auto& p : partition::build_partitions(w, d, 1)) {
      const LaunchPlan plan = plan_partition(p, {p.slots.front().name, 3, MHz(1980)}, kH100Sms);
      for (const auto& c : plan.compute)
        if (c.name.rfind("attention", 0) == 0) return c.gemm->calls;
    }
    return 0;
  };
  EXPECT_EQ(calls(Direction::kForward), 2);
  EXPECT_EQ(calls(Direction::kBackward), 5);
}

TEST(LaunchPlan, CollectiveCopiesItsBusBytesOnTheChosenSms) {
  const auto w = llama3b(8, 1);
  const auto parts = partition::representative_partitions(w);
  const auto& p = parts.front();
  ASSERT_TRUE(p.comm.has_value());
  ASSERT_EQ(p.comm->collective, workload::Collective::kAllReduce);
  const LaunchPlan plan = plan_partition(p, first_config(p), kH100Sms);
  ASSERT_TRUE(plan.comm.has_value());
  EXPECT_EQ(plan.comm->sms, 12);
  EXPECT_EQ(plan.comm->bytes % 16, 0);
  EXPECT_NEAR(static_cast<double>(plan.comm->bytes), p.comm->comm_bytes * 2.0 * 7 / 8, 16.0);
}

TEST(LaunchPlan, BusBytesFollowTheStandardVolumeFactors) {
  workload::Kernel k;
  k.kind = workload::KernelKind::kCollective;
  k.comm_bytes = 1000;
  k.group_size = 4;
  k.collective = workload::Collective::kAllReduce;
  EXPECT_DOUBLE_EQ(workload::bus_bytes(k), 1500);
  k.collective = workload::Collective::kAllGather;
  EXPECT_DOUBLE_EQ(workload::bus_bytes(k), 750);
  k.collective = workload::Collective::kReduceScatter;
  EXPECT_DOUBLE_EQ(workload::bus_bytes(k), 750);
  k.collective = workload::Collective::kSendRecv;
  EXPECT_DOUBLE_EQ(workload::bus_bytes(k), 1000);
}

TEST(LaunchPlan, LaunchIndexIsTheSlotsOp) {
  for (const auto& p : partition::representative_partitions(llama3b(4, 2))) {
    for (const auto& slot : p.launch_options) {
      const LaunchPlan plan = plan_partition(p, {slot.name, 5, MHz(1980)}, kH100Sms);
      EXPECT_EQ(plan.launch_index, slot.op_index) << p.key << " " << slot.name;
      EXPECT_LE(plan.launch_index, static_cast<int>(plan.compute.size()));
    }
  }
}

TEST(LaunchPlan, PartitionWithoutCollectiveHasNoComm) {
  const auto parts = partition::build_partitions(llama3b(8, 1), Direction::kForward, 1);
  const auto it = std::find_if(parts.begin(), parts.end(), [](const auto& p) { return !p.comm; });
  ASSERT_NE(it, parts.end());
  EXPECT_FALSE(plan_partition(*it, {"none", 0, MHz(1980)}, kH100Sms).comm.has_value());
}

TEST(LaunchPlan, RejectsUnknownSlotAndSmCountsTheGpuCannotGive) {
  const auto p = partition::representative_partitions(llama3b(8, 1)).front();
  try {
    plan_partition(p, {"bogus_3", 12, MHz(1980)}, kH100Sms);
    FAIL() << "unknown slot accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("bogus_3"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("allowed: norm_0"));
  }
  EXPECT_THROW(plan_partition(p, {"norm_0", 0, MHz(1980)}, kH100Sms), Error);
  EXPECT_THROW(plan_partition(p, {"norm_0", kH100Sms, MHz(1980)}, kH100Sms), Error);
  EXPECT_NO_THROW(plan_partition(p, {"norm_0", kH100Sms - 1, MHz(1980)}, kH100Sms));
}

TEST(LaunchPlan, RejectsAGemmWithoutAShape) {
  auto p = partition::representative_partitions(llama3b(8, 1)).front();
  for (auto& k : p.compute)
    if (k.kind == workload::KernelKind::kGemm) k.gemm_m = 0;
  EXPECT_THROW(plan_partition(p, first_config(p), kH100Sms), Error);
}

TEST(LaunchPlan, BufferSizesCoverEveryLaunch) {
  const auto p = partition::representative_partitions(llama3b(8, 1)).front();
  const LaunchPlan plan = plan_partition(p, first_config(p), kH100Sms);
  for (const auto& c : plan.compute) {
    if (c.gemm) {
      EXPECT_LE(c.gemm->m * c.gemm->k * c.gemm->batch, plan.max_gemm_a());
      EXPECT_LE(c.gemm->k * c.gemm->n * c.gemm->batch, plan.max_gemm_b());
      EXPECT_LE(c.gemm->m * c.gemm->n * c.gemm->batch, plan.max_gemm_c());
    } else {
      EXPECT_LE(c.elementwise->elements, plan.max_elementwise());
    }
  }
}

}  // namespace
}  // namespace kareus::executor::cuda
