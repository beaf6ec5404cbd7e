// Partial pooling of the group multipliers (FitOptions::pooling): the pooled loss's gradient, its
// limit without pooling, and what it buys on rows generated with known descriptors, group effects
// and noise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/metrics.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

using testing::kKappa;
using testing::random_params;
using testing::shape;

const std::vector<std::string> kByModelAndGpu = {"model", "gpu"};

// Training rows where most (model, GPU) groups have one row: `multi` groups with `per_group`
// rows, then one row from each of the next `singletons` groups; the singletons' other rows are
// held out.
struct Split {
  std::vector<Sample> train, singleton_rows_held_out;
};

Split singleton_split(const Dataset& d, std::size_t multi, std::size_t per_group,
                      std::size_t singletons, std::uint64_t seed) {
  std::map<std::string, std::vector<Sample>> groups;
  std::vector<std::string> order;
  for (const Sample& s : d.samples) {
    if (groups[s.scenario].empty()) order.push_back(s.scenario);
    groups[s.scenario].push_back(s);
  }
  Rng rng(seed);
  Split out;
  const std::vector<std::size_t> picked =
      rng.sample_without_replacement(order.size(), multi + singletons);
  for (std::size_t j = 0; j < picked.size(); ++j) {
    const std::vector<Sample>& rows = groups[order[picked[j]]];
    const std::size_t take = j < multi ? per_group : 1;
    const std::vector<std::size_t> chosen = rng.sample_without_replacement(rows.size(), take);
    std::vector<bool> in(rows.size(), false);
    for (std::size_t i : chosen) {
      in[i] = true;
      out.train.push_back(rows[i]);
    }
    if (j >= multi)
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (!in[i]) out.singleton_rows_held_out.push_back(rows[i]);
  }
  return out;
}

FitOptions options(bool pooling) {
  FitOptions o;
  o.descriptors = true;
  o.restarts = 4;
  o.pooling = pooling;
  // Pooling alone: with the shape prior too, the group variance of these rows comes out near 0 and
  // the weight at its cap (docs/energylens.md, "Shape prior").
  o.shape_prior = false;
  return o;
}

double mape_on(const EnergyModel& m, const std::vector<Sample>& rows) {
  std::vector<double> measured, predicted;
  for (const Sample& s : rows) {
    measured.push_back(s.energy->value());
    predicted.push_back(m.predict(s).value());
  }
  return mape_percent(measured, predicted);
}

TEST(EnergyLensPooling, PooledLossGradientMatchesCentralDifferences) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.3, 0.1, 5);
  const Split split = singleton_split(d, 4, 4, 12, 6);
  Rng rng(7);
  const std::vector<std::pair<Loss, double>> losses = {
      {Loss::kRelative, 0.0}, {Loss::kLog, 0.0}, {Loss::kHuber, 0.05}};
  for (const auto& loss_and_threshold : losses) {
    // Named copies, not a structured binding: clang before 16 cannot capture one in a lambda.
    const Loss loss = loss_and_threshold.first;
    const double threshold = loss_and_threshold.second;
    for (int trial = 0; trial < 4; ++trial) {
      const Params p = random_params(rng);
      const double weight = rng.uniform(0.05, 5.0);
      auto value = [&](const Params& q, Gradient* g) {
        return fit_loss(q, split.train, loss, kByModelAndGpu, g, threshold, weight, true);
      };
      Gradient g;
      const double pooled = value(p, &g);
      // The penalty adds to the loss: pooling can only raise it above the free multipliers'.
      EXPECT_GT(pooled,
                fit_loss(p, split.train, loss, kByModelAndGpu, nullptr, threshold, 0.0, true));
      for (std::size_t k = 0; k < kParams; ++k) {
        const double h = 1e-6 * std::max(1.0, std::fabs(p[k]));
        Params up = p, down = p;
        up[k] += h;
        down[k] -= h;
        const double fd = (value(up, nullptr) - value(down, nullptr)) / (2 * h);
        EXPECT_NEAR(g[k], fd, 1e-4 * std::max(1e-3, std::fabs(fd)))
            << parameter_info()[k].name << " " << loss_name(loss) << " trial " << trial;
      }
    }
  }
}

TEST(EnergyLensPooling, VanishingWeightGivesTheUnpooledLoss) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.3, 0.1, 5);
  const Split split = singleton_split(d, 4, 4, 12, 8);
  Rng rng(9);
  for (Loss loss : {Loss::kRelative, Loss::kLog}) {
    const Params p = random_params(rng);
    Gradient free_g, pooled_g;
    const double free = fit_loss(p, split.train, loss, kByModelAndGpu, &free_g, 0.0, 0.0, true);
    const double pooled =
        fit_loss(p, split.train, loss, kByModelAndGpu, &pooled_g, 0.0, 1e-12, true);
    EXPECT_NEAR(pooled, free, 1e-9 * free);
    for (std::size_t k = 0; k < kParams; ++k)
      EXPECT_NEAR(pooled_g[k], free_g[k], 1e-6 * std::max(1e-3, std::fabs(free_g[k])));
  }
}

