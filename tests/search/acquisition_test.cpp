// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/acquisition.hpp"

#include <map>

#include <gtest/gtest.h>

namespace kareus::search {
namespace {

std::map<std::string, int> count_passes(const std::vector<Pick>& picks) {
  std::map<std::string, int> counts;
  for (const auto& p : picks) ++counts[p.pass];
  return counts;
}

TEST(Acquisition, PaperQuotas) {
  const PassQuota q32 = paper_quota(32);
  EXPECT_EQ(
      (std::vector<std::size_t>{q32.hvi_total, q32.hvi_dynamic, q32.fastest, q32.uncertainty}),
      (std::vector<std::size_t>{13, 6, 6, 7}));
  const PassQuota q16 = paper_quota(16);
  EXPECT_EQ(
      (std::vector<std::size_t>{q16.hvi_total, q16.hvi_dynamic, q16.fastest, q16.uncertainty}),
      (std::vector<std::size_t>{6, 3, 3, 4}));
}

TEST(Acquisition, PassesPickDisjointBestCandidates) {
  CandidateScores s;
  for (int i = 0; i < 100; ++i) {
    s.hvi_total.push_back(i);                // best: 99, 98, ...
    s.hvi_dynamic.push_back(i % 2 ? 1 : 0);  // odd ones only
    s.predicted_time.push_back(i);           // fastest: 0, 1, ...
    s.uncertainty.push_back(100 - i);        // most uncertain: 0, 1, ...
  }
  const auto picks = select_multi_pass(s, paper_quota(32));
  ASSERT_EQ(picks.size(), 32u);
  EXPECT_EQ(count_passes(picks),
            (std::map<std::string, int>{
                {"hvi_total", 13}, {"hvi_dynamic", 6}, {"fastest", 6}, {"uncertainty", 7}}));
  EXPECT_EQ(picks.front().candidate, 99u);
  EXPECT_EQ(picks[13].candidate, 1u);   // lowest-index odd one
  EXPECT_EQ(picks[19].candidate, 0u);   // fastest
  EXPECT_EQ(picks[25].candidate, 12u);  // most uncertain left: 0..11 went to earlier passes
  std::vector<bool> seen(100, false);
  for (const auto& p : picks) {
    EXPECT_FALSE(seen[p.candidate]);
    seen[p.candidate] = true;
  }
}

TEST(Acquisition, ShortHviPassesAreFilled) {
  CandidateScores s;
  for (int i = 0; i < 20; ++i) {
    s.hvi_total.push_back(i < 2 ? 1.0 : 0.0);
    s.hvi_dynamic.push_back(0.0);
    s.predicted_time.push_back(i);
    s.uncertainty.push_back(0.0);
  }
  const auto counts = count_passes(select_multi_pass(s, paper_quota(16)));
  EXPECT_EQ(counts.at("hvi_total"), 2);
  EXPECT_EQ(counts.count("hvi_dynamic"), 0u);
  EXPECT_EQ(counts.at("fill"), 4 + 3);
}

TEST(Acquisition, NormaliserUsesObservedRangeAndReference) {
  const Normaliser2 n({{1, 10}, {3, 20}});
  EXPECT_DOUBLE_EQ(n({1, 10}).x, 0.0);
  EXPECT_DOUBLE_EQ(n({3, 20}).y, 1.0);
  EXPECT_DOUBLE_EQ(n.reference().x, (3.3 - 1) / 2);
  EXPECT_DOUBLE_EQ(n.reference().y, (22.0 - 10) / 10);
}

}  // namespace
}  // namespace kareus::search
