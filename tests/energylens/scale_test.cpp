// SPDX-License-Identifier: Apache-2.0
// The descriptor scale term: recovery of known exponents, transfer to an unseen model, and the
// coverage of the prediction intervals, on rows generated with the catalogue's descriptors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

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

// descriptor_grid's rows with its models alternating between two workloads; a request of the
// "image" workload costs `kImageFactor` times a "text" one (a longer prompt), which no model or
// GPU descriptor shows. No other group effect, so that what a new model's prediction misses is
// the fit's, not a random draw's.
constexpr double kImageFactor = 3.0;

Dataset two_workloads(std::uint64_t seed) {
  Dataset d = testing::descriptor_grid(shape(), kKappa, 0.0, 0.02, seed);
  std::map<std::string, std::size_t> order;
  for (Sample& s : d.samples) {
    const bool image = order.emplace(s.model, order.size()).first->second % 2 == 0;
    s.workload = image ? "image" : "text";
    s.scenario += "|" + s.workload;
    if (image) s.energy = Joules(s.energy->value() * kImageFactor);
  }
  return d;
}

struct WorkloadSplit {
  std::vector<Sample> train, held_out;  // held out: a text and an image model, on every GPU
};

WorkloadSplit split_workloads(const Dataset& d, bool keep_workloads) {
  WorkloadSplit out;
  std::vector<Sample> rest;
  for (Sample s : d.samples) {
    if (!keep_workloads) s.workload.clear();
    const bool held = s.model == "llama3.2-3b" || s.model == "codellama-13b-hf";
    (held ? out.held_out : rest).push_back(s);
  }
  out.train = random_rows({"", rest}, 150, 6);
  return out;
}

double held_out_mape(const EnergyModel& m, const std::vector<Sample>& rows) {
  std::vector<double> measured, predicted;
  for (const Sample& s : rows) {
    measured.push_back(s.energy->value());
    predicted.push_back(m.predict(s).value());
  }
  return mape_percent(measured, predicted);
}

TEST(EnergyLensScale, RecoversAWorkloadFactorAndPredictsANewModelInAKnownWorkload) {
  const Dataset d = two_workloads(11);
  const WorkloadSplit with = split_workloads(d, true);
  const EnergyModel m = fit_energy_model(with.train, descriptor_fit());
  ASSERT_EQ(m.scale_fit.workloads, (std::vector<std::string>{"image", "text"}));
  const double ratio = std::exp(m.scale_fit.workload_effects[0] - m.scale_fit.workload_effects[1]);
  EXPECT_NEAR(ratio, kImageFactor, 0.05 * kImageFactor);
  EXPECT_LT(held_out_mape(m, with.held_out), 10.0);
  // The same rows without their workloads: the factor is a group effect no descriptor explains,
  // and a new model is predicted between the two levels.
  const WorkloadSplit without = split_workloads(d, false);
  EXPECT_GT(held_out_mape(fit_energy_model(without.train, descriptor_fit()), without.held_out),
            30.0);
}

TEST(EnergyLensScale, AWorkloadNeverSeenGetsTheNeutralFactorAndAWiderInterval) {
  const WorkloadSplit split = split_workloads(two_workloads(12), true);
  const EnergyModel m = fit_energy_model(split.train, descriptor_fit());
  Sample text = split.held_out.front();
  text.workload = "text";
  Sample image = text, other = text;
  image.workload = "image";
  other.workload = "video";
  const double low = m.predict(text).value(), high = m.predict(image).value();
  EXPECT_GT(m.predict(other).value(), low);
  EXPECT_LT(m.predict(other).value(), high);
  const auto width = [&m](const Sample& s) {
    const Interval iv = m.interval(s);
    return std::log(iv.high.value() / iv.low.value());
  };
  EXPECT_GT(width(other), width(text) + 0.1);
  const EnergyModel back =
      EnergyModel::from_json(JsonDocument::parse(m.to_json().dump(), "model.json").root());
  for (const Sample& s : {text, image, other}) {
    EXPECT_NEAR(back.predict(s).value(), m.predict(s).value(), 1e-9 * m.predict(s).value());
    EXPECT_NEAR(width(s), std::log(back.interval(s).high / back.interval(s).low), 1e-9);
  }
}

}  // namespace
}  // namespace kareus::energylens
