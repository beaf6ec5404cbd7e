// SPDX-License-Identifier: Apache-2.0
#include "kareus/partition/config_space.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"

namespace kareus::partition {
namespace {

using testing::llama3b;

Partition find(const workload::Workload& w, const std::string& key) {
  for (const auto& p : representative_partitions(w)) {
    if (p.key == key) return p;
  }
  throw Error("no partition " + key);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigSpace, AllReduceOnEightGpus) {
  const auto w = llama3b(8, 1);
  const ConfigSpace space = ConfigSpace::of(find(w, "fwd_attn"), w.gpu);
  ASSERT_EQ(space.clocks().size(), 18u);
  EXPECT_EQ(space.clocks().front(), MHz(1410));
  EXPECT_EQ(space.clocks().back(), MHz(900));
  EXPECT_EQ(space.comm_sms(), (std::vector<int>{3, 6, 9, 12, 15, 18, 21, 24, 27, 30}));
  EXPECT_EQ(space.slots(), (std::vector<std::string>{"norm_0", "linear_0", "rope_0", "attn_0"}));
  EXPECT_EQ(space.size(), 720u);
  EXPECT_EQ(space.key(0), "norm_0/3sm@1410MHz");
  EXPECT_EQ(space.key(1), "linear_0/3sm@1410MHz");
  EXPECT_EQ(space.key(4), "norm_0/6sm@1410MHz");
  EXPECT_EQ(space.key(719), "attn_0/30sm@900MHz");
}

TEST(ConfigSpace, SmallGroupsGetOneToTwentySms) {
  const auto w = llama3b(4, 2);
  const ConfigSpace ag = ConfigSpace::of(find(w, "fwd_qkv_ag"), w.gpu);
  std::vector<int> one_to_twenty;
  for (int s = 1; s <= 20; ++s) one_to_twenty.push_back(s);
  EXPECT_EQ(ag.comm_sms(), one_to_twenty);
  EXPECT_EQ(ag.size(), 18u * 20 * 3);
  // The TP4 AllReduce of the same layout is a group of four: 3..30 step 3.
  EXPECT_EQ(ConfigSpace::of(find(w, "fwd_ao_ar"), w.gpu).size(), 18u * 10 * 1);
}

TEST(ConfigSpace, ClocksComeFromTheGpuFile) {
  const auto w = llama3b(8, 1, "h100-sxm");
  const ConfigSpace space = ConfigSpace::of(find(w, "fwd_mlp"), w.gpu);
  EXPECT_EQ(space.clocks(), w.gpu.search_clocks());
  EXPECT_NE(space.clocks().size(), 18u);
}

TEST(ConfigSpace, IdsKeysAndJsonRoundTrip) {
  const auto w = llama3b(4, 2);
  const ConfigSpace space = ConfigSpace::of(find(w, "bwd_qkv_rs"), w.gpu);
  std::set<std::string> keys;
  for (std::size_t id = 0; id < space.size(); ++id) {
    const ExecConfig c = space.at(id);
    EXPECT_EQ(space.id_of(c), id);
    EXPECT_EQ(space.parse(c.key()), id);
    const JsonDocument doc = JsonDocument::parse(c.to_json().dump(), "config");
    EXPECT_EQ(space.from_json(doc.root()), id);
    const ConfigSpace::Index i = space.index(id);
    EXPECT_EQ(space.id(i), id);
    keys.insert(c.key());
  }
  EXPECT_EQ(keys.size(), space.size());
}

TEST(ConfigSpace, BadInputNamesWhatIsAllowed) {
  const auto w = llama3b(8, 1);
  const ConfigSpace space = ConfigSpace::of(find(w, "fwd_mlp"), w.gpu);
  EXPECT_NE(error_of([&] { space.parse("norm_0-12"); }).find("SLOT/<n>sm@<f>MHz"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              space.parse("attn_0/12sm@1410MHz");
            }).find("one of norm_0, linear_0, activation_0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { space.parse("norm_0/13sm@1410MHz"); }).find("comm_sms = 13"),
            std::string::npos);
  EXPECT_NE(error_of([&] { space.parse("norm_0/12sm@1415MHz"); }).find("clock_mhz = 1415"),
            std::string::npos);
  EXPECT_NE(error_of([&] { space.at(space.size()); }).find("config id"), std::string::npos);
  EXPECT_THROW(ConfigSpace("k", {}, {3}, {"norm_0"}), Error);
  EXPECT_THROW(ConfigSpace("k", {MHz(1410)}, {3, 3}, {"norm_0"}), Error);
}

TEST(ConfigSpace, FixedAndCommlessPartitionsHaveNothingToSearch) {
  const auto w = llama3b(8, 1);
  const auto parts = build_partitions(w, workload::Direction::kForward, 1);
  ASSERT_TRUE(parts[parts.size() - 2].fixed);
  EXPECT_NE(error_of([&] {
              ConfigSpace::of(parts[parts.size() - 2], w.gpu);
            }).find("fixed configuration"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ConfigSpace::of(parts.back(), w.gpu); }).find("overlaps no collective"),
            std::string::npos);
}

}  // namespace
}  // namespace kareus::partition
