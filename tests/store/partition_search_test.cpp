// SPDX-License-Identifier: Apache-2.0
// search_partition: the planner's entry point, through the measurement store.
#include "kareus/store/partition_search.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"

namespace kareus::store {
namespace {

std::filesystem::path temp_db(const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("kareus_partition_search_" + name + "_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  return path;
}

PartitionSearchOptions kareus_with(Store& db) {
  PartitionSearchOptions options;
  options.search.strategy = search::Strategy::kKareus;
  options.search.seed = 3;
  options.store = &db;
  return options;
}

TEST(PartitionSearch, SecondRunReusesEveryMeasurement) {
  const auto w = testing::llama3b(4, 2);
  const partition::Partition p = find_partition(w, "bwd_a_ag");
  const auto path = temp_db("reuse");
  Store db(path);
  const PartitionSearchOptions options = kareus_with(db);
  executor::EmulatorExecutor first{emulator::Emulator(w.gpu)};
  const PartitionSearchResult a = search_partition(w, p, first, options);
  EXPECT_GT(a.summary.measurements_taken, 0u);
  EXPECT_EQ(a.summary.measurements_reused, 0u);
  EXPECT_GT(a.summary.gpu_hours, 0.0);
  executor::EmulatorExecutor second{emulator::Emulator(w.gpu)};
  const PartitionSearchResult b = search_partition(w, p, second, options);
  EXPECT_EQ(b.summary.measurements_taken, 0u);
  EXPECT_EQ(b.summary.measurements_reused, a.summary.measurements_taken);
  EXPECT_EQ(b.summary.gpu_hours, 0.0);
  ASSERT_EQ(a.frontier.size(), b.frontier.size());
  for (std::size_t i = 0; i < a.frontier.size(); ++i) {
    EXPECT_EQ(a.frontier[i].config.key(), b.frontier[i].config.key());
    EXPECT_TRUE(b.frontier[i].reused);
  }
  // A noisy executor is another scope: nothing is reused from the exact one.
  executor::EmulatorExecutor noisy(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 3);
  EXPECT_EQ(search_partition(w, p, noisy, options).summary.measurements_reused, 0u);
  std::filesystem::remove(path);
}

// Under noise the search repeats readings; each repeat is stored apart (config key + "#n"), so a
// second run reads every sample back and makes the same decisions: same points, same means.
TEST(PartitionSearch, NoisyRepeatsAreStoredAndReadBack) {
  const auto w = testing::llama3b(4, 2);
  const partition::Partition p = find_partition(w, "bwd_a_ag");
  const auto path = temp_db("repeats");
  Store db(path);
  const PartitionSearchOptions options = kareus_with(db);
  executor::EmulatorExecutor first(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 3);
  const PartitionSearchResult a = search_partition(w, p, first, options);
  EXPECT_GT(a.summary.repeats, 2u);  // the probe saw noise
  EXPECT_EQ(db.count(scope_of(w, first, p.key)), a.summary.measurements_taken);
  executor::EmulatorExecutor second(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 3);
  const PartitionSearchResult b = search_partition(w, p, second, options);
  EXPECT_EQ(b.summary.measurements_taken, 0u);
  EXPECT_EQ(b.summary.measurements_reused, a.summary.measurements_taken);
  EXPECT_EQ(b.summary.repeats, a.summary.repeats);
  EXPECT_EQ(b.summary.confidence, a.summary.confidence);
  ASSERT_EQ(a.measured.size(), b.measured.size());
  for (std::size_t i = 0; i < a.measured.size(); ++i) {
    EXPECT_EQ(a.measured[i].config.key(), b.measured[i].config.key());
    EXPECT_EQ(a.measured[i].samples, b.measured[i].samples);
    EXPECT_EQ(a.measured[i].time, b.measured[i].time);
    EXPECT_EQ(a.measured[i].dynamic_energy, b.measured[i].dynamic_energy);
  }
  std::filesystem::remove(path);
}

TEST(PartitionSearch, FrontierIsParetoAndCarriesConfigs) {
  const auto w = testing::llama3b(8, 1);
  executor::EmulatorExecutor ex{emulator::Emulator(w.gpu)};
  PartitionSearchOptions options;
  options.search.strategy = search::Strategy::kRandom;
  options.search.budget = 30;
  const PartitionSearchResult r = search_partition(w, find_partition(w, "fwd_mlp"), ex, options);
  ASSERT_EQ(r.measured.size(), 30u);
  ASSERT_FALSE(r.frontier.empty());
  for (std::size_t i = 1; i < r.frontier.size(); ++i) {
    EXPECT_GT(r.frontier[i].time, r.frontier[i - 1].time);
    EXPECT_LT(r.frontier[i].total_energy, r.frontier[i - 1].total_energy);
  }
  for (const auto& f : r.frontier) {
    EXPECT_EQ(r.space.key(f.id), f.config.key());
    for (const auto& m : r.measured) {
      EXPECT_FALSE(m.time < f.time && m.total_energy < f.total_energy);
    }
  }
}

TEST(PartitionSearch, BadInputHasClearErrors) {
  const auto w = testing::llama3b(8, 1);
  try {
    find_partition(w, "fwd_qkv_ag");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fwd_attn, fwd_mlp, bwd_mlp, bwd_attn"), std::string::npos)
        << e.what();
  }
  executor::EmulatorExecutor ex{emulator::Emulator(w.gpu)};
  PartitionSearchOptions options;
  options.search.budget = 0;
  try {
    search_partition(w, find_partition(w, "fwd_mlp"), ex, options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("budget"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_partition(testing::llama3b(8, 1, "a100-sxm4-40gb", 5), "fwd_attn"), Error);
}

}  // namespace
}  // namespace kareus::store
