// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/term_shares.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

Sample row(double tp, double pp, double batch, double out) {
  Sample s;
  s.scenario = "s";
  s.tp = tp;
  s.pp = pp;
  s.batch = batch;
  s.output_tokens = out;
  return s;
}

TEST(TermShares, ADecodeAndOverheadRowSplitsAsComputedByHand) {
  EnergyModel m;
  m.params = {};
  m.params[a_d] = 2.0;  // 2 J per token / (batch^1 + 0) x TP^0 x PP^0
  m.params[b_d] = 1.0;
  m.params[e_d] = 1e-6;
  m.params[d1] = 5.0;  // 5 J per TP degree
  const Sample s = row(2, 1, 4, 100);
  const double decode = 2.0 * 100 / (4.0 + 1e-6);
  const double overhead = 5.0 * 2;
  const TermShares t = term_shares(m, {s});
  EXPECT_NEAR(t.mean_share[a_d], decode / (decode + overhead), 1e-12);
  EXPECT_NEAR(t.mean_share[d1], overhead / (decode + overhead), 1e-12);
  EXPECT_EQ(t.mean_share[a_p], 0.0);
  EXPECT_EQ(t.mean_share[b_d], 0.0);  // shape parameters carry no share of their own
}

TEST(TermShares, MeanSharesSumToOneForRandomParameters) {
  Rng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    EnergyModel m;
    m.params = testing::random_params(rng);
    m.params[tau_r] = 0.0;
    std::vector<Sample> rows = testing::random_rows(m.params, 20, 3, 512, 0.0, rng);
    for (Sample& s : rows) s.input_tokens = 1.0 + rng.uniform() * 1000;
    const TermShares t = term_shares(m, rows);
    double sum = 0.0;
    for (std::size_t k = 0; k < kParams; ++k) {
      EXPECT_GE(t.mean_share[k], 0.0);
      sum += t.mean_share[k];
    }
    EXPECT_NEAR(sum, 1.0, 1e-9) << "trial " << trial;
  }
}

TEST(TermShares, ShapeOfATermFittedToNothingIsNotIdentified) {
  EnergyModel m;
  m.params[a_d] = 1.0;
  m.params[b_d] = 0.5;
  m.params[e_d] = 1.0;
  m.params[b_p] = 0.5;
  m.params[e_p] = 1.0;
  const std::vector<Sample> rows = {row(1, 1, 8, 100), row(4, 2, 64, 300)};

  m.params[a_p] = 0.0;
  TermShares t = term_shares(m, rows);
  for (Param k : {b_p, e_p, g1_p, g2_p}) EXPECT_FALSE(t.identified[k]) << k;
  for (Param k : {b_d, e_d, g1_d, g2_d, a_p, d2}) EXPECT_TRUE(t.identified[k]) << k;
  EXPECT_FALSE(t.identified[tau_r]);  // no row was metered from its run's start

  // A prefill carrying a tenth of a per cent of one row's energy is enough. Both terms share the
  // first row's denominator sqrt(8) + 1 (in = 1, out = 100), so its prefill share is
  // a_p / (a_p + 100): 0.102 gives 1.02e-3, half of it 5.1e-4.
  m.params[a_p] = 0.102;
  t = term_shares(m, rows);
  EXPECT_TRUE(t.identified[b_p]);
  m.params[a_p] *= 0.5;
  t = term_shares(m, rows);
  EXPECT_FALSE(t.identified[b_p]);
}

// The run-start factor needs the GPU's static power share (phi = 0 without descriptors).
TEST(TermShares, TheRunStartConstantIsIdentifiedOnlyByARunMeteredFromItsStart) {
  EnergyModel m;
  m.params[a_d] = 1.0;
  m.params[e_d] = 1.0;
  std::vector<Sample> rows = {row(1, 1, 8, 100)};
  rows[0].model = "llama3.2-3b";
  rows[0].gpu = "h100-nvl";
  EXPECT_FALSE(term_shares(m, rows).identified[tau_r]);
  rows[0].run = Seconds(30.0);
  EXPECT_FALSE(term_shares(m, rows).identified[tau_r]) << "descriptors off: the factor is 1";
  m.descriptors = true;
  EXPECT_TRUE(term_shares(m, rows).identified[tau_r]);
}

}  // namespace
}  // namespace kareus::energylens
