// The descriptor scale term: recovery of known exponents, transfer to an unseen model, and the
// coverage of the prediction intervals, on rows generated with the catalogue's descriptors.
#include <gtest/gtest.h>

#include <cmath>

#include "kareus/core/json.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/metrics.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

using testing::kKappa;
using testing::shape;

FitOptions descriptor_fit() {
  FitOptions o;
  o.descriptors = true;
  o.restarts = 4;
  return o;
}

std::vector<Sample> random_rows(const Dataset& d, std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Sample> out;
  for (std::size_t i : rng.sample_without_replacement(d.samples.size(), n))
    out.push_back(d.samples[i]);
  return out;
}

TEST(EnergyLensScale, RecoversDescriptorExponentsAndTransfersToAnUnseenModel) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.0, 0.01, 3);
  std::vector<Sample> train, held_out;
  for (const Sample& s : d.samples) (s.model == "gemma-2-27b-it" ? held_out : train).push_back(s);
  Rng rng(4);
  std::vector<Sample> subset;
  for (std::size_t i : rng.sample_without_replacement(train.size(), 150))
    subset.push_back(train[i]);
  const EnergyModel m = fit_energy_model(subset, descriptor_fit());
  ASSERT_EQ(m.scale_exponents.size(), kScaleTerms);
  EXPECT_NEAR(m.scale_exponents[log_params] + m.scale_exponents[log_active_params], 1.0, 0.1);
  EXPECT_NEAR(m.scale_exponents[log_joules_per_byte], 1.0, 0.15);
  EXPECT_NEAR(m.scale_exponents[log_kv_bytes], 0.0, 0.15);
  std::vector<double> measured, predicted;
  for (const Sample& s : held_out) {
    measured.push_back(s.energy->value());
    predicted.push_back(m.predict(s).value());
  }
  EXPECT_LT(mape_percent(measured, predicted), 5.0);
}

TEST(EnergyLensScale, WithoutDescriptorsAnUnseenModelGetsTheMeanScale) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.0, 0.01, 3);
  std::vector<Sample> train, held_out;
  for (const Sample& s : d.samples)
    (s.model == "mistral-large-instruct-2407" ? held_out : train).push_back(s);
  FitOptions o = descriptor_fit();
  const EnergyModel with = fit_energy_model(random_rows({"", train}, 150, 5), o);
  o.descriptors = false;
  const EnergyModel without = fit_energy_model(random_rows({"", train}, 150, 5), o);
  std::vector<double> measured, p_with, p_without;
  for (const Sample& s : held_out) {
    measured.push_back(s.energy->value());
    p_with.push_back(with.predict(s).value());
    p_without.push_back(without.predict(s).value());
  }
  // The largest model is far above the mean scale; only the descriptors know it.
  EXPECT_LT(mape_percent(measured, p_with), 10.0);
  EXPECT_GT(mape_percent(measured, p_without), 50.0);
}

TEST(EnergyLensScale, DescriptorModelRoundTripsThroughJson) {
  const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.2, 0.1, 9);
  std::vector<Sample> train;
  for (const Sample& s : d.samples)
    if (s.model != "gemma-2-9b-it" && s.gpu != "a40") train.push_back(s);
  const EnergyModel m = fit_energy_model(random_rows({"", train}, 120, 9), descriptor_fit());
  const EnergyModel back =
      EnergyModel::from_json(JsonDocument::parse(m.to_json().dump(), "model.json").root());
  // Seen groups, an unseen GPU for seen models, an unseen model: the same predictions and
  // intervals after the round trip.
  for (const Sample& s : d.samples) {
    EXPECT_NEAR(back.predict(s).value(), m.predict(s).value(), 1e-9 * m.predict(s).value());
    EXPECT_NEAR(back.interval(s).high.value(), m.interval(s).high.value(),
                1e-9 * m.interval(s).high.value());
  }
}

// 90 % intervals must hold about 90 % of fresh measurements, for groups seen in training and
// for a model never seen (whose interval adds the group-effect variance).
TEST(EnergyLensScale, IntervalsCoverTheTruthAtTheirNominalRate) {
  std::size_t seen_in = 0, seen = 0, unseen_in = 0, unseen = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const Dataset d = testing::descriptor_grid(shape(), kKappa, 0.2, 0.1, seed);
    const std::string held = d.samples[(seed * 97) % d.samples.size()].model;
    std::vector<Sample> train, rest;
    for (const Sample& s : d.samples) (s.model == held ? rest : train).push_back(s);
    Rng rng(seed);
    std::vector<Sample> subset;
    std::vector<bool> used(train.size(), false);
    for (std::size_t i : rng.sample_without_replacement(train.size(), 200)) {
      subset.push_back(train[i]);
      used[i] = true;
    }
    const EnergyModel m = fit_energy_model(subset, descriptor_fit());
    auto inside = [&](const Sample& s) {
      const Interval iv = m.interval(s);
      return iv.low <= *s.energy && *s.energy <= iv.high;
    };
    for (std::size_t i = 0; i < train.size(); ++i) {
      if (used[i]) continue;
      seen_in += inside(train[i]);
      ++seen;
    }
    for (const Sample& s : rest) {
      unseen_in += inside(s);
      ++unseen;
    }
  }
  const double seen_rate = static_cast<double>(seen_in) / static_cast<double>(seen);
  const double unseen_rate = static_cast<double>(unseen_in) / static_cast<double>(unseen);
  EXPECT_NEAR(seen_rate, kIntervalCoverage, 0.06);
  // Four held-out models x four GPUs: 16 group effects, so a wider band.
  EXPECT_NEAR(unseen_rate, kIntervalCoverage, 0.12);
}

}  // namespace
}  // namespace kareus::energylens
