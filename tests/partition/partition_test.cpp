// SPDX-License-Identifier: Apache-2.0
#include "kareus/partition/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::partition {
namespace {

using testing::llama3b;
using workload::Direction;

std::vector<std::string> keys_of(const std::vector<Partition>& parts) {
  std::vector<std::string> keys;
  for (const auto& p : parts) keys.push_back(p.key);
  return keys;
}

std::vector<std::string> slot_names(const std::vector<LaunchSlot>& slots) {
  std::vector<std::string> names;
  for (const auto& s : slots) names.push_back(s.name);
  return names;
}

TEST(Partition, Tp8KeysAndCounts) {
  const auto w = llama3b(8, 1);
  EXPECT_EQ(partition_keys(w),
            (std::vector<std::string>{"fwd_attn", "fwd_mlp", "bwd_mlp", "bwd_attn"}));
  for (int layers : {1, 2, 3}) {
    const auto fwd = build_partitions(w, Direction::kForward, layers);
    const auto bwd = build_partitions(w, Direction::kBackward, layers);
    ASSERT_EQ(fwd.size(), static_cast<std::size_t>(4 * layers + 2));
    ASSERT_EQ(bwd.size(), static_cast<std::size_t>(4 * layers + 2));
    for (int l = 0; l < layers; ++l) {
      const auto f = keys_of({fwd.begin() + 4 * l, fwd.begin() + 4 * l + 4});
      EXPECT_EQ(f, (std::vector<std::string>{"fwd_attn", "fwd_attn", "fwd_mlp", "fwd_mlp"}));
      const auto b = keys_of({bwd.begin() + 4 * l, bwd.begin() + 4 * l + 4});
      EXPECT_EQ(b, (std::vector<std::string>{"bwd_mlp", "bwd_mlp", "bwd_attn", "bwd_attn"}));
    }
    EXPECT_EQ(fwd[fwd.size() - 2].key, "fwd_trail");
    EXPECT_TRUE(fwd[fwd.size() - 2].fixed);
    EXPECT_EQ(fwd.back().key, "");
    EXPECT_FALSE(fwd.back().comm.has_value());
  }
}

TEST(Partition, Cp2Tp4KeysAndCounts) {
  const auto w = llama3b(4, 2);
  EXPECT_EQ(partition_keys(w),
            (std::vector<std::string>{"fwd_qkv_ar", "fwd_qkv_ag", "fwd_ao_ag", "fwd_ao_ar",
                                      "fwd_mlp", "bwd_mlp", "bwd_o_ar", "bwd_o_ag", "bwd_a_ag",
                                      "bwd_a_rs", "bwd_qkv_rs", "bwd_qkv_ar"}));
  const auto fwd = build_partitions(w, Direction::kForward, 2);
  const auto bwd = build_partitions(w, Direction::kBackward, 2);
  EXPECT_EQ(fwd.size(), 6u * 2 + 2);
  EXPECT_EQ(bwd.size(), 8u * 2 + 2);
  // The second layer of each direction, one layer's worth of keys in execution order.
  EXPECT_EQ(keys_of({fwd.begin() + 6, fwd.begin() + 12}),
            (std::vector<std::string>{"fwd_qkv_ar", "fwd_qkv_ag", "fwd_ao_ag", "fwd_ao_ar",
                                      "fwd_mlp", "fwd_mlp"}));
  EXPECT_EQ(keys_of({bwd.begin() + 8, bwd.begin() + 16}),
            (std::vector<std::string>{"bwd_mlp", "bwd_mlp", "bwd_o_ar", "bwd_o_ag", "bwd_a_ag",
                                      "bwd_a_rs", "bwd_qkv_rs", "bwd_qkv_ar"}));
}

// Every partition a stage runs that a search could configure has a key the planner searches, for
// any layout and depth: with CP and no TP the first layer's QKV projection is a segment that no
// later layer has, and planning such a job failed on its missing key.
TEST(Partition, EveryConfigurablePartitionHasASearchedKey) {
  for (const auto& [tp, cp] : {std::pair{8, 1}, {4, 2}, {1, 2}, {2, 4}, {1, 8}}) {
    const auto w = llama3b(tp, cp);
    const auto keys = partition_keys(w);
    for (Direction d : {Direction::kForward, Direction::kBackward})
      for (int layers : {1, 2, 5})
        for (const Partition& p : build_partitions(w, d, layers)) {
          if (!p.comm || p.fixed) continue;
          EXPECT_NE(std::find(keys.begin(), keys.end(), p.key), keys.end())
              << "TP " << tp << " CP " << cp << ", " << layers << " layers: " << p.key;
        }
  }
}

TEST(Partition, SlotNamesAndLaunchOptions) {
  const auto tp8 = representative_partitions(llama3b(8, 1));
  ASSERT_EQ(tp8.front().key, "fwd_attn");
  EXPECT_EQ(slot_names(tp8.front().slots),
            (std::vector<std::string>{"norm_0", "linear_0", "rope_0", "attn_0", "linear_1"}));
  // Launching the AllReduce at the last slot always exposes it, so the search never tries it.
  EXPECT_EQ(slot_names(tp8.front().launch_options),
            (std::vector<std::string>{"norm_0", "linear_0", "rope_0", "attn_0"}));
  const auto cp = representative_partitions(llama3b(4, 2));
  const auto ao_ag =
      std::find_if(cp.begin(), cp.end(), [](auto& p) { return p.key == "fwd_ao_ag"; });
  ASSERT_NE(ao_ag, cp.end());
  EXPECT_EQ(slot_names(ao_ag->launch_options), (std::vector<std::string>{"attn_0", "linear_0"}));
  EXPECT_EQ(ao_ag->comm->collective, workload::Collective::kAllGather);
  EXPECT_EQ(ao_ag->comm->group_size, 2);
}

// Each collective overlaps the other nanobatch's next compute segment: partition 2k+1 (NB1) and
// partition 2k+2 (NB0 of the next segment) carry the two nanobatches' copies of segment k's
// collective, and compute segments come in NB0/NB1 pairs.
TEST(Partition, OverlapPairs) {
  for (const auto& w : {llama3b(8, 1), llama3b(4, 2)}) {
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const auto parts = build_partitions(w, d, 2);
      for (std::size_t i = 0; i < parts.size(); ++i) {
        EXPECT_EQ(parts[i].nanobatch, static_cast<int>(i % 2));
      }
      EXPECT_FALSE(parts[0].comm.has_value());
      for (std::size_t i = 1; i + 1 < parts.size(); i += 2) {
        ASSERT_TRUE(parts[i].comm.has_value()) << i;
        ASSERT_TRUE(parts[i + 1].comm.has_value()) << i;
        EXPECT_EQ(parts[i].comm->name, parts[i + 1].comm->name) << i;
        EXPECT_EQ(parts[i - 1].compute.size(), parts[i].compute.size()) << i;
      }
    }
  }
}

