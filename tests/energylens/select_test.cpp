// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/select.hpp"

#include <gtest/gtest.h>

namespace kareus::energylens {
namespace {

TEST(EnergyLensSelect, RanksByPredictionAndComparesWithLatencyOptimal) {
  EnergyModel m;  // E = 100 * out / batch + 10 * tp
  m.params[a_d] = 100.0;
  m.params[e_d] = 1e-6;
  m.params[b_d] = 1.0;
  m.params[d1] = 10.0;
  const Dataset c = parse_dataset(
      "scenario,tp,pp,batch,output_tokens,time_s,energy_j\n"
      "s,1,1,10,1,1.0,20\n"
      "s,1,1,100,1,5.0,11\n"
      "s,2,1,100,1,3.0,22\n"
      "t,1,1,1,1,1.0,\n",
      "cand.csv", EnergyColumn::kOptional);
  const auto sel = select_configurations(m, c);
  ASSERT_EQ(sel.size(), 2u);
  EXPECT_EQ(sel[0].scenario, "s");
  ASSERT_EQ(sel[0].ranking.size(), 3u);
  EXPECT_EQ(sel[0].ranking[0].row, 1u);  // 100/100 + 10 = 11 J
  EXPECT_NEAR(sel[0].ranking[0].predicted.value(), 11.0, 1e-6);
  EXPECT_EQ(sel[0].ranking[1].row, 0u);  // 10 + 10 = 20 J
  EXPECT_EQ(sel[0].ranking[2].row, 2u);  // 1 + 20 = 21 J
  ASSERT_TRUE(sel[0].latency_optimal.has_value());
  EXPECT_EQ(*sel[0].latency_optimal, 0u);
  EXPECT_NEAR(*sel[0].latency_penalty_predicted_percent, 100.0 * (20.0 / 11.0 - 1.0), 1e-3);
  EXPECT_NEAR(*sel[0].latency_penalty_measured_percent, 100.0 * (20.0 / 11.0 - 1.0), 1e-9);
  EXPECT_FALSE(sel[1].latency_penalty_measured_percent.has_value());
}

}  // namespace
}  // namespace kareus::energylens