// Group effects far larger than the row noise (tau -> infinity): the estimated weight sigma^2 /
// tau^2 vanishes and the pooled fit is the unpooled one.
TEST(EnergyLensPooling, HugeGroupEffectsLeaveTheFitUnpooled) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 3.0, 0.01, 11);
  const Split split = singleton_split(d, 8, 5, 20, 12);
  const EnergyModel free = fit_energy_model(split.train, options(false));
  const EnergyModel pooled = fit_energy_model(split.train, options(true));
  EXPECT_GT(pooled.pooling_weight, 0.0);
  EXPECT_LT(pooled.pooling_weight, 1e-4);
  for (const Sample& s : d.samples)
    EXPECT_NEAR(pooled.predict(s).value(), free.predict(s).value(), 1e-3 * free.predict(s).value());
}

// RMS over all rows of the log prediction's error against the noise-free truth, less each
// group's mean: how far the fitted shape is from the true one, whatever the multipliers.
double shape_error(const EnergyModel& m, const Dataset& d) {
  DescriptorCache cache;
  std::map<std::string, std::vector<double>> errors;
  for (const Sample& s : d.samples)
    errors[s.scenario].push_back(std::log(
        m.predict(s).value() / closed_form(shape(), features_of(s, cache.ratios(s, d.source)))));
  double squares = 0.0, rows = 0.0;
  for (const auto& [group, e] : errors) {
    double mean = 0.0;
    for (double x : e) mean += x / static_cast<double>(e.size());
    for (double x : e) squares += (x - mean) * (x - mean);
    rows += static_cast<double>(e.size());
  }
  return std::sqrt(squares / rows);
}

// Few groups with several rows and many with one, row noise comparable to the group effects:
// the unpooled shape is fitted on the few, the pooled one on all. Over several draws the pooled
// fit recovers the shape better and predicts the held-out rows of the one-row groups better; it
// recovers the descriptor exponents and weighs the one-row groups by about the true sigma^2 /
// tau^2.
TEST(EnergyLensPooling, OneRowGroupsInformTheShape) {
  constexpr double kTau = 0.15, kSigma = 0.15;
  constexpr int kDraws = 4;
  double free_mape = 0.0, pooled_mape = 0.0, free_shape = 0.0, pooled_shape = 0.0;
  std::vector<double> weights;
  for (int draw = 0; draw < kDraws; ++draw) {
    const Dataset d = testing::descriptor_grid(shape(), kKappa, kTau, kSigma, 20 + draw);
    const Split split = singleton_split(d, 5, 4, 30, 40 + draw);
    const EnergyModel free = fit_energy_model(split.train, options(false));
    const EnergyModel pooled = fit_energy_model(split.train, options(true));
    free_mape += mape_on(free, split.singleton_rows_held_out) / kDraws;
    pooled_mape += mape_on(pooled, split.singleton_rows_held_out) / kDraws;
    free_shape += shape_error(free, d) / kDraws;
    pooled_shape += shape_error(pooled, d) / kDraws;
    weights.push_back(pooled.pooling_weight);
    SCOPED_TRACE(draw);
    EXPECT_NEAR(pooled.scale_exponents[log_params] + pooled.scale_exponents[log_active_params], 1.0,
                0.3);
    EXPECT_NEAR(pooled.scale_exponents[log_joules_per_byte], 1.0, 0.4);
  }
  EXPECT_LT(pooled_shape, 0.8 * free_shape) << "pooled " << pooled_shape << " free " << free_shape;
  EXPECT_LT(pooled_mape, 0.9 * free_mape) << "pooled " << pooled_mape << " free " << free_mape;
  // One draw's tau^2 estimate may be 0 (weight at its cap); the median is the typical one.
  std::sort(weights.begin(), weights.end());
  const double median = 0.5 * (weights[kDraws / 2 - 1] + weights[kDraws / 2]);
  EXPECT_GT(median, 0.25 * kSigma * kSigma / (kTau * kTau));
  EXPECT_LT(median, 4.0 * kSigma * kSigma / (kTau * kTau));
}

TEST(EnergyLensPooling, WeightRoundTripsThroughJson) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.15, 0.15, 30);
  const Split split = singleton_split(d, 5, 4, 20, 31);
  const EnergyModel m = fit_energy_model(split.train, options(true));
  const EnergyModel back =
      EnergyModel::from_json(JsonDocument::parse(m.to_json().dump(), "model.json").root());
  EXPECT_GT(m.pooling_weight, 0.0);
  EXPECT_EQ(back.pooling_weight, m.pooling_weight);
}

TEST(EnergyLensPooling, RejectsAnUnknownSetting) {
  EXPECT_TRUE(parse_pooling("on"));
  EXPECT_FALSE(parse_pooling("off"));
  try {
    parse_pooling("maybe");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--pooling"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("maybe"), std::string::npos);
  }
}

}  // namespace
}  // namespace kareus::energylens