// A schedule names partitions and slots as this module does, and its reader refuses any other
// name (schedule.hpp): every key and slot of several models and layouts must pass it.
TEST(Partition, KeysAndSlotsAreThoseAScheduleMayName) {
  std::vector<workload::Workload> workloads = {llama3b(8, 1), llama3b(4, 2), llama3b(2, 4),
                                               llama3b(1, 1)};
  for (const char* model : {"gpt3-xl", "llama3.3-70b"}) {
    workload::WorkloadRequest r;
    r.model = model;
    r.gpu = "h100-sxm";
    r.training_job = false;  // only its partitions are asked for
    r.parallelism.tp = 8;
    r.parallelism.microbatch_size = 2;
    r.parallelism.sequence_length = 2048;
    workloads.push_back(workload::make_workload(r));
  }
  for (const auto& w : workloads) {
    for (const Partition& p : representative_partitions(w)) {
      EXPECT_TRUE(is_partition_key(p.key)) << w.model.name << ": " << p.key;
      for (const LaunchSlot& slot : p.slots) EXPECT_TRUE(is_launch_slot(slot.name)) << slot.name;
    }
  }
}

TEST(Partition, OddMicrobatchIsRejected) {
  const auto w = llama3b(8, 1, "a100-sxm4-40gb", 7);
  try {
    build_partitions(w, Direction::kForward, 1);
    FAIL() << "expected kareus::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("microbatch_size"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("even"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kareus::partition
