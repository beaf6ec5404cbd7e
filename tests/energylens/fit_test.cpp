#include "kareus/energylens/fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/metrics.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

// A decode-dominated truth with PP overhead, TP sub-linear scaling and batch amortisation.
Params truth_params() {
  Params p{};
  p[a_p] = 40.0;
  p[b_p] = 0.9;
  p[e_p] = 2.0;
  p[g1_p] = 0.2;
  p[g2_p] = 0.0;
  p[a_d] = 3.0;
  p[b_d] = 0.6;
  p[e_d] = 1.5;
  p[g1_d] = 0.4;
  p[g2_d] = 0.3;
  p[d1] = 5.0;
  p[d2] = 20.0;
  return p;
}

TEST(EnergyLensFit, RecoversSyntheticClosedFormFromNoisyData) {
  const Params truth = truth_params();
  auto f = [&](const Sample& s) { return closed_form(truth, features_of(s)); };
  const Dataset d = testing::synthetic_grid(f, 0.01, 5);
  FitOptions o;
  o.scale_by = {};
  const EnergyModel m = fit_energy_model(d.samples, o);
  // On a fresh noise-free grid the fit must agree with the truth to about the noise level.
  const Dataset check = testing::synthetic_grid(f, 0.0, 6);
  std::vector<double> measured, predicted;
  for (const Sample& s : check.samples) {
    measured.push_back(s.energy->value());
    predicted.push_back(m.predict(s).value());
  }
  EXPECT_LT(mape_percent(measured, predicted), 1.5);
  // The well-identified shape parameters come back.
  EXPECT_NEAR(m.params[g1_d], truth[g1_d], 0.1);
  EXPECT_NEAR(m.params[g2_d], truth[g2_d], 0.15);
  EXPECT_NEAR(m.params[b_d], truth[b_d], 0.15);
  ASSERT_EQ(m.scales.size(), 1u);
  EXPECT_DOUBLE_EQ(m.scales.begin()->second, 1.0);
}

// One of our linear terms set to `value` on top of the truth: with one scale group of multiplier
// 1 the fit must recover its coefficient and the energy of a fresh grid, and hold it at 0 when
// `switch_` is turned off.
void expect_recovers_term(Param k, double value, bool FitOptions::*switch_) {
  Params truth = truth_params();
  truth[k] = value;
  auto f = [&](const Sample& s) { return closed_form(truth, features_of(s)); };
  FitOptions o;
  o.scale_by = {};
  const EnergyModel m = fit_energy_model(testing::synthetic_grid(f, 0.01, 5).samples, o);
  EXPECT_NEAR(m.params[k], value, 0.15 * value) << parameter_info()[k].name;
  std::vector<double> measured, predicted;
  for (const Sample& s : testing::synthetic_grid(f, 0.0, 6).samples) {
    measured.push_back(s.energy->value());
    predicted.push_back(m.predict(s).value());
  }
  EXPECT_LT(mape_percent(measured, predicted), 1.5) << parameter_info()[k].name;
  o.*switch_ = false;
  EXPECT_EQ(fit_energy_model(testing::synthetic_grid(f, 0.01, 5).samples, o).params[k], 0.0);
}

// The context term (KV cache read each decode step, not amortised over the batch): at 512 output
// tokens and large batches it is most of the energy.
TEST(EnergyLensFit, RecoversTheContextTerm) {
  expect_recovers_term(c_kv, 0.01, &FitOptions::kv_term);
}

// The step term (a fixed part of every decode step on every GPU, shared by the batch), a third
// of the decode energy at batch 1 on one GPU: its TP x PP / batch shape is not one the decode
// term can take, whose exponents differ.
TEST(EnergyLensFit, RecoversTheStepTerm) {
  expect_recovers_term(c_step, 0.4, &FitOptions::step_term);
}

TEST(EnergyLensFit, ScaleGroupsAbsorbPerModelLevels) {
  const Params truth = truth_params();
  Dataset d = testing::synthetic_grid(
      [&](const Sample& s) { return closed_form(truth, features_of(s)); }, 0.0, 5);
  for (std::size_t i = 0; i < d.samples.size(); ++i) {
    d.samples[i].model = i % 2 ? "big" : "small";
    if (i % 2) d.samples[i].energy = *d.samples[i].energy * 10.0;
  }
  FitOptions o;
  o.scale_by = {"model"};
  const EnergyModel m = fit_energy_model(d.samples, o);
  EXPECT_LT(m.train_loss, 1e-4);
  EXPECT_NEAR(m.scales.at("big") / m.scales.at("small"), 10.0, 0.1);
  // Geometric mean of the multipliers is 1 by construction.
  EXPECT_NEAR(m.scales.at("big") * m.scales.at("small"), 1.0, 1e-9);
}

TEST(EnergyLensFit, LogLossAlsoRecovers) {
  const Params truth = truth_params();
  auto f = [&](const Sample& s) { return closed_form(truth, features_of(s)); };
  FitOptions o;
  o.loss = Loss::kLog;
  o.scale_by = {};
  const EnergyModel m = fit_energy_model(testing::synthetic_grid(f, 0.01, 8).samples, o);
  const Dataset check = testing::synthetic_grid(f, 0.0, 9);
  std::vector<double> measured, predicted;
  for (const Sample& s : check.samples) {
    measured.push_back(s.energy->value());
    predicted.push_back(m.predict(s).value());
  }
  EXPECT_LT(mape_percent(measured, predicted), 1.5);
}

TEST(EnergyLensFit, ModelRoundTripsThroughJson) {
  const Params truth = truth_params();
  FitOptions o;
  const EnergyModel m = fit_energy_model(
      testing::synthetic_grid([&](const Sample& s) { return closed_form(truth, features_of(s)); },
                              0.01, 5)
          .samples,
      o);
  const std::string text = m.to_json().dump();
  const EnergyModel back = EnergyModel::from_json(JsonDocument::parse(text, "model.json").root());
  for (std::size_t k = 0; k < kParams; ++k) EXPECT_DOUBLE_EQ(back.params[k], m.params[k]);
  EXPECT_EQ(back.scales, m.scales);
  EXPECT_EQ(back.scale_by, m.scale_by);
}

// A model saved before the step term existed has no c_step: it loads and predicts as if it were 0.
TEST(EnergyLensFit, ModelSavedWithoutTheStepTermLoads) {
  const Params truth = truth_params();
  const EnergyModel m = fit_energy_model(
      testing::synthetic_grid([&](const Sample& s) { return closed_form(truth, features_of(s)); },
                              0.01, 5)
          .samples,
      FitOptions{});
  const std::string text = m.to_json().dump();
  const std::string old =
      std::regex_replace(text, std::regex(R"(,\s*"c_step"\s*:\s*[^,}\s]+)"), "");
  ASSERT_NE(old, text);
  const EnergyModel back = EnergyModel::from_json(JsonDocument::parse(old, "model.json").root());
  EXPECT_EQ(back.params[c_step], 0.0);
  for (std::size_t k = 0; k < c_step; ++k) EXPECT_DOUBLE_EQ(back.params[k], m.params[k]);
}

TEST(EnergyLensFit, RejectsBadOptions) {
  EXPECT_THROW(parse_loss("l1"), Error);
  EXPECT_THROW(parse_scale_by("model,colour"), Error);
  EXPECT_TRUE(parse_scale_by("none").empty());
  EXPECT_EQ(parse_scale_by("gpu,scenario"), (std::vector<std::string>{"gpu", "scenario"}));
  FitOptions o;
  EXPECT_THROW(fit_energy_model({}, o), Error);
}

}  // namespace
}  // namespace kareus::energylens
