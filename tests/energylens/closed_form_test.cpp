// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/closed_form.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "kareus/core/rng.hpp"
#include "kareus/energylens/fit.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

using testing::random_params;

// Eq. 4 evaluated by hand. The other tests build their data with closed_form itself, so only
// these values catch a change to the formula that its gradient follows consistently.
TEST(EnergyLensClosedForm, MatchesHandComputedValues) {
  // Prefill 2 x 100 / (4^1 + 1) = 40; decode 3 x 50 / (4^0.5 + 0) x 2^1 x 4^-1 = 37.5;
  // overhead 5 x 2 + 7 x 4 = 38.
  const Params simple{2, 1, 1, 0, 0, 3, 0.5, 0, 1, -1, 5, 7, 0, 0, 0};
  EXPECT_NEAR(closed_form(simple, Features{2, 4, 4, 100, 50}), 40 + 37.5 + 38, 1e-12);
  // Prefill 1 x 9 / (2^2 + 0.5) x 4^-1 x 4^0.5 = 1; decode 0.1 x 30 / (2^1 + 2) x 4^0 x 4^2 = 12;
  // overhead 0 x 4 + 1 x 4 = 4.
  const Params mixed{1, 2, 0.5, -1, 0.5, 0.1, 1, 2, 0, 2, 0, 1, 0, 0, 0};
  EXPECT_NEAR(closed_form(mixed, Features{4, 4, 2, 9, 30}), 1 + 12 + 4, 1e-12);
  // The linear parameters' partial derivatives are their per-unit terms: 20, 12.5, TP, PP.
  Gradient g;
  closed_form(simple, Features{2, 4, 4, 100, 50}, g);
  EXPECT_NEAR(g[a_p], 20, 1e-12);
  EXPECT_NEAR(g[a_d], 12.5, 1e-12);
  EXPECT_EQ(g[d1], 2);
  EXPECT_EQ(g[d2], 4);
  // Context term: 0.001 x 50 x (100 + 50 / 2) = 6.25.
  Params context = simple;
  context[c_kv] = 0.001;
  EXPECT_NEAR(closed_form(context, Features{2, 4, 4, 100, 50}), 40 + 37.5 + 38 + 6.25, 1e-12);
  closed_form(context, Features{2, 4, 4, 100, 50}, g);
  EXPECT_NEAR(g[c_kv], 6250, 1e-9);
  // Step term: 0.5 x 50 steps x (2 x 4) GPUs / batch 4 = 50.
  Params step = simple;
  step[c_step] = 0.5;
  EXPECT_NEAR(closed_form(step, Features{2, 4, 4, 100, 50}), 40 + 37.5 + 38 + 50, 1e-12);
  closed_form(step, Features{2, 4, 4, 100, 50}, g);
  EXPECT_NEAR(g[c_step], 100, 1e-12);
}

// The analytic gradient at (p, x) against central differences, parameter by parameter.
void expect_gradient_matches(const Params& p, const Features& x, int trial) {
  Gradient g;
  const double value = closed_form(p, x, g);
  EXPECT_DOUBLE_EQ(value, closed_form(p, x));
  for (std::size_t k = 0; k < kParams; ++k) {
    const double h = 1e-6 * std::max(1.0, std::fabs(p[k]));
    Params up = p, down = p;
    up[k] += h;
    down[k] -= h;
    const double fd = (closed_form(up, x) - closed_form(down, x)) / (2 * h);
    EXPECT_NEAR(g[k], fd, 1e-5 * std::max(1.0, std::fabs(fd)))
        << parameter_info()[k].name << " trial " << trial;
  }
}

TEST(EnergyLensClosedForm, GradientMatchesCentralDifferences) {
  Rng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const Params p = random_params(rng);
    expect_gradient_matches(p, testing::random_features(rng), trial);
  }
}

// The same up to batch 1,024 with batch exponents down to -1.5, where the decode term grows with
// the batch.
TEST(EnergyLensClosedForm, GradientMatchesCentralDifferencesAtLargeBatches) {
  Rng rng(13);
  for (int trial = 0; trial < 50; ++trial) {
    const Params p = random_params(rng);
    const Features x{std::pow(2.0, double(rng.integer(0, 3))), double(rng.integer(1, 4)),
                     rng.uniform(1.0, 1024.0), rng.uniform(10.0, 2000.0),
                     rng.uniform(10.0, 2000.0)};
    expect_gradient_matches(p, x, trial);
  }
}

// The run's drain by hand: 64 requests capped at 1000 tokens on batch 16 x DP 2 are two waves of
// 1000 steps, so each request, at 400 tokens of output, adds 1000 - 400 = 600 tokens to the
// per-step terms (decode, step) and none to the prefill, per-degree and context terms.
TEST(EnergyLensClosedForm, DrainAddsStepsToThePerStepTermsByHand) {
  Sample s;
  s.tp = 2;
  s.pp = 2;
  s.dp = 2;
  s.batch = 16;
  s.output_tokens = 400;
  s.input_tokens = 100;
  EXPECT_EQ(features_of(s).drain_tokens, 0.0);  // steady state: no columns, no drain
  s.max_output_tokens = 1000;
  s.requests = 64;
  const Features x = features_of(s);
  EXPECT_DOUBLE_EQ(x.drain_tokens, 600.0);
  Params p{};
  p[a_d] = 1.0;
  p[e_d] = 1e-6;  // b_d = 0: the decode term is a_d x tokens / (1 + 1e-6)
  p[c_step] = 2.0;
  const double steps = 1000.0;
  const double per_step = steps / (1.0 + 1e-6) + 2.0 * steps * 4.0 / 16.0;
  EXPECT_NEAR(closed_form(p, x), per_step, 1e-9);
  Params per_token{};
  per_token[a_p] = 1.0;
  per_token[d1] = 1.0;
  per_token[c_kv] = 1.0;
  Sample steady = s;
  steady.max_output_tokens.reset();
  steady.requests.reset();
  EXPECT_DOUBLE_EQ(closed_form(per_token, x), closed_form(per_token, features_of(steady)));
  // A last wave half full still lasts to the cap: 48 requests are two waves, 2 x 1000 x 32 / 48
  // steps per request and slot; a mean output at or above the cap leaves no drain.
  s.requests = 48;
  EXPECT_NEAR(features_of(s).drain_tokens, 2000.0 * 32.0 / 48.0 - 400.0, 1e-9);
  s.requests = 64;
  s.output_tokens = 1001;
  EXPECT_EQ(features_of(s).drain_tokens, 0.0);
}

// The run-start factor by hand: with tau = 2 s over a 4 s run, h = 2 / 4 x (1 - e^-2), and a
// rising share phi = 0.5 leaves 1 - 0.5 h of the steady-state energy; a steady-state row (no run)
// and tau = 0 leave all of it.
TEST(EnergyLensClosedForm, RunStartFactorByHand) {
  Params p{};
  p[d1] = 10.0;  // E = 10 J at TP 1 before the factor
  Features x{1, 1, 8, 1, 100};
  EXPECT_DOUBLE_EQ(closed_form(p, x), 10.0);
  p[tau_r] = 2.0;
  EXPECT_DOUBLE_EQ(closed_form(p, x), 10.0);
  x.run_s = 4.0;
  x.rising_share = 0.5;
  EXPECT_NEAR(closed_form(p, x), 10.0 * (1.0 - 0.5 * 0.5 * (1.0 - std::exp(-2.0))), 1e-12);
  p[tau_r] = 0.0;
  EXPECT_DOUBLE_EQ(closed_form(p, x), 10.0);
  // At tau = 0 the factor's slope is its limit, -phi / T (one-sided: tau >= 0).
  Gradient g;
  closed_form(p, x, g);
  EXPECT_NEAR(g[tau_r], -10.0 * 0.5 / 4.0, 1e-12);
  Params up = p;
  up[tau_r] = 1e-7;
  EXPECT_NEAR((closed_form(up, x) - closed_form(p, x)) / 1e-7, g[tau_r], 1e-5);
}

// The same central differences with a drain (and every degree above 1, so that each term the drain
// changes is present).
TEST(EnergyLensClosedForm, DrainGradientMatchesCentralDifferences) {
  Rng rng(17);
  for (int trial = 0; trial < 50; ++trial) {
    const Params p = random_params(rng);
    Features x{
        2.0, 2.0, rng.uniform(1.0, 512.0), rng.uniform(10.0, 2000.0), rng.uniform(10.0, 2000.0),
        2.0};
    x.drain_tokens = rng.uniform(0.0, 2000.0);
    x.run_s = rng.uniform(0.5, 100.0);
    x.rising_share = rng.uniform(0.05, 0.95);
    expect_gradient_matches(p, x, trial);
  }
}

// The same central differences for rows measured over whole runs, from runs much shorter than
// tau (factor near 1 - phi) to much longer (near 1).
TEST(EnergyLensClosedForm, RunStartGradientMatchesCentralDifferences) {
  Rng rng(13);
  for (int trial = 0; trial < 50; ++trial) {
    const Params p = random_params(rng);
    Features x{1.0, 1.0, rng.uniform(1.0, 512.0), 1.0, rng.uniform(10.0, 2000.0)};
    x.run_s = std::exp(rng.uniform(std::log(0.1), std::log(1000.0)));
    x.rising_share = rng.uniform(0.05, 0.95);
    expect_gradient_matches(p, x, trial);
  }
}

TEST(EnergyLensClosedForm, LossGradientMatchesCentralDifferencesWithScaleGroups) {
  const Dataset d = testing::synthetic_grid(
      [](const Sample& s) { return 2.0 * s.output_tokens / std::sqrt(s.batch) + 30.0 * s.tp; },
      0.05, 3);
  std::vector<Sample> rows = d.samples;
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].model = i % 3 == 0 ? "a" : "b";
  Rng rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    const Params p = random_params(rng);
    Gradient g;
    fit_loss(p, rows, {"model"}, &g);
    for (std::size_t k = 0; k < kParams; ++k) {
      const double h = 1e-6 * std::max(1.0, std::fabs(p[k]));
      Params up = p, down = p;
      up[k] += h;
      down[k] -= h;
      const double fd =
          (fit_loss(up, rows, {"model"}, nullptr) - fit_loss(down, rows, {"model"}, nullptr)) /
          (2 * h);
      EXPECT_NEAR(g[k], fd, 1e-4 * std::max(1e-3, std::fabs(fd))) << parameter_info()[k].name;
    }
  }
}

TEST(EnergyLensClosedForm, MissingInputTokensCountAsOnePerRequest) {
  Sample s;
  s.tp = 2;
  s.pp = 1;
  s.batch = 8;
  s.output_tokens = 100;
  EXPECT_EQ(features_of(s).input_tokens, 1.0);
  s.input_tokens = 300;
  EXPECT_EQ(features_of(s).input_tokens, 300.0);
}

}  // namespace
}  // namespace kareus::energylens
